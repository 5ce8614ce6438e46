//! The change feed: one event per acknowledged write, appended by the store
//! in the same transaction as the write, so a rolled-back write leaves none.
//! What an event says is decided here, once; each backend only stores it.
//!
//! Ordering: `seq` increases with commit order on both backends (SQLite has
//! one writer; PostgreSQL takes the next number from a one-row counter as the
//! last statement of the write, so its row lock orders commits), and has no
//! gaps. A reader that has seen `seq` n therefore never meets a later commit
//! with a smaller number.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::model::{Edge, NoteWritten, Task, TaskStatus, Transition};

/// What happened.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    utoipa::ToSchema,
)]
pub enum ChangeKind {
    #[serde(rename = "task.created")]
    TaskCreated,
    #[serde(rename = "task.updated")]
    TaskUpdated,
    #[serde(rename = "task.claimed")]
    TaskClaimed,
    #[serde(rename = "task.renewed")]
    TaskRenewed,
    #[serde(rename = "task.released")]
    TaskReleased,
    #[serde(rename = "task.completed")]
    TaskCompleted,
    #[serde(rename = "task.cancelled")]
    TaskCancelled,
    #[serde(rename = "task.reopened")]
    TaskReopened,
    #[serde(rename = "note.written")]
    NoteWritten,
    #[serde(rename = "note.deleted")]
    NoteDeleted,
    #[serde(rename = "link.added")]
    LinkAdded,
    #[serde(rename = "link.removed")]
    LinkRemoved,
}

impl ChangeKind {
    pub const fn of_transition(transition: Transition) -> Self {
        match transition {
            Transition::Complete => Self::TaskCompleted,
            Transition::Cancel => Self::TaskCancelled,
            Transition::Reopen => Self::TaskReopened,
        }
    }

    pub const ALL: [ChangeKind; 12] = [
        Self::TaskCreated,
        Self::TaskUpdated,
        Self::TaskClaimed,
        Self::TaskRenewed,
        Self::TaskReleased,
        Self::TaskCompleted,
        Self::TaskCancelled,
        Self::TaskReopened,
        Self::NoteWritten,
        Self::NoteDeleted,
        Self::LinkAdded,
        Self::LinkRemoved,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::TaskCreated => "task.created",
            Self::TaskUpdated => "task.updated",
            Self::TaskClaimed => "task.claimed",
            Self::TaskRenewed => "task.renewed",
            Self::TaskReleased => "task.released",
            Self::TaskCompleted => "task.completed",
            Self::TaskCancelled => "task.cancelled",
            Self::TaskReopened => "task.reopened",
            Self::NoteWritten => "note.written",
            Self::NoteDeleted => "note.deleted",
            Self::LinkAdded => "link.added",
            Self::LinkRemoved => "link.removed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// What an event is about.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EntityType {
    Task,
    Note,
    Link,
}

impl EntityType {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Task => "task",
            Self::Note => "note",
            Self::Link => "link",
        }
    }

    pub fn parse(s: &str) -> Self {
        match s {
            "note" => Self::Note,
            "link" => Self::Link,
            _ => Self::Task,
        }
    }
}

/// The entity an event is about.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema,
)]
pub struct ChangedEntity {
    /// `task`, `note` or `link`.
    #[serde(rename = "type")]
    pub kind: EntityType,
    /// Full id.
    pub id: String,
    /// The task's or note's title; a link's kind.
    pub title: String,
}

/// One acknowledged write.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema,
)]
pub struct ChangeEvent {
    /// Position in the feed: increasing, without gaps; the SSE `id`.
    pub seq: i64,
    /// When the write happened (RFC 3339 UTC).
    pub at: String,
    /// What happened, such as `task.claimed` or `note.written`.
    pub kind: ChangeKind,
    pub entity: ChangedEntity,
    /// The entity's version after the write (null for links and deletions).
    pub version: Option<i64>,
    /// The agent that acted, where one is known (claims and transitions).
    pub agent: Option<String>,
    /// What the write changed besides its target: the claim a transition
    /// released (`released_claim`), the notes a note's wiki-links now point at
    /// (`linked`), a link's ends (`source`, `target`). `{}` when nothing.
    pub changes: Map<String, Value>,
}

/// An event as a write describes it; the store numbers it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewChange {
    /// When the write happened (the write's `now`).
    pub at: String,
    pub kind: ChangeKind,
    pub entity: ChangedEntity,
    pub version: Option<i64>,
    pub agent: Option<String>,
    pub changes: Map<String, Value>,
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

