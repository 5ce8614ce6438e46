//! The records the store hands to the tools, with the rules that come with
//! them (the claim-status rule, the transition table). Those that tools
//! return as-is derive the schemas the surfaces publish.

use serde::{Deserialize, Serialize};

use super::list::Keyset;

/// A new random id: [`ID_LEN`] lowercase hex characters, not time-ordered, so
/// short prefixes are distinct (the form of a request id too).
pub fn new_id() -> String {
    crate::envelope::new_request_id()
}

/// The length of every id [`new_id`] makes.
pub const ID_LEN: usize = uuid::fmt::Simple::LENGTH;

/// A task's status as callers see it. `claimed` is an open task with a live
/// (unexpired) claim, computed when the task is read.
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
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Open,
    Claimed,
    Done,
    Cancelled,
}

impl TaskStatus {
    pub const ALL: [TaskStatus; 4] = [Self::Open, Self::Claimed, Self::Done, Self::Cancelled];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Claimed => "claimed",
            Self::Done => "done",
            Self::Cancelled => "cancelled",
        }
    }
}

/// The claim-status rule, applied to a task as stored: an `open` task whose
/// claim expires after `now` is `claimed`. Times are [`timestamp`](super::timestamp)s.
pub fn task_status(stored_status: &str, claim_expires_at: Option<&str>, now: &str) -> TaskStatus {
    match stored_status {
        "done" => TaskStatus::Done,
        "cancelled" => TaskStatus::Cancelled,
        _ if claim_expires_at.is_some_and(|e| e > now) => TaskStatus::Claimed,
        _ => TaskStatus::Open,
    }
}

/// [`task_status`] with the claim a caller sees: only a live one.
pub fn task_state(
    stored_status: &str,
    holder: Option<String>,
    expires_at: Option<String>,
    now: &str,
) -> (TaskStatus, Option<Claim>) {
    let status = task_status(stored_status, expires_at.as_deref(), now);
    let claim = match (status, holder, expires_at) {
        (TaskStatus::Claimed, Some(holder), Some(expires_at)) => Some(Claim { holder, expires_at }),
        _ => None,
    };
    (status, claim)
}

/// How urgent a task is.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    Low,
    #[default]
    Normal,
    High,
    Urgent,
}

impl Priority {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Normal => "normal",
            Self::High => "high",
            Self::Urgent => "urgent",
        }
    }

    pub fn parse(s: &str) -> Self {
        match s {
            "low" => Self::Low,
            "high" => Self::High,
            "urgent" => Self::Urgent,
            _ => Self::Normal,
        }
    }
}

/// A live claim on a task.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema,
)]
pub struct Claim {
    /// The agent holding the claim.
    pub holder: String,
    /// When the claim lapses (RFC 3339 UTC) unless renewed.
    pub expires_at: String,
}

/// A task on the board.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema,
)]
pub struct Task {
    /// Full id (32 hex chars).
    pub id: String,
    /// Short summary of the work.
    pub title: String,
    /// Longer explanation; `""` when none.
    pub description: String,
    /// Tags, `[]` when none.
    pub tags: Vec<String>,
    /// `low`, `normal`, `high` or `urgent`.
    pub priority: Priority,
    /// `open`, `claimed`, `done` or `cancelled`.
    pub status: TaskStatus,
    /// The live claim, or null when nobody holds one.
    pub claim: Option<Claim>,
    /// 1 on create, +1 on every write (claims excepted).
    pub version: i64,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// RFC 3339 UTC; lists are ordered by it, most recent first.
    pub updated_at: String,
}

/// A task as created.
#[derive(Debug, Clone)]
pub struct NewTask {
    pub id: String,
    pub title: String,
    pub description: String,
    pub tags: Vec<String>,
    pub priority: Priority,
}

impl NewTask {
    /// The task as its create stores it: open, unclaimed, version 1.
    pub fn created(&self, now: &str) -> Task {
        Task {
            id: self.id.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            tags: self.tags.clone(),
            priority: self.priority,
            status: TaskStatus::Open,
            claim: None,
            version: 1,
            created_at: now.to_owned(),
            updated_at: now.to_owned(),
        }
    }
}

/// Fields a task update changes; `None` keeps the current value.
#[derive(Debug, Clone, Default)]
pub struct TaskPatch {
    pub title: Option<String>,
    pub description: Option<String>,
    pub tags: Option<Vec<String>>,
    pub priority: Option<Priority>,
}

