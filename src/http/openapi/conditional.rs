//! The conditional requests of `semantics::conditional` in the document:
//! `If-None-Match` and 304 on the reads, `If-Match` on the writes (whose 412
//! the shared errors add), and the `ETag` of every answer that carries one.

use std::collections::BTreeMap;

use utoipa::Modify;
use utoipa::openapi::header::Header;
use utoipa::openapi::path::{Operation, ParameterBuilder, ParameterIn};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::{OpenApi, RefOr, Required};

use super::{allow_origin, header, operations, string};
use crate::http::semantics::conditional::{
    CREATE_OPERATIONS, IF_MATCH_OPERATIONS, IF_NONE_MATCH_OPERATIONS,
};
use crate::http::semantics::revalidation::TAG_LIST_MAX;

pub(super) struct Conditional;

/// What `parse_tags` reads: `*`, or tags with empty list elements allowed.
const TAG_LIST: &str =
    r#"^[ \t]*(\*|[ \t,]*(W/)?"[!#-~]*"([ \t]*,[ \t,]*(W/)?"[!#-~]*")*[ \t,]*)[ \t]*$"#;

type Headers = BTreeMap<String, RefOr<Header>>;

/// The headers of an answer tagged `etag`, with the CORS one every response
/// given headers states too.
fn tagged(etag: RefOr<Header>) -> Headers {
    let cors = allow_origin(
        "The allowed origin, on a cross-origin request from an origin `--cors-origin` allows.",
    );
    BTreeMap::from([
        ("ETag".to_owned(), etag),
        ("Access-Control-Allow-Origin".to_owned(), cors),
    ])
}

impl Modify for Conditional {
    fn modify(&self, doc: &mut OpenApi) {
        let strong = tagged(header(
            "The entity's strong tag: send it as `If-Match` to write only that version, or as `If-None-Match` to read it only if it changed.",
            Some(true),
            string(512, Some(r#"^"[!#-~]+"$"#)),
        ));
        let weak = tagged(header(
            "The answer's weak tag (a digest of its data, not of its meta): send it as `If-None-Match` to be answered 304 while the data is the same.",
            Some(true),
            string(20, Some(r#"^W/"[0-9a-f]{16}"$"#)),
        ));
        for (_, method, op) in operations(&mut doc.paths) {
            let id = op.operation_id.clone().unwrap_or_default();
            let id = id.as_str();
            // A read: one entity's strong tag, or any other's weak one (its
            // data's, `response`).
            let read = if IF_NONE_MATCH_OPERATIONS.contains(&id) {
                Some((
                    &strong,
                    "one is the entity's current `ETag` (weak comparison)",
                    "the entity still has a tag `If-None-Match` named",
                ))
            } else if method == "get" {
                Some((
                    &weak,
                    "one is this answer's `ETag` now (its data unchanged)",
                    "the data is the same as when the tag `If-None-Match` named was made",
                ))
            } else {
                None
            };
            if IF_NONE_MATCH_OPERATIONS.contains(&id) {
                add_parameter(
                    op,
                    "If-Match",
                    true,
                    "Tags you read (or `*`: the entity exists): sent only if one names the entity's current version, else 412 `precondition_failed` with what it is now. Evaluated before `If-None-Match`.",
                );
            }
            let (success, tags) = if let Some((tags, when, unchanged)) = read {
                add_parameter(
                    op,
                    "If-None-Match",
                    false,
                    &format!(
                        "Tags you hold (or `*`): answered 304 with no body when {when}. A value that is not a tag list is ignored."
                    ),
                );
                let mut not_modified = ResponseBuilder::new()
                    .description(format!("Not modified: {unchanged}; no body."))
                    .build();
                not_modified.headers = tags.clone();
                op.responses
                    .responses
                    .insert("304".into(), RefOr::T(not_modified));
                ("200", tags)
            } else if IF_MATCH_OPERATIONS.contains(&id) {
                add_parameter(
                    op,
                    "If-Match",
                    true,
                    "Tags you read (or `*`: the entity exists): written only if one names the entity's current version, else 412 `precondition_failed` and nothing is written. The same check as `expected_version`; both given must agree (else `invalid_input`).",
                );
                ("200", &strong)
            } else if CREATE_OPERATIONS.contains(&id) {
                ("201", &strong)
            } else {
                continue;
            };
            if id != "note_delete"
                && let Some(RefOr::T(answer)) = op.responses.responses.get_mut(success)
            {
                answer.headers.extend(tags.clone());
            }
        }
    }
}

/// Adds the optional header parameter `name` to `op`. A malformed
/// `If-None-Match` is ignored, so only its length is a rule; `strict` ones
/// must be a tag list.
fn add_parameter(op: &mut Operation, name: &str, strict: bool, description: &str) {
    let schema = string(TAG_LIST_MAX, strict.then_some(TAG_LIST));
    let parameter = ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(schema))
        .build();
    op.parameters
        .get_or_insert_with(Vec::new)
        .push(RefOr::T(parameter));
}
