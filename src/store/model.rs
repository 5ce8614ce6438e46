//! The records the store hands to the tools. Those that tools return as-is
//! derive the schemas the surfaces publish.

use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{DateTime, SecondsFormat, Timelike, Utc};
use serde::{Deserialize, Serialize};

/// The stored and published form of a time: RFC 3339 UTC with microseconds and
/// `Z`, fixed width, so text order is time order. Both backends answer with it.
pub fn timestamp(t: DateTime<Utc>) -> String {
    // chrono writes what [`Timestamp`] does not: a leap second, a year
    // before 1970 or after 9999.
    let fixed = (t.nanosecond() < 1_000_000_000)
        .then(|| Timestamp::at(t.into()))
        .flatten();
    match fixed {
        Some(text) => text.as_str().to_owned(),
        None => t.to_rfc3339_opts(SecondsFormat::Micros, true),
    }
}

/// A call's "now" as [`timestamp`] text, read from its clock only when
/// first asked, then the same for the rest of the call: a cached read asks
/// for it only when a claim may have lapsed or the store must be asked.
pub struct Now<'a> {
    read: &'a (dyn Fn() -> String + Sync),
    text: std::sync::OnceLock<String>,
}

impl<'a> Now<'a> {
    /// `read` gives the time when it is first asked for.
    pub fn new(read: &'a (dyn Fn() -> String + Sync)) -> Self {
        Now {
            read,
            text: std::sync::OnceLock::new(),
        }
    }

    pub fn as_str(&self) -> &str {
        self.text.get_or_init(self.read)
    }
}

/// A time as [`timestamp`] writes it, RFC 3339 in UTC with microseconds
/// (`2026-12-03T16:27:42.123456Z`), written on the stack with integer
/// arithmetic: the request's clock reading of every cached read and every
/// line of the text log (tracing-subscriber's `Full` writes the same).
pub struct Timestamp([u8; 27]);

impl Timestamp {
    /// Now; `None` before 1970 or after 9999.
    pub fn now() -> Option<Timestamp> {
        Timestamp::at(SystemTime::now())
    }

