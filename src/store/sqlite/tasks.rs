//! Tasks on SQLite: the board's rows and the conditional writes that decide
//! versions and claims in one statement each.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{Filter, R, boxed, keyset_page, parse_tags, search, tags_json};
use crate::store::feed::{ChangeKind, NewChange, Written};
use crate::store::model::*;
use crate::store::refusal::{self, TaskWrite};

const COLUMNS: &str = "id, title, description, tags, priority, status, claim_holder, claim_expires_at, version, created_at, updated_at";

fn from_row(row: &Row<'_>, now: &str) -> rusqlite::Result<Task> {
    let stored: String = row.get(5)?;
    let (status, claim) = task_state(&stored, row.get(6)?, row.get(7)?, now);
    Ok(Task {
        id: row.get(0)?,
        title: row.get(1)?,
        description: row.get(2)?,
        tags: parse_tags(&row.get::<_, String>(3)?),
        priority: Priority::parse(&row.get::<_, String>(4)?),
        status,
        claim,
        version: row.get(8)?,
        created_at: row.get(9)?,
        updated_at: row.get(10)?,
    })
}

pub(super) fn load(conn: &Connection, id: &str, now: &str) -> R<Option<Task>> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM tasks WHERE id = ?1"))?
        .query_row([id], |r| from_row(r, now))
        .optional()?)
}

/// Runs a conditional write returning the task; when it matched nothing, the
/// shared refusal rules explain why from the task as it is now.
fn decide(
    conn: &Connection,
    attempt: TaskWrite,
    id: &str,
    expected_version: Option<i64>,
    now: &str,
    sql: &str,
    params: impl rusqlite::Params,
) -> R<Task> {
    let changed = conn
        .prepare_cached(sql)?
        .query_row(params, |r| from_row(r, now))
        .optional()?;
    match changed {
        Some(task) => Ok(task),
        None => Err(
            refusal::explain(attempt, id, load(conn, id, now)?.as_ref(), expected_version).into(),
        ),
    }
}

fn insert(conn: &Connection, task: &NewTask, now: &str) -> R<()> {
    conn.prepare_cached(
        "INSERT INTO tasks (id, title, description, tags, priority, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
    )?
    .execute(params![
        task.id,
        task.title,
        task.description,
        tags_json(&task.tags),
        task.priority.as_str(),
        now
    ])?;
    search::index(
        conn,
        search::Doc::Task,
        &task.id,
        &task.title,
        &task.description,
    )
}

pub(super) fn create(conn: &Connection, task: &NewTask, now: &str) -> R<Written<Task>> {
    insert(conn, task, now)?;
    let created = task.created(now);
    let change = NewChange::task(now, ChangeKind::TaskCreated, &created, None, None);
    Ok(Written::with(created, change))
}

pub(super) fn insert_many(conn: &Connection, tasks: &[NewTask], now: &str) -> R<()> {
    tasks.iter().try_for_each(|t| insert(conn, t, now))
}

pub(super) fn list(conn: &Connection, query: &TaskQuery, now: &str) -> R<Page<Task>> {
    // The claimed column walks its own index in page order (migration 4): a
    // page and its capped count read about what they return, however many
    // claims there are. Without the hint the planner ranges over expiry and
    // sorts every live claim.
    let table = if query.status == Some(TaskStatus::Claimed) && query.claimant.is_none() {
        "tasks INDEXED BY tasks_claimed_by_update"
    } else {
        "tasks"
    };
    keyset_page(
        conn,
        table,
        COLUMNS,
        filter(query, now),
        query.after.as_ref(),
        query.limit,
        |r| from_row(r, now),
    )
}

fn filter(query: &TaskQuery, now: &str) -> Filter {
    let mut f = Filter::default();
    match query.status {
        None => {}
        Some(TaskStatus::Open) => f.push(
            "status = 'open' AND (claim_expires_at IS NULL OR claim_expires_at <= ?)",
            vec![boxed(now.to_owned())],
        ),
        // `+status` keeps the planner off the status index (see `list`).
        Some(TaskStatus::Claimed) => f.push(
            "+status = 'open' AND claim_expires_at > ?",
            vec![boxed(now.to_owned())],
        ),
        Some(s) => f.push("status = ?", vec![boxed(s.as_str())]),
    }
    if let Some(tag) = &query.tag {
        f.push(
            "EXISTS (SELECT 1 FROM json_each(tasks.tags) WHERE value = ?)",
            vec![boxed(tag.clone())],
        );
    }
    if let Some(agent) = &query.claimant {
        f.push(
            "+status = 'open' AND claim_holder = ? AND claim_expires_at > ?",
            vec![boxed(agent.clone()), boxed(now.to_owned())],
        );
    }
    if let Some(q) = &query.q {
        let q = q.to_lowercase();
        f.push(
            "(instr(lower(title), ?) > 0 OR instr(lower(description), ?) > 0)",
            vec![boxed(q.clone()), boxed(q)],
        );
    }
    f
}

