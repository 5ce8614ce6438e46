//! The knowledge base: notes with a unique slug (from the title) and an
//! optional unique `source_url`.
//!
//! `[[Title]]` or `[[slug]]` in content becomes a `links_to` edge to the note
//! with that slug, recomputed on every write. A link naming no note yet is
//! remembered (reported as `unresolved_links`) and becomes an edge as soon as a
//! note with that slug is written; deleting a note removes its edges, and links
//! that named it become unresolved again.

use serde::{Deserialize, Serialize};

use super::bounds::{
    CONTENT_MAX, CURSOR_MAX, KEY_MAX, LETTER_OR_DIGIT, QUERY_MAX, TAG_MAX, TAGS_MAX, TITLE_MAX,
    URL_MAX, VERSION_MAX,
};
use super::common::{
    MAX_LIMIT, MIN_LIMIT, clean_tags, decode_keyset, encode_keyset, new_id, non_empty, page_limit,
    resolve_note, timestamp, whole_id,
};
pub use super::wikilink::slugify;
use super::{Config, Ctx, wikilink};
use crate::envelope::{ErrorCode, ToolError};
use crate::store::{IdTitle, Note, NoteDraft, NoteQuery, NoteSummary, NoteWritten, refusal};

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteWriteInput {
    /// The note to rewrite (id, unique prefix or slug); omit to create a new note.
    /// A rewrite replaces title and content.
    #[serde(default)]
    #[schemars(length(min = 1, max = KEY_MAX))]
    #[schema(min_length = 1, max_length = 400)]
    pub id: Option<String>,
    /// Title, with at least one letter or digit; its slug (lowercase, other
    /// characters as `-`) must be unique.
    #[schemars(length(min = 1, max = TITLE_MAX), regex(pattern = LETTER_OR_DIGIT))]
    #[schema(
        min_length = 1,
        max_length = 300,
        pattern = r"[^\u0000-\u002F\u003A-\u0040\u005B-\u0060\u007B-\u009F]"
    )]
    pub title: String,
    /// Markdown; `[[Title]]` links to another note. Over the deployment's
    /// limit (1 MiB by default): `content_too_large`.
    #[schemars(length(max = CONTENT_MAX))]
    #[schema(max_length = 1048576)]
    pub content: String,
    /// Labels to filter by (up to 20, each up to 50 characters); on update,
    /// omit to keep the current ones (`[]` clears).
    #[serde(default)]
    #[schemars(length(max = TAGS_MAX), inner(length(max = TAG_MAX)))]
    #[schema(max_items = 20)]
    pub tags: Option<Vec<String>>,
    /// Where the content came from, one note per source; on update, omit to keep it (`""` clears).
    #[serde(default)]
    #[schemars(length(max = URL_MAX))]
    #[schema(max_length = 2048)]
    pub source_url: Option<String>,
    /// The version you read (updates only); refused with `version_conflict` if it changed.
    #[serde(default)]
    #[schemars(range(min = 1, max = VERSION_MAX))]
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    pub expected_version: Option<i64>,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteReadInput {
    /// Note id, a unique prefix of at least 6 characters, or its slug.
    #[schemars(length(min = 1, max = KEY_MAX))]
    #[schema(min_length = 1, max_length = 400)]
    pub id: String,
}

#[derive(
    Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema, utoipa::IntoParams,
)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct NoteListInput {
    /// Only notes carrying this tag.
    #[serde(default)]
    #[schemars(length(max = TAG_MAX))]
    #[schema(max_length = 50)]
    #[param(max_length = 50)]
    pub tag: Option<String>,
    /// Case-insensitive text the title or content contains.
    #[serde(default)]
    #[schemars(length(max = QUERY_MAX))]
    #[schema(max_length = 1000)]
    #[param(max_length = 1000)]
    pub q: Option<String>,
    /// Page size, 1-500 (default 50).
    #[serde(default)]
    #[schemars(range(min = MIN_LIMIT, max = MAX_LIMIT))]
    #[schema(minimum = 1, maximum = 500)]
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page (only a cursor this server issued).
    #[serde(default)]
    #[schemars(length(min = 1, max = CURSOR_MAX))]
    #[schema(min_length = 1, max_length = 256)]
    #[param(min_length = 1, max_length = 256)]
    pub cursor: Option<String>,
}

/// One page of notes (without content), most recently updated first.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct NotePage {
    pub items: Vec<NoteSummary>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    /// Notes matching the filters, across all pages: exact up to 1,000 (see
    /// `total_is_lower_bound`).
    pub total: u64,
    /// True when more than `total` match: counting stops at 1,000, so that a
    /// page costs what it returns, not what the store holds.
    pub total_is_lower_bound: bool,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteDeleteInput {
    /// Note id, a unique prefix of at least 6 characters, or its slug.
    #[schemars(length(min = 1, max = KEY_MAX))]
    #[schema(min_length = 1, max_length = 400)]
    pub id: String,
    /// The version you read; refused with `version_conflict` if it changed.
    #[serde(default)]
    #[schemars(range(min = 1, max = VERSION_MAX))]
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    pub expected_version: Option<i64>,
}

/// What was deleted.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct NoteDeleted {
    pub id: String,
    pub title: String,
    pub deleted: bool,
}

