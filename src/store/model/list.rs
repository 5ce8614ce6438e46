//! The shape of a list answer: a page of items, where the next one starts,
//! and a total counted up to a cap.

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
    /// From a count of at most `cap + 1` rows (each backend's capped count stops there).
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