    /// `time`; `None` before 1970 or after 9999.
    pub fn at(time: SystemTime) -> Option<Timestamp> {
        let since = time.duration_since(UNIX_EPOCH).ok()?;
        let seconds = since.as_secs();
        let (year, month, day) = civil_from_days(seconds / 86_400);
        if year > 9999 {
            return None;
        }
        let of_day = seconds % 86_400;
        let mut out = *b"0000-00-00T00:00:00.000000Z";
        digits(&mut out[0..4], year);
        digits(&mut out[5..7], month);
        digits(&mut out[8..10], day);
        digits(&mut out[11..13], of_day / 3600);
        digits(&mut out[14..16], of_day / 60 % 60);
        digits(&mut out[17..19], of_day % 60);
        digits(&mut out[20..26], u64::from(since.subsec_micros()));
        Some(Timestamp(out))
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII digits were written into an ASCII template.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// Writes `value` as decimal digits filling `out`, zero-padded on the left.
fn digits(out: &mut [u8], mut value: u64) {
    for place in out.iter_mut().rev() {
        *place = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

/// The proleptic Gregorian (year, month, day) of a day counted from
/// 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

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
/// claim expires after `now` is `claimed`. Times are [`timestamp`]s.
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

/// Position after the last item of a page, in (updated_at, id) descending order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keyset {
    pub updated_at: String,
    pub id: String,
}

/// One page of a list.
#[derive(Debug, Clone)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<Keyset>,
    /// Matches across all pages, counted up to a cap.
    pub total: Total,
}

/// Totals are counted up to this many matches, so that a page costs about
/// what it returns, not what the store holds.
pub const TOTAL_CAP: u64 = 1_000;

/// How many match, counted up to a cap: exact below it; at it, a lower bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Total {
    pub count: u64,
    pub lower_bound: bool,
}

impl Total {
    /// From a count of at most `cap + 1` rows (see [`capped_count_sql`]).
    pub fn counted(rows: u64, cap: u64) -> Self {
        Self {
            count: rows.min(cap),
            lower_bound: rows > cap,
        }
    }
}

/// The cap of a search page's total: [`TOTAL_CAP`], or past the page's end
/// when it lies beyond, so the count still tells whether another page follows.
pub fn search_cap(limit: usize, offset: usize) -> u64 {
    TOTAL_CAP.max((offset + limit) as u64)
}

/// Search ranks matches in windows of this many, newest first: the newest
/// `RANK_WINDOW` matches are ordered best first, then the next `RANK_WINDOW`,
/// and so on, so a page ranks at most two windows whatever the store holds.
/// With no more matches than this, the order is relevance over all of them.
pub const RANK_WINDOW: usize = 500;

/// Match positions (newest first, from 0) whose windows a page of `limit`
/// hits from `offset` draws on: whole windows, at most two (`limit` is at
/// most 500 and smaller than a window).
pub fn rank_span(limit: usize, offset: usize) -> std::ops::Range<usize> {
    let first = offset / RANK_WINDOW;
    let last = (offset + limit.max(1) - 1) / RANK_WINDOW;
    first * RANK_WINDOW..(last + 1) * RANK_WINDOW
}

/// Orders scored matches, each with its index in newest-first order from
/// position `span_start`, by window and then by `better` (best first), and
/// keeps the page of `limit` from overall position `offset`.
pub fn rank_page<T>(
    mut matches: Vec<(usize, T)>,
    span_start: usize,
    limit: usize,
    offset: usize,
    better: impl Fn(&T, &T) -> std::cmp::Ordering,
) -> Vec<T> {
    matches.sort_by(|(a_pos, a), (b_pos, b)| {
        let window = |pos: &usize| (span_start + pos) / RANK_WINDOW;
        window(a_pos).cmp(&window(b_pos)).then_with(|| better(a, b))
    });
    matches
        .into_iter()
        .skip(offset - span_start)
        .take(limit)
        .map(|(_, m)| m)
        .collect()
}

/// SQL counting the rows of `from_where` (`FROM ... WHERE ...`), stopping
/// after `cap + 1`; the same text on SQLite and PostgreSQL.
pub fn capped_count_sql(from_where: &str, cap: u64) -> String {
    format!(
        "SELECT count(*) FROM (SELECT 1 {from_where} LIMIT {}) AS capped",
        cap + 1
    )
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
    use super::*;

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
    fn a_total_is_exact_up_to_its_cap_and_a_lower_bound_past_it() {
        let total = |count, lower_bound| Total { count, lower_bound };
        assert_eq!(Total::counted(0, 1000), total(0, false));
        assert_eq!(Total::counted(999, 1000), total(999, false));
        assert_eq!(Total::counted(1000, 1000), total(1000, false));
        assert_eq!(Total::counted(1001, 1000), total(1000, true));
    }

    #[test]
    fn a_search_total_is_capped_at_the_cap_or_past_the_page() {
        assert_eq!(search_cap(20, 0), TOTAL_CAP);
        assert_eq!(search_cap(20, 980), TOTAL_CAP);
        assert_eq!(search_cap(20, 990), 1010);
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

    #[test]
    fn a_page_ranks_the_windows_it_draws_on_and_no_more() {
        assert_eq!(rank_span(20, 0), 0..RANK_WINDOW);
        assert_eq!(rank_span(20, RANK_WINDOW - 20), 0..RANK_WINDOW);
        assert_eq!(rank_span(20, RANK_WINDOW - 10), 0..2 * RANK_WINDOW);
        assert_eq!(
            rank_span(500, 3 * RANK_WINDOW),
            3 * RANK_WINDOW..4 * RANK_WINDOW
        );
    }

    #[test]
    fn pages_order_by_window_then_score_and_together_list_every_match_once() {
        // Positions 0.. newest first; the score rises with age inside each
        // window, so a window read best first is reversed.
        let n = 2 * RANK_WINDOW + 10;
        let all: Vec<usize> = (0..n).collect();
        let best_first = |a: &usize, b: &usize| b.cmp(a);
        let page = |limit: usize, offset: usize| {
            let span = rank_span(limit, offset);
            let fetched = all[span.start..span.end.min(n)]
                .iter()
                .map(|&m| (m - span.start, m))
                .collect();
            rank_page(fetched, span.start, limit, offset, best_first)
        };
        assert_eq!(
            page(3, 0),
            [RANK_WINDOW - 1, RANK_WINDOW - 2, RANK_WINDOW - 3]
        );
        // A page across the first window's end continues into the second.
        assert_eq!(
            page(4, RANK_WINDOW - 2),
            [1, 0, 2 * RANK_WINDOW - 1, 2 * RANK_WINDOW - 2]
        );
        let mut seen: Vec<usize> = (0..n).step_by(300).flat_map(|o| page(300, o)).collect();
        assert_eq!(seen.len(), n);
        seen.sort_unstable();
        assert_eq!(seen, all);
    }
    #[test]
    fn timestamps_are_rfc_3339_with_microseconds() {
        for seconds in [
            0,
            951_782_400,
            1_764_777_662,
            4_107_542_399,
            253_402_300_799,
        ] {
            for micros in [0, 1, 999_999] {
                let time = UNIX_EPOCH + std::time::Duration::new(seconds, micros * 1000);
                let expected = chrono::DateTime::<chrono::Utc>::from(time)
                    .to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
                assert_eq!(Timestamp::at(time).unwrap().as_str(), expected);
            }
        }
        let beyond = UNIX_EPOCH + std::time::Duration::from_secs(253_402_300_800);
        assert!(
            Timestamp::at(beyond).is_none(),
            "year 10000 is left to chrono (and, in the log, to Full)"
        );
    }

    #[test]
    fn a_timestamp_is_what_chrono_writes_every_time() {
        use chrono::TimeZone;
        for t in [
            Utc.with_ymd_and_hms(2026, 12, 6, 5, 3, 46).unwrap(),
            Utc.with_ymd_and_hms(1969, 12, 31, 23, 59, 59).unwrap(),
            Utc.with_ymd_and_hms(1900, 1, 1, 0, 0, 0).unwrap(),
            Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59).unwrap(),
            Utc.with_ymd_and_hms(2024, 2, 29, 12, 0, 0).unwrap()
                + chrono::Duration::nanoseconds(123_456_789),
        ] {
            assert_eq!(timestamp(t), t.to_rfc3339_opts(SecondsFormat::Micros, true));
        }
        let leap = chrono::NaiveDate::from_ymd_opt(2016, 12, 31)
            .and_then(|d| d.and_hms_nano_opt(23, 59, 59, 1_500_000_000))
            .unwrap()
            .and_utc();
        assert_eq!(timestamp(leap), "2016-12-31T23:59:60.500000Z");
    }
}
