//! Decides the cuts from the measured sizes alone, then applies them in place.
//!
//! The ladder (see the parent module for the rules): water-filling over arrays
//! while the skeleton fits; else every array at its skeleton and the long strings
//! share the rest; else arrays to at most one item, then emptied largest first.

use serde_json::Value;

use super::STRING_MARKER;
use super::measure::{List, MIN_STRING_UNITS, Measured, Region};
use crate::envelope::{Trim, TrimKind};

/// The decisions: items kept per array, units allowed per long string.
#[derive(Debug)]
pub(super) struct Plan {
    keep: Vec<usize>,
    /// `Some(units)`: the string is shortened to at most `units` (quotes included).
    cut: Vec<Option<u64>>,
    pub unshrinkable: bool,
}

impl Plan {
    fn whole(m: &Measured) -> Self {
        Self {
            keep: m.lists.iter().map(|l| l.n).collect(),
            cut: vec![None; m.strings.len()],
            unshrinkable: false,
        }
    }
}

/// Plans the cuts so that `data` weighs at most `budget` units, markers included.
pub(super) fn plan(m: &Measured, budget: u64) -> Plan {
    let mut plan = Plan::whole(m);
    if m.root.skeleton <= budget {
        fit(m, &m.root, budget, &mut plan);
        return plan;
    }

    // Every array at its skeleton; the long strings share the rest.
    let mut skeleton = Skeleton::default();
    skeleton.walk(m, &m.root, false, None, &mut plan);
    let strings: Vec<usize> = skeleton.strings.iter().map(|&(s, _)| s).collect();
    if skeleton.fixed + min_strings(m, &strings) <= budget {
        share_strings(m, &strings, budget - skeleton.fixed, &mut plan);
        return plan;
    }

    // At most one item per array, then arrays emptied, largest first.
    let mut plan = Plan::whole(m);
    let mut skeleton = Skeleton::default();
    skeleton.walk(m, &m.root, true, None, &mut plan);
    let all: Vec<usize> = skeleton.strings.iter().map(|&(s, _)| s).collect();
    let mut total = skeleton.fixed + min_strings(m, &all);
    let mut emptied = vec![false; skeleton.candidates.len()];
    if total > budget {
        let mut order: Vec<usize> = (0..skeleton.candidates.len()).collect();
        order.sort_by_key(|&c| std::cmp::Reverse(skeleton.candidates[c].min_units));
        for c in order {
            if total <= budget {
                break;
            }
            if skeleton.inside_emptied(Some(c), &emptied) {
                continue;
            }
            let candidate = &skeleton.candidates[c];
            let list = &m.lists[candidate.list];
            emptied[c] = true;
            plan.keep[candidate.list] = 0;
            total = total - candidate.min_units + list.marker;
        }
    }
    plan.unshrinkable = total > budget;
    let live: Vec<usize> = skeleton
        .strings
        .iter()
        .filter(|&&(_, owner)| !skeleton.inside_emptied(owner, &emptied))
        .map(|&(s, _)| s)
        .collect();
    let rest = total - min_strings(m, &live);
    share_strings(m, &live, budget.saturating_sub(rest), &mut plan);
    plan
}

