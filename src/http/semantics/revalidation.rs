//! Entity tags and revalidation (RFC 9110 §8.8.3, §13.1): the one parser of
//! `If-Match` and `If-None-Match` (every field line joined, as §5.3 says),
//! and the one rule that decides a `304`. Every route, the read cache, the
//! SPA's files and `/openapi.json` revalidate through [`is_unchanged`].

use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::envelope::ToolError;

/// The longest `If-Match` / `If-None-Match` declared (a few hundred tags).
pub const TAG_LIST_MAX: u64 = 16 * 1024;

/// One entity tag of a request header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityTag {
    pub weak: bool,
    /// The opaque tag, without its quotes.
    pub opaque: String,
}

impl EntityTag {
    /// A strong tag of `opaque`.
    pub fn of(opaque: &str) -> Self {
        Self {
            weak: false,
            opaque: opaque.to_owned(),
        }
    }

    /// The entity this tag names and its version, when it is one of ours.
    pub fn id_and_version(&self) -> Option<(&str, i64)> {
        let mut parts = self.opaque.split('.');
        let id = parts.next().filter(|id| !id.is_empty())?;
        let version = parts.next()?.parse().ok()?;
        Some((id, version))
    }
}

/// A parsed `If-Match` or `If-None-Match`: `*`, or a list of tags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TagMatch {
    Any,
    Tags(Vec<EntityTag>),
}

impl TagMatch {
    /// `If-None-Match`'s question: is it `*`, or does it name `etag` (an
    /// `ETag` value, weak or strong) by weak comparison?
    pub fn names(&self, etag: &str) -> bool {
        let quoted = etag.strip_prefix("W/").unwrap_or(etag);
        let opaque = quoted.strip_prefix('"').and_then(|t| t.strip_suffix('"'));
        match self {
            Self::Any => true,
            Self::Tags(tags) => tags.iter().any(|t| Some(t.opaque.as_str()) == opaque),
        }
    }

    /// `If-Match`'s question on a read: is it `*`, or does a strong tag of
    /// it name the entity and version that `current` (an opaque tag of
    /// ours) names? The version alone decides, as on a write: a claim
    /// renewed since changes the tag, not the version.
    pub fn names_version_of(&self, current: &str) -> bool {
        let Self::Tags(tags) = self else {
            return true;
        };
        let current = EntityTag::of(current);
        let Some(current) = current.id_and_version() else {
            return false;
        };
        tags.iter()
            .filter(|t| !t.weak)
            .any(|t| t.id_and_version() == Some(current))
    }
}

/// A GET's (or HEAD's) `If-None-Match`, as [`Preconditions`] reads it: a
/// value that is no tag list is ignored (RFC 9110 §13.1.2), one over
/// [`TAG_LIST_MAX`] bytes refused; on any other method the field is
/// ignored (those answers are not revalidated).
pub fn if_none_match(method: &Method, headers: &HeaderMap) -> Result<Option<TagMatch>, ToolError> {
    if !matches!(*method, Method::GET | Method::HEAD) {
        return Ok(None);
    }
    tag_field(headers, header::IF_NONE_MATCH, false)
}