/// Status changes other than claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    Complete,
    Cancel,
    Reopen,
}

/// The transition table: what each transition is called, which stored statuses
/// it starts from, what it stores, and whether another agent's live claim stops it.
/// Every transition bumps the version and releases any claim.
impl Transition {
    pub const fn operation(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::Cancel => "cancel",
            Self::Reopen => "reopen",
        }
    }

    /// Stored statuses the transition starts from.
    pub const fn from_stored(self) -> &'static [&'static str] {
        match self {
            Self::Complete | Self::Cancel => &["open"],
            Self::Reopen => &["done", "cancelled"],
        }
    }

    /// Statuses as callers see them that the transition starts from.
    pub const fn allowed_from(self) -> &'static [&'static str] {
        match self {
            Self::Complete | Self::Cancel => &["open", "claimed"],
            Self::Reopen => &["done", "cancelled"],
        }
    }

    /// The stored status it leaves the task in.
    pub const fn to_stored(self) -> &'static str {
        match self {
            Self::Complete => "done",
            Self::Cancel => "cancelled",
            Self::Reopen => "open",
        }
    }

    /// Whether a live claim by another agent than the caller refuses it.
    pub const fn respects_claims(self) -> bool {
        matches!(self, Self::Complete | Self::Cancel)
    }
}

/// One column of a board read: its status and where its page starts.
#[derive(Debug, Clone)]
pub struct BoardColumnQuery {
    pub status: TaskStatus,
    pub after: Option<Keyset>,
}

/// Filters of a task list; every filter narrows.
#[derive(Debug, Clone, Default)]
pub struct TaskQuery {
    pub status: Option<TaskStatus>,
    pub tag: Option<String>,
    pub claimant: Option<String>,
    /// Case-insensitive substring of title or description.
    pub q: Option<String>,
    pub limit: usize,
    pub after: Option<Keyset>,
}
/// A note.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema,
)]
pub struct Note {
    /// Full id (32 hex chars).
    pub id: String,
    /// The note's title.
    pub title: String,
    /// The title in lowercase with runs of other characters turned into `-`; unique.
    pub slug: String,
    /// Markdown body.
    pub content: String,
    /// Tags, `[]` when none.
    pub tags: Vec<String>,
    /// Where the content came from; unique across notes when set.
    pub source_url: Option<String>,
    /// 1 on create, +1 on every write.
    pub version: i64,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// RFC 3339 UTC.
    pub updated_at: String,
    /// The notes the content's `[[wiki-links]]` name, in content order, each once.
    pub links: Vec<NoteLink>,
    /// Slugs of `[[wiki-links]]` in the content that no note has yet.
    pub unresolved_links: Vec<String>,
}

/// A note a `[[wiki-link]]` names.
#[derive(
    Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema,
)]
pub struct NoteLink {
    /// Full id of the linked note.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its slug (what the link names).
    pub slug: String,
}

/// A note in a list (no content).
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema,
)]
pub struct NoteSummary {
    pub id: String,
    pub title: String,
    pub slug: String,
    pub tags: Vec<String>,
    pub source_url: Option<String>,
    pub version: i64,
    pub updated_at: String,
}

/// A note as written (created or replaced).
#[derive(Debug, Clone)]
pub struct NoteDraft {
    /// The id for a new note (ignored on update).
    pub id: String,
    pub title: String,
    pub slug: String,
    pub content: String,
    /// Tags; `None` keeps the current ones on update (none on create).
    pub tags: Option<Vec<String>>,
    /// Source; `None` keeps the current one on update (none on create), `""` clears it.
    pub source_url: Option<String>,
    /// Slugs of the wiki-links in `content`, deduplicated.
    pub wiki_links: Vec<String>,
}

/// What a note write did.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema,
)]
pub struct NoteWritten {
    /// Full id of the note.
    pub id: String,
    pub title: String,
    pub slug: String,
    pub version: i64,
    /// True when this write created the note.
    pub created: bool,
    pub updated_at: String,
    /// Ids of the notes the content's wiki-links now point at (`links_to` edges).
    pub linked: Vec<String>,
    /// Wiki-link slugs with no note yet; they become edges when such a note is written.
    pub unresolved_links: Vec<String>,
}

