//! Notes on PostgreSQL: rows, uniqueness of slug and source_url, and the
//! `links_to` edges their `[[wiki-links]]` make. Note writes hold the graph
//! lock, so two gateways never interleave the read-then-write of those edges.

use chrono::{DateTime, Utc};
use postgres::types::ToSql;
use postgres::{GenericClient, Row};

use super::{Db, Filter, GRAPH_LOCK, R, Tx, at, boxed, keyset_page, rows, time_of};
use crate::store::feed::{NewChange, Written};
use crate::store::model::*;
use crate::store::refusal;

/// A note write, `$1` to `$8` ([`write_params`]), followed in the same
/// statement by the rewrite of the note's wiki-link references and every
/// `links_to` edge they make: from this note to the notes its links name,
/// and to it from the notes whose links name its (possibly new) slug.
/// Answers the written note's title, slug, version, time, the notes it now
/// links to and the slugs no note has.
///
/// The parts share one snapshot, taken after the graph lock (so no other
/// note write moves under them), and touch disjoint rows, so the order they
/// run in does not matter: the references kept are deleted from nothing,
/// the edges inserted are new rows, and the stale incoming edges come from
/// notes whose links no longer name this one, the new ones from notes whose
/// links do.
macro_rules! relinked {
    ($write:literal) => {
        concat!(
            "WITH note AS (", $write, " RETURNING title, slug, version, updated_at),
             named AS (SELECT DISTINCT unnest($8::text[]) COLLATE \"C\" AS slug),
             old_refs AS (DELETE FROM note_refs
                          WHERE source_id = $1 AND slug NOT IN (SELECT slug FROM named)),
             new_refs AS (INSERT INTO note_refs (source_id, slug) SELECT $1, slug FROM named
                          ON CONFLICT DO NOTHING),
             targets AS (SELECT DISTINCT n.id FROM named JOIN notes n ON n.slug = named.slug
                         WHERE n.id <> $1),
             sources AS (SELECT r.source_id AS id FROM note_refs r
                         WHERE r.slug = $3 AND r.source_id <> $1
                           AND NOT EXISTS (SELECT 1 FROM links l WHERE l.source = r.source_id
                                           AND l.target = $1 AND l.kind = 'links_to')),
             old_out AS (DELETE FROM links WHERE kind = 'links_to' AND source = $1),
             old_in AS (DELETE FROM links WHERE kind = 'links_to' AND target = $1
                        AND source NOT IN (SELECT source_id FROM note_refs WHERE slug = $3)),
             new_edges AS (INSERT INTO links (id, source, target, kind, created_at)
                           SELECT replace(gen_random_uuid()::text, '-', ''), $1, id, 'links_to', $7
                           FROM targets
                           UNION ALL
                           SELECT replace(gen_random_uuid()::text, '-', ''), id, $1, 'links_to', $7
                           FROM sources)
             SELECT note.title, note.slug, note.version, note.updated_at,
                    ARRAY(SELECT id FROM targets ORDER BY id),
                    ARRAY(SELECT slug FROM named WHERE slug <> $3
                          AND NOT EXISTS (SELECT 1 FROM notes n
                                          WHERE n.slug = named.slug AND n.id <> $1)
                          ORDER BY slug)
             FROM note"
        )
    };
}

const SUMMARY_COLUMNS: &str = "id, title, slug, tags, source_url, version, updated_at";

fn summary_from_row(row: &Row) -> R<NoteSummary> {
    Ok(NoteSummary {
        id: row.try_get(0)?,
        title: row.try_get(1)?,
        slug: row.try_get(2)?,
        tags: row.try_get(3)?,
        source_url: row.try_get(4)?,
        version: row.try_get(5)?,
        updated_at: time_of(row, 6)?,
    })
}

pub(super) fn lock_graph(tx: &mut Tx<'_, '_>) -> R<()> {
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&GRAPH_LOCK])?;
    Ok(())
}

fn insert(tx: &mut Tx<'_, '_>, draft: &NoteDraft, now: &str) -> R<()> {
    tx.execute(
        "INSERT INTO notes (id, title, slug, content, tags, source_url, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7)",
        &[
            &draft.id,
            &draft.title,
            &draft.slug,
            &draft.content,
            &draft.tags.as_deref().unwrap_or_default(),
            &draft.source_url.as_deref().filter(|u| !u.is_empty()),
            &at(now)?,
        ],
    )?;
    Ok(())
}

