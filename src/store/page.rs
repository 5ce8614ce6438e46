//! Keyset pagination shared by every backend: lists are ordered by
//! (updated_at, id) descending, and one row more than the page is fetched to
//! tell whether another page follows.

use super::model::{Keyset, NoteSummary, Page, Task, Total};

/// A list item's position in (updated_at, id) order.
pub trait Keyed {
    fn keyset(&self) -> Keyset;
}

impl Keyed for Task {
    fn keyset(&self) -> Keyset {
        Keyset {
            updated_at: self.updated_at.clone(),
            id: self.id.clone(),
        }
    }
}

impl Keyed for NoteSummary {
    fn keyset(&self) -> Keyset {
        Keyset {
            updated_at: self.updated_at.clone(),
            id: self.id.clone(),
        }
    }
}

/// Rows to fetch for a page of `limit` items.
pub const fn rows_to_fetch(limit: usize) -> usize {
    limit + 1
}

/// A page from up to [`rows_to_fetch`] rows: the extra row, if any, is dropped
/// and the last kept item becomes the next page's start.
pub fn from_rows<T: Keyed>(mut rows: Vec<T>, limit: usize, total: Total) -> Page<T> {
    let next = if rows.len() > limit {
        rows.truncate(limit);
        rows.last().map(Keyed::keyset)
    } else {
        None
    };
    Page {
        items: rows,
        next,
        total,
    }
}
