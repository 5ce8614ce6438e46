//! Notes on SQLite: rows, uniqueness of slug and source_url, and the
//! `links_to` edges their `[[wiki-links]]` make.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{Filter, R, boxed, exec, keyset_page, parse_tags, row, rows, search, tags_json};
use crate::store::feed::{NewChange, Written};
use crate::store::model::*;
use crate::store::refusal;

const SUMMARY_COLUMNS: &str = "id, title, slug, tags, source_url, version, updated_at";

fn summary_from_row(row: &Row<'_>) -> rusqlite::Result<NoteSummary> {
    Ok(NoteSummary {
        id: row.get(0)?,
        title: row.get(1)?,
        slug: row.get(2)?,
        tags: parse_tags(&row.get::<_, String>(3)?),
        source_url: row.get(4)?,
        version: row.get(5)?,
        updated_at: row.get(6)?,
    })
}

const INSERT: &str =
    "INSERT INTO notes (id, title, slug, content, tags, source_url, created_at, updated_at)
                      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)";

fn insert(conn: &Connection, draft: &NoteDraft, now: &str) -> R<()> {
    conn.prepare_cached(INSERT)?.execute(params![
        draft.id,
        draft.title,
        draft.slug,
        draft.content,
        tags_json(draft.tags.as_deref().unwrap_or_default()),
        draft.source_url.as_deref().filter(|u| !u.is_empty()),
        now
    ])?;
    search::index(
        conn,
        search::Doc::Note,
        &draft.id,
        &draft.title,
        &draft.content,
    )
}

pub(super) fn create(conn: &Connection, draft: &NoteDraft, now: &str) -> R<Written<NoteWritten>> {
    check_unique(conn, draft, None)?;
    insert(conn, draft, now)?;
    relink(conn, &draft.id, &draft.slug, &draft.wiki_links, now)?;
    announce(now, written(conn, &draft.id, true)?)
}

fn announce(now: &str, note: NoteWritten) -> R<Written<NoteWritten>> {
    let change = NewChange::note_written(now, &note);
    Ok(Written::with(note, change))
}

pub(super) fn insert_many(conn: &Connection, notes: &[NoteDraft], now: &str) -> R<()> {
    notes.iter().try_for_each(|n| insert(conn, n, now))
}

