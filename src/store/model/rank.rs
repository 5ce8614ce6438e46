//! The order of search hits: relevance inside windows of the newest matches,
//! the same on every backend (each scores its own way).

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
