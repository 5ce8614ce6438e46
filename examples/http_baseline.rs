//! The load benchmark's baseline: a minimal axum server that answers every
//! GET and POST with the same bytes cairn would send, without a store, a
//! tool or a middleware stack. `benches/http_load.sh` runs it beside cairn.
//!
//!     cargo run --release --example http_baseline -- 127.0.0.1:8799 body.json

use axum::Router;
use axum::http::header;
use axum::routing::any;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:8799".into());
    let body: &'static [u8] = match args.next() {
        Some(path) => std::fs::read(path)?.leak(),
        None => b"{}",
    };
    let app = Router::new().fallback(any(move || async move {
        ([(header::CONTENT_TYPE, "application/json")], body)
    }));
    let listener = tokio::net::TcpListener::bind(addr).await?;
    axum::serve(listener, app).await
}
