//! A fixed number of tool calls through `Cairn::call` and the agent-tier
//! render, for counting instructions per call with callgrind (repeatable on a
//! busy machine, unlike seconds):
//!
//! ```sh
//! cargo build --release --example call_cost
//! for n in 0 2000; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/call_cost task_get $n 2>&1 | grep 'refs'
//! done   # (refs at 2000 - refs at 0) / 2000 = instructions per call
//! ```
//!
//! Tools: `task_get` (one task by full id) or `task_create`.

use cairn::envelope::{Form, Tier, render};
use cairn::tools::{Cairn, Config};
use serde_json::json;

fn main() {
    let mut args = std::env::args().skip(1);
    let tool = args.next().unwrap_or_else(|| "task_get".into());
    let calls: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let store = cairn::store::open_sqlite(&dir.path().join("cost.db")).expect("store");
    let cairn = Cairn::new(store, Config::default());
    runtime.block_on(async {
        let created = cairn
            .call(
                "task_create",
                json!({"title": "Count the instructions", "description": "One ordinary task.", "tags": ["bench"]}),
                "cost",
            )
            .await;
        let id = created.outcome.expect("created")["id"].clone();
        let mut bytes = 0;
        for _ in 0..calls {
            let args = match tool.as_str() {
                "task_create" => {
                    json!({"title": "Count the instructions", "description": "One ordinary task.", "tags": ["bench"]})
                }
                _ => json!({ "id": id }),
            };
            let envelope = cairn.call(&tool, args, "cost").await;
            bytes += render(envelope, Tier::Agent, Form::Envelope).len();
        }
        println!("{calls} calls of {tool}, {bytes} bytes rendered");
    });
}
