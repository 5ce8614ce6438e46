//! The link graph on SQLite: edges between tasks and notes, the nodes they
//! join, id-prefix lookup, and graph_doctor's scan.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{R, exec, for_chunks, row, rows};
use crate::store::feed::{ChangeKind, NewChange, Written};
use crate::store::model::*;
use crate::store::refusal;

const EDGE_COLUMNS: &str = "id, source, target, kind";

fn edge_from_row(row: &Row<'_>) -> rusqlite::Result<Edge> {
    let kind: String = row.get(3)?;
    Ok(Edge {
        id: row.get(0)?,
        source: row.get(1)?,
        target: row.get(2)?,
        kind: LinkKind::parse(&kind).unwrap_or(LinkKind::RelatesTo),
    })
}

/// A task node from `id, title, status, claim_expires_at`.
fn task_node(row: &Row<'_>, now: &str) -> rusqlite::Result<Node> {
    let stored: String = row.get(2)?;
    let expires: Option<String> = row.get(3)?;
    Ok(Node {
        id: row.get(0)?,
        kind: NodeKind::Task,
        title: row.get(1)?,
        status: Some(task_status(&stored, expires.as_deref(), now)),
        slug: None,
    })
}

/// A note node from `id, title, slug`.
fn note_node(row: &Row<'_>) -> rusqlite::Result<Node> {
    Ok(Node {
        id: row.get(0)?,
        kind: NodeKind::Note,
        title: row.get(1)?,
        status: None,
        slug: Some(row.get(2)?),
    })
}

pub(super) fn find_ids(
    conn: &Connection,
    kind: EntityKind,
    prefix: &str,
    limit: usize,
) -> R<Vec<IdTitle>> {
    let (table, label) = match kind {
        EntityKind::Task => ("tasks", "title"),
        EntityKind::Note => ("notes", "title"),
        EntityKind::Link => ("links", "kind"),
    };
    // '~' sorts after every id character, so the range holds exactly the ids
    // starting with `prefix` (and no LIKE wildcard can sneak in).
    rows(
        conn,
        &format!("SELECT id, {label} FROM {table} WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT ?3"),
        params![prefix, format!("{prefix}~"), limit as i64],
        |r| {
            Ok(IdTitle {
                id: r.get(0)?,
                title: r.get(1)?,
            })
        },
    )
}

pub(super) fn link_add(
    conn: &Connection,
    source: &str,
    target: &str,
    kind: LinkKind,
    now: &str,
) -> R<Written<(Edge, bool)>> {
    let existing = row(
        conn,
        &format!(
            "SELECT {EDGE_COLUMNS} FROM links
             WHERE source = ?1 AND target = ?2 AND kind = ?3 ORDER BY seq LIMIT 1"
        ),
        params![source, target, kind.as_str()],
        edge_from_row,
    )
    .optional()?;
    if let Some(edge) = existing {
        return Ok(Written::quiet((edge, false)));
    }
    if let Some((waiter, prerequisite)) = refusal::waits_for(source, target, kind) {
        refusal::check_no_cycle(waiter, prerequisite, |node| prerequisites_of(conn, node))??;
    }
    let edge = Edge {
        id: new_id(),
        source: source.to_owned(),
        target: target.to_owned(),
        kind,
    };
    exec(
        conn,
        "INSERT INTO links (id, source, target, kind, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![edge.id, source, target, kind.as_str(), now],
    )?;
    let change = NewChange::link(now, ChangeKind::LinkAdded, &edge);
    Ok(Written::with((edge, true), change))
}

/// What `node` waits for: the targets of its `depends_on` edges and the
/// sources of the `blocks` edges into it (`links_by_source`, `links_by_target`).
fn prerequisites_of(conn: &Connection, node: &str) -> R<Vec<String>> {
    rows(
        conn,
        "SELECT target FROM links WHERE source = ?1 AND kind = 'depends_on'
         UNION SELECT source FROM links WHERE target = ?1 AND kind = 'blocks'",
        [node],
        |r| r.get(0),
    )
}

pub(super) fn link_remove(conn: &Connection, id: &str, now: &str) -> R<Written<Edge>> {
    let removed = row(
        conn,
        &format!("DELETE FROM links WHERE id = ?1 RETURNING {EDGE_COLUMNS}"),
        [id],
        edge_from_row,
    )
    .optional()?;
    let edge = removed.ok_or_else(|| refusal::link_not_found(id))?;
    let change = NewChange::link(now, ChangeKind::LinkRemoved, &edge);
    Ok(Written::with(edge, change))
}

