//! Conditional requests (RFC 9110 §8.8.3, §13): the strong `ETag` of every
//! answer that carries one task or note, `If-None-Match` on reads (304), and
//! `If-Match` on writes, mapped onto the tool's `expected_version` so that the
//! store decides it in the same statement as the write.
//!
//! A tag is `"{id}.{version}"`; a task with a live claim adds the claim's
//! fingerprint (`"{id}.{version}.{claim}"`), since claims change the task's
//! representation without changing its version, and a revalidated read must
//! see them. `If-Match` is about what a write can lose, the version: a tag
//! matches when its id and version are the entity's (claims keep their own
//! refusals, `claim_held` and `claim_not_held`).

use axum::extract::FromRequestParts;
use axum::http::{HeaderMap, HeaderValue, header, request::Parts};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use crate::envelope::{Envelope, ErrorCode, Meta, ToolError};
use crate::http::semantics::extract::{Rest, request_id_of};
use crate::http::semantics::response::ApiResponse;
use crate::http::semantics::revalidation::{EntityTag, TagMatch, tag_field};
use crate::tools::registry;

/// The kind of entity a conditional route serves: the tool that reads one.
#[derive(Debug, Clone, Copy)]
pub struct Entity {
    read_tool: &'static str,
    layer: &'static str,
}

pub const TASK: Entity = Entity {
    read_tool: "task_get",
    layer: "tasks",
};
pub const NOTE: Entity = Entity {
    read_tool: "note_read",
    layer: "notes",
};

/// Operations that take `If-Match` (and answer 412), and those that take
/// `If-None-Match` (and answer 304); every one of them, and the creates,
/// answers with an `ETag`.
pub const IF_MATCH_OPERATIONS: [&str; 9] = [
    "task_update",
    "task_claim",
    "task_renew",
    "task_release",
    "task_complete",
    "task_cancel",
    "task_reopen",
    "note_write",
    "note_delete",
];
pub const IF_NONE_MATCH_OPERATIONS: [&str; 2] = ["task_get", "note_read"];
pub const CREATE_OPERATIONS: [&str; 2] = ["task_create", "note_create"];

/// The strong tag of an answer's data (a task, a note, or a note write), as
/// the `ETag` header value: `None` for data that is not one entity.
///
/// Its id and version, and a fingerprint of what the answer shows that can
/// change without the version moving: a task's claim (taken, renewed,
/// lapsed), a note's links (a linked note retitled, a `[[slug]]` that a new
/// note now resolves). A note write's answer names its links by id only, so
/// its tag is its own answer's; `If-Match` compares id and version, which
/// both share.
pub fn etag_of(data: &Value) -> Option<String> {
    let id = data.get("id")?.as_str()?;
    let version = data.get("version")?.as_i64()?;
    let mut shown: Vec<&str> = Vec::new();
    if let Some(claim) = data.get("claim").filter(|c| c.is_object()) {
        // Unlabelled, as tags were before links counted: a claimed task's
        // tag stays what clients keep.
        shown.extend([text(&claim["holder"]), text(&claim["expires_at"])]);
    }
    for link in data
        .get("links")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        shown.extend([
            "link",
            text(&link["id"]),
            text(&link["title"]),
            text(&link["slug"]),
        ]);
    }
    for group in ["linked", "unresolved_links"] {
        for item in data
            .get(group)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            shown.extend([group, text(item)]);
        }
    }
    if shown.is_empty() {
        return Some(format!("\"{id}.{version}\""));
    }
    Some(format!("\"{id}.{version}.{:016x}\"", fingerprint(&shown)))
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// FNV-1a (64 bits) of the parts, each ended by a NUL: stable across builds
/// and platforms, which a tag a client keeps must be.
fn fingerprint(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain(std::iter::once(0)) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// The conditional headers of a request, parsed. A malformed `If-Match` is
/// `invalid_input` (nothing may be written on a condition that cannot be
/// read); a malformed `If-None-Match` is ignored, since the full answer it
/// then gets is always a correct one, and one over [`TAG_LIST_MAX`] bytes
/// refused on every method (a GET's is then read by [`Rest`]).
#[derive(Debug, Default)]
pub struct Preconditions {
    if_match: Option<TagMatch>,
}

impl<S: Send + Sync> FromRequestParts<S> for Preconditions {
    type Rejection = ApiResponse;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let parsed = Self::parse(&parts.headers);
        parsed.map_err(|error| ApiResponse::error(error, &request_id_of(&parts.headers)))
    }
}

impl Preconditions {
    fn parse(headers: &HeaderMap) -> Result<Self, ToolError> {
        tag_field(headers, header::IF_NONE_MATCH, false)?;
        Ok(Self {
            if_match: tag_field(headers, header::IF_MATCH, true)?,
        })
    }
}

/// The answer with its `ETag`, when its data is one entity.
pub fn tagged(answer: ApiResponse) -> Response {
    let tag = answer.data().and_then(etag_of);
    with_tag(answer, tag)
}