/// Water-fills the arrays of `region` within `allowance` units (at least its
/// skeleton).
fn fit(m: &Measured, region: &Region, allowance: u64, plan: &mut Plan) {
    if region.full <= allowance {
        return;
    }
    debug_assert!(region.skeleton <= allowance);
    let avail = allowance - region.fixed - region.strings_full;
    let total = |level: u64| -> u64 {
        region
            .lists
            .iter()
            .map(|&l| choose(&m.lists[l], level).0)
            .sum()
    };
    // The highest level that fits; total(0) is the skeleton, which fits.
    let (mut lo, mut hi) = (
        0u64,
        region
            .lists
            .iter()
            .map(|&l| m.lists[l].whole())
            .max()
            .unwrap_or(0),
    );
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if total(mid) <= avail {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    for &l in &region.lists {
        let list = &m.lists[l];
        match choose(list, lo) {
            (_, Choice::Whole) => {}
            (_, Choice::Prefix(k)) => plan.keep[l] = k,
            (_, Choice::First(inner)) => {
                plan.keep[l] = 1;
                let first = list
                    .first
                    .as_ref()
                    .expect("a non-empty array has a first item");
                fit(m, first, inner, plan);
            }
        }
    }
}

enum Choice {
    Whole,
    /// Keep the first `k` items (the top `k` nodes of a graph), whole.
    Prefix(usize),
    /// Keep only the first item, fitted into this many units.
    First(u64),
}

fn cut_marker(list: &List) -> u64 {
    if list.n > 1 { list.marker } else { 0 }
}

/// What an array costs (an upper bound, markers included) at water level `level`.
fn choose(list: &List, level: u64) -> (u64, Choice) {
    let whole = list.whole();
    let Some(first) = &list.first else {
        return (whole, Choice::Whole);
    };
    if whole <= level {
        return (whole, Choice::Whole);
    }
    let marker = cut_marker(list);
    // cost[..n] is increasing; count the prefixes that fit with their marker.
    let fitting = list.cost[..list.n].partition_point(|&c| c + marker <= level);
    let (units, choice) = if fitting >= 2 {
        let k = fitting - 1;
        (list.cost[k] + marker, Choice::Prefix(k))
    } else {
        let inner = level
            .saturating_sub(marker + list.first_extra)
            .max(first.skeleton);
        (inner + list.first_extra + marker, Choice::First(inner))
    };
    if whole <= units {
        (whole, Choice::Whole)
    } else {
        (units, choice)
    }
}

/// The skeleton of the whole payload: arrays at (at most) one item.
#[derive(Default)]
struct Skeleton {
    /// Units of everything but the long strings.
    fixed: u64,
    /// Long strings, each with the candidate whose kept item holds it.
    strings: Vec<(usize, Option<usize>)>,
    candidates: Vec<Candidate>,
}

struct Candidate {
    list: usize,
    parent: Option<usize>,
    /// Units of its kept item with strings at their minimum, its marker included.
    min_units: u64,
}

impl Skeleton {
    /// Reduces the arrays of `region` to their first item (or keeps one whole when
    /// that is cheaper and `force` is off); returns the region's units with strings
    /// at their minimum.
    fn walk(
        &mut self,
        m: &Measured,
        region: &Region,
        force: bool,
        owner: Option<usize>,
        plan: &mut Plan,
    ) -> u64 {
        self.fixed += region.fixed;
        let mut min_units = region.fixed;
        for &s in &region.strings {
            self.strings.push((s, owner));
            min_units += min_string(m, s);
        }
        for &l in &region.lists {
            let list = &m.lists[l];
            let Some(first) = &list.first else { continue };
            let marker = cut_marker(list);
            if !force && list.whole() <= first.skeleton + list.first_extra + marker {
                self.fixed += list.whole();
                min_units += list.whole();
                continue;
            }
            plan.keep[l] = 1;
            self.fixed += list.first_extra + marker;
            let c = self.candidates.len();
            self.candidates.push(Candidate {
                list: l,
                parent: owner,
                min_units: 0,
            });
            let inner = self.walk(m, first, force, Some(c), plan);
            let units = list.first_extra + marker + inner;
            self.candidates[c].min_units = units;
            min_units += units;
        }
        min_units
    }

    fn inside_emptied(&self, mut candidate: Option<usize>, emptied: &[bool]) -> bool {
        while let Some(c) = candidate {
            if emptied[c] {
                return true;
            }
            candidate = self.candidates[c].parent;
        }
        false
    }
}

/// Units of a long string at its cheapest: the marker alone, or whole when that
/// (with its trim entry) would not be cheaper.
fn min_string(m: &Measured, s: usize) -> u64 {
    let string = &m.strings[s];
    string.units.min(MIN_STRING_UNITS + string.marker)
}

fn min_strings(m: &Measured, strings: &[usize]) -> u64 {
    strings.iter().map(|&s| min_string(m, s)).sum()
}

/// Water-fills the long strings within `avail` units (or cuts them to their
/// minimum when even that does not fit).
fn share_strings(m: &Measured, strings: &[usize], avail: u64, plan: &mut Plan) {
    let cost = |s: usize, level: u64| -> (u64, Option<u64>) {
        let string = &m.strings[s];
        let cut = level.max(MIN_STRING_UNITS);
        if string.units <= cut + string.marker {
            (string.units, None)
        } else {
            (cut + string.marker, Some(cut))
        }
    };
    let total = |level: u64| -> u64 { strings.iter().map(|&s| cost(s, level).0).sum() };
    let (mut lo, mut hi) = (
        0u64,
        strings
            .iter()
            .map(|&s| m.strings[s].units)
            .max()
            .unwrap_or(0),
    );
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if total(mid) <= avail {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    for &s in strings {
        plan.cut[s] = cost(s, lo).1;
    }
}

/// Applies the plan to `data` in place; returns one trim entry per cut.
pub(super) fn apply(m: &Measured, plan: &Plan, data: &mut Value) -> Vec<Trim> {
    let mut trims = Vec::new();
    apply_region(m, &m.root, plan, data, &mut trims);
    trims
}

/// An array is cut before the cuts inside its kept item, whose paths hold emitted
/// indices (a graph's lone kept node is at index 0 once the others are gone).
fn apply_region(
    m: &Measured,
    region: &Region,
    plan: &Plan,
    data: &mut Value,
    trims: &mut Vec<Trim>,
) {
    for &l in &region.lists {
        let list = &m.lists[l];
        let keep = plan.keep[l];
        if keep < list.n {
            let kind = if list.graph.is_some() {
                TrimKind::Subgraph
            } else {
                TrimKind::List
            };
            trims.push(Trim {
                path: list.path.clone(),
                kind,
                from: list.n,
                to: keep,
            });
            if let Some(graph) = &list.graph {
                let kept = list.edges_kept(keep);
                if kept < graph.edge_rank.len() {
                    trims.push(Trim {
                        path: graph.edges_path.clone(),
                        kind,
                        from: graph.edge_rank.len(),
                        to: kept,
                    });
                }
            }
        }
        if keep < list.n {
            cut_list(list, keep, data);
        }
        if keep >= 1
            && let Some(first) = &list.first
        {
            apply_region(m, first, plan, data, trims);
        }
    }
    for &s in &region.strings {
        if let Some(units) = plan.cut[s] {
            let string = &m.strings[s];
            if let Some(Value::String(text)) = data.pointer_mut(&string.path) {
                let (from, to) = shorten(text, units);
                trims.push(Trim {
                    path: string.path.clone(),
                    kind: TrimKind::String,
                    from,
                    to,
                });
            }
        }
    }
}

fn cut_list(list: &List, keep: usize, data: &mut Value) {
    match &list.graph {
        None => {
            if let Some(Value::Array(items)) = data.pointer_mut(&list.path) {
                items.truncate(keep);
            }
        }
        Some(graph) => {
            if let Some(Value::Array(nodes)) = data.pointer_mut(&list.path) {
                let mut i = 0;
                nodes.retain(|_| {
                    i += 1;
                    graph.node_rank[i - 1] < keep
                });
            }
            if let Some(Value::Array(edges)) = data.pointer_mut(&graph.edges_path) {
                let mut j = 0;
                edges.retain(|_| {
                    j += 1;
                    graph.edge_rank[j - 1] < keep
                });
            }
        }
    }
}

/// Shortens `text` so that, serialized, it weighs at most `units`; returns its
/// length in chars before and after (marker included).
fn shorten(text: &mut String, units: u64) -> (usize, usize) {
    let room = units.saturating_sub(MIN_STRING_UNITS);
    let (mut used, mut end, mut kept, mut from) = (0u64, 0usize, 0usize, 0usize);
    let mut full = false;
    for (i, c) in text.char_indices() {
        from += 1;
        if full {
            continue;
        }
        let u = escaped_units(c);
        if used + u > room {
            full = true;
            continue;
        }
        used += u;
        end = i + c.len_utf8();
        kept += 1;
    }
    text.truncate(end);
    text.push_str(STRING_MARKER);
    (from, kept + STRING_MARKER.chars().count())
}

/// Units of one char as serde_json writes it inside a string.
fn escaped_units(c: char) -> u64 {
    match c {
        '"' | '\\' | '\u{08}' | '\u{0C}' | '\n' | '\r' | '\t' => 2,
        c if (c as u32) < 0x20 => 6,
        c if c.is_ascii() => 1,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serialized, a shortened string weighs exactly the units it was given
    /// when its chars allow it: quotes, the chars kept, the marker.
    #[test]
    fn a_string_is_shortened_to_exactly_its_units() {
        let mut text = "a".repeat(100);
        let (from, to) = shorten(&mut text, MIN_STRING_UNITS + 10);
        assert_eq!(text, format!("{}{STRING_MARKER}", "a".repeat(10)));
        assert_eq!((from, to), (100, 10 + STRING_MARKER.chars().count()));

        // An escaped quote weighs 2: three `"x` pairs fill 9 of 10 units and
        // the next quote would overrun.
        let mut text = "\"x".repeat(50);
        shorten(&mut text, MIN_STRING_UNITS + 10);
        assert_eq!(text, format!("{}{STRING_MARKER}", "\"x".repeat(3)));
        let mut text = "\"x".repeat(50);
        shorten(&mut text, MIN_STRING_UNITS + 9);
        assert_eq!(text, format!("{}{STRING_MARKER}", "\"x".repeat(3)));
    }
}