pub(super) fn nodes(conn: &Connection, ids: &[String], now: &str) -> R<Vec<Node>> {
    let mut nodes = for_chunks(
        conn,
        "SELECT id, title, status, claim_expires_at FROM tasks WHERE id IN ({ids})",
        ids,
        |r| task_node(r, now),
    )?;
    nodes.extend(for_chunks(
        conn,
        "SELECT id, title, slug FROM notes WHERE id IN ({ids})",
        ids,
        note_node,
    )?);
    Ok(nodes)
}

pub(super) fn edges_touching(conn: &Connection, ids: &[String]) -> R<Vec<Edge>> {
    let mut edges = for_chunks(
        conn,
        &format!(
            "SELECT {EDGE_COLUMNS} FROM links WHERE source IN ({{ids}}) OR target IN ({{ids}}) ORDER BY seq"
        ),
        ids,
        edge_from_row,
    )?;
    let mut seen = std::collections::HashSet::new();
    edges.retain(|e| seen.insert(e.id.clone()));
    Ok(edges)
}

pub(super) fn all(conn: &Connection, now: &str) -> R<(Vec<Node>, Vec<Edge>)> {
    let mut nodes = rows(
        conn,
        "SELECT id, title, status, claim_expires_at FROM tasks ORDER BY seq",
        [],
        |r| task_node(r, now),
    )?;
    nodes.extend(rows(
        conn,
        "SELECT id, title, slug FROM notes ORDER BY seq",
        [],
        note_node,
    )?);
    let edges = rows(
        conn,
        &format!("SELECT {EDGE_COLUMNS} FROM links ORDER BY seq"),
        [],
        edge_from_row,
    )?;
    Ok((nodes, edges))
}

/// Finds dangling edges, self loops, duplicates and orphans; with `fix`
/// (inside the caller's write transaction) deletes the bad edges.
pub(super) fn doctor(
    conn: &Connection,
    fix: bool,
    orphan_limit: usize,
    now: &str,
) -> R<DoctorScan> {
    let edges = |sql: &str| rows(conn, sql, [], edge_from_row);
    let dangling = edges(
        "SELECT id, source, target, kind FROM links l
         WHERE (NOT EXISTS (SELECT 1 FROM tasks WHERE id = l.source)
                AND NOT EXISTS (SELECT 1 FROM notes WHERE id = l.source))
            OR (NOT EXISTS (SELECT 1 FROM tasks WHERE id = l.target)
                AND NOT EXISTS (SELECT 1 FROM notes WHERE id = l.target))
         ORDER BY seq",
    )?;
    let self_loops =
        edges("SELECT id, source, target, kind FROM links WHERE source = target ORDER BY seq")?;
    let duplicates = edges(
        "SELECT id, source, target, kind FROM links l
         WHERE EXISTS (SELECT 1 FROM links m WHERE m.source = l.source AND m.target = l.target
                       AND m.kind = l.kind AND m.seq < l.seq)
         ORDER BY seq",
    )?;
    let lonely = "NOT EXISTS (SELECT 1 FROM links WHERE source = x.id)
                  AND NOT EXISTS (SELECT 1 FROM links WHERE target = x.id)";
    let orphan_count: i64 = row(
        conn,
        &format!(
            "SELECT (SELECT count(*) FROM tasks x WHERE {lonely}) + (SELECT count(*) FROM notes x WHERE {lonely})"
        ),
        [],
        |r| r.get(0),
    )?;
    let mut orphans = rows(
        conn,
        &format!(
            "SELECT id, title, status, claim_expires_at FROM tasks x WHERE {lonely} ORDER BY seq LIMIT ?1"
        ),
        [orphan_limit as i64],
        |r| task_node(r, now),
    )?;
    let left = orphan_limit.saturating_sub(orphans.len());
    orphans.extend(rows(
        conn,
        &format!("SELECT id, title, slug FROM notes x WHERE {lonely} ORDER BY seq LIMIT ?1"),
        [left as i64],
        note_node,
    )?);
    let scan = DoctorScan::new(
        dangling,
        self_loops,
        duplicates,
        orphans,
        orphan_count as u64,
    );
    if fix {
        let mut delete = conn.prepare_cached("DELETE FROM links WHERE id = ?1")?;
        for edge in scan.bad_edges() {
            delete.execute([&edge.id])?;
        }
    }
    Ok(scan)
}
