//! Dump and restore on SQLite: a dump reads in one read transaction (a WAL
//! snapshot, so a running `serve` can keep writing); a restore writes in one
//! immediate transaction, rows as they were, the full-text index with them.

use rusqlite::{Connection, params};

use super::notes::{NOTE_COLUMNS, note_from_row};
use super::{R, parse_tags, search, tags_json};
use crate::envelope::ToolError;
use crate::store::Counts;
use crate::store::StoreError;
use crate::store::transfer::{
    LinkRecord, NoteRecord, Record, RestoreReport, Snapshot, TaskRecord, check_empty,
};

type Sink<'a> = dyn FnMut(Record) -> Result<(), ToolError> + 'a;

pub(super) fn dump(conn: &Connection, sink: &mut Sink<'_>) -> R<()> {
    let tx = conn.unchecked_transaction()?;
    let mut tasks = tx.prepare(
        "SELECT id, title, description, tags, priority, status, claim_holder, claim_expires_at,
                version, created_at, updated_at
         FROM tasks ORDER BY seq",
    )?;
    let mut rows = tasks.query([])?;
    while let Some(r) = rows.next()? {
        sink(Record::Task(TaskRecord {
            id: r.get(0)?,
            title: r.get(1)?,
            description: r.get(2)?,
            tags: parse_tags(&r.get::<_, String>(3)?),
            priority: r.get(4)?,
            status: r.get(5)?,
            claim_holder: r.get(6)?,
            claim_expires_at: r.get(7)?,
            version: r.get(8)?,
            created_at: r.get(9)?,
            updated_at: r.get(10)?,
        }))
        .map_err(StoreError::stopped)?;
    }
    let mut notes = tx.prepare(&format!(
        "SELECT {NOTE_COLUMNS},
                (SELECT json_group_array(slug) FROM
                    (SELECT slug FROM note_refs WHERE source_id = notes.id ORDER BY slug))
         FROM notes ORDER BY seq"
    ))?;
    let mut rows = notes.query([])?;
    while let Some(r) = rows.next()? {
        let note = note_from_row(r)?;
        sink(Record::Note(NoteRecord {
            id: note.id,
            title: note.title,
            slug: note.slug,
            content: note.content,
            tags: note.tags,
            source_url: note.source_url,
            version: note.version,
            created_at: note.created_at,
            updated_at: note.updated_at,
            wiki_links: parse_tags(&r.get::<_, String>(9)?),
        }))
        .map_err(StoreError::stopped)?;
    }
    let mut links =
        tx.prepare("SELECT id, source, target, kind, created_at FROM links ORDER BY seq")?;
    let mut rows = links.query([])?;
    while let Some(r) = rows.next()? {
        sink(Record::Link(LinkRecord {
            id: r.get(0)?,
            source: r.get(1)?,
            target: r.get(2)?,
            kind: r.get(3)?,
            created_at: r.get(4)?,
        }))
        .map_err(StoreError::stopped)?;
    }
    Ok(())
}

/// Loads `snapshot` (the caller's transaction); without `merge` the store must
/// be empty. With it, a record whose id, slug or source the store holds is skipped.
pub(super) fn restore(conn: &Connection, snapshot: &Snapshot, merge: bool) -> R<RestoreReport> {
    let held = conn.query_row(
        "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM notes), (SELECT count(*) FROM links)",
        [],
        |r| {
            Ok(Counts {
                tasks: r.get::<_, i64>(0)? as u64,
                notes: r.get::<_, i64>(1)? as u64,
                links: r.get::<_, i64>(2)? as u64,
            })
        },
    )?;
    check_empty(held, merge)?;
    let mut report = RestoreReport::default();
    let mut task = conn.prepare(
        "INSERT OR IGNORE INTO tasks (id, title, description, tags, priority, status, claim_holder,
                                      claim_expires_at, version, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    for t in &snapshot.tasks {
        let inserted = task.execute(params![
            t.id,
            t.title,
            t.description,
            tags_json(&t.tags),
            t.priority,
            t.status,
            t.claim_holder,
            t.claim_expires_at,
            t.version,
            t.created_at,
            t.updated_at
        ])?;
        report.tally(|l| &mut l.tasks, inserted == 1);
        if inserted == 1 {
            search::index(conn, search::Doc::Task, &t.id, &t.title, &t.description)?;
        }
    }
    let mut note = conn.prepare(
        "INSERT OR IGNORE INTO notes (id, title, slug, content, tags, source_url, version,
                                      created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    let mut note_ref =
        conn.prepare("INSERT OR IGNORE INTO note_refs (source_id, slug) VALUES (?1, ?2)")?;
    for n in &snapshot.notes {
        let inserted = note.execute(params![
            n.id,
            n.title,
            n.slug,
            n.content,
            tags_json(&n.tags),
            n.source_url,
            n.version,
            n.created_at,
            n.updated_at
        ])?;
        report.tally(|l| &mut l.notes, inserted == 1);
        if inserted == 1 {
            for slug in &n.wiki_links {
                note_ref.execute(params![n.id, slug])?;
            }
            search::index(conn, search::Doc::Note, &n.id, &n.title, &n.content)?;
        }
    }
    let mut link = conn.prepare(
        "INSERT OR IGNORE INTO links (id, source, target, kind, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for l in &snapshot.links {
        let inserted = link.execute(params![l.id, l.source, l.target, l.kind, l.created_at])?;
        report.tally(|l| &mut l.links, inserted == 1);
    }
    Ok(report)
}
