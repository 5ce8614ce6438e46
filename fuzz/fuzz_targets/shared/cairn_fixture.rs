//! One `Cairn` on a scratch SQLite store and a runtime to call it with,
//! made once per fuzzing process (the targets that call tools share it).

use std::sync::OnceLock;

use cairn::tools::{Cairn, Config};

pub struct Fixture {
    pub runtime: tokio::runtime::Runtime,
    pub cairn: Cairn,
    _dir: tempfile::TempDir,
}

pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = cairn::store::open_sqlite(&dir.path().join("fuzz.db")).expect("store");
        Fixture {
            runtime: tokio::runtime::Runtime::new().expect("runtime"),
            cairn: Cairn::new(store, Config::default()),
            _dir: dir,
        }
    })
}
