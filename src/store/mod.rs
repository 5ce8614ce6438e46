//! The store: the database behind a small trait. SQL stays in this module.

/// Everything the tools need from a database.
pub trait Store: Send + Sync + 'static {
    /// `sqlite` or `postgres`.
    fn kind(&self) -> &'static str;
}
