//! Moving data between stores (`cairn dump` / `cairn restore`): the records
//! a dump is made of, each as stored (ids, versions, timestamps, claims and a
//! note's wiki-links kept), and the JSON Lines form they travel in.
//!
//! A dump is one header line, every task, note and link in the order the
//! store made them (a restore inserts them in that order again), and an
//! end line with the counts (so a dump cut short is refused, not half-loaded).
//! Nothing in it depends on when or from which backend it was made: two dumps
//! of the same data are byte-identical.

use std::io::{BufRead, Write};

use serde::{Deserialize, Serialize};

use super::StoreError;
use super::model::Counts;
use crate::envelope::ToolError;

/// The format this build writes and reads.
pub const FORMAT: u32 = 1;

/// A task as stored: `status` is `open`, `done` or `cancelled` (a claim is its
/// holder and expiry, live or not).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskRecord {
    pub id: String,
    pub title: String,
    pub description: String,
    pub tags: Vec<String>,
    pub priority: String,
    pub status: String,
    pub claim_holder: Option<String>,
    pub claim_expires_at: Option<String>,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

/// A note as stored, with the slugs its wiki-links name (sorted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoteRecord {
    pub id: String,
    pub title: String,
    pub slug: String,
    pub content: String,
    pub tags: Vec<String>,
    pub source_url: Option<String>,
    pub wiki_links: Vec<String>,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

/// An edge as stored (`links_to` edges included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkRecord {
    pub id: String,
    pub source: String,
    pub target: String,
    pub kind: String,
    pub created_at: String,
}

/// One line of a dump.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// The first line.
    CairnDump {
        format: u32,
    },
    Task(TaskRecord),
    Note(NoteRecord),
    Link(LinkRecord),
    /// The last line: how many of each came before it.
    End(Counts),
}

/// Everything a store holds, as restore loads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    pub tasks: Vec<TaskRecord>,
    pub notes: Vec<NoteRecord>,
    pub links: Vec<LinkRecord>,
}

fn total(counts: &Counts) -> u64 {
    counts.tasks + counts.notes + counts.links
}

/// What a restore did: what it loaded, and (merging) what the store already
/// held and was left as it was.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RestoreReport {
    pub loaded: Counts,
    pub skipped: Counts,
}

impl RestoreReport {
    /// Counts one record of the kind `pick` selects: loaded when it was
    /// inserted, else skipped (the store held its id, slug or source).
    pub fn tally(&mut self, pick: fn(&mut Counts) -> &mut u64, inserted: bool) {
        let side = if inserted {
            &mut self.loaded
        } else {
            &mut self.skipped
        };
        *pick(side) += 1;
    }
}

/// The rule before any restore: a store that holds data is refused with
/// `store_not_empty` unless the caller merges.
pub fn check_empty(held: Counts, merge: bool) -> Result<(), StoreError> {
    if merge || total(&held) == 0 {
        return Ok(());
    }
    Err(StoreError::NotEmpty(held))
}

/// Writes a dump as JSON Lines, records in the order the store hands them,
/// framed by the header and the end line.
pub struct DumpWriter<W: Write> {
    out: W,
    counts: Counts,
}

impl<W: Write> DumpWriter<W> {
    pub fn start(mut out: W) -> std::io::Result<Self> {
        write_line(&mut out, &Record::CairnDump { format: FORMAT })?;
        Ok(Self {
            out,
            counts: Counts::default(),
        })
    }

    pub fn write(&mut self, record: &Record) -> std::io::Result<()> {
        match record {
            Record::Task(_) => self.counts.tasks += 1,
            Record::Note(_) => self.counts.notes += 1,
            Record::Link(_) => self.counts.links += 1,
            Record::CairnDump { .. } | Record::End(_) => return Ok(()),
        }
        write_line(&mut self.out, record)
    }

    /// Writes the end line and flushes; returns the counts.
    pub fn finish(mut self) -> std::io::Result<Counts> {
        write_line(&mut self.out, &Record::End(self.counts.clone()))?;
        self.out.flush()?;
        Ok(self.counts)
    }
}

fn write_line(out: &mut impl Write, record: &Record) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, record).map_err(std::io::Error::other)?;
    out.write_all(b"\n")
}

/// Reads a whole dump: a header of a known format, records, and an end line
/// whose counts match. Any other line is `invalid_input` naming the line.
pub fn read_dump(input: impl BufRead) -> Result<Snapshot, ToolError> {
    let mut snapshot = Snapshot::default();
    let mut header = false;
    let mut end = None;
    for (index, line) in input.lines().enumerate() {
        let number = index + 1;
        let line = line.map_err(|_| bad_line(number, "is not UTF-8 text"))?;
        if line.trim().is_empty() {
            continue;
        }
        if end.is_some() {
            return Err(bad_line(number, "follows the end line"));
        }
        let record: Record = serde_json::from_str(&line)
            .map_err(|e| bad_line(number, &format!("is not a dump record ({e})")))?;
        match record {
            Record::CairnDump { format } if !header && format == FORMAT => header = true,
            Record::CairnDump { format } if !header => {
                return Err(bad_line(
                    number,
                    &format!("is format {format}; this cairn reads format {FORMAT}"),
                ));
            }
            _ if !header => return Err(bad_line(number, "must be the dump header")),
            Record::CairnDump { .. } => return Err(bad_line(number, "repeats the header")),
            Record::Task(task) => {
                check_task(&task).map_err(|reason| bad_line(number, &reason))?;
                snapshot.tasks.push(task)
            }
            Record::Note(note) => snapshot.notes.push(note),
            Record::Link(link) => snapshot.links.push(link),
            Record::End(counts) => end = Some(counts),
        }
    }
    let read = Counts {
        tasks: snapshot.tasks.len() as u64,
        notes: snapshot.notes.len() as u64,
        links: snapshot.links.len() as u64,
    };
    match end {
        Some(counts) if counts == read => Ok(snapshot),
        Some(_) => Err(ToolError::invalid_input(
            "dump",
            "the end line's counts do not match the records before it",
        )),
        None if !header => Err(ToolError::invalid_input("dump", "is empty")),
        None => Err(ToolError::invalid_input(
            "dump",
            "has no end line: it was cut short (did the dump fail?)",
        )),
    }
}

fn check_task(task: &TaskRecord) -> Result<(), String> {
    if !["open", "done", "cancelled"].contains(&task.status.as_str()) {
        return Err(format!("has a task status `{}`", task.status));
    }
    if !["low", "normal", "high", "urgent"].contains(&task.priority.as_str()) {
        return Err(format!("has a task priority `{}`", task.priority));
    }
    Ok(())
}

fn bad_line(number: usize, reason: &str) -> ToolError {
    ToolError::invalid_field(
        "dump",
        format!("Line {number} of the dump {reason}."),
        reason.to_owned(),
    )
    .detail("line", number)
}
