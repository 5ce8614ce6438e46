//! Full-text search over task and note titles and bodies, best first (on
//! SQLite: FTS5, bm25 without IDF, titles weighted 4x), ranked within windows
//! of the newest 500 matches so a page costs what it returns. Queries become plain terms
//! that the store quotes, so what a caller types is matched as words and can
//! never be a query syntax error.

use serde::{Deserialize, Serialize};

use super::Ctx;
use super::bounds::{CURSOR_MAX, LETTER_OR_DIGIT, QUERY_MAX};
use super::common::{MAX_LIMIT, MIN_LIMIT, decode_offset, encode_offset, page_limit};
use crate::envelope::ToolError;
use crate::store::{SearchHit, SearchTerm};

#[derive(
    Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema, utoipa::IntoParams,
)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SearchInput {
    /// Words to find (all must match; a trailing `*` matches a prefix, e.g. `migrat*`);
    /// at least one word with a letter or digit.
    #[schemars(length(min = 1, max = QUERY_MAX), regex(pattern = LETTER_OR_DIGIT))]
    #[schema(
        min_length = 1,
        max_length = 1000,
        pattern = r"[^\u0000-\u002F\u003A-\u0040\u005B-\u0060\u007B-\u009F]"
    )]
    #[param(
        min_length = 1,
        max_length = 1000,
        pattern = r"[^\u0000-\u002F\u003A-\u0040\u005B-\u0060\u007B-\u009F]"
    )]
    pub q: String,
    /// Hits per page, 1-500 (default 50).
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

/// Hits, best first within each run of 500 matches taken newest first: with
/// at most 500 matches the order is relevance over all of them; with more,
/// the first pages are the newest 500 matches best first, then the next 500,
/// and so on, so a page ranks at most 1,000 matches whatever the store holds
/// (pages still list every match once).
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct SearchResults {
    pub items: Vec<SearchHit>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    /// Hits across all pages: exact up to 1,000, or up to the end of this
    /// page when it lies beyond (see `total_is_lower_bound`).
    pub total: u64,
    /// True when more than `total` match: counting stops there, so that a
    /// page costs what it returns, not what the store holds.
    pub total_is_lower_bound: bool,
}

/// Splits free text into terms: words separated by whitespace or control
/// characters (a NUL byte ends an FTS5 string and PostgreSQL text cannot hold
/// one, so none reaches a store), a trailing `*` asks for a prefix match;
/// pieces without a letter or digit are dropped.
pub fn terms(q: &str) -> Vec<SearchTerm> {
    q.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|raw| !raw.is_empty())
        .filter_map(|raw| {
            let (word, prefix) = match raw.strip_suffix('*') {
                Some(w) => (w, true),
                None => (raw, false),
            };
            word.chars().any(char::is_alphanumeric).then(|| SearchTerm {
                word: word.to_owned(),
                prefix,
            })
        })
        .collect()
}

pub fn search(ctx: &Ctx<'_>, input: SearchInput) -> Result<SearchResults, ToolError> {
    let limit = page_limit(input.limit)?;
    let offset = decode_offset("search", input.cursor.as_deref())?;
    let terms = terms(&input.q);
    if terms.is_empty() {
        return Err(ToolError::invalid_input(
            "q",
            "must contain at least one word",
        ));
    }
    let (items, total) = ctx.store.search(&terms, limit, offset)?;
    let end = offset + items.len();
    // The count runs past this page's end (see `search_cap`), so it tells
    // whether more follow even when it is only a lower bound.
    let more = (end as u64) < total.count || total.lower_bound;
    Ok(SearchResults {
        next_cursor: more.then(|| encode_offset("search", end)),
        items,
        total: total.count,
        total_is_lower_bound: total.lower_bound,
    })
}

#[cfg(test)]
mod tests {
    use super::terms;

    #[test]
    fn words_become_terms_and_a_trailing_star_a_prefix() {
        let got: Vec<(String, bool)> = terms("say \"hi\" x* -- *")
            .into_iter()
            .map(|t| (t.word, t.prefix))
            .collect();
        assert_eq!(
            got,
            [
                ("say".into(), false),
                ("\"hi\"".into(), false),
                ("x".into(), true)
            ]
        );
        assert!(terms("  -- * ()").is_empty());
        let split: Vec<String> = terms("a\0b\u{1}c*\u{7f}")
            .into_iter()
            .map(|t| t.word)
            .collect();
        assert_eq!(split, ["a", "b", "c"]);
    }
}
