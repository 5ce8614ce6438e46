//! PostgreSQL for tests: each test gets a schema of its own in the run's
//! database, dropped when the test ends. The run's database is
//! `$CAIRN_TEST_PG` (tests/run.sh creates a fresh one per run and drops it
//! afterwards); without it, the local server's `test` database.

#![allow(dead_code)] // shared by several test modules; each uses a part

/// The database tests make their schemas in.
pub fn database_url() -> String {
    std::env::var("CAIRN_TEST_PG")
        .unwrap_or_else(|_| "postgres://root@127.0.0.1:5432/test".to_owned())
}

/// A fresh, empty schema; the store's connections use it through `search_path`.
pub struct TestSchema {
    name: String,
    url: String,
}

impl TestSchema {
    pub fn create() -> Self {
        let name = format!("cairn_t_{}", uuid::Uuid::new_v4().simple());
        let admin = database_url();
        execute(&admin, &format!("CREATE SCHEMA {name}"));
        let separator = if admin.contains('?') { '&' } else { '?' };
        let url = format!("{admin}{separator}options=-csearch_path%3D{name}");
        Self { name, url }
    }

    /// A `postgres://` URL whose connections work in this schema.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        // With the schema of the project a test may have made (id 2).
        execute(
            &database_url(),
            &format!(
                "DROP SCHEMA IF EXISTS {0} CASCADE; DROP SCHEMA IF EXISTS {0}_p2 CASCADE",
                self.name
            ),
        );
    }
}

/// Runs `sql` on the database at `url` (from any thread, async or not).
pub fn execute(url: &str, sql: &str) {
    let (url, sql) = (url.to_owned(), sql.to_owned());
    run_off_executor(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("the test PostgreSQL server at {url} answers: {e}"));
        client.batch_execute(&sql).expect(&sql);
    });
}

/// The one value `sql` answers on the database at `url`.
pub fn scalar<T>(url: &str, sql: &str) -> T
where
    T: for<'a> postgres::types::FromSql<'a> + Send + 'static,
{
    let (url, sql) = (url.to_owned(), sql.to_owned());
    let (tx, rx) = std::sync::mpsc::channel();
    run_off_executor(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("the test PostgreSQL server at {url} answers: {e}"));
        let row = client.query_one(&sql, &[]).expect(&sql);
        tx.send(row.get(0)).expect("the caller waits");
    });
    rx.recv().expect("a value")
}

/// The synchronous client runs its own runtime, which must not start on an
/// async test's thread.
fn run_off_executor(f: impl FnOnce() + Send + 'static) {
    if let Err(panic) = std::thread::spawn(f).join() {
        std::panic::resume_unwind(panic);
    }
}
