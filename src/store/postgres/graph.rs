//! The link graph on PostgreSQL: edges between tasks and notes, the nodes they
//! join, id-prefix lookup, and graph_doctor's scan.

use postgres::{GenericClient, Row};

use super::notes::lock_graph;
use super::{Db, R, Tx, at, rows, time_opt};
use crate::store::feed::{ChangeKind, NewChange, Written};
use crate::store::model::*;
use crate::store::refusal;

const EDGE_COLUMNS: &str = "id, source, target, kind";

fn edge_from_row(row: &Row) -> R<Edge> {
    Ok(Edge {
        id: row.try_get(0)?,
        source: row.try_get(1)?,
        target: row.try_get(2)?,
        kind: LinkKind::parse(row.try_get(3)?).unwrap_or(LinkKind::RelatesTo),
    })
}

/// A task node from `id, title, status, claim_expires_at`.
fn task_node(row: &Row, now: &str) -> R<Node> {
    let stored: &str = row.try_get(2)?;
    Ok(Node {
        id: row.try_get(0)?,
        kind: NodeKind::Task,
        title: row.try_get(1)?,
        status: Some(task_status(stored, time_opt(row, 3)?.as_deref(), now)),
        slug: None,
    })
}

/// A note node from `id, title, slug`.
fn note_node(row: &Row) -> R<Node> {
    Ok(Node {
        id: row.try_get(0)?,
        kind: NodeKind::Note,
        title: row.try_get(1)?,
        status: None,
        slug: Some(row.try_get(2)?),
    })
}

/// `prefix` as a LIKE pattern matching exactly the strings that start with it.
fn like_prefix(prefix: &str) -> String {
    let mut pattern = String::with_capacity(prefix.len() + 2);
    for ch in prefix.chars() {
        if matches!(ch, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(ch);
    }
    pattern.push('%');
    pattern
}

pub(super) fn find_ids<C: GenericClient>(
    c: &mut Db<'_, C>,
    kind: EntityKind,
    prefix: &str,
    limit: usize,
) -> R<Vec<IdTitle>> {
    let (table, label) = match kind {
        EntityKind::Task => ("tasks", "title"),
        EntityKind::Note => ("notes", "title"),
        EntityKind::Link => ("links", "kind"),
    };
    rows(
        c,
        &format!(
            "SELECT id, {label} FROM {table} WHERE id LIKE $1 ESCAPE '\\' ORDER BY id LIMIT $2"
        ),
        &[&like_prefix(prefix), &(limit as i64)],
        |r| {
            Ok(IdTitle {
                id: r.try_get(0)?,
                title: r.try_get(1)?,
            })
        },
    )
}

pub(super) fn link_add(
    tx: &mut Tx<'_, '_>,
    source: &str,
    target: &str,
    kind: LinkKind,
    now: &str,
) -> R<Written<(Edge, bool)>> {
    lock_graph(tx)?;
    if let Some((waiter, prerequisite)) = refusal::waits_for(source, target, kind) {
        let existing = tx.query_opt(
            "SELECT 1 FROM links WHERE source = $1 AND target = $2 AND kind = $3 LIMIT 1",
            &[&source, &target, &kind.as_str()],
        )?;
        if existing.is_none() {
            refusal::check_no_cycle(waiter, prerequisite, |node| prerequisites_of(tx, node))??;
        }
    }
    // The edge as it is, or inserted when there is none: one statement.
    let row = tx.query_one(
        "WITH found AS (SELECT id, source, target, kind FROM links
                        WHERE source = $1 AND target = $2 AND kind = $3 ORDER BY seq LIMIT 1),
              added AS (INSERT INTO links (id, source, target, kind, created_at)
                        SELECT $4, $1, $2, $3, $5 WHERE NOT EXISTS (SELECT FROM found)
                        RETURNING id, source, target, kind)
         SELECT *, false FROM found UNION ALL SELECT *, true FROM added",
        &[&source, &target, &kind.as_str(), &new_id(), &at(now)?],
    )?;
    let edge = edge_from_row(&row)?;
    if !row.try_get::<_, bool>(4)? {
        return Ok(Written::quiet((edge, false)));
    }
    let change = NewChange::link(now, ChangeKind::LinkAdded, &edge);
    Ok(Written::with((edge, true), change))
}

/// What `node` waits for: the targets of its `depends_on` edges and the
/// sources of the `blocks` edges into it (`links_by_source`, `links_by_target`).
fn prerequisites_of(tx: &mut Tx<'_, '_>, node: &str) -> R<Vec<String>> {
    rows(
        tx,
        "SELECT target FROM links WHERE source = $1 AND kind = 'depends_on'
         UNION SELECT source FROM links WHERE target = $1 AND kind = 'blocks'",
        &[&node],
        |r| Ok(r.try_get(0)?),
    )
}

