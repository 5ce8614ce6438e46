//! The store: the database behind a small trait. SQL stays in this module.

use std::path::Path;
use std::sync::Arc;

use crate::envelope::ToolError;

/// Everything the tools need from a database.
pub trait Store: Send + Sync + 'static {
    /// `sqlite` or `postgres`.
    fn kind(&self) -> &'static str;
}

/// Opens (creating and migrating on first start) the embedded SQLite store at `path`.
pub fn open_sqlite(path: &Path) -> Result<Arc<dyn Store>, ToolError> {
    // Placeholder until the SQLite store lands.
    let _ = path;
    Ok(Arc::new(Placeholder))
}

struct Placeholder;

impl Store for Placeholder {
    fn kind(&self) -> &'static str {
        "sqlite"
    }
}