/// Parses a field value: `*` or `1#entity-tag`, where `entity-tag = [ "W/" ]
/// DQUOTE *etagc DQUOTE` and `etagc = %x21 / %x23-7E` (RFC 9110's obs-text
/// is refused: no tag of ours holds it, and the declared pattern is ASCII). Commas may
/// sit inside a tag, so the list is read tag by tag, never split on commas.
/// Empty list elements are allowed (RFC 9110 §5.6.1).
pub fn parse_tags(field: &[u8]) -> Option<TagMatch> {
    let is_ows = |b: &u8| matches!(b, b' ' | b'\t');
    let trimmed: &[u8] = {
        let start = field.iter().position(|b| !is_ows(b)).unwrap_or(field.len());
        let end = field
            .iter()
            .rposition(|b| !is_ows(b))
            .map_or(start, |e| e + 1);
        &field[start..end]
    };
    if trimmed == b"*" {
        return Some(TagMatch::Any);
    }
    let mut tags = Vec::new();
    let mut rest = trimmed;
    loop {
        while let [first, tail @ ..] = rest
            && (is_ows(first) || *first == b',')
        {
            rest = tail;
        }
        if rest.is_empty() {
            break;
        }
        let weak = rest.starts_with(b"W/");
        if weak {
            rest = &rest[2..];
        }
        let [b'"', tail @ ..] = rest else {
            return None;
        };
        let close = tail.iter().position(|b| *b == b'"')?;
        let opaque = &tail[..close];
        if !opaque.iter().all(|b| matches!(b, 0x21 | 0x23..=0x7e)) {
            return None;
        }
        tags.push(EntityTag {
            weak,
            opaque: String::from_utf8_lossy(opaque).into_owned(),
        });
        rest = &tail[close + 1..];
        while let [first, tail @ ..] = rest
            && is_ows(first)
        {
            rest = tail;
        }
        match rest {
            [] => break,
            [b',', ..] => {}
            _ => return None,
        }
    }
    (!tags.is_empty()).then_some(TagMatch::Tags(tags))
}

/// The tags of field `name`: none when it is absent, or when it is no tag
/// list and not `strict` (a malformed `If-None-Match` is ignored); over
/// [`TAG_LIST_MAX`] bytes, or malformed and `strict`, `invalid_input`.
pub fn tag_field(
    headers: &HeaderMap,
    name: header::HeaderName,
    strict: bool,
) -> Result<Option<TagMatch>, ToolError> {
    let label = match name {
        header::IF_MATCH => "If-Match",
        _ => "If-None-Match",
    };
    let Some(field) = field_of(headers, &name) else {
        return Ok(None);
    };
    if field.len() > TAG_LIST_MAX as usize {
        return Err(ToolError::invalid_field(
            label,
            format!("`{label}` is over {TAG_LIST_MAX} bytes."),
            format!("longer than {TAG_LIST_MAX} bytes"),
        ));
    }
    match parse_tags(&field) {
        Some(tags) => Ok(Some(tags)),
        None if !strict => Ok(None),
        None => Err(ToolError::invalid_field(
            label,
            format!(
                "`{label}` must be `*` or a list of quoted entity tags, as an `ETag` header gives them."
            ),
            "not an entity-tag list (RFC 9110 §8.8.3)",
        )),
    }
}

/// Every field line of `name`, joined as one list (RFC 9110 §5.3).
fn field_of(headers: &HeaderMap, name: &header::HeaderName) -> Option<Vec<u8>> {
    let mut lines = headers.get_all(name).iter().peekable();
    lines.peek()?;
    let mut field = Vec::new();
    for (i, line) in lines.enumerate() {
        if i > 0 {
            field.extend_from_slice(b", ");
        }
        field.extend_from_slice(line.as_bytes());
    }
    Some(field)
}

/// The weak `ETag` of an answer that is not one entity (a page, the board,
/// a search): its data's [`digest`](crate::envelope::digest), so two reads
/// with the same data share it whatever their meta (request id, runtime).
pub fn weak_tag(digest: u64) -> HeaderValue {
    HeaderValue::try_from(format!("W/\"{digest:016x}\""))
        .expect("hex digits in quotes are a header value")
}

/// The one revalidation rule: a `200` carrying `etag` is sent as `304` when
/// `If-None-Match` (as [`if_none_match`] parsed it) is `*` or names `etag`
/// by weak comparison.
pub fn is_unchanged(if_none_match: Option<&TagMatch>, etag: &HeaderValue) -> bool {
    if_none_match
        .zip(etag.to_str().ok())
        .is_some_and(|(asked, etag)| asked.names(etag))
}

/// `304`: what the request holds is current; no body, the `ETag` it matched.
pub fn not_modified(etag: HeaderValue) -> Response {
    let mut response = StatusCode::NOT_MODIFIED.into_response();
    response.headers_mut().insert(header::ETAG, etag);
    response
}
