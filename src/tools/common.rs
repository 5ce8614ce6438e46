//! What every tool module shares: the clock, id-prefix resolution (docs/contract.md,
//! "Ids, versions, claims"), page limits and opaque cursors.
//!
//! The bounds below are the one source of truth for what the tools enforce;
//! the input types state them to both schema generators (schemars reads the
//! consts, utoipa needs literals and a test holds the two together).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Duration, Utc};

use crate::envelope::{ErrorCode, ToolError};
use crate::store::{EntityKind, IdTitle, Keyset, Store, refusal};

/// Shortest id prefix accepted without an exact match.
pub const MIN_PREFIX: usize = 6;
/// Page size when the caller gives none.
pub const DEFAULT_LIMIT: usize = 50;
/// Smallest page size.
pub const MIN_LIMIT: usize = 1;
/// Largest page size.
pub const MAX_LIMIT: usize = 500;

/// The time source: the system clock plus an offset tests can move forward.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    offset_ms: Arc<AtomicI64>,
}

impl Clock {
    pub fn now(&self) -> DateTime<Utc> {
        Utc::now() + Duration::milliseconds(self.offset_ms.load(Ordering::Relaxed))
    }

    /// Moves this clock (and every clone of it) forward.
    pub fn advance(&self, by: Duration) {
        self.offset_ms
            .fetch_add(by.num_milliseconds(), Ordering::Relaxed);
    }
}

pub use crate::store::{new_id, timestamp};

/// Validates a page size: default [`DEFAULT_LIMIT`], [`MIN_LIMIT`]-[`MAX_LIMIT`].
pub fn page_limit(limit: Option<i64>) -> Result<usize, ToolError> {
    match limit {
        None => Ok(DEFAULT_LIMIT),
        Some(n) if (MIN_LIMIT as i64..=MAX_LIMIT as i64).contains(&n) => Ok(n as usize),
        Some(_) => Err(ToolError::invalid_input(
            "limit",
            format!("must be between {MIN_LIMIT} and {MAX_LIMIT}"),
        )),
    }
}

fn bad_cursor() -> ToolError {
    ToolError::new(
        ErrorCode::InvalidCursor,
        "The cursor was not issued by this list; start again without one.",
    )
    .suggest(["omit `cursor` to get the first page".to_owned()])
}

/// Opaque cursor for (updated_at, id) keyset pages. `scope` keeps a cursor of
/// one list from being accepted by another.
pub fn encode_keyset(scope: &str, key: &Keyset) -> String {
    URL_SAFE_NO_PAD.encode(format!("{scope}|{}|{}", key.updated_at, key.id))
}

pub fn decode_keyset(scope: &str, cursor: Option<&str>) -> Result<Option<Keyset>, ToolError> {
    let Some(cursor) = cursor else {
        return Ok(None);
    };
    let raw = URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(bad_cursor)?;
    let mut parts = raw.splitn(3, '|');
    let (Some(s), Some(updated_at), Some(id)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad_cursor());
    };
    let valid = s == scope
        && DateTime::parse_from_rfc3339(updated_at).is_ok()
        && id.len() == 32
        && id.bytes().all(|b| b.is_ascii_hexdigit());
    if !valid {
        return Err(bad_cursor());
    }
    Ok(Some(Keyset {
        updated_at: updated_at.to_owned(),
        id: id.to_owned(),
    }))
}

/// Opaque cursor for offset pages (ranked search results).
pub fn encode_offset(scope: &str, offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("{scope}|{offset}"))
}

pub fn decode_offset(scope: &str, cursor: Option<&str>) -> Result<usize, ToolError> {
    let Some(cursor) = cursor else {
        return Ok(0);
    };
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|raw| {
            let (s, n) = raw.split_once('|')?;
            (s == scope).then(|| n.parse().ok()).flatten()
        })
        .ok_or_else(bad_cursor)
}

/// Resolves a key, as given, among the candidates the store found for it: exact match
/// wins, then the docs/contract.md, "Ids, versions, claims" rules. `Ok(None)` means
/// no match.
///
/// A key is too short by its length as given, the length the API's schema
/// bounds (`minLength`); the whitespace around it is then dropped for the
/// match, so a key long enough only with that whitespace names nothing.
pub fn pick(key: &str, mut candidates: Vec<IdTitle>) -> Result<Option<IdTitle>, ToolError> {
    let wanted = normalize(key);
    if let Some(at) = candidates.iter().position(|c| c.id == wanted) {
        return Ok(Some(candidates.swap_remove(at)));
    }
    if wanted.chars().count() < MIN_PREFIX {
        if key.chars().count() >= MIN_PREFIX {
            return Ok(None);
        }
        return Err(ToolError::new(
            ErrorCode::IdPrefixTooShort,
            format!("An id prefix needs at least {MIN_PREFIX} characters."),
        )
        .detail("min_length", MIN_PREFIX));
    }
    if candidates.len() <= 1 {
        return Ok(candidates.pop());
    }
    let shown: Vec<serde_json::Value> = candidates
        .iter()
        .take(5)
        .map(|c| serde_json::json!({"id": c.id, "title": c.title}))
        .collect();
    Err(ToolError::new(
        ErrorCode::AmbiguousIdPrefix,
        "Several entities start with this prefix; give more characters.",
    )
    .detail("candidates", shown))
}