fn with_tag(answer: ApiResponse, tag: Option<String>) -> Response {
    match tag.and_then(header_value) {
        Some(tag) => answer.with_header(header::ETAG, tag).into_response(),
        None => answer.into_response(),
    }
}

fn header_value(tag: String) -> Option<HeaderValue> {
    HeaderValue::try_from(tag).ok()
}

/// A read of one entity: with its `ETag`, or 304 with no body when a tag of
/// `If-None-Match` matches it (weak comparison), or `*` (it exists). Served
/// from the read cache while the store is unchanged (`cache`).
///
/// `If-Match` is evaluated first (RFC 9110 §13.2.2), by the writes' rule: the
/// entity is sent only if a strong tag names its current version (or the
/// field is `*`), else 412 `precondition_failed` with what it is now. A
/// missing entity answers its not-found whatever `If-Match` says (§13.2.1).
pub async fn read(rest: &Rest, pre: &Preconditions, entity: Entity, id: String) -> Response {
    let args = Map::from_iter([("id".to_owned(), Value::String(id))]);
    let answer = rest
        .call_cached(entity.read_tool, args, Some(etag_of))
        .await;
    let current = answer.entity_tag().and_then(|t| t.to_str().ok());
    if let (Some(if_match), Some(current)) = (&pre.if_match, current) {
        let tag = current.trim_matches('"');
        let version = EntityTag::of(tag).id_and_version().map(|(_, v)| v);
        if !if_match.names_version_of(tag) {
            let error = ToolError::new(
                ErrorCode::PreconditionFailed,
                "The entity changed since the tag in `If-Match` was read; it was not sent.",
            );
            return precondition_failed(
                rest,
                entity,
                entity.read_tool,
                error,
                version,
                Some(current.to_owned()),
            );
        }
    }
    answer.into_response()
}

/// A write of one entity (`args` from the body or query): `If-Match`, when
/// given, becomes the tool's `expected_version`, so the store decides it with
/// the write; a mismatch is 412 `precondition_failed` and nothing is written.
///
/// A request the tool would refuse is refused first, then preconditions
/// apply only to an entity that exists (RFC 9110 §13.2.1): a missing one
/// answers its not-found, whatever `If-Match` says. `If-Match: *` asks only
/// that. A tag list and an `expected_version` that names no version of the
/// list disagree: `invalid_input`.
pub async fn write(
    rest: &Rest,
    pre: &Preconditions,
    entity: Entity,
    tool: &str,
    id: String,
    mut args: Map<String, Value>,
) -> Response {
    let Some(if_match) = &pre.if_match else {
        return tagged(rest.call_with_body(tool, Some(id), args).await);
    };
    if args.contains_key("id") {
        // Refused by the surface (the URL names the entity), as without If-Match.
        return rest
            .call_with_body(tool, Some(id), args)
            .await
            .into_response();
    }
    if let Some(def) = registry::find(tool) {
        let mut probe = args.clone();
        probe.insert("id".into(), Value::String(id.clone()));
        if let Err(error) = (def.check)(Value::Object(probe)) {
            return refusal(rest, entity, tool, error);
        }
    }
    let current = rest
        .call_with_body(entity.read_tool, Some(id), Map::new())
        .await;
    let Some((full_id, version)) = current.data().and_then(id_and_version) else {
        return current.into_response();
    };
    let TagMatch::Tags(tags) = if_match else {
        return tagged(rest.call_with_body(tool, Some(full_id), args).await);
    };
    let listed: Vec<i64> = tags
        .iter()
        .filter(|t| !t.weak)
        .filter_map(EntityTag::id_and_version)
        .filter(|(tag_id, _)| *tag_id == full_id)
        .map(|(_, v)| v)
        .collect();
    let expected = match args.get("expected_version").and_then(whole_number) {
        Some(given) if !listed.contains(&given) => {
            let error = ToolError::invalid_field(
                "If-Match",
                "`If-Match` and `expected_version` name different versions; send one of them.",
                format!("`expected_version` is {given}, which no tag of `If-Match` names"),
            );
            return refusal(rest, entity, tool, error);
        }
        Some(given) => given,
        None if listed.contains(&version) => version,
        None => return write_precondition_failed(rest, entity, tool, current.data()),
    };
    args.insert("expected_version".into(), json!(expected));
    let answer = rest.call_with_body(tool, Some(full_id.clone()), args).await;
    if answer
        .failure()
        .is_some_and(|e| e.code == ErrorCode::VersionConflict)
    {
        // Lost to a write between the read above and this one.
        let now = rest
            .call_with_body(entity.read_tool, Some(full_id), Map::new())
            .await;
        return write_precondition_failed(rest, entity, tool, now.data());
    }
    tagged(answer)
}

fn id_and_version(data: &Value) -> Option<(String, i64)> {
    Some((
        data.get("id")?.as_str()?.to_owned(),
        data.get("version")?.as_i64()?,
    ))
}

/// An integer, or a whole decimal such as `5.0` (which the tools accept too).
fn whole_number(value: &Value) -> Option<i64> {
    value.as_i64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15)
            .map(|f| f as i64)
    })
}

