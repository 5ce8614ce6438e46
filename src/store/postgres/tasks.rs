//! Tasks on PostgreSQL: the board's rows and the conditional writes that decide
//! versions and claims in one statement each (under READ COMMITTED, a second
//! writer of the same row waits and re-checks the condition on the new row).

use std::sync::LazyLock;

use postgres::types::ToSql;
use postgres::{Client, GenericClient, Row};

use super::{Db, Filter, R, Tx, at, boxed, feed, keyset_page, time_of, time_opt};
use crate::store::feed::{ChangeKind, NewChange};
use crate::store::model::*;
use crate::store::page::{from_rows, rows_to_fetch};
use crate::store::refusal::{self, TaskWrite};

/// A task's columns, in the order [`from_row`] reads them (a macro, so that
/// the statements below are constants).
macro_rules! columns {
    () => {
        "id, title, description, tags, priority, status, claim_holder, claim_expires_at, version, created_at, updated_at"
    };
}
const COLUMNS: &str = columns!();
/// How many columns [`COLUMNS`] names.
const COLUMN_COUNT: usize = 11;

fn from_row(row: &Row, now: &str) -> R<Task> {
    let stored: &str = row.try_get(5)?;
    let (status, claim) = task_state(stored, row.try_get(6)?, time_opt(row, 7)?, now);
    Ok(Task {
        id: row.try_get(0)?,
        title: row.try_get(1)?,
        description: row.try_get(2)?,
        tags: row.try_get(3)?,
        priority: Priority::parse(row.try_get(4)?),
        status,
        claim,
        version: row.try_get(8)?,
        created_at: time_of(row, 9)?,
        updated_at: time_of(row, 10)?,
    })
}

pub(super) fn load<C: GenericClient>(c: &mut Db<'_, C>, id: &str, now: &str) -> R<Option<Task>> {
    c.query_opt(
        concat!("SELECT ", columns!(), " FROM tasks WHERE id = $1"),
        &[&id],
    )?
    .map(|r| from_row(&r, now))
    .transpose()
}

fn insert(tx: &mut Tx<'_, '_>, task: &NewTask, now: &str) -> R<()> {
    tx.execute(
        "INSERT INTO tasks (id, title, description, tags, priority, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6)",
        &[
            &task.id,
            &task.title,
            &task.description,
            &task.tags,
            &task.priority.as_str(),
            &at(now)?,
        ],
    )?;
    Ok(())
}

/// The change a create appends.
pub(super) fn created_change(created: &Task, now: &str) -> NewChange {
    NewChange::task(now, ChangeKind::TaskCreated, created, None, None)
}

/// Inserts `task` and appends its `change` in one statement (its own
/// transaction); answers the change's `seq`. The task's times are the
/// change's (`$1`).
pub(super) fn create_alone(c: &mut Db<'_, Client>, task: &NewTask, change: &NewChange) -> R<i64> {
    const CREATE: &str = feed::append_change!(
        "task AS (INSERT INTO tasks (id, title, description, tags, priority, created_at, updated_at)
                  VALUES ($10, $11, $12, $13, $14, $1, $1))"
    );
    feed::append_with(
        c,
        CREATE,
        change,
        &[
            &task.id,
            &task.title,
            &task.description,
            &task.tags,
            &task.priority.as_str(),
        ],
    )
}

pub(super) fn insert_many(tx: &mut Tx<'_, '_>, tasks: &[NewTask], now: &str) -> R<()> {
    tasks.iter().try_for_each(|t| insert(tx, t, now))
}

pub(super) fn list<C: GenericClient>(
    c: &mut Db<'_, C>,
    query: &TaskQuery,
    now: &str,
) -> R<Page<Task>> {
    keyset_page(
        c,
        "tasks",
        COLUMNS,
        filter(query, now)?,
        query.after.as_ref(),
        query.limit,
        |r| from_row(r, now),
    )
}

/// The rows of a board column as stored; `now` is the SQL that reads the
/// current time (a claim is live until it expires).
fn column_clause(status: TaskStatus, now: &str) -> String {
    match status {
        TaskStatus::Open => {
            format!("status = 'open' AND (claim_expires_at IS NULL OR claim_expires_at <= {now})")
        }
        TaskStatus::Claimed => format!("status = 'open' AND claim_expires_at > {now}"),
        TaskStatus::Done | TaskStatus::Cancelled => format!("status = '{}'", status.as_str()),
    }
}

