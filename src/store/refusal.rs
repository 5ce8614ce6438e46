//! The refusals every backend raises the same way: not-found, conflicts and
//! transitions (as [`StoreError`]s), and the explanation of a conditional write that matched nothing.
//!
//! Backends decide a race in one conditional statement; when it matches no row
//! they read the task again and [`explain`] says why, so the answer a caller
//! gets never depends on which database decided it.

use std::collections::{HashMap, VecDeque};

use super::error::{Missing, StoreError};
use super::model::{LinkKind, Task, TaskStatus, Transition};

pub fn task_not_found(id: &str) -> StoreError {
    not_found(Missing::Task, id)
}

pub fn note_not_found(id: &str) -> StoreError {
    not_found(Missing::Note, id)
}

pub fn link_not_found(id: &str) -> StoreError {
    not_found(Missing::Link, id)
}

fn not_found(kind: Missing, id: &str) -> StoreError {
    StoreError::NotFound {
        kind,
        id: id.to_owned(),
    }
}

pub fn version_conflict(current_version: i64) -> StoreError {
    StoreError::VersionConflict { current_version }
}

/// The version check of every conditional write: `expected` (when given) must be `current`.
pub fn check_version(expected: Option<i64>, current: i64) -> Result<(), StoreError> {
    match expected {
        Some(v) if v != current => Err(version_conflict(current)),
        _ => Ok(()),
    }
}

pub fn claim_held(holder: &str, expires_at: &str) -> StoreError {
    StoreError::ClaimHeld {
        holder: holder.to_owned(),
        expires_at: expires_at.to_owned(),
    }
}

pub fn claim_not_held(holder: Option<&str>) -> StoreError {
    StoreError::ClaimNotHeld {
        holder: holder.map(str::to_owned),
    }
}

/// `allowed` lists the statuses the operation may start from.
pub fn invalid_transition(
    operation: &'static str,
    status: &'static str,
    allowed: &'static [&'static str],
) -> StoreError {
    StoreError::InvalidTransition {
        operation,
        status,
        allowed,
    }
}

pub fn slug_collision(existing_id: &str) -> StoreError {
    StoreError::SlugCollision {
        existing_id: existing_id.to_owned(),
    }
}

pub fn duplicate(id: &str, title: &str, source_url: &str) -> StoreError {
    StoreError::Duplicate {
        id: id.to_owned(),
        title: title.to_owned(),
        source_url: source_url.to_owned(),
    }
}

pub fn search_unavailable() -> StoreError {
    StoreError::SearchUnavailable
}

/// A conditional task write that can match nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskWrite {
    /// A field update with an optional expected version.
    Update,
    Claim,
    Renew,
    Release,
    Transition(Transition),
}

/// Why `attempt` on task `id` matched nothing, given the task as it is now
/// (`None`: it does not exist) and the version the write expected: a version
/// that moved on explains it first, whatever else would have refused it.
pub fn explain(
    attempt: TaskWrite,
    id: &str,
    current: Option<&Task>,
    expected_version: Option<i64>,
) -> StoreError {
    let Some(task) = current else {
        return task_not_found(id);
    };
    if let Err(conflict) = check_version(expected_version, task.version) {
        return conflict;
    }
    let status = task.status.as_str();
    match attempt {
        TaskWrite::Update => version_conflict(task.version),
        TaskWrite::Claim => match &task.claim {
            Some(claim) if task.status == TaskStatus::Claimed => {
                claim_held(&claim.holder, &claim.expires_at)
            }
            _ => invalid_transition("claim", status, &["open"]),
        },
        TaskWrite::Renew | TaskWrite::Release => {
            claim_not_held(task.claim.as_ref().map(|c| c.holder.as_str()))
        }
        TaskWrite::Transition(transition) => {
            let allowed = transition.allowed_from();
            match &task.claim {
                Some(claim) if allowed.contains(&status) => {
                    claim_held(&claim.holder, &claim.expires_at)
                }
                _ => invalid_transition(transition.operation(), status, allowed),
            }
        }
    }
}

