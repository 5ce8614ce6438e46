//! Dump and restore on PostgreSQL: a dump reads in one REPEATABLE READ,
//! read-only transaction (one snapshot while gateways keep writing); a
//! restore writes in one transaction under the graph lock, rows as they were
//! (the search vectors are generated columns and follow).

use postgres::{Client, IsolationLevel};

use super::notes::lock_graph;
use super::{R, Tx, at, time_of, time_opt};
use crate::envelope::ToolError;
use crate::store::Counts;
use crate::store::StoreError;
use crate::store::transfer::{
    LinkRecord, NoteRecord, Record, RestoreReport, Snapshot, TaskRecord, check_empty,
};

type Sink<'a> = dyn FnMut(Record) -> Result<(), ToolError> + 'a;

pub(super) fn dump(client: &mut Client, sink: &mut Sink<'_>) -> R<()> {
    let mut tx = client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    for r in tx.query(
        "SELECT id, title, description, tags, priority, status, claim_holder, claim_expires_at,
                version, created_at, updated_at
         FROM tasks ORDER BY seq",
        &[],
    )? {
        sink(Record::Task(TaskRecord {
            id: r.try_get(0)?,
            title: r.try_get(1)?,
            description: r.try_get(2)?,
            tags: r.try_get(3)?,
            priority: r.try_get(4)?,
            status: r.try_get(5)?,
            claim_holder: r.try_get(6)?,
            claim_expires_at: time_opt(&r, 7)?,
            version: r.try_get(8)?,
            created_at: time_of(&r, 9)?,
            updated_at: time_of(&r, 10)?,
        }))
        .map_err(StoreError::stopped)?;
    }
    for r in tx.query(
        "SELECT id, title, slug, content, tags, source_url, version, created_at, updated_at,
                ARRAY(SELECT slug FROM note_refs WHERE source_id = notes.id ORDER BY slug)
         FROM notes ORDER BY seq",
        &[],
    )? {
        sink(Record::Note(NoteRecord {
            id: r.try_get(0)?,
            title: r.try_get(1)?,
            slug: r.try_get(2)?,
            content: r.try_get(3)?,
            tags: r.try_get(4)?,
            source_url: r.try_get(5)?,
            version: r.try_get(6)?,
            created_at: time_of(&r, 7)?,
            updated_at: time_of(&r, 8)?,
            wiki_links: r.try_get(9)?,
        }))
        .map_err(StoreError::stopped)?;
    }
    for r in tx.query(
        "SELECT id, source, target, kind, created_at FROM links ORDER BY seq",
        &[],
    )? {
        sink(Record::Link(LinkRecord {
            id: r.try_get(0)?,
            source: r.try_get(1)?,
            target: r.try_get(2)?,
            kind: r.try_get(3)?,
            created_at: time_of(&r, 4)?,
        }))
        .map_err(StoreError::stopped)?;
    }
    tx.commit()?;
    Ok(())
}

/// Loads `snapshot` in the caller's transaction; without `merge` the store
/// must be empty. With it, a record whose id, slug or source the store holds
/// is skipped.
pub(super) fn restore(tx: &mut Tx<'_, '_>, snapshot: &Snapshot, merge: bool) -> R<RestoreReport> {
    lock_graph(tx)?;
    let row = tx.query_one(
        "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM notes), (SELECT count(*) FROM links)",
        &[],
    )?;
    let held = Counts {
        tasks: row.try_get::<_, i64>(0)? as u64,
        notes: row.try_get::<_, i64>(1)? as u64,
        links: row.try_get::<_, i64>(2)? as u64,
    };
    check_empty(held, merge)?;
    let mut report = RestoreReport::default();
    let task = "INSERT INTO tasks (id, title, description, tags, priority, status, claim_holder,
                            claim_expires_at, version, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING";
    for t in &snapshot.tasks {
        let expires = t.claim_expires_at.as_deref().map(at).transpose()?;
        let inserted = tx.execute(
            task,
            &[
                &t.id,
                &t.title,
                &t.description,
                &t.tags,
                &t.priority,
                &t.status,
                &t.claim_holder,
                &expires,
                &t.version,
                &at(&t.created_at)?,
                &at(&t.updated_at)?,
            ],
        )?;
        report.tally(|l| &mut l.tasks, inserted == 1);
    }
    let note = "INSERT INTO notes (id, title, slug, content, tags, source_url, version, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING";
    let note_refs = "INSERT INTO note_refs (source_id, slug) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING";
    for n in &snapshot.notes {
        let inserted = tx.execute(
            note,
            &[
                &n.id,
                &n.title,
                &n.slug,
                &n.content,
                &n.tags,
                &n.source_url,
                &n.version,
                &at(&n.created_at)?,
                &at(&n.updated_at)?,
            ],
        )?;
        report.tally(|l| &mut l.notes, inserted == 1);
        if inserted == 1 {
            tx.execute(note_refs, &[&n.id, &n.wiki_links])?;
        }
    }
    let link = "INSERT INTO links (id, source, target, kind, created_at)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING";
    for l in &snapshot.links {
        let inserted = tx.execute(
            link,
            &[&l.id, &l.source, &l.target, &l.kind, &at(&l.created_at)?],
        )?;
        report.tally(|l| &mut l.links, inserted == 1);
    }
    Ok(report)
}