impl NewChange {
    /// A write to a task. `released` is the holder of a claim the write ended
    /// (a transition over someone's live claim, or the holder's release).
    pub fn task(
        now: &str,
        kind: ChangeKind,
        task: &Task,
        agent: Option<&str>,
        released: Option<&str>,
    ) -> Self {
        Self {
            at: now.to_owned(),
            kind,
            entity: ChangedEntity {
                kind: EntityType::Task,
                id: task.id.clone(),
                title: task.title.clone(),
            },
            version: Some(task.version),
            agent: agent.map(str::to_owned),
            changes: Self::task_changes(released),
        }
    }

    /// The `changes` of a task write's event: the claim it ended, if any.
    pub fn task_changes(released: Option<&str>) -> Map<String, Value> {
        match released {
            Some(holder) => object(json!({"released_claim": {"holder": holder}})),
            None => Map::new(),
        }
    }

    /// A transition of `task`, which before it had the live claim of `before`.
    pub fn transition(
        now: &str,
        transition: Transition,
        task: &Task,
        agent: Option<&str>,
        before: Option<&Task>,
    ) -> Self {
        let released = before
            .filter(|t| t.status == TaskStatus::Claimed)
            .and_then(|t| t.claim.as_ref())
            .map(|c| c.holder.as_str());
        Self::task(
            now,
            ChangeKind::of_transition(transition),
            task,
            agent,
            released,
        )
    }

    pub fn note_written(now: &str, note: &NoteWritten) -> Self {
        Self {
            at: now.to_owned(),
            kind: ChangeKind::NoteWritten,
            entity: ChangedEntity {
                kind: EntityType::Note,
                id: note.id.clone(),
                title: note.title.clone(),
            },
            version: Some(note.version),
            agent: None,
            changes: object(json!({
                "created": note.created,
                "linked": note.linked,
                "unresolved_links": note.unresolved_links,
            })),
        }
    }

    pub fn note_deleted(now: &str, id: &str, title: &str) -> Self {
        Self {
            at: now.to_owned(),
            kind: ChangeKind::NoteDeleted,
            entity: ChangedEntity {
                kind: EntityType::Note,
                id: id.to_owned(),
                title: title.to_owned(),
            },
            version: None,
            agent: None,
            changes: Map::new(),
        }
    }

    pub fn link(now: &str, kind: ChangeKind, edge: &Edge) -> Self {
        Self {
            at: now.to_owned(),
            kind,
            entity: ChangedEntity {
                kind: EntityType::Link,
                id: edge.id.clone(),
                title: edge.kind.as_str().to_owned(),
            },
            version: None,
            agent: None,
            changes: object(json!({"source": edge.source, "target": edge.target})),
        }
    }
}

/// What a write function hands its backend's write wrapper: the answer, and
/// the event to append as the write's last statement (none when nothing changed).
pub struct Written<T> {
    pub value: T,
    pub change: Option<NewChange>,
}

impl<T> Written<T> {
    pub fn with(value: T, change: NewChange) -> Self {
        Self {
            value,
            change: Some(change),
        }
    }

    /// A write the feed does not report (fixtures, repairs, probes).
    pub fn quiet(value: T) -> Self {
        Self {
            value,
            change: None,
        }
    }
}

/// Which events to read.
#[derive(Debug, Clone, Default)]
pub struct ChangeQuery {
    /// Events after this `seq` (none: from the oldest retained).
    pub after: Option<i64>,
    /// Only these kinds (empty: all).
    pub kinds: Vec<ChangeKind>,
    /// Only events about this entity.
    pub entity_id: Option<String>,
    pub limit: usize,
}

/// A page of the feed.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePage {
    pub events: Vec<ChangeEvent>,
    /// Whether more matching events follow this page.
    pub more: bool,
    /// The newest `seq` when the page was read (0 for an empty feed).
    pub head: i64,
    /// The oldest retained `seq`, if any event is retained.
    pub oldest: Option<i64>,
}

impl ChangePage {
    /// Where a reader continues: after the last event shown when more follow,
    /// else after everything that had committed when the page was read (so
    /// filtered-out events are not scanned again).
    pub fn next_seq(&self, after: i64) -> i64 {
        match (self.more, self.events.last()) {
            (true, Some(last)) => last.seq,
            _ => self.head.max(after),
        }
    }
}

/// How many events a store keeps by default; older ones are pruned.
pub const DEFAULT_RETENTION: i64 = 100_000;

/// Pruning runs when an appended `seq` is a multiple of this, so it costs one
/// range delete per that many writes.
pub const PRUNE_EVERY: i64 = 64;
