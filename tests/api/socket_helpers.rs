//! One way to start the gateway on a real socket (127.0.0.1:0) for the tests
//! that need the server's own accept loop: hostile bytes on the wire, and
//! metrics scraped after a session over REST, MCP and the change feed.

#![allow(dead_code)] // shared by several test modules; each uses a part

use std::net::SocketAddr;
use std::time::Duration;

use cairn::http::HttpSettings;
use cairn::http::server::ConnectionLimits;
use cairn::tools::Cairn;

use crate::tool_helpers::{TestCairn, sqlite_cairn};

/// A gateway served by `cairn::http::serve_listener_with` until the test ends.
pub struct SocketServer {
    pub addr: SocketAddr,
    pub cairn: Cairn,
    /// The store behind it (its temp dir or PostgreSQL schema lives as long).
    _store: TestCairn,
    _task: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// How the gateway is started.
pub struct Options<'a> {
    pub token: Option<&'a str>,
    pub header_timeout: Duration,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Self {
            token: None,
            header_timeout: Duration::from_secs(10),
        }
    }
}

/// A gateway over a fresh SQLite store.
pub async fn socket_server(options: Options<'_>) -> SocketServer {
    socket_server_on(sqlite_cairn(), options).await
}

/// A gateway over the store given (e.g. the suite's backend, `cairn()`).
pub async fn socket_server_on(store: TestCairn, options: Options<'_>) -> SocketServer {
    let cairn = store.cairn.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let settings = HttpSettings {
        bind: addr,
        token: options.token.map(str::to_owned),
        ..HttpSettings::default()
    };
    let app = cairn::http::app(cairn.clone(), settings);
    let limits = ConnectionLimits {
        header_timeout: options.header_timeout,
    };
    let task = tokio::spawn(cairn::http::serve_listener_with(
        listener,
        app,
        limits,
        std::future::pending(),
    ));
    SocketServer {
        addr,
        cairn,
        _store: store,
        _task: task,
    }
}