pub(super) fn create(tx: &mut Tx<'_, '_>, draft: &NoteDraft, now: &str) -> R<Written<NoteWritten>> {
    lock_graph(tx)?;
    check_unique(tx, draft, None)?;
    let row = tx.query_one(
        relinked!(
            "INSERT INTO notes (id, title, slug, content, tags, source_url, created_at, updated_at)
             VALUES ($1, $2, $3, $4, coalesce($5::text[], '{}'), nullif($6, ''), $7, $7)"
        ),
        &write_params(&draft.id.as_str(), draft, &at(now)?),
    )?;
    announce(now, written(&draft.id, true, &row)?)
}

/// `$1` to `$8` of a [`relinked!`] statement.
fn write_params<'a>(
    id: &'a &'a str,
    draft: &'a NoteDraft,
    now: &'a DateTime<Utc>,
) -> [&'a (dyn ToSql + Sync); 8] {
    [
        id,
        &draft.title,
        &draft.slug,
        &draft.content,
        &draft.tags,
        &draft.source_url,
        now,
        &draft.wiki_links,
    ]
}

fn announce(now: &str, note: NoteWritten) -> R<Written<NoteWritten>> {
    let change = NewChange::note_written(now, &note);
    Ok(Written::with(note, change))
}

pub(super) fn insert_many(tx: &mut Tx<'_, '_>, notes: &[NoteDraft], now: &str) -> R<()> {
    notes.iter().try_for_each(|n| insert(tx, n, now))
}

/// The title of note `id`, whose version is checked against `expected`:
/// `note_not_found`, `version_conflict`. Locks the row until the transaction ends.
fn current_version(tx: &mut Tx<'_, '_>, id: &str, expected: Option<i64>) -> R<String> {
    let Some(row) = tx.query_opt(
        "SELECT version, title FROM notes WHERE id = $1 FOR UPDATE",
        &[&id],
    )?
    else {
        return Err(refusal::note_not_found(id).into());
    };
    refusal::check_version(expected, row.try_get(0)?)?;
    Ok(row.try_get(1)?)
}

pub(super) fn update(
    tx: &mut Tx<'_, '_>,
    id: &str,
    draft: &NoteDraft,
    expected_version: Option<i64>,
    now: &str,
) -> R<Written<NoteWritten>> {
    lock_graph(tx)?;
    current_version(tx, id, expected_version)?;
    check_unique(tx, draft, Some(id))?;
    let row = tx.query_one(
        relinked!(
            "UPDATE notes SET title = $2, slug = $3, content = $4, tags = coalesce($5, tags),
                    source_url = CASE WHEN $6::text IS NULL THEN source_url ELSE nullif($6, '') END,
                    version = version + 1, updated_at = $7
             WHERE id = $1"
        ),
        &write_params(&id, draft, &at(now)?),
    )?;
    announce(now, written(id, false, &row)?)
}

pub(super) fn get<C: GenericClient>(c: &mut Db<'_, C>, id: &str) -> R<Option<Note>> {
    let Some(r) = c.query_opt(
        "SELECT id, title, slug, content, tags, source_url, version, created_at, updated_at
         FROM notes WHERE id = $1",
        &[&id],
    )?
    else {
        return Ok(None);
    };
    Ok(Some(Note {
        id: r.try_get(0)?,
        title: r.try_get(1)?,
        slug: r.try_get(2)?,
        content: r.try_get(3)?,
        tags: r.try_get(4)?,
        source_url: r.try_get(5)?,
        version: r.try_get(6)?,
        created_at: time_of(&r, 7)?,
        updated_at: time_of(&r, 8)?,
        links: refs_resolved(c, id)?,
        unresolved_links: links_of(c, id)?.1,
    }))
}

pub(super) fn by_slug<C: GenericClient>(c: &mut Db<'_, C>, slug: &str) -> R<Option<IdTitle>> {
    c.query_opt("SELECT id, title FROM notes WHERE slug = $1", &[&slug])?
        .map(|r| {
            Ok(IdTitle {
                id: r.try_get(0)?,
                title: r.try_get(1)?,
            })
        })
        .transpose()
}