/// Filters of a note list.
#[derive(Debug, Clone, Default)]
pub struct NoteQuery {
    pub tag: Option<String>,
    /// Case-insensitive substring of title or content.
    pub q: Option<String>,
    pub limit: usize,
    pub after: Option<Keyset>,
}

/// An id with the title that names it.
#[derive(
    Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema,
)]
pub struct IdTitle {
    pub id: String,
    pub title: String,
}

/// What an id may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntityKind {
    Task,
    Note,
    Link,
}

/// Row counts.
#[derive(
    Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema,
)]
pub struct Counts {
    pub tasks: u64,
    pub notes: u64,
    pub links: u64,
}

/// What a graph node is.
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
pub enum NodeKind {
    Task,
    Note,
}

/// A task or note in the graph.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema,
)]
pub struct Node {
    /// Full id of the task or note.
    pub id: String,
    /// `task` or `note`.
    pub kind: NodeKind,
    /// The task's or note's title.
    pub title: String,
    /// The task's status (tasks only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskStatus>,
    /// The note's slug (notes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
}

/// How one entity relates to another.
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
pub enum LinkKind {
    RelatesTo,
    DependsOn,
    DerivedFrom,
    Blocks,
    /// Made from `[[wiki-links]]` in note content; reserved, never added by hand.
    LinksTo,
}

impl LinkKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::RelatesTo => "relates_to",
            Self::DependsOn => "depends_on",
            Self::DerivedFrom => "derived_from",
            Self::Blocks => "blocks",
            Self::LinksTo => "links_to",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "relates_to" => Self::RelatesTo,
            "depends_on" => Self::DependsOn,
            "derived_from" => Self::DerivedFrom,
            "blocks" => Self::Blocks,
            "links_to" => Self::LinksTo,
            _ => return None,
        })
    }
}

/// A directed edge between two nodes.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema,
)]
pub struct Edge {
    /// Full link id (32 hex chars).
    pub id: String,
    /// Id of the task or note the edge starts at.
    pub source: String,
    /// Id of the task or note the edge points to.
    pub target: String,
    /// `relates_to`, `depends_on`, `derived_from`, `blocks` or `links_to` (from wiki-links).
    pub kind: LinkKind,
}

/// What graph_doctor found (and, with `fix`, removed).
#[derive(Debug, Clone, Default)]
pub struct DoctorScan {
    /// Edges with an end that names no task or note.
    pub dangling: Vec<Edge>,
    pub self_loops: Vec<Edge>,
    /// Every copy but the first of an edge with the same source, target and kind.
    pub duplicates: Vec<Edge>,
    /// Nodes with no edge, up to the limit asked for.
    pub orphans: Vec<Node>,
    pub orphan_count: u64,
}

impl DoctorScan {
    /// Assembles a scan so each bad edge is reported once: a dangling edge is
    /// not also a self loop or duplicate, and a self loop not also a duplicate.
    pub fn new(
        dangling: Vec<Edge>,
        mut self_loops: Vec<Edge>,
        mut duplicates: Vec<Edge>,
        orphans: Vec<Node>,
        orphan_count: u64,
    ) -> Self {
        let mut flagged: std::collections::HashSet<String> =
            dangling.iter().map(|e| e.id.clone()).collect();
        self_loops.retain(|e| !flagged.contains(&e.id));
        flagged.extend(self_loops.iter().map(|e| e.id.clone()));
        duplicates.retain(|e| !flagged.contains(&e.id));
        Self {
            dangling,
            self_loops,
            duplicates,
            orphans,
            orphan_count,
        }
    }

    /// The edges a fix removes.
    pub fn bad_edges(&self) -> impl Iterator<Item = &Edge> {
        self.dangling
            .iter()
            .chain(&self.self_loops)
            .chain(&self.duplicates)
    }
}

/// One word of a search; every term must match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchTerm {
    /// The word as typed (the backend quotes it).
    pub word: String,
    /// Match words starting with `word` (typed as `word*`).
    pub prefix: bool,
}

