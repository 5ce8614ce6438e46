//! The accept loop: hyper's HTTP/1 server with a header read timeout, so a
//! connection that never finishes its request head (slow loris) is closed,
//! and a header buffer large enough that an oversized header block reaches
//! the gateway, which answers it with an envelope (`headers_too_large`).
//! `axum::serve` sets neither (it gives hyper no timer).

use std::future::Future;
use std::time::Duration;

use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tower::ServiceExt;

use super::App;

/// Longest a client may take to send a request head (`--header-timeout-secs`).
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest request head hyper reads before it refuses on its own (a bare 431
/// and a closed connection). The gateway's own limit
/// ([`crate::http::middleware::head_limits::MAX_HEADER_BYTES`]) is far below it, so what lies
/// between gets an envelope.
pub const HEAD_BUFFER_BYTES: usize = 2 * 1024 * 1024;

/// How connections are read.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// A connection whose request head is not complete by then is closed
    /// (also an idle keep-alive connection that starts no new request).
    pub header_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
        }
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then lets open
/// connections finish their in-flight requests.
pub async fn serve_connections(
    listener: tokio::net::TcpListener,
    app: App,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // HTTP/1.1 only, as `axum::serve` with axum's default features serves.
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(HEAD_BUFFER_BYTES);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(error) => {
                    // Out of file descriptors and the like: wait, do not spin.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        // Each request gets the peer address, for what keys by client (rate
        // limits without a token).
        let service = TowerToHyperService::new(app.clone().map_request(
            move |req: axum::http::Request<Incoming>| {
                let mut req = req.map(axum::body::Body::new);
                req.extensions_mut().insert(ConnectInfo(remote));
                req
            },
        ));
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let watched = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = watched.await {
                tracing::debug!(%remote, error = %error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}
