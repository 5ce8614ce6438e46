//! `cairn import DIR`: a folder of Markdown notes (an Obsidian vault, a
//! `cairn export`) into the store, one whole-or-nothing note write per file,
//! through the same checks `note_write` makes.
//!
//! A file names its note by the `id` in its front matter, else by its
//! title's slug, so a second import of the same folder finds every note it
//! wrote and changes nothing. Every file that cannot be imported is reported
//! with the reason and the rest go on.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::front_matter::{self, FrontMatter};
use crate::envelope::{ErrorCategory, ErrorCode, ToolError};
use crate::store::{Note, NoteDraft, NoteWritten, timestamp};
use crate::tools::Ctx;
use crate::tools::notes::{NoteWriteInput, note_draft, slugify};
use crate::tools::registry;

/// How an import treats the notes it finds in the store.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImportOptions {
    /// Write a file's content even when its `version` is not the note's
    /// current one (the vault wins); otherwise that is `version_conflict`.
    pub overwrite: bool,
}

/// What an import did, file by file.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportReport {
    /// Markdown files found.
    pub files: u64,
    pub created: u64,
    pub updated: u64,
    /// Files whose note already held exactly what they say.
    pub unchanged: u64,
    /// Files that are not notes (the task files of a `cairn export`).
    pub skipped: u64,
    /// Files (and folders) that could not be imported.
    pub failed: u64,
    /// One entry per failed file, in path order.
    pub failures: Vec<FileFailure>,
}

/// Why one file was not imported: the error a note write would answer with.
#[derive(Debug, Clone, Serialize)]
pub struct FileFailure {
    /// The file, relative to the imported folder, `/`-separated.
    pub file: String,
    pub code: ErrorCode,
    pub category: ErrorCategory,
    pub message: String,
    pub details: Map<String, Value>,
}

impl FileFailure {
    fn new(file: &str, error: ToolError) -> Self {
        Self {
            file: file.to_owned(),
            code: error.code,
            category: error.category(),
            message: error.message,
            details: *error.details,
        }
    }
}

/// One Markdown file of the folder.
struct Found {
    /// Relative, `/`-separated.
    name: String,
    path: PathBuf,
}

/// Imports every Markdown file under `dir` (hidden files and folders, such
/// as `.obsidian/`, are left out), calling `progress(done, total)` after
/// each. A `dir` that is not a readable folder is the one error returned.
pub fn import(
    ctx: &Ctx<'_>,
    dir: &Path,
    options: ImportOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ImportReport, ToolError> {
    if !dir.is_dir() {
        return Err(ToolError::invalid_input(
            "dir",
            "must name a folder of Markdown files",
        ));
    }
    let mut report = ImportReport::default();
    let mut found = Vec::new();
    walk(dir, "", &mut found, &mut report);
    found.sort_by(|a, b| a.name.cmp(&b.name));
    report.files = found.len() as u64;
    let total = report.files;
    let mut run = Run {
        ctx,
        options,
        ids: HashMap::new(),
        slugs: HashMap::new(),
    };
    for (done, file) in found.iter().enumerate() {
        match run.file(file) {
            Ok(Outcome::Created) => report.created += 1,
            Ok(Outcome::Updated) => report.updated += 1,
            Ok(Outcome::Unchanged) => report.unchanged += 1,
            Ok(Outcome::Skipped) => report.skipped += 1,
            Err(error) => {
                report.failed += 1;
                report.failures.push(FileFailure::new(&file.name, error));
            }
        }
        progress(done as u64 + 1, total);
    }
    report.failures.sort_by(|a, b| a.file.cmp(&b.file));
    Ok(report)
}

/// Collects Markdown files; a folder that cannot be read is a failure of its own.
fn walk(dir: &Path, prefix: &str, found: &mut Vec<Found>, report: &mut ImportReport) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            report.failed += 1;
            report.failures.push(FileFailure::new(
                if prefix.is_empty() { "." } else { prefix },
                unreadable("folder", &error),
            ));
            return;
        }
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let relative = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        // Symbolic links to folders are not followed (no cycles); to files they are.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(&entry.path(), &relative, found, report);
        } else if is_markdown(&name) && (kind.is_file() || entry.path().is_file()) {
            found.push(Found {
                name: relative,
                path: entry.path(),
            });
        }
    }
}