/// The whole board in one statement, prepared once per connection: for each
/// status in board order, its page and its capped count (a row with only
/// `col` and `n`), as a `UNION ALL`. Parameters: `$1` now; then per column
/// `k` (from 0), at `2 + 4k`: rows to fetch (0 for a column not asked for),
/// rows to count (likewise), and the cursor's `updated_at` and `id` (NULL on
/// the first page).
///
/// Every parameter is read through a scalar subquery, so the planner never
/// sees its value: the plan is the same for every call, and PostgreSQL keeps
/// it after five executions instead of planning each call (with plain
/// parameters the unknown LIMITs make its generic estimate look costlier).
static BOARD: LazyLock<String> = LazyLock::new(|| {
    const NULLS: &str = "NULL::text, NULL::text, NULL::text, NULL::text[], NULL::text, NULL::text, \
                         NULL::text, NULL::timestamptz, NULL::bigint, NULL::timestamptz, NULL::timestamptz";
    let now = "(SELECT $1::timestamptz)";
    TaskStatus::ALL
        .iter()
        .enumerate()
        .map(|(k, &status)| {
            let p = 2 + 4 * k;
            let clause = column_clause(status, now);
            format!(
                "(SELECT {COLUMNS}, {k} AS col, NULL::bigint AS n FROM tasks
                   WHERE {clause}
                     AND (updated_at, id) < ((SELECT coalesce(${at}::timestamptz, 'infinity')),
                                             (SELECT coalesce(${id}::text, '')))
                   ORDER BY updated_at DESC, id DESC LIMIT (SELECT ${p}::bigint))
                 UNION ALL
                 SELECT {NULLS}, {k}, count(*)
                   FROM (SELECT 1 FROM tasks WHERE {clause} LIMIT (SELECT ${counted}::bigint)) AS capped",
                at = p + 2,
                id = p + 3,
                counted = p + 1,
            )
        })
        .collect::<Vec<_>>()
        .join("\n UNION ALL\n")
});

/// The board's columns in one round trip (see [`BOARD`]), in the order asked.
pub(super) fn board(
    c: &mut Db<'_, Client>,
    columns: &[BoardColumnQuery],
    limit: usize,
    now: &str,
) -> R<Vec<Page<Task>>> {
    let asked = |status: TaskStatus| columns.iter().find(|q| q.status == status);
    let mut values: Vec<Box<dyn ToSql + Sync>> = vec![boxed(at(now)?)];
    for status in TaskStatus::ALL {
        let (rows, counted, after) = match asked(status) {
            Some(q) => (
                rows_to_fetch(limit) as i64,
                TOTAL_CAP as i64 + 1,
                q.after.as_ref(),
            ),
            None => (0, 0, None),
        };
        values.push(boxed(rows));
        values.push(boxed(counted));
        values.push(boxed(after.map(|k| at(&k.updated_at)).transpose()?));
        values.push(boxed(after.map(|k| k.id.clone())));
    }
    let params: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
    let mut items: [Vec<Task>; 4] = Default::default();
    let mut counts = [0_i64; 4];
    for row in c.query(BOARD.as_str(), &params)? {
        let col = row.try_get::<_, i32>(COLUMN_COUNT)? as usize;
        match row.try_get::<_, Option<i64>>(COLUMN_COUNT + 1)? {
            Some(n) => counts[col] = n,
            None => items[col].push(from_row(&row, now)?),
        }
    }
    Ok(columns
        .iter()
        .map(|q| {
            // `TaskStatus::ALL` is in declaration order: a status's number is its `col`.
            let col = q.status as usize;
            let mut page = std::mem::take(&mut items[col]);
            // UNION ALL promises no order across its branches' rows.
            page.sort_by(|a, b| (&b.updated_at, &b.id).cmp(&(&a.updated_at, &a.id)));
            from_rows(page, limit, Total::counted(counts[col] as u64, TOTAL_CAP))
        })
        .collect())
}

fn filter(query: &TaskQuery, now: &str) -> R<Filter> {
    let now = at(now)?;
    let mut f = Filter::default();
    match query.status {
        None => {}
        Some(s @ (TaskStatus::Open | TaskStatus::Claimed)) => {
            f.push(&column_clause(s, "$"), vec![boxed(now)])
        }
        Some(s) => f.push(&column_clause(s, ""), vec![]),
    }
    if let Some(tag) = &query.tag {
        f.push("tags @> ARRAY[$]::text[]", vec![boxed(tag.clone())]);
    }
    if let Some(agent) = &query.claimant {
        f.push(
            "status = 'open' AND claim_holder = $ AND claim_expires_at > $",
            vec![boxed(agent.clone()), boxed(now)],
        );
    }
    if let Some(q) = &query.q {
        let q = q.to_lowercase();
        f.push(
            "(strpos(lower(title), $) > 0 OR strpos(lower(description), $) > 0)",
            vec![boxed(q.clone()), boxed(q)],
        );
    }
    Ok(f)
}