/// Slugs of the notes `[[...]]` wiki-links name (see [`wikilink`]), in order
/// of first appearance: `[[Target#Heading|alias]]` names `Target`.
pub fn wiki_links(content: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for link in wikilink::parse(content) {
        let slug = slugify(&link.target);
        if !slug.is_empty() && !out.contains(&slug) {
            out.push(slug);
        }
    }
    out
}

/// A note as `note_write` would store it, checked as it checks it: a title
/// with a letter or digit, content within the deployment's limit, tags
/// cleaned, source trimmed. `id` is the id a create gives the note.
pub fn note_draft(
    config: &Config,
    id: String,
    title: &str,
    content: String,
    tags: Option<Vec<String>>,
    source_url: Option<String>,
) -> Result<NoteDraft, ToolError> {
    let title = non_empty("title", title)?;
    let slug = slugify(&title);
    if slug.is_empty() {
        return Err(ToolError::invalid_input(
            "title",
            "must contain at least one letter or digit",
        ));
    }
    let limit = config.content_limit_bytes;
    if content.len() > limit {
        return Err(ToolError::new(
            ErrorCode::ContentTooLarge,
            format!(
                "Note content is over the limit of {limit} bytes; split it into several notes."
            ),
        )
        .detail("limit_bytes", limit));
    }
    Ok(NoteDraft {
        id,
        title,
        wiki_links: wiki_links(&content),
        content,
        slug,
        tags: tags.map(|t| clean_tags(Some(t))),
        source_url: source_url.map(|u| u.trim().to_owned()),
    })
}

pub fn note_write(ctx: &Ctx<'_>, input: NoteWriteInput) -> Result<NoteWritten, ToolError> {
    let draft = note_draft(
        ctx.config,
        new_id(),
        &input.title,
        input.content,
        input.tags,
        input.source_url,
    )?;
    let now = timestamp(ctx.config.clock.now());
    let mut written = match input.id {
        None if input.expected_version.is_some() => Err(ToolError::invalid_input(
            "expected_version",
            "only applies when `id` names the note to replace",
        )),
        None => ctx.store.note_create(&draft, &now).map_err(ToolError::from),
        Some(key) => {
            let id = resolve_note(ctx.store, &key)?.id;
            ctx.store
                .note_update(&id, &draft, input.expected_version, &now)
                .map_err(ToolError::from)
        }
    }?;
    in_content_order(&draft.wiki_links, &mut written.unresolved_links, |s| s);
    Ok(written)
}

/// Orders link entries as their `[[links]]` appear in the content (the store
/// returns them sorted by slug).
fn in_content_order<T>(order: &[String], items: &mut [T], slug: impl Fn(&T) -> &str) {
    items.sort_by_key(|item| {
        order
            .iter()
            .position(|s| s == slug(item))
            .unwrap_or(usize::MAX)
    });
}

pub fn note_read(ctx: &Ctx<'_>, input: NoteReadInput) -> Result<Note, ToolError> {
    let exact = match whole_id(&input.id) {
        Some(id) => ctx.store.note_get(&id)?,
        None => None,
    };
    let mut note = match exact {
        Some(note) => note,
        None => {
            let id = resolve_note(ctx.store, &input.id)?.id;
            ctx.store
                .note_get(&id)?
                .ok_or_else(|| refusal::note_not_found(&id))?
        }
    };
    let order = wiki_links(&note.content);
    in_content_order(&order, &mut note.links, |l| &l.slug);
    in_content_order(&order, &mut note.unresolved_links, |s| s);
    Ok(note)
}

pub fn note_list(ctx: &Ctx<'_>, input: NoteListInput) -> Result<NotePage, ToolError> {
    let scope = "notes";
    let page = ctx.store.note_list(&NoteQuery {
        tag: input.tag,
        q: input.q.filter(|q| !q.trim().is_empty()),
        limit: page_limit(input.limit)?,
        after: decode_keyset(scope, input.cursor.as_deref())?,
    })?;
    Ok(NotePage {
        items: page.items,
        next_cursor: page.next.map(|k| encode_keyset(scope, &k)),
        total: page.total.count,
        total_is_lower_bound: page.total.lower_bound,
    })
}

pub fn note_delete(ctx: &Ctx<'_>, input: NoteDeleteInput) -> Result<NoteDeleted, ToolError> {
    let id = resolve_note(ctx.store, &input.id)?.id;
    let IdTitle { id, title } = ctx.store.note_delete(
        &id,
        input.expected_version,
        &timestamp(ctx.config.clock.now()),
    )?;
    Ok(NoteDeleted {
        id,
        title,
        deleted: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_lowercases_and_collapses_separators() {
        assert_eq!(slugify("  Hello, World!  "), "hello-world");
        assert_eq!(slugify("Rust 2024 -- edition"), "rust-2024-edition");
        assert_eq!(slugify("Ünïcode Straße"), "ünïcode-straße");
        assert_eq!(slugify("!!!"), "");
    }

    #[test]
    fn wiki_links_are_slugged_and_deduplicated() {
        assert_eq!(
            wiki_links("see [[Hello World]] and [[hello-world]] or [[Other|label]] [[ ]] [[open"),
            vec!["hello-world".to_owned(), "other".to_owned()]
        );
    }

    #[test]
    fn a_link_to_a_heading_names_the_note() {
        assert_eq!(
            wiki_links("[[Guide#Install]] ![[Guide]] [[#Local]]"),
            vec!["guide".to_owned()]
        );
    }
}