/// An edge of `kind` from `source` to `target` as "waiter waits for
/// prerequisite": `depends_on` makes the source wait for the target,
/// `blocks` the target for the source; other kinds order nothing.
pub fn waits_for<'a>(
    source: &'a str,
    target: &'a str,
    kind: LinkKind,
) -> Option<(&'a str, &'a str)> {
    match kind {
        LinkKind::DependsOn => Some((source, target)),
        LinkKind::Blocks => Some((target, source)),
        _ => None,
    }
}

/// The refusal of a `depends_on` or `blocks` edge that would make `waiter`
/// wait, through `prerequisite`, on itself: `dependency_cycle` with the
/// nodes of the cycle in order (each waits for the next, the last for the
/// first). `prerequisites_of` answers what a node waits for (the indexed
/// reads of its `depends_on` targets and `blocks` sources), so the walk
/// reads only what `prerequisite` waits for, transitively, and stops at
/// `waiter`. Run inside the write's transaction, under the backend's
/// graph lock, so no concurrent edge slips in between.
pub fn check_no_cycle<E>(
    waiter: &str,
    prerequisite: &str,
    mut prerequisites_of: impl FnMut(&str) -> Result<Vec<String>, E>,
) -> Result<Result<(), StoreError>, E> {
    // Each node reached, with the node that waits for it on the way there.
    let mut came_from: HashMap<String, Option<String>> = HashMap::new();
    came_from.insert(prerequisite.to_owned(), None);
    let mut queue = VecDeque::from([prerequisite.to_owned()]);
    while let Some(node) = queue.pop_front() {
        if node == waiter {
            // prerequisite, ..., waiter, read backwards from the waiter.
            let mut path = vec![node];
            while let Some(Some(previous)) = path.last().and_then(|at| came_from.get(at)) {
                path.push(previous.clone());
            }
            path.reverse();
            // The waiter first (it waits for the prerequisite), then the rest
            // of the way, which ends waiting for the waiter.
            path.pop();
            path.insert(0, waiter.to_owned());
            return Ok(Err(StoreError::DependencyCycle { cycle: path }));
        }
        for next in prerequisites_of(&node)? {
            if !came_from.contains_key(&next) {
                came_from.insert(next.clone(), Some(node.clone()));
                queue.push_back(next);
            }
        }
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod cycle_tests {
    use super::*;

    fn check(edges: &[(&str, &str)], waiter: &str, prerequisite: &str) -> Option<Vec<String>> {
        let of = |node: &str| -> Result<Vec<String>, ()> {
            Ok(edges
                .iter()
                .filter(|(w, _)| *w == node)
                .map(|(_, p)| (*p).to_owned())
                .collect())
        };
        match check_no_cycle(waiter, prerequisite, of).unwrap() {
            Ok(()) => None,
            Err(StoreError::DependencyCycle { cycle }) => Some(cycle),
            Err(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_edge_closing_a_cycle_names_the_cycle_in_order() {
        // a waits for b, b for c: c waiting for a closes c, a, b.
        let edges = [("a", "b"), ("b", "c")];
        assert_eq!(
            check(&edges, "c", "a"),
            Some(vec!["c".into(), "a".into(), "b".into()])
        );
        assert_eq!(check(&edges, "a", "c"), None, "a second way, no cycle");
        assert_eq!(check(&[], "a", "b"), None);
        assert_eq!(
            check(&[("b", "a")], "a", "b"),
            Some(vec!["a".into(), "b".into()])
        );
        // A diamond is no cycle; closing it through one branch is.
        let diamond = [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")];
        assert_eq!(check(&diamond, "e", "a"), None);
        assert_eq!(
            check(&diamond, "d", "a"),
            Some(vec!["d".into(), "a".into(), "b".into()])
        );
    }

    #[test]
    fn blocks_and_depends_on_are_the_same_wait_seen_from_either_end() {
        assert_eq!(waits_for("a", "b", LinkKind::DependsOn), Some(("a", "b")));
        assert_eq!(waits_for("a", "b", LinkKind::Blocks), Some(("b", "a")));
        assert_eq!(waits_for("a", "b", LinkKind::RelatesTo), None);
    }
}