/// Ids are lowercase hex; a prefix is compared the same way, without the
/// whitespace around it.
fn normalize(key: &str) -> String {
    key.trim().to_ascii_lowercase()
}

/// Candidates of `kind` for `key` (enough to tell one from several).
pub fn candidates(
    store: &dyn Store,
    kind: EntityKind,
    key: &str,
) -> Result<Vec<IdTitle>, ToolError> {
    let key = normalize(key);
    if key.is_empty() {
        return Ok(Vec::new());
    }
    store.find_ids(kind, &key, 6).map_err(ToolError::from)
}

/// `key` as a whole id, when it has the length of one
/// ([`crate::store::ID_LEN`]): an exact id wins over every other reading of a
/// key, so a point read tries it first and resolves prefixes (and slugs)
/// only when no entity has it, which saves a lookup on the commonest call.
pub fn whole_id(key: &str) -> Option<String> {
    let key = normalize(key);
    (key.len() == crate::store::ID_LEN).then_some(key)
}

pub fn resolve_task(store: &dyn Store, key: &str) -> Result<IdTitle, ToolError> {
    pick(key, candidates(store, EntityKind::Task, key)?)?
        .ok_or_else(|| refusal::task_not_found(key).into())
}

pub fn resolve_link(store: &dyn Store, key: &str) -> Result<IdTitle, ToolError> {
    pick(key, candidates(store, EntityKind::Link, key)?)?
        .ok_or_else(|| refusal::link_not_found(key).into())
}

/// A note by id, unique prefix or slug (an exact id wins, then an exact slug).
pub fn resolve_note(store: &dyn Store, key: &str) -> Result<IdTitle, ToolError> {
    let found = candidates(store, EntityKind::Note, key)?;
    let normalized = normalize(key);
    if let Some(exact) = found.iter().find(|c| c.id == normalized) {
        return Ok(exact.clone());
    }
    if let Some(by_slug) = store.note_by_slug(&super::wikilink::slugify(key))? {
        return Ok(by_slug);
    }
    pick(key, found)?.ok_or_else(|| refusal::note_not_found(key).into())
}

/// A task or a note (graph ids resolve across both). No match answers
/// `node_not_found`.
pub fn resolve_node(store: &dyn Store, key: &str) -> Result<IdTitle, ToolError> {
    let normalized = normalize(key);
    let mut found = candidates(store, EntityKind::Task, key)?;
    found.extend(candidates(store, EntityKind::Note, key)?);
    found.sort_by(|a, b| a.id.cmp(&b.id));
    if found.iter().all(|c| c.id != normalized)
        && let Some(by_slug) = store.note_by_slug(&super::wikilink::slugify(key))?
    {
        return Ok(by_slug);
    }
    pick(key, found)?.ok_or_else(|| {
        ToolError::new(
            ErrorCode::NodeNotFound,
            format!("No task or note with id `{key}`."),
        )
        .detail("id", key)
        .suggest(["task_list, note_list or search find what exists".to_owned()])
    })
}

/// Rejects an empty or whitespace-only required string.
pub fn non_empty(field: &str, value: &str) -> Result<String, ToolError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(ToolError::invalid_input(field, "must not be empty"));
    }
    Ok(trimmed.to_owned())
}

