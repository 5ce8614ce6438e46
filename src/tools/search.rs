//! Full-text search over task and note titles and bodies (SQLite FTS5, bm25
//! ranking, titles weighted 4x). Every query term is quoted, so what a caller
//! types is matched as words and can never be an FTS syntax error.

use serde::{Deserialize, Serialize};

use super::Ctx;
use super::common::{decode_offset, encode_offset, page_limit};
use crate::envelope::ToolError;
use crate::store::SearchHit;

#[derive(
    Debug, Deserialize, Serialize, schemars::JsonSchema, utoipa::ToSchema, utoipa::IntoParams,
)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SearchInput {
    /// Words to find (all must match; a trailing `*` matches a prefix, e.g. `migrat*`).
    pub q: String,
    /// Hits per page, 1-500 (default 50).
    #[serde(default)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// Hits, best first.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct SearchResults {
    pub items: Vec<SearchHit>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    /// Hits across all pages.
    pub total: u64,
}

/// Turns free text into an FTS5 query of quoted terms joined by AND; a term
/// ending in `*` stays a prefix query. `None` when no term has a word in it.
pub fn fts_query(q: &str) -> Option<String> {
    let terms: Vec<String> = q
        .split_whitespace()
        .filter_map(|raw| {
            let (word, prefix) = match raw.strip_suffix('*') {
                Some(w) => (w, true),
                None => (raw, false),
            };
            if !word.chars().any(char::is_alphanumeric) {
                return None;
            }
            let quoted = format!("\"{}\"", word.replace('"', "\"\""));
            Some(if prefix { format!("{quoted}*") } else { quoted })
        })
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}

pub fn search(ctx: &Ctx, input: SearchInput) -> Result<SearchResults, ToolError> {
    let limit = page_limit(input.limit)?;
    let offset = decode_offset("search", input.cursor.as_deref())?;
    let Some(query) = fts_query(&input.q) else {
        return Err(ToolError::invalid_input(
            "q",
            "must contain at least one word",
        ));
    };
    let (items, total) = ctx.store.search(&query, limit, offset)?;
    let end = offset + items.len();
    Ok(SearchResults {
        next_cursor: ((end as u64) < total).then(|| encode_offset("search", end)),
        items,
        total,
    })
}

#[cfg(test)]
mod tests {
    use super::fts_query;

    #[test]
    fn terms_are_quoted_and_prefixes_kept() {
        assert_eq!(
            fts_query("hello world").as_deref(),
            Some("\"hello\" \"world\"")
        );
        assert_eq!(
            fts_query("say \"hi\" OR x*").as_deref(),
            Some("\"say\" \"\"\"hi\"\"\" \"OR\" \"x\"*")
        );
        assert_eq!(fts_query("  -- * ()"), None);
    }
}