fn is_markdown(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

fn unreadable(what: &str, error: &std::io::Error) -> ToolError {
    tracing::warn!(%error, "cannot read a {what} to import");
    ToolError::invalid_field(
        "file",
        format!("The {what} cannot be read."),
        error.kind().to_string(),
    )
}

enum Outcome {
    Created,
    Updated,
    Unchanged,
    Skipped,
}

/// One import: which ids and slugs the files seen so far took, so a second
/// file claiming either is reported instead of overwriting the first.
struct Run<'a, 'c> {
    ctx: &'a Ctx<'c>,
    options: ImportOptions,
    /// id -> the file that named it.
    ids: HashMap<String, String>,
    /// slug -> (file, note id).
    slugs: HashMap<String, (String, String)>,
}

impl Run<'_, '_> {
    fn file(&mut self, file: &Found) -> Result<Outcome, ToolError> {
        let bytes = std::fs::read(&file.path).map_err(|e| unreadable("file", &e))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            ToolError::invalid_field(
                "file",
                "The file is not UTF-8 text.",
                format!("invalid UTF-8 at byte {}", e.utf8_error().valid_up_to()),
            )
            .detail("byte", e.utf8_error().valid_up_to())
        })?;
        let split = front_matter::split(&text);
        let front = match split.yaml {
            None => FrontMatter::default(),
            Some(yaml) => front_matter::parse(yaml).map_err(|reason| {
                ToolError::invalid_field(
                    "front_matter",
                    "The file's front matter cannot be read.",
                    format!("the front matter {reason}"),
                )
            })?,
        };
        if front.cairn.as_deref() == Some("tasks") {
            return Ok(Outcome::Skipped);
        }
        let id = front.id.clone().map(checked_id).transpose()?;
        let title = front
            .title
            .clone()
            .or_else(|| first_heading(split.body))
            .unwrap_or_else(|| file_stem(&file.name));
        // The same decoding as `note_write`'s: its bounds and the NUL rule
        // hold for an imported note as for one written through a tool.
        let input: NoteWriteInput = registry::decode(json!({
            "title": title,
            "content": split.body,
            "tags": front.tags,
            "source_url": front.source_url,
        }))?;
        let draft = note_draft(
            self.ctx.config,
            id.clone().unwrap_or_else(crate::store::new_id),
            &input.title,
            input.content,
            input.tags,
            input.source_url,
        )?;
        self.claim_in_vault(id.as_deref(), &draft)?;
        let existing = match &id {
            Some(id) => self.ctx.store.note_get(id)?,
            None => match self.ctx.store.note_by_slug(&draft.slug)? {
                Some(found) => self.ctx.store.note_get(&found.id)?,
                None => None,
            },
        };
        let now = timestamp(self.ctx.config.clock.now());
        let (outcome, written): (Outcome, Option<NoteWritten>) = match existing {
            None => (
                Outcome::Created,
                Some(self.ctx.store.note_create(&draft, &now)?),
            ),
            Some(note) if holds(&note, &draft) => {
                self.taken(&file.name, &draft.slug, &note.id);
                (Outcome::Unchanged, None)
            }
            Some(note) => {
                let expected = front.version.filter(|_| !self.options.overwrite);
                let written = self
                    .ctx
                    .store
                    .note_update(&note.id, &draft, expected, &now)?;
                (Outcome::Updated, Some(written))
            }
        };
        if let Some(written) = written {
            self.taken(&file.name, &written.slug, &written.id);
        }
        Ok(outcome)
    }

    /// A second file of this import naming the same id or slug as an earlier
    /// one is refused (`duplicate`, `slug_collision`), naming the earlier file.
    fn claim_in_vault(&self, id: Option<&str>, draft: &NoteDraft) -> Result<(), ToolError> {
        if let Some(id) = id
            && let Some(first) = self.ids.get(id)
        {
            return Err(ToolError::new(
                ErrorCode::Duplicate,
                "Another file of this folder has the same id; each note is imported once.",
            )
            .detail(
                "duplicate_of",
                json!({"id": id, "title": draft.title, "source_url": draft.source_url}),
            )
            .detail("file", first.clone()));
        }
        if let Some((first, existing_id)) = self.slugs.get(&draft.slug) {
            return Err(ToolError::new(
                ErrorCode::SlugCollision,
                "Another file of this folder has a title with the same slug; rename one of them.",
            )
            .detail("existing_id", existing_id.clone())
            .detail("slug", draft.slug.clone())
            .detail("file", first.clone()));
        }
        Ok(())
    }

    fn taken(&mut self, file: &str, slug: &str, id: &str) {
        self.ids.insert(id.to_owned(), file.to_owned());
        self.slugs
            .insert(slug.to_owned(), (file.to_owned(), id.to_owned()));
    }
}