/// One full-text hit.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema,
)]
pub struct SearchHit {
    /// Full id of the task or note.
    pub id: String,
    /// `task` or `note`.
    pub kind: NodeKind,
    /// Its title.
    pub title: String,
    /// Matching text with `<mark>`/`</mark>` around the matches.
    pub snippet: String,
    /// Relevance within this answer; higher is better. The scale depends on the
    /// backend (SQLite: bm25 with every query word weighted alike; PostgreSQL:
    /// ts_rank), so compare scores only within one answer.
    pub score: f64,
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};

    use super::*;
    use crate::store::model::timestamp;

    const NOW: &str = "2026-06-01T11:00:00.000000Z";

    #[test]
    fn a_claim_is_live_strictly_before_its_expiry() {
        let later = "2026-06-01T11:00:00.000001Z";
        let earlier = "2026-06-01T10:59:59.999999Z";
        assert_eq!(task_status("open", Some(later), NOW), TaskStatus::Claimed);
        assert_eq!(task_status("open", Some(NOW), NOW), TaskStatus::Open);
        assert_eq!(task_status("open", Some(earlier), NOW), TaskStatus::Open);
        assert_eq!(task_status("open", None, NOW), TaskStatus::Open);
    }

    #[test]
    fn done_and_cancelled_ignore_any_stored_claim() {
        let later = "2026-06-01T12:00:00.000000Z";
        assert_eq!(task_status("done", Some(later), NOW), TaskStatus::Done);
        assert_eq!(
            task_status("cancelled", Some(later), NOW),
            TaskStatus::Cancelled
        );
    }

    #[test]
    fn only_a_live_claim_is_shown() {
        let later = "2026-06-01T12:00:00.000000Z".to_owned();
        let (status, claim) = task_state("open", Some("ada".into()), Some(later.clone()), NOW);
        assert_eq!(status, TaskStatus::Claimed);
        assert_eq!(
            claim,
            Some(Claim {
                holder: "ada".into(),
                expires_at: later
            })
        );
        let (status, claim) = task_state("open", Some("ada".into()), Some(NOW.into()), NOW);
        assert_eq!((status, claim), (TaskStatus::Open, None));
    }

    #[test]
    fn the_transition_table() {
        use Transition::*;
        let rows = [
            (
                Complete,
                "complete",
                &["open"][..],
                &["open", "claimed"][..],
                "done",
                true,
            ),
            (
                Cancel,
                "cancel",
                &["open"],
                &["open", "claimed"],
                "cancelled",
                true,
            ),
            (
                Reopen,
                "reopen",
                &["done", "cancelled"],
                &["done", "cancelled"],
                "open",
                false,
            ),
        ];
        for (t, operation, from_stored, allowed, to, claims) in rows {
            assert_eq!(t.operation(), operation);
            assert_eq!(t.from_stored(), from_stored);
            assert_eq!(t.allowed_from(), allowed);
            assert_eq!(t.to_stored(), to);
            assert_eq!(t.respects_claims(), claims);
        }
    }

    #[test]
    fn names_round_trip() {
        for s in TaskStatus::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        for p in [
            Priority::Low,
            Priority::Normal,
            Priority::High,
            Priority::Urgent,
        ] {
            assert_eq!(Priority::parse(p.as_str()), p);
        }
        assert_eq!(Priority::parse("asap"), Priority::Normal);
        for k in [
            LinkKind::RelatesTo,
            LinkKind::DependsOn,
            LinkKind::DerivedFrom,
            LinkKind::Blocks,
            LinkKind::LinksTo,
        ] {
            assert_eq!(LinkKind::parse(k.as_str()), Some(k));
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        }
        assert_eq!(LinkKind::parse("owns"), None);
    }

    #[test]
    fn ids_are_32_lowercase_hex_and_times_fixed_width() {
        let id = new_id();
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
        assert_ne!(new_id(), id);
        let t = DateTime::parse_from_rfc3339("2026-06-01T11:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(timestamp(t), NOW);
    }

    #[test]
    fn a_doctor_scan_reports_each_bad_edge_once() {
        let edge = |id: &str| Edge {
            id: id.into(),
            source: "a".into(),
            target: "a".into(),
            kind: LinkKind::Blocks,
        };
        let scan = DoctorScan::new(
            vec![edge("e1")],
            vec![edge("e1"), edge("e2")],
            vec![edge("e1"), edge("e2"), edge("e3")],
            Vec::new(),
            0,
        );
        let ids = |edges: &[Edge]| edges.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&scan.dangling), ["e1"]);
        assert_eq!(ids(&scan.self_loops), ["e2"]);
        assert_eq!(ids(&scan.duplicates), ["e3"]);
        assert_eq!(scan.bad_edges().count(), 3);
    }
}