/// A conditional write of one task and its change-feed event in one
/// statement, its own transaction: one round trip. `$1` is the time of the
/// write, `$2` the event's kind, `$3` the acting agent (the event's), `$4`
/// the event's changes, `$5` the NOTIFY channel; the write's own parameters
/// follow. It answers the task and the event's `seq`, or no row when the
/// condition matched nothing (and then wrote nothing).
///
/// The second form puts a CTE before the write and takes the event's changes
/// as an expression over the written row (`task`).
macro_rules! task_write {
    ($update:literal) => {
        task_write!("", $update, "", "$4")
    };
    ($before:literal, $update:literal, $returning:literal, $changes:literal) => {
        concat!(
            "WITH ",
            $before,
            "task AS (",
            $update,
            " RETURNING ",
            columns!(),
            $returning,
            "),
             next AS (UPDATE change_counter SET last_seq = last_seq + 1
                      WHERE EXISTS (SELECT FROM task) RETURNING last_seq),
             change AS (
                 INSERT INTO changes (seq, at, kind, entity_type, entity_id, title, version, agent, changes)
                 SELECT next.last_seq, $1, $2, 'task', task.id, task.title, task.version, $3, ",
            $changes,
            "
                 FROM next, task
                 RETURNING seq, pg_notify($5, current_schema() || ' ' || seq::text))
             SELECT ",
            columns!(),
            ", change.seq FROM task, change"
        )
    };
}

/// What a [`task_write!`] statement needs besides its own parameters.
struct TaskEvent<'a> {
    attempt: TaskWrite,
    kind: ChangeKind,
    agent: Option<&'a str>,
    /// The holder of the claim the write ends.
    released: Option<&'a str>,
}

/// Runs a [`task_write!`] statement; when it matched nothing, the shared
/// refusal rules explain why from the task as it is now.
fn write_task(
    c: &mut Db<'_, Client>,
    sql: &'static str,
    event: TaskEvent<'_>,
    id: &str,
    expected_version: Option<i64>,
    now: &str,
    more: &super::Params<'_>,
) -> R<(Task, i64)> {
    let at = at(now)?;
    let changes = postgres::types::Json(NewChange::task_changes(event.released));
    let head: [&(dyn ToSql + Sync); 5] = [
        &at,
        &event.kind.as_str(),
        &event.agent,
        &changes,
        &feed::CHANNEL,
    ];
    let params: Vec<&(dyn ToSql + Sync)> = head.iter().chain(more).copied().collect();
    match c.query_opt(sql, &params)? {
        Some(row) => Ok((from_row(&row, now)?, row.try_get(COLUMN_COUNT)?)),
        None => Err(refusal::explain(
            event.attempt,
            id,
            load(c, id, now)?.as_ref(),
            expected_version,
        )
        .into()),
    }
}

pub(super) fn update(
    c: &mut Db<'_, Client>,
    id: &str,
    patch: &TaskPatch,
    expected_version: Option<i64>,
    now: &str,
) -> R<(Task, i64)> {
    const UPDATE: &str = task_write!(
        "UPDATE tasks SET
            title = coalesce($6, title),
            description = coalesce($7, description),
            tags = coalesce($8, tags),
            priority = coalesce($9, priority),
            version = version + 1,
            updated_at = $1
         WHERE id = $10 AND ($11::bigint IS NULL OR version = $11)"
    );
    let event = TaskEvent {
        attempt: TaskWrite::Update,
        kind: ChangeKind::TaskUpdated,
        agent: None,
        released: None,
    };
    write_task(
        c,
        UPDATE,
        event,
        id,
        expected_version,
        now,
        &[
            &patch.title,
            &patch.description,
            &patch.tags,
            &patch.priority.map(Priority::as_str),
            &id,
            &expected_version,
        ],
    )
}

pub(super) fn claim(
    c: &mut Db<'_, Client>,
    id: &str,
    agent: &str,
    expires_at: &str,
    expected_version: Option<i64>,
    now: &str,
) -> R<(Task, i64)> {
    const CLAIM: &str = task_write!(
        "UPDATE tasks SET claim_holder = $3, claim_expires_at = $6
         WHERE id = $7 AND status = 'open'
           AND (claim_holder IS NULL OR claim_expires_at IS NULL
                OR claim_expires_at <= $1 OR claim_holder = $3)
           AND ($8::bigint IS NULL OR version = $8)"
    );
    let claim = Hold {
        id,
        agent,
        expires_at,
        expected_version,
        now,
    };
    claim.write(c, CLAIM, TaskWrite::Claim, ChangeKind::TaskClaimed)
}