/// Whether the note already holds what the draft would write (fields the
/// file leaves out are kept by a write, so they do not count).
fn holds(note: &Note, draft: &NoteDraft) -> bool {
    note.title == draft.title
        && note.content == draft.content
        && draft.tags.as_ref().is_none_or(|t| *t == note.tags)
        && draft
            .source_url
            .as_deref()
            .is_none_or(|s| note.source_url.as_deref().unwrap_or("") == s)
}

/// A front matter `id` must be a cairn id (32 lowercase hex characters).
fn checked_id(id: String) -> Result<String, ToolError> {
    let id = id.trim().to_owned();
    if id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Ok(id);
    }
    Err(ToolError::invalid_field(
        "front_matter",
        "The file's front matter `id` is not a cairn id (32 lowercase hex characters); remove it to let cairn assign one.",
        "the front matter has an `id` that is not a cairn id",
    ))
}

/// The text of the first level-1 ATX heading (`# Title`) outside code fences.
fn first_heading(body: &str) -> Option<String> {
    let mut fence: Option<&str> = None;
    for line in body.lines() {
        let trimmed = line.trim_start();
        for marker in ["```", "~~~"] {
            if trimmed.starts_with(marker) {
                fence = match fence {
                    None => Some(marker),
                    Some(open) if open == marker => None,
                    other => other,
                };
            }
        }
        if fence.is_some() {
            continue;
        }
        if let Some(text) = line.strip_prefix("# ").or_else(|| line.strip_prefix("#\t")) {
            let text = text.trim().trim_end_matches('#').trim();
            if !slugify(text).is_empty() {
                return Some(text.to_owned());
            }
        }
    }
    None
}

/// The file name without folders and extension.
fn file_stem(name: &str) -> String {
    let base = name.rsplit('/').next().unwrap_or(name);
    match base.rfind('.') {
        Some(dot) if dot > 0 => base[..dot].to_owned(),
        _ => base.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_falls_back_to_the_first_heading_outside_code() {
        assert_eq!(
            first_heading("intro\n```\n# not this\n```\n## sub\n# The Title #\n# later"),
            Some("The Title".to_owned())
        );
        assert_eq!(first_heading("#tag only\n##   \n"), None);
    }

    #[test]
    fn the_title_falls_back_to_the_file_name() {
        assert_eq!(file_stem("a/b/Meeting notes.md"), "Meeting notes");
        assert_eq!(file_stem(".md"), ".md");
        assert_eq!(file_stem("v1.2 plan.markdown"), "v1.2 plan");
    }

    #[test]
    fn only_cairn_ids_are_kept_from_front_matter() {
        assert!(checked_id("0123456789abcdef0123456789abcdef".into()).is_ok());
        for bad in ["202301011200", "0123456789ABCDEF0123456789ABCDEF", ""] {
            let error = checked_id(bad.into()).unwrap_err();
            assert_eq!(error.code, ErrorCode::InvalidInput);
        }
    }
}
