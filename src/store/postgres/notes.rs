//! Notes on PostgreSQL: rows, uniqueness of slug and source_url, and the
//! `links_to` edges their `[[wiki-links]]` make. Note writes hold the graph
//! lock, so two gateways never interleave the read-then-write of those edges.

use postgres::{GenericClient, Row};

use super::{Db, Filter, GRAPH_LOCK, R, Tx, at, boxed, keyset_page, rows, time_of};
use crate::store::feed::{NewChange, Written};
use crate::store::model::*;
use crate::store::refusal;

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
    insert(tx, draft, now)?;
    relink(tx, &draft.id, &draft.slug, &draft.wiki_links, now)?;
    announce(now, written(tx, &draft.id, true)?)
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
    tx.execute(
        "UPDATE notes SET title = $2, slug = $3, content = $4, tags = coalesce($5, tags),
                source_url = CASE WHEN $6::text IS NULL THEN source_url ELSE nullif($6, '') END,
                version = version + 1, updated_at = $7
         WHERE id = $1",
        &[
            &id,
            &draft.title,
            &draft.slug,
            &draft.content,
            &draft.tags,
            &draft.source_url,
            &at(now)?,
        ],
    )?;
    relink(tx, id, &draft.slug, &draft.wiki_links, now)?;
    announce(now, written(tx, id, false)?)
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
    tx.execute("DELETE FROM links WHERE source = $1 OR target = $1", &[&id])?;
    tx.execute("DELETE FROM notes WHERE id = $1", &[&id])?;
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
    if let Some(url) = draft.source_url.as_ref().filter(|u| !u.is_empty())
        && let Some(other) = tx.query_opt(
            "SELECT id, title FROM notes WHERE source_url = $1 AND id IS DISTINCT FROM $2",
            &[url, &own_id],
        )?
    {
        let (id, title): (String, String) = (other.try_get(0)?, other.try_get(1)?);
        return Err(refusal::duplicate(&id, &title, url).into());
    }
    if let Some(other) = tx.query_opt(
        "SELECT id FROM notes WHERE slug = $1 AND id IS DISTINCT FROM $2",
        &[&draft.slug, &own_id],
    )? {
        return Err(refusal::slug_collision(&other.try_get::<_, String>(0)?).into());
    }
    Ok(())
}

/// Rewrites a note's wiki-link references and every `links_to` edge they make:
/// from this note to the notes its links name, and to this note from notes
/// whose links name its (possibly new) slug.
fn relink(tx: &mut Tx<'_, '_>, id: &str, slug: &str, wiki_links: &[String], now: &str) -> R<()> {
    tx.execute("DELETE FROM note_refs WHERE source_id = $1", &[&id])?;
    tx.execute(
        "INSERT INTO note_refs (source_id, slug) SELECT $1, unnest($2::text[])
         ON CONFLICT DO NOTHING",
        &[&id, &wiki_links],
    )?;
    tx.execute(
        "DELETE FROM links WHERE kind = 'links_to' AND source = $1",
        &[&id],
    )?;
    tx.execute(
        "DELETE FROM links WHERE kind = 'links_to' AND target = $1
           AND source NOT IN (SELECT source_id FROM note_refs WHERE slug = $2)",
        &[&id, &slug],
    )?;
    let outgoing: Vec<String> = rows(
        tx,
        "SELECT DISTINCT n.id FROM note_refs r JOIN notes n ON n.slug = r.slug
         WHERE r.source_id = $1 AND n.id <> $1",
        &[&id],
        |r| Ok(r.try_get(0)?),
    )?;
    let incoming: Vec<String> = rows(
        tx,
        "SELECT r.source_id FROM note_refs r WHERE r.slug = $1 AND r.source_id <> $2
         AND NOT EXISTS (SELECT 1 FROM links l WHERE l.source = r.source_id AND l.target = $2 AND l.kind = 'links_to')",
        &[&slug, &id],
        |r| Ok(r.try_get(0)?),
    )?;
    let now = at(now)?;
    let insert = "INSERT INTO links (id, source, target, kind, created_at) VALUES ($1, $2, $3, 'links_to', $4)";
    for target in &outgoing {
        tx.execute(insert, &[&new_id(), &id, target, &now])?;
    }
    for source in &incoming {
        tx.execute(insert, &[&new_id(), source, &id, &now])?;
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

fn written(tx: &mut Tx<'_, '_>, id: &str, created: bool) -> R<NoteWritten> {
    let row = tx.query_one(
        "SELECT title, slug, version, updated_at FROM notes WHERE id = $1",
        &[&id],
    )?;
    let (linked, unresolved_links) = links_of(tx, id)?;
    Ok(NoteWritten {
        id: id.to_owned(),
        title: row.try_get(0)?,
        slug: row.try_get(1)?,
        version: row.try_get(2)?,
        created,
        updated_at: time_of(&row, 3)?,
        linked,
        unresolved_links,
    })
}