pub(super) fn update(
    conn: &Connection,
    id: &str,
    patch: &TaskPatch,
    expected_version: Option<i64>,
    now: &str,
) -> R<Written<Task>> {
    let task = decide(
        conn,
        TaskWrite::Update,
        id,
        expected_version,
        now,
        &format!(
            "UPDATE tasks SET
                title = coalesce(?1, title),
                description = coalesce(?2, description),
                tags = coalesce(?3, tags),
                priority = coalesce(?4, priority),
                version = version + 1,
                updated_at = ?5
             WHERE id = ?6 AND (?7 IS NULL OR version = ?7)
             RETURNING {COLUMNS}"
        ),
        params![
            patch.title,
            patch.description,
            patch.tags.as_deref().map(tags_json),
            patch.priority.map(Priority::as_str),
            now,
            id,
            expected_version
        ],
    )?;
    if patch.title.is_some() || patch.description.is_some() {
        search::index(conn, search::Doc::Task, id, &task.title, &task.description)?;
    }
    let change = NewChange::task(now, ChangeKind::TaskUpdated, &task, None, None);
    Ok(Written::with(task, change))
}

pub(super) fn claim(
    conn: &Connection,
    id: &str,
    agent: &str,
    expires_at: &str,
    expected_version: Option<i64>,
    now: &str,
) -> R<Written<Task>> {
    let task = decide(
        conn,
        TaskWrite::Claim,
        id,
        expected_version,
        now,
        &format!(
            "UPDATE tasks SET claim_holder = ?2, claim_expires_at = ?3
             WHERE id = ?1 AND status = 'open'
               AND (claim_holder IS NULL OR claim_expires_at IS NULL
                    OR claim_expires_at <= ?4 OR claim_holder = ?2)
               AND (?5 IS NULL OR version = ?5)
             RETURNING {COLUMNS}"
        ),
        params![id, agent, expires_at, now, expected_version],
    )?;
    let change = NewChange::task(now, ChangeKind::TaskClaimed, &task, Some(agent), None);
    Ok(Written::with(task, change))
}

pub(super) fn renew(
    conn: &Connection,
    id: &str,
    agent: &str,
    expires_at: &str,
    expected_version: Option<i64>,
    now: &str,
) -> R<Written<Task>> {
    let task = decide(
        conn,
        TaskWrite::Renew,
        id,
        expected_version,
        now,
        &format!(
            "UPDATE tasks SET claim_expires_at = ?3
             WHERE id = ?1 AND status = 'open' AND claim_holder = ?2 AND claim_expires_at > ?4
               AND (?5 IS NULL OR version = ?5)
             RETURNING {COLUMNS}"
        ),
        params![id, agent, expires_at, now, expected_version],
    )?;
    let change = NewChange::task(now, ChangeKind::TaskRenewed, &task, Some(agent), None);
    Ok(Written::with(task, change))
}

pub(super) fn release(
    conn: &Connection,
    id: &str,
    agent: &str,
    expected_version: Option<i64>,
    now: &str,
) -> R<Written<Task>> {
    let task = decide(
        conn,
        TaskWrite::Release,
        id,
        expected_version,
        now,
        &format!(
            "UPDATE tasks SET claim_holder = NULL, claim_expires_at = NULL
             WHERE id = ?1 AND status = 'open' AND claim_holder = ?2 AND claim_expires_at > ?3
               AND (?4 IS NULL OR version = ?4)
             RETURNING {COLUMNS}"
        ),
        params![id, agent, now, expected_version],
    )?;
    let change = NewChange::task(
        now,
        ChangeKind::TaskReleased,
        &task,
        Some(agent),
        Some(agent),
    );
    Ok(Written::with(task, change))
}

pub(super) fn transition(
    conn: &Connection,
    id: &str,
    transition: Transition,
    agent: Option<&str>,
    expected_version: Option<i64>,
    now: &str,
) -> R<Written<Task>> {
    let before = load(conn, id, now)?;
    let from = transition
        .from_stored()
        .iter()
        .map(|s| format!("'{s}'"))
        .collect::<Vec<_>>()
        .join(", ");
    // ?3 is the acting agent; with ?5 set, a live claim by anyone else refuses the change.
    let task = decide(
        conn,
        TaskWrite::Transition(transition),
        id,
        expected_version,
        now,
        &format!(
            "UPDATE tasks SET status = ?2, claim_holder = NULL, claim_expires_at = NULL,
                    version = version + 1, updated_at = ?4
             WHERE id = ?1 AND status IN ({from})
               AND (NOT ?5 OR ?3 IS NULL OR claim_holder IS NULL OR claim_expires_at IS NULL
                    OR claim_expires_at <= ?4 OR claim_holder = ?3)
               AND (?6 IS NULL OR version = ?6)
             RETURNING {COLUMNS}"
        ),
        params![
            id,
            transition.to_stored(),
            agent,
            now,
            transition.respects_claims(),
            expected_version
        ],
    )?;
    let change = NewChange::transition(now, transition, &task, agent, before.as_ref());
    Ok(Written::with(task, change))
}
