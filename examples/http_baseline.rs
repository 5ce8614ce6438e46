//! The load benchmark's baseline: a minimal axum server that answers every
//! GET and POST with the same bytes cairn would send, without a store, a
//! tool or a middleware stack. `benches/http_load.sh` runs it beside cairn.
//!
//!     cargo run --release --example http_baseline -- 127.0.0.1:8799 body.json
//!     cargo run --release --example http_baseline -- 127.0.0.1:8799 body.json head.txt
//!
//! With a third argument, a response head as `curl -D` writes it, the answer
//! carries that head's header fields too (all but `date` and
//! `content-length`, which the server writes itself), so that the baseline
//! pays for the same header bytes as cairn; without it, a `content-type`
//! only.

use axum::Router;
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::routing::any;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:8799".into());
    let body: &'static [u8] = match args.next() {
        Some(path) => std::fs::read(path)?.leak(),
        None => b"{}",
    };
    let headers = match args.next() {
        Some(path) => head_fields(&std::fs::read_to_string(path)?),
        None => HeaderMap::from_iter([(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )]),
    };
    let app = Router::new().fallback(any(move || {
        let headers = headers.clone();
        async move { (headers, body) }
    }));
    let listener = tokio::net::TcpListener::bind(addr).await?;
    axum::serve(listener, app).await
}

/// The header fields of a response head (its status line and the fields the
/// server writes itself left out), in their order.
fn head_fields(head: &str) -> HeaderMap {
    head.lines()
        .skip(1)
        .filter_map(|line| line.split_once(':'))
        .filter_map(|(name, value)| {
            let name = HeaderName::try_from(name.trim()).ok()?;
            let value = HeaderValue::try_from(value.trim()).ok()?;
            Some((name, value))
        })
        .filter(|(name, _)| name != header::DATE && name != header::CONTENT_LENGTH)
        .fold(HeaderMap::new(), |mut fields, (name, value)| {
            fields.append(name, value);
            fields
        })
}