pub(super) fn list<C: GenericClient>(c: &mut Db<'_, C>, query: &NoteQuery) -> R<Page<NoteSummary>> {
    let mut f = Filter::default();
    if let Some(tag) = &query.tag {
        f.push("tags @> ARRAY[$]::text[]", vec![boxed(tag.clone())]);
    }
    if let Some(q) = &query.q {
        let q = q.to_lowercase();
        f.push(
            "(strpos(lower(title), $) > 0 OR strpos(lower(content), $) > 0)",
            vec![boxed(q.clone()), boxed(q)],
        );
    }
    keyset_page(
        c,
        "notes",
        SUMMARY_COLUMNS,
        f,
        query.after.as_ref(),
        query.limit,
        summary_from_row,
    )
}

pub(super) fn delete(
    tx: &mut Tx<'_, '_>,
    id: &str,
    expected_version: Option<i64>,
    now: &str,
) -> R<Written<IdTitle>> {
    lock_graph(tx)?;
    let title = current_version(tx, id, expected_version)?;
    tx.execute(
        "WITH edges AS (DELETE FROM links WHERE source = $1 OR target = $1)
         DELETE FROM notes WHERE id = $1",
        &[&id],
    )?;
    let change = NewChange::note_deleted(now, id, &title);
    Ok(Written::with(
        IdTitle {
            id: id.to_owned(),
            title,
        },
        change,
    ))
}

/// Refuses a note write whose source_url or slug another note holds.
fn check_unique(tx: &mut Tx<'_, '_>, draft: &NoteDraft, own_id: Option<&str>) -> R<()> {
    let url = draft.source_url.as_ref().filter(|u| !u.is_empty());
    let row = tx.query_one(
        "SELECT by_url.id, by_url.title, by_slug.id
         FROM (SELECT) one
         LEFT JOIN notes by_url ON by_url.source_url = $1 AND by_url.id IS DISTINCT FROM $3
         LEFT JOIN notes by_slug ON by_slug.slug = $2 AND by_slug.id IS DISTINCT FROM $3",
        &[&url, &draft.slug, &own_id],
    )?;
    if let (Some(id), Some(title), Some(url)) = (
        row.try_get::<_, Option<String>>(0)?,
        row.try_get::<_, Option<String>>(1)?,
        url,
    ) {
        return Err(refusal::duplicate(&id, &title, url).into());
    }
    if let Some(other) = row.try_get::<_, Option<String>>(2)? {
        return Err(refusal::slug_collision(&other).into());
    }
    Ok(())
}

/// The notes a note's wiki-links name (self included), by slug.
fn refs_resolved<C: GenericClient>(c: &mut Db<'_, C>, id: &str) -> R<Vec<NoteLink>> {
    rows(
        c,
        "SELECT n.id, n.title, n.slug FROM note_refs r JOIN notes n ON n.slug = r.slug
         WHERE r.source_id = $1 ORDER BY n.slug",
        &[&id],
        |r| {
            Ok(NoteLink {
                id: r.try_get(0)?,
                title: r.try_get(1)?,
                slug: r.try_get(2)?,
            })
        },
    )
}

/// The wiki-links of a note: resolved targets and unresolved slugs.
fn links_of<C: GenericClient>(c: &mut Db<'_, C>, id: &str) -> R<(Vec<String>, Vec<String>)> {
    let linked = rows(
        c,
        "SELECT target FROM links WHERE source = $1 AND kind = 'links_to' ORDER BY target",
        &[&id],
        |r| Ok(r.try_get(0)?),
    )?;
    let unresolved = rows(
        c,
        "SELECT r.slug FROM note_refs r WHERE r.source_id = $1
         AND NOT EXISTS (SELECT 1 FROM notes n WHERE n.slug = r.slug) ORDER BY r.slug",
        &[&id],
        |r| Ok(r.try_get(0)?),
    )?;
    Ok((linked, unresolved))
}

/// What a [`relinked!`] statement answered.
fn written(id: &str, created: bool, row: &Row) -> R<NoteWritten> {
    Ok(NoteWritten {
        id: id.to_owned(),
        title: row.try_get(0)?,
        slug: row.try_get(1)?,
        version: row.try_get(2)?,
        created,
        updated_at: time_of(row, 3)?,
        linked: row.try_get(4)?,
        unresolved_links: row.try_get(5)?,
    })
}
