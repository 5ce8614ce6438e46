//! `cairn export --markdown DIR`: every note as `notes/<title>.md` with YAML
//! front matter (id, title, tags, version, source URL, timestamps) and the
//! tasks as one Markdown checklist per status under `tasks/`, all read in one
//! transaction (the store's dump), so the folder is one consistent snapshot.
//!
//! Files are named by title, as Obsidian resolves `[[Title]]` links; the
//! front matter keeps the id, so `cairn import DIR` finds the same notes.

use std::collections::HashSet;
use std::path::Path;

use serde::Serialize;

use super::front_matter::{NoteFront, TasksFront, render};
use crate::envelope::ToolError;
use crate::store::transfer::{NoteRecord, Record, TaskRecord};
use crate::store::{Store, TaskStatus, task_status};

/// What an export wrote.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExportReport {
    pub notes: u64,
    pub tasks: u64,
    /// Files written (notes, and one per task status).
    pub files: u64,
}

/// Writes the store's notes and tasks into `dir`, which must be empty or
/// not exist yet (an export never mixes with or overwrites other files).
pub fn export(store: &dyn Store, dir: &Path, now: &str) -> Result<ExportReport, ToolError> {
    check_target(dir)?;
    let mut notes = Vec::new();
    let mut tasks = Vec::new();
    store.dump(&mut |record| {
        match record {
            Record::Note(note) => notes.push(note),
            Record::Task(task) => tasks.push(task),
            _ => {}
        }
        Ok(())
    })?;
    let mut report = ExportReport::default();
    let notes_dir = dir.join("notes");
    create_dir(&notes_dir)?;
    let mut names = HashSet::new();
    for note in &notes {
        let name = file_name(note, &mut names);
        write(&notes_dir.join(name), &note_file(note))?;
        report.notes += 1;
        report.files += 1;
    }
    let tasks_dir = dir.join("tasks");
    create_dir(&tasks_dir)?;
    for status in TaskStatus::ALL {
        let of_status: Vec<&TaskRecord> = tasks
            .iter()
            .filter(|t| task_status(&t.status, t.claim_expires_at.as_deref(), now) == status)
            .collect();
        let file = tasks_dir.join(format!("{}.md", status.as_str()));
        write(&file, &tasks_file(status, &of_status))?;
        report.tasks += of_status.len() as u64;
        report.files += 1;
    }
    Ok(report)
}

fn check_target(dir: &Path) -> Result<(), ToolError> {
    if !dir.exists() {
        return create_dir(dir);
    }
    let empty = std::fs::read_dir(dir)
        .map(|mut entries| entries.next().is_none())
        .unwrap_or(false);
    if dir.is_dir() && empty {
        Ok(())
    } else {
        Err(ToolError::invalid_input(
            "markdown",
            "must name a new or empty folder (an export never overwrites files)",
        ))
    }
}

fn create_dir(dir: &Path) -> Result<(), ToolError> {
    std::fs::create_dir_all(dir).map_err(|e| unwritable(&e))
}

fn write(path: &Path, text: &str) -> Result<(), ToolError> {
    std::fs::write(path, text).map_err(|e| unwritable(&e))
}

fn unwritable(error: &std::io::Error) -> ToolError {
    tracing::warn!(%error, "cannot write the export");
    ToolError::invalid_field(
        "markdown",
        "The export folder cannot be written.",
        error.kind().to_string(),
    )
}

fn note_file(note: &NoteRecord) -> String {
    render(
        &NoteFront {
            id: &note.id,
            title: &note.title,
            tags: &note.tags,
            version: note.version,
            source_url: note.source_url.as_deref(),
            created_at: &note.created_at,
            updated_at: &note.updated_at,
        },
        &note.content,
    )
}

/// The title as a file name: characters that file systems or Obsidian links
/// refuse become spaces, no leading dot, at most 180 bytes; a name already
/// used (ignoring case) gets the id's first 8 characters.
fn file_name(note: &NoteRecord, used: &mut HashSet<String>) -> String {
    let cleaned: String = note
        .title
        .chars()
        .map(|c| {
            if c.is_control() || "/\\:*?\"<>|#^[]".contains(c) {
                ' '
            } else {
                c
            }
        })
        .collect();
    let mut stem = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
    stem = stem.trim_start_matches('.').trim().to_owned();
    if stem.len() > 180 {
        let mut cut = 180;
        while !stem.is_char_boundary(cut) {
            cut -= 1;
        }
        stem.truncate(cut);
    }
    if stem.is_empty() {
        stem = note.slug.clone();
    }
    if !used.insert(stem.to_lowercase()) {
        stem = format!("{stem} ({})", &note.id[..8.min(note.id.len())]);
        used.insert(stem.to_lowercase());
    }
    format!("{stem}.md")
}

/// A checklist of the tasks of one status, in the order they were made.
fn tasks_file(status: TaskStatus, tasks: &[&TaskRecord]) -> String {
    let heading = match status {
        TaskStatus::Open => "Open tasks",
        TaskStatus::Claimed => "Claimed tasks",
        TaskStatus::Done => "Done tasks",
        TaskStatus::Cancelled => "Cancelled tasks",
    };
    let mut body = format!("# {heading}\n");
    for task in tasks {
        let check = if status == TaskStatus::Done { "x" } else { " " };
        let title = task.title.split_whitespace().collect::<Vec<_>>().join(" ");
        body.push_str(&format!("\n- [{check}] {title}\n"));
        let mut facts = vec![
            format!("id `{}`", task.id),
            format!("priority {}", task.priority),
            format!("version {}", task.version),
            format!("updated {}", task.updated_at),
        ];
        if !task.tags.is_empty() {
            facts.push(format!("tags {}", task.tags.join(", ")));
        }
        if status == TaskStatus::Claimed
            && let (Some(holder), Some(until)) = (&task.claim_holder, &task.claim_expires_at)
        {
            facts.push(format!("claimed by {holder} until {until}"));
        }
        body.push_str(&format!("  {}\n", facts.join(" · ")));
        for line in task.description.lines() {
            body.push_str(&format!("  > {line}\n"));
        }
    }
    render(
        &TasksFront {
            cairn: "tasks",
            status: status.as_str(),
            count: tasks.len(),
        },
        &body,
    )
}