/// 412 for a write, for the entity as it is now (`current`: its read data).
fn write_precondition_failed(
    rest: &Rest,
    entity: Entity,
    tool: &str,
    current: Option<&Value>,
) -> Response {
    let version = current
        .and_then(|d| d.get("version"))
        .and_then(Value::as_i64);
    let error = ToolError::new(
        ErrorCode::PreconditionFailed,
        "The entity changed since the tag in `If-Match` was read; nothing was written.",
    );
    precondition_failed(
        rest,
        entity,
        tool,
        error,
        version,
        current.and_then(etag_of),
    )
}

/// 412: `error`, with the entity's current version and tag in its details
/// and the tag as the `ETag`.
fn precondition_failed(
    rest: &Rest,
    entity: Entity,
    tool: &str,
    error: ToolError,
    version: Option<i64>,
    tag: Option<String>,
) -> Response {
    let error = error
        .detail("current_version", version.map_or(Value::Null, Value::from))
        .detail(
            "current_etag",
            tag.clone().map_or(Value::Null, Value::String),
        )
        .suggest(["read it again (its `ETag` is `details.current_etag`), reapply your change, and send the new tag".to_owned()]);
    let answer = ApiResponse::new(Envelope::failure(
        error,
        Meta::new(tool, entity.layer, &rest.request_id),
    ));
    match tag.and_then(header_value) {
        Some(value) => answer.with_header(header::ETAG, value).into_response(),
        None => answer.into_response(),
    }
}

fn refusal(rest: &Rest, entity: Entity, tool: &str, error: ToolError) -> Response {
    ApiResponse::new(Envelope::failure(
        error,
        Meta::new(tool, entity.layer, &rest.request_id),
    ))
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::semantics::revalidation::parse_tags;

    fn tags(list: &[(bool, &str)]) -> Option<TagMatch> {
        Some(TagMatch::Tags(
            list.iter()
                .map(|(weak, opaque)| EntityTag {
                    weak: *weak,
                    opaque: (*opaque).to_owned(),
                })
                .collect(),
        ))
    }

    #[test]
    fn a_star_alone_is_any() {
        assert_eq!(parse_tags(b"*"), Some(TagMatch::Any));
        assert_eq!(parse_tags(b"  *\t"), Some(TagMatch::Any));
        assert_eq!(parse_tags(b"*, \"a\""), None);
    }

    #[test]
    fn lists_keep_weakness_and_allow_empty_elements() {
        assert_eq!(
            parse_tags(br#""a.1", W/"b.2" ,, "c""#),
            tags(&[(false, "a.1"), (true, "b.2"), (false, "c")])
        );
        assert_eq!(parse_tags(br#""""#), tags(&[(false, "")]));
    }

    #[test]
    fn a_comma_inside_a_tag_does_not_split_it() {
        assert_eq!(
            parse_tags(br#""a,b", "c""#),
            tags(&[(false, "a,b"), (false, "c")])
        );
    }

    #[test]
    fn malformed_fields_are_refused() {
        for field in [
            &b""[..],
            b" , ",
            b"abc",
            br#""unterminated"#,
            br#""a" "b""#,
            br#"w/"a""#,
            br#""a b""#,
            b"\"a\x01\"",
            b"\"a\xff\"",
        ] {
            assert_eq!(
                parse_tags(field),
                None,
                "{:?}",
                String::from_utf8_lossy(field)
            );
        }
    }

    #[test]
    fn an_unclaimed_entity_is_tagged_by_id_and_version() {
        let data = json!({"id": "abc", "version": 3, "claim": null});
        assert_eq!(etag_of(&data).as_deref(), Some("\"abc.3\""));
        assert_eq!(etag_of(&json!({"id": "abc"})), None);
    }

    #[test]
    fn a_claim_changes_the_tag_but_not_what_if_match_compares() {
        let claimed = |holder: &str, at: &str| {
            etag_of(&json!({"id": "abc", "version": 3,
                "claim": {"holder": holder, "expires_at": at}}))
            .unwrap()
        };
        let a = claimed("ann", "2026-01-01T00:00:00Z");
        assert_ne!(a, "\"abc.3\"");
        assert_ne!(a, claimed("bob", "2026-01-01T00:00:00Z"));
        assert_ne!(a, claimed("ann", "2026-01-01T01:00:00Z"));
        let Some(TagMatch::Tags(parsed)) = parse_tags(a.as_bytes()) else {
            panic!("own tag parses");
        };
        assert_eq!(parsed[0].id_and_version(), Some(("abc", 3)));
    }

    #[test]
    fn the_fingerprint_is_stable() {
        // FNV-1a of "" is the offset basis; of "a\0" a fixed value.
        assert_eq!(fingerprint(&[]), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fingerprint(&["a"]), 0x089b_e207_b544_f1e4);
        assert_ne!(fingerprint(&["ab", ""]), fingerprint(&["a", "b"]));
    }
}