/// The version of note `id`, checked against `expected`: `note_not_found`, `version_conflict`.
fn current_version(conn: &Connection, id: &str, expected: Option<i64>) -> R<String> {
    let current: Option<(i64, String)> = row(
        conn,
        "SELECT version, title FROM notes WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()?;
    let Some((version, title)) = current else {
        return Err(refusal::note_not_found(id).into());
    };
    refusal::check_version(expected, version)?;
    Ok(title)
}

pub(super) fn update(
    conn: &Connection,
    id: &str,
    draft: &NoteDraft,
    expected_version: Option<i64>,
    now: &str,
) -> R<Written<NoteWritten>> {
    current_version(conn, id, expected_version)?;
    check_unique(conn, draft, Some(id))?;
    exec(
        conn,
        "UPDATE notes SET title = ?2, slug = ?3, content = ?4, tags = coalesce(?5, tags),
                source_url = CASE WHEN ?6 IS NULL THEN source_url ELSE nullif(?6, '') END,
                version = version + 1, updated_at = ?7
         WHERE id = ?1",
        params![
            id,
            draft.title,
            draft.slug,
            draft.content,
            draft.tags.as_deref().map(tags_json),
            draft.source_url,
            now
        ],
    )?;
    search::index(conn, search::Doc::Note, id, &draft.title, &draft.content)?;
    relink(conn, id, &draft.slug, &draft.wiki_links, now)?;
    announce(now, written(conn, id, false)?)
}

/// A note's columns, in the order [`note_from_row`] reads them.
pub(super) const NOTE_COLUMNS: &str =
    "id, title, slug, content, tags, source_url, version, created_at, updated_at";

/// A note from the first columns of `r` ([`NOTE_COLUMNS`]), without its links.
pub(super) fn note_from_row(r: &Row<'_>) -> rusqlite::Result<Note> {
    Ok(Note {
        id: r.get(0)?,
        title: r.get(1)?,
        slug: r.get(2)?,
        content: r.get(3)?,
        tags: parse_tags(&r.get::<_, String>(4)?),
        source_url: r.get(5)?,
        version: r.get(6)?,
        created_at: r.get(7)?,
        updated_at: r.get(8)?,
        links: Vec::new(),
        unresolved_links: Vec::new(),
    })
}

pub(super) fn get(conn: &Connection, id: &str) -> R<Option<Note>> {
    let note = row(
        conn,
        &format!("SELECT {NOTE_COLUMNS} FROM notes WHERE id = ?1"),
        [id],
        note_from_row,
    )
    .optional()?;
    let Some(mut note) = note else {
        return Ok(None);
    };
    note.links = refs_resolved(conn, id)?;
    note.unresolved_links = links_of(conn, id)?.1;
    Ok(Some(note))
}

pub(super) fn by_slug(conn: &Connection, slug: &str) -> R<Option<IdTitle>> {
    Ok(row(
        conn,
        "SELECT id, title FROM notes WHERE slug = ?1",
        [slug],
        |r| {
            Ok(IdTitle {
                id: r.get(0)?,
                title: r.get(1)?,
            })
        },
    )
    .optional()?)
}

pub(super) fn list(conn: &Connection, query: &NoteQuery) -> R<Page<NoteSummary>> {
    let mut f = Filter::default();
    if let Some(tag) = &query.tag {
        f.push(
            "EXISTS (SELECT 1 FROM json_each(notes.tags) WHERE value = ?)",
            vec![boxed(tag.clone())],
        );
    }
    if let Some(q) = &query.q {
        let q = q.to_lowercase();
        f.push(
            "(instr(lower(title), ?) > 0 OR instr(lower(content), ?) > 0)",
            vec![boxed(q.clone()), boxed(q)],
        );
    }
    keyset_page(
        conn,
        "notes",
        SUMMARY_COLUMNS,
        f,
        query.after.as_ref(),
        query.limit,
        summary_from_row,
    )
}

pub(super) fn delete(
    conn: &Connection,
    id: &str,
    expected_version: Option<i64>,
    now: &str,
) -> R<Written<IdTitle>> {
    let title = current_version(conn, id, expected_version)?;
    exec(
        conn,
        "DELETE FROM links WHERE source = ?1 OR target = ?1",
        [id],
    )?;
    search::unindex(conn, search::Doc::Note, id)?;
    exec(conn, "DELETE FROM notes WHERE id = ?1", [id])?;
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
fn check_unique(conn: &Connection, draft: &NoteDraft, own_id: Option<&str>) -> R<()> {
    if let Some(url) = draft.source_url.as_ref().filter(|u| !u.is_empty()) {
        let other: Option<(String, String)> = row(
            conn,
            "SELECT id, title FROM notes WHERE source_url = ?1 AND id IS NOT ?2",
            params![url, own_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
        if let Some((id, title)) = other {
            return Err(refusal::duplicate(&id, &title, url).into());
        }
    }
    let other: Option<String> = row(
        conn,
        "SELECT id FROM notes WHERE slug = ?1 AND id IS NOT ?2",
        params![draft.slug, own_id],
        |r| r.get(0),
    )
    .optional()?;
    if let Some(id) = other {
        return Err(refusal::slug_collision(&id).into());
    }
    Ok(())
}

/// Rewrites a note's wiki-link references and every `links_to` edge they make:
/// from this note to the notes its links name, and to this note from notes
/// whose links name its (possibly new) slug.
fn relink(conn: &Connection, id: &str, slug: &str, wiki_links: &[String], now: &str) -> R<()> {
    exec(conn, "DELETE FROM note_refs WHERE source_id = ?1", [id])?;
    {
        let mut insert = conn
            .prepare_cached("INSERT OR IGNORE INTO note_refs (source_id, slug) VALUES (?1, ?2)")?;
        for link in wiki_links {
            insert.execute(params![id, link])?;
        }
    }
    exec(
        conn,
        "DELETE FROM links WHERE kind = 'links_to' AND source = ?1",
        [id],
    )?;
    exec(
        conn,
        "DELETE FROM links WHERE kind = 'links_to' AND target = ?1
           AND source NOT IN (SELECT source_id FROM note_refs WHERE slug = ?2)",
        params![id, slug],
    )?;
    let outgoing: Vec<String> = rows(
        conn,
        "SELECT DISTINCT n.id FROM note_refs r JOIN notes n ON n.slug = r.slug
         WHERE r.source_id = ?1 AND n.id <> ?1",
        [id],
        |r| r.get(0),
    )?;
    let incoming: Vec<String> = rows(
        conn,
        "SELECT r.source_id FROM note_refs r WHERE r.slug = ?1 AND r.source_id <> ?2
         AND NOT EXISTS (SELECT 1 FROM links l WHERE l.source = r.source_id AND l.target = ?2 AND l.kind = 'links_to')",
        params![slug, id],
        |r| r.get(0),
    )?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO links (id, source, target, kind, created_at) VALUES (?1, ?2, ?3, 'links_to', ?4)",
    )?;
    for target in &outgoing {
        insert.execute(params![new_id(), id, target, now])?;
    }
    for source in &incoming {
        insert.execute(params![new_id(), source, id, now])?;
    }
    Ok(())
}

/// The notes a note's wiki-links name (self included), by slug.
fn refs_resolved(conn: &Connection, id: &str) -> R<Vec<NoteLink>> {
    rows(
        conn,
        "SELECT n.id, n.title, n.slug FROM note_refs r JOIN notes n ON n.slug = r.slug
         WHERE r.source_id = ?1 ORDER BY n.slug",
        [id],
        |r| {
            Ok(NoteLink {
                id: r.get(0)?,
                title: r.get(1)?,
                slug: r.get(2)?,
            })
        },
    )
}

/// The wiki-links of a note: resolved targets and unresolved slugs.
fn links_of(conn: &Connection, id: &str) -> R<(Vec<String>, Vec<String>)> {
    let linked = rows(
        conn,
        "SELECT target FROM links WHERE source = ?1 AND kind = 'links_to' ORDER BY target",
        [id],
        |r| r.get(0),
    )?;
    let unresolved = rows(
        conn,
        "SELECT r.slug FROM note_refs r WHERE r.source_id = ?1
         AND NOT EXISTS (SELECT 1 FROM notes n WHERE n.slug = r.slug) ORDER BY r.slug",
        [id],
        |r| r.get(0),
    )?;
    Ok((linked, unresolved))
}

fn written(conn: &Connection, id: &str, created: bool) -> R<NoteWritten> {
    let (title, slug, version, updated_at) = row(
        conn,
        "SELECT title, slug, version, updated_at FROM notes WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    let (linked, unresolved_links) = links_of(conn, id)?;
    Ok(NoteWritten {
        id: id.to_owned(),
        title,
        slug,
        version,
        created,
        updated_at,
        linked,
        unresolved_links,
    })
}
