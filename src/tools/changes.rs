//! `changes_since`: the change feed for agents. Every answer carries a
//! `next_cursor` to keep, also when nothing is new, so an agent holds one
//! cursor and learns exactly what moved since it last looked.

use serde::{Deserialize, Serialize};

use super::Ctx;
use super::bounds::{CURSOR_MAX, KEY_MAX, KINDS_MAX};
use super::common::{MAX_LIMIT, MIN_LIMIT, page_limit};
use crate::envelope::{ErrorCode, ToolError};
use crate::store::{ChangeEvent, ChangeKind, ChangeQuery};

#[derive(
    Debug,
    Default,
    Deserialize,
    Serialize,
    schemars::JsonSchema,
    utoipa::ToSchema,
    utoipa::IntoParams,
)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ChangesSinceInput {
    /// The `next_cursor` of an earlier answer (or an SSE event id): events
    /// after it. Omitted: from the oldest retained event.
    #[serde(default)]
    #[schemars(length(min = 1, max = CURSOR_MAX))]
    #[schema(min_length = 1, max_length = 256)]
    #[param(min_length = 1, max_length = 256)]
    pub cursor: Option<String>,
    /// Only events of these kinds.
    #[serde(default)]
    #[schemars(length(max = KINDS_MAX))]
    #[schema(max_items = 32)]
    #[param(max_items = 32)]
    pub kinds: Option<Vec<ChangeKind>>,
    /// Only events about this task, note or link (its full id).
    #[serde(default)]
    #[schemars(length(max = KEY_MAX))]
    #[schema(max_length = 400)]
    #[param(max_length = 400)]
    pub entity_id: Option<String>,
    /// Events per page, 1-500 (default 50).
    #[serde(default)]
    #[schemars(range(min = MIN_LIMIT, max = MAX_LIMIT))]
    #[schema(minimum = 1, maximum = 500)]
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
}

/// Events after the cursor, oldest first.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct ChangesPage {
    pub events: Vec<ChangeEvent>,
    /// Keep it, and pass it as `cursor` next time: it is never null, also when
    /// nothing is new.
    pub next_cursor: String,
    /// More events are waiting: ask again at once with `next_cursor`.
    pub has_more: bool,
}

fn bad_cursor() -> ToolError {
    ToolError::new(
        ErrorCode::InvalidCursor,
        "The cursor was not issued by this change feed; start again without one.",
    )
    .suggest(["omit `cursor` to read from the oldest retained event".to_owned()])
}

fn parse_cursor(cursor: Option<&str>) -> Result<Option<i64>, ToolError> {
    let Some(cursor) = cursor else {
        return Ok(None);
    };
    match cursor.parse::<i64>() {
        Ok(seq) if seq >= 0 && cursor.bytes().all(|b| b.is_ascii_digit()) => Ok(Some(seq)),
        _ => Err(bad_cursor()),
    }
}

pub fn changes_since(ctx: &Ctx<'_>, input: ChangesSinceInput) -> Result<ChangesPage, ToolError> {
    let limit = page_limit(input.limit)?;
    let after = parse_cursor(input.cursor.as_deref())?;
    let page = ctx.store.changes(&ChangeQuery {
        after,
        kinds: input.kinds.unwrap_or_default(),
        entity_id: input.entity_id,
        limit,
    })?;
    if let Some(after) = after {
        if after > page.head {
            return Err(bad_cursor());
        }
        // Events between the cursor and the oldest retained one were pruned.
        let first_kept = page.oldest.unwrap_or(page.head + 1);
        if after + 1 < first_kept {
            return Err(ToolError::new(
                ErrorCode::CursorExpired,
                "Events after this cursor are no longer retained; reload what you show, then follow the feed from a fresh read.",
            )
            .detail("oldest_cursor", (first_kept - 1).to_string())
            .suggest(["reload, then call changes_since without a cursor".to_owned()]));
        }
    }
    Ok(ChangesPage {
        next_cursor: page.next_seq(after.unwrap_or(0)).to_string(),
        has_more: page.more,
        events: page.events,
    })
}