pub(super) fn link_remove(tx: &mut Tx<'_, '_>, id: &str, now: &str) -> R<Written<Edge>> {
    let Some(row) = tx.query_opt(
        &format!("DELETE FROM links WHERE id = $1 RETURNING {EDGE_COLUMNS}"),
        &[&id],
    )?
    else {
        return Err(refusal::link_not_found(id).into());
    };
    let edge = edge_from_row(&row)?;
    let change = NewChange::link(now, ChangeKind::LinkRemoved, &edge);
    Ok(Written::with(edge, change))
}

pub(super) fn nodes<C: GenericClient>(
    c: &mut Db<'_, C>,
    ids: &[String],
    now: &str,
) -> R<Vec<Node>> {
    let mut nodes = rows(
        c,
        "SELECT id, title, status, claim_expires_at FROM tasks WHERE id = ANY($1)",
        &[&ids],
        |r| task_node(r, now),
    )?;
    nodes.extend(rows(
        c,
        "SELECT id, title, slug FROM notes WHERE id = ANY($1)",
        &[&ids],
        note_node,
    )?);
    Ok(nodes)
}

pub(super) fn edges_touching<C: GenericClient>(c: &mut Db<'_, C>, ids: &[String]) -> R<Vec<Edge>> {
    rows(
        c,
        &format!(
            "SELECT {EDGE_COLUMNS} FROM links WHERE source = ANY($1) OR target = ANY($1) ORDER BY seq"
        ),
        &[&ids],
        edge_from_row,
    )
}

pub(super) fn all<C: GenericClient>(c: &mut Db<'_, C>, now: &str) -> R<(Vec<Node>, Vec<Edge>)> {
    let mut nodes = rows(
        c,
        "SELECT id, title, status, claim_expires_at FROM tasks ORDER BY seq",
        &[],
        |r| task_node(r, now),
    )?;
    nodes.extend(rows(
        c,
        "SELECT id, title, slug FROM notes ORDER BY seq",
        &[],
        note_node,
    )?);
    let edges = rows(
        c,
        &format!("SELECT {EDGE_COLUMNS} FROM links ORDER BY seq"),
        &[],
        edge_from_row,
    )?;
    Ok((nodes, edges))
}

/// Finds dangling edges, self loops, duplicates and orphans; with `fix`
/// (inside the caller's write transaction) deletes the bad edges.
pub(super) fn doctor<C: GenericClient>(
    c: &mut Db<'_, C>,
    fix: bool,
    orphan_limit: usize,
    now: &str,
) -> R<DoctorScan> {
    if fix {
        c.execute("SELECT pg_advisory_xact_lock($1)", &[&super::GRAPH_LOCK])?;
    }
    let dangling = rows(
        c,
        "SELECT id, source, target, kind FROM links l
         WHERE (NOT EXISTS (SELECT 1 FROM tasks WHERE id = l.source)
                AND NOT EXISTS (SELECT 1 FROM notes WHERE id = l.source))
            OR (NOT EXISTS (SELECT 1 FROM tasks WHERE id = l.target)
                AND NOT EXISTS (SELECT 1 FROM notes WHERE id = l.target))
         ORDER BY seq",
        &[],
        edge_from_row,
    )?;
    let self_loops = rows(
        c,
        "SELECT id, source, target, kind FROM links WHERE source = target ORDER BY seq",
        &[],
        edge_from_row,
    )?;
    let duplicates = rows(
        c,
        "SELECT id, source, target, kind FROM links l
         WHERE EXISTS (SELECT 1 FROM links m WHERE m.source = l.source AND m.target = l.target
                       AND m.kind = l.kind AND m.seq < l.seq)
         ORDER BY seq",
        &[],
        edge_from_row,
    )?;
    let lonely = "NOT EXISTS (SELECT 1 FROM links WHERE source = x.id)
                  AND NOT EXISTS (SELECT 1 FROM links WHERE target = x.id)";
    let orphan_count: i64 = c
        .query_one(
            &format!(
                "SELECT (SELECT count(*) FROM tasks x WHERE {lonely}) + (SELECT count(*) FROM notes x WHERE {lonely})"
            ),
            &[],
        )?
        .try_get(0)?;
    let mut orphans = rows(
        c,
        &format!(
            "SELECT id, title, status, claim_expires_at FROM tasks x WHERE {lonely} ORDER BY seq LIMIT $1"
        ),
        &[&(orphan_limit as i64)],
        |r| task_node(r, now),
    )?;
    let left = orphan_limit.saturating_sub(orphans.len());
    orphans.extend(rows(
        c,
        &format!("SELECT id, title, slug FROM notes x WHERE {lonely} ORDER BY seq LIMIT $1"),
        &[&(left as i64)],
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
        let bad: Vec<&str> = scan.bad_edges().map(|e| e.id.as_str()).collect();
        c.execute("DELETE FROM links WHERE id = ANY($1)", &[&bad])?;
    }
    Ok(scan)
}
