//! What the store speaks in: [`record`]s (tasks, notes, links and the rules
//! that come with them), [`time`] (the stored form of a time), [`list`]
//! (pages and capped totals) and [`rank`] (the order of search hits).
//! Everything is re-exported here, so callers name `store::Task` or
//! `store::model::Task` whichever file holds it.

pub mod list;
pub mod project;
pub mod rank;
pub mod record;
pub mod time;

pub use list::*;
pub use project::*;
pub use rank::*;
pub use record::*;
pub use time::*;