pub(super) fn renew(
    c: &mut Db<'_, Client>,
    id: &str,
    agent: &str,
    expires_at: &str,
    expected_version: Option<i64>,
    now: &str,
) -> R<(Task, i64)> {
    const RENEW: &str = task_write!(
        "UPDATE tasks SET claim_expires_at = $6
         WHERE id = $7 AND status = 'open' AND claim_holder = $3 AND claim_expires_at > $1
           AND ($8::bigint IS NULL OR version = $8)"
    );
    let renewal = Hold {
        id,
        agent,
        expires_at,
        expected_version,
        now,
    };
    renewal.write(c, RENEW, TaskWrite::Renew, ChangeKind::TaskRenewed)
}

/// A claim taken or renewed: `agent` holds task `id` until `expires_at`.
struct Hold<'a> {
    id: &'a str,
    agent: &'a str,
    expires_at: &'a str,
    expected_version: Option<i64>,
    now: &'a str,
}

impl Hold<'_> {
    /// Runs `sql`, a [`task_write!`] statement whose own parameters are the
    /// expiry (`$6`), the task's id (`$7`) and the expected version (`$8`).
    fn write(
        &self,
        c: &mut Db<'_, Client>,
        sql: &'static str,
        attempt: TaskWrite,
        kind: ChangeKind,
    ) -> R<(Task, i64)> {
        let event = TaskEvent {
            attempt,
            kind,
            agent: Some(self.agent),
            released: None,
        };
        write_task(
            c,
            sql,
            event,
            self.id,
            self.expected_version,
            self.now,
            &[&at(self.expires_at)?, &self.id, &self.expected_version],
        )
    }
}

pub(super) fn release(
    c: &mut Db<'_, Client>,
    id: &str,
    agent: &str,
    expected_version: Option<i64>,
    now: &str,
) -> R<(Task, i64)> {
    const RELEASE: &str = task_write!(
        "UPDATE tasks SET claim_holder = NULL, claim_expires_at = NULL
         WHERE id = $6 AND status = 'open' AND claim_holder = $3 AND claim_expires_at > $1
           AND ($7::bigint IS NULL OR version = $7)"
    );
    let event = TaskEvent {
        attempt: TaskWrite::Release,
        kind: ChangeKind::TaskReleased,
        agent: Some(agent),
        released: Some(agent),
    };
    write_task(
        c,
        RELEASE,
        event,
        id,
        expected_version,
        now,
        &[&id, &expected_version],
    )
}

pub(super) fn transition(
    c: &mut Db<'_, Client>,
    id: &str,
    transition: Transition,
    agent: Option<&str>,
    expected_version: Option<i64>,
    now: &str,
) -> R<(Task, i64)> {
    // `before` locks the row and reads the live claim the change ends, as the
    // row is when the write runs; `$3` is the acting agent: with `$9` set, a
    // live claim by anyone else refuses the change. The event names the
    // ended claim as `NewChange::task_changes` does, else its changes are `$4`.
    const TRANSITION: &str = task_write!(
        "before AS (
             SELECT id AS before_id,
                    CASE WHEN status = 'open' AND claim_expires_at > $1 THEN claim_holder END AS released
             FROM tasks WHERE id = $6 FOR UPDATE),
         ",
        "UPDATE tasks SET status = $7, claim_holder = NULL, claim_expires_at = NULL,
                version = version + 1, updated_at = $1
         FROM before
         WHERE id = before_id AND status = ANY($8)
           AND (NOT $9 OR $3::text IS NULL OR claim_holder IS NULL OR claim_expires_at IS NULL
                OR claim_expires_at <= $1 OR claim_holder = $3)
           AND ($10::bigint IS NULL OR version = $10)",
        ", released",
        "CASE WHEN task.released IS NULL THEN $4
              ELSE jsonb_build_object('released_claim', jsonb_build_object('holder', task.released)) END"
    );
    let event = TaskEvent {
        attempt: TaskWrite::Transition(transition),
        kind: ChangeKind::of_transition(transition),
        agent,
        released: None,
    };
    let from: Vec<&str> = transition.from_stored().to_vec();
    write_task(
        c,
        TRANSITION,
        event,
        id,
        expected_version,
        now,
        &[
            &id,
            &transition.to_stored(),
            &from,
            &transition.respects_claims(),
            &expected_version,
        ],
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bench_script_is_this_statement() {
        let column = ["rows", "counted", "after_at", "after_id"];
        let names: Vec<&str> = std::iter::once("now")
            .chain(column.iter().copied().cycle().take(4 * column.len()))
            .collect();
        super::super::bench_scripts::check("board_one.sql", &super::BOARD, &names);
    }
}
