//! Markdown vaults: a store's notes and tasks as a folder of Markdown files
//! with YAML front matter ([`export`]), and a folder of Markdown notes, such
//! as an Obsidian vault, into a store ([`import`]). Both go through the store
//! trait, so they work alike on SQLite and PostgreSQL.

pub mod export;
pub mod front_matter;
pub mod import;

pub use export::{ExportReport, export};
pub use import::{FileFailure, ImportOptions, ImportReport, import};