/// Trims tags, drops empty ones and duplicates, keeps order.
pub fn clean_tags(tags: Option<Vec<String>>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for tag in tags.unwrap_or_default() {
        let tag = tag.trim().to_owned();
        if !tag.is_empty() && !out.contains(&tag) {
            out.push(tag);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn it(id: &str) -> IdTitle {
        IdTitle {
            id: id.into(),
            title: format!("title of {id}"),
        }
    }

    #[test]
    fn an_exact_id_wins_even_when_short_or_among_several() {
        let found = vec![it("abc"), it("abc1"), it("abc2")];
        assert_eq!(pick("abc", found).unwrap(), Some(it("abc")));
        let found = vec![it("abcdef1"), it("abcdef"), it("abcdef2")];
        assert_eq!(pick("abcdef", found).unwrap(), Some(it("abcdef")));
    }

    #[test]
    fn a_prefix_under_six_chars_is_too_short_even_when_unique() {
        let e = pick("abcde", vec![it("abcde0")]).unwrap_err();
        assert_eq!(e.code, ErrorCode::IdPrefixTooShort);
        assert_eq!(e.details["min_length"], MIN_PREFIX);
        // Six characters are enough; counted in chars, not bytes.
        assert_eq!(
            pick("abcdef", vec![it("abcdef0")]).unwrap(),
            Some(it("abcdef0"))
        );
        assert_eq!(
            pick("ééééé", vec![it("ééééé0")]).unwrap_err().code,
            ErrorCode::IdPrefixTooShort
        );
        assert_eq!(pick("abcdef", Vec::new()).unwrap(), None);
    }

    #[test]
    fn whitespace_around_a_key_counts_for_its_length_not_for_the_match() {
        // Matched without it: an exact id, or a long enough prefix.
        assert_eq!(pick(" ABC ", vec![it("abc")]).unwrap(), Some(it("abc")));
        assert_eq!(
            pick("\tabcdef\n", vec![it("abcdef0")]).unwrap(),
            Some(it("abcdef0"))
        );
        // Six characters as given (the schema's `minLength`) are never too
        // short; five without the whitespace are no prefix: nothing matches.
        assert_eq!(pick("\u{c}abcde", vec![it("abcde0")]).unwrap(), None);
        assert_eq!(
            pick(" abcd", vec![it("abcd00")]).unwrap_err().code,
            ErrorCode::IdPrefixTooShort
        );
    }

    #[test]
    fn several_matches_are_ambiguous_with_the_first_five() {
        let found: Vec<IdTitle> = (0..7).map(|i| it(&format!("abcdef{i}"))).collect();
        let e = pick("abcdef", found).unwrap_err();
        assert_eq!(e.code, ErrorCode::AmbiguousIdPrefix);
        let shown = e.details["candidates"].as_array().unwrap();
        assert_eq!(shown.len(), 5);
        assert_eq!(
            shown[0],
            serde_json::json!({"id": "abcdef0", "title": "title of abcdef0"})
        );
        assert_eq!(shown[4]["id"], "abcdef4");
        let two = pick("abcdef", vec![it("abcdef0"), it("abcdef1")]).unwrap_err();
        assert_eq!(two.details["candidates"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn page_limits_default_and_bounds() {
        assert_eq!(page_limit(None).unwrap(), DEFAULT_LIMIT);
        assert_eq!(page_limit(Some(1)).unwrap(), 1);
        assert_eq!(page_limit(Some(500)).unwrap(), 500);
        for bad in [0, -1, 501] {
            let e = page_limit(Some(bad)).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidInput);
            assert_eq!(e.details["field"], "limit");
        }
    }

    #[test]
    fn a_keyset_cursor_round_trips_only_in_its_own_list() {
        let key = Keyset {
            updated_at: "2026-06-01T11:00:00.000000Z".into(),
            id: "0123456789abcdef0123456789abcdef".into(),
        };
        let cursor = encode_keyset("tasks", &key);
        assert_eq!(
            decode_keyset("tasks", Some(&cursor)).unwrap(),
            Some(key.clone())
        );
        assert_eq!(decode_keyset("tasks", None).unwrap(), None);
        let bad = |c: &str| decode_keyset("tasks", Some(c)).unwrap_err().code;
        assert_eq!(bad(&cursor[..cursor.len() - 2]), ErrorCode::InvalidCursor);
        assert_eq!(bad(&encode_keyset("notes", &key)), ErrorCode::InvalidCursor);
        assert_eq!(bad("!!"), ErrorCode::InvalidCursor);
        for raw in [
            "tasks|2026-06-01T11:00:00.000000Z",
            "tasks|yesterday|0123456789abcdef0123456789abcdef",
            "tasks|2026-06-01T11:00:00.000000Z|0123456789abcdef",
            "tasks|2026-06-01T11:00:00.000000Z|0123456789abcdef0123456789abcdeg",
        ] {
            assert_eq!(
                bad(&URL_SAFE_NO_PAD.encode(raw)),
                ErrorCode::InvalidCursor,
                "{raw}"
            );
        }
    }

    #[test]
    fn an_offset_cursor_round_trips_only_in_its_own_list() {
        let cursor = encode_offset("search", 40);
        assert_eq!(decode_offset("search", Some(&cursor)).unwrap(), 40);
        assert_eq!(decode_offset("search", None).unwrap(), 0);
        for bad in [
            encode_offset("other", 40),
            URL_SAFE_NO_PAD.encode("search|x"),
            URL_SAFE_NO_PAD.encode("search"),
            "%%".to_owned(),
        ] {
            let e = decode_offset("search", Some(&bad)).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidCursor);
            assert!(!e.suggestions.is_empty());
        }
    }

    #[test]
    fn required_strings_are_trimmed_and_tags_cleaned() {
        assert_eq!(non_empty("title", "  T  ").unwrap(), "T");
        let e = non_empty("title", " \t ").unwrap_err();
        assert_eq!(e.details["field"], "title");
        let tags = clean_tags(Some(vec![" a ".into(), "".into(), "b".into(), "a".into()]));
        assert_eq!(tags, ["a", "b"]);
        assert!(clean_tags(None).is_empty());
    }

    #[test]
    fn the_clock_moves_forward_for_every_clone() {
        let clock = Clock::default();
        let other = clock.clone();
        let before = other.now();
        clock.advance(Duration::minutes(90));
        let moved = other.now() - before;
        assert!(moved >= Duration::minutes(90) && moved < Duration::minutes(91));
    }
}
