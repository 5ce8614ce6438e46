//! Calls that may not wait: a point read run on the caller's own (async)
//! thread instead of the blocking pool, when the store can answer it at once.
//!
//! Inside [`attempt`], a store that would have to wait (for a pooled
//! connection, the writer's turn, the network) does not: it calls [`refuse`]
//! and fails the call, and `attempt` answers `None`, so that the caller runs
//! the call again where waiting is allowed. Only reads are attempted, so a
//! refused attempt changed nothing and its answer is simply dropped.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use super::Store;
use crate::store::StoreError;

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Waiting is allowed (every call outside [`attempt`]).
    Off,
    /// Inside [`attempt`]; nothing refused yet.
    On,
    /// Inside [`attempt`], and a store call refused to wait.
    Refused,
}

thread_local! {
    static STATE: Cell<State> = const { Cell::new(State::Off) };
}

/// Puts the thread back the way it was, also when the call panics.
struct Restore(State);

impl Drop for Restore {
    fn drop(&mut self) {
        STATE.set(self.0);
    }
}

/// Runs `f` with waiting refused: `None` when a store call inside it would
/// have waited (its result is then meaningless and dropped).
pub fn attempt<T>(f: impl FnOnce() -> T) -> Option<T> {
    let restore = Restore(STATE.replace(State::On));
    let out = f();
    let refused = STATE.get() == State::Refused;
    drop(restore);
    (!refused).then_some(out)
}

/// Whether the running call may not wait (the store then takes only what is
/// free at once, or [`refuse`]s).
pub fn active() -> bool {
    STATE.get() != State::Off
}

/// Marks the running [`attempt`] as refused; the error is what the store
/// answers meanwhile (never seen by a caller: the attempt's answer is dropped).
pub fn refuse() -> StoreError {
    STATE.set(State::Refused);
    StoreError::Busy
}

/// Runs the read `f` on this thread when `store` answers it without waiting
/// ([`Store::reads_without_waiting`] and nothing refused), on the blocking
/// pool otherwise; `None` when it panicked.
pub async fn read<T, F>(store: &Arc<dyn Store>, f: F) -> Option<T>
where
    T: Send + 'static,
    F: Fn(&dyn Store) -> T + Send + 'static,
{
    if store.reads_without_waiting() {
        match catch_unwind(AssertUnwindSafe(|| attempt(|| f(store.as_ref())))) {
            Ok(Some(done)) => return Some(done),
            Ok(None) => {}
            Err(_) => return None,
        }
    }
    let store = Arc::clone(store);
    tokio::task::spawn_blocking(move || f(store.as_ref()))
        .await
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attempt_that_nothing_refused_answers() {
        assert!(!active());
        assert_eq!(attempt(|| active().then_some(7)), Some(Some(7)));
        assert!(!active());
    }

    #[test]
    fn a_refusal_drops_the_answer_and_ends_with_the_attempt() {
        assert_eq!(attempt(refuse), None);
        assert!(!active());
        assert_eq!(attempt(|| 1), Some(1), "the next attempt starts clean");
    }

    #[test]
    fn a_panic_inside_an_attempt_leaves_waiting_allowed() {
        let caught = std::panic::catch_unwind(|| attempt(|| panic!("boom")));
        assert!(caught.is_err());
        assert!(!active());
    }
}
