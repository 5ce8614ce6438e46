//! A TCP proxy that can cut a gateway off its database: it forwards a loopback
//! port to a target address, and `stop` closes the listener and every open
//! connection at once, as a database that goes away does; `restart` listens on
//! the same port again. The tests at the end specify it.

#![allow(dead_code)] // shared by the test modules; not every module uses every helper

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

pub struct TcpProxy {
    port: u16,
    target: SocketAddr,
    running: Option<Running>,
}

struct Running {
    stop: CancellationToken,
    accepting: JoinHandle<()>,
}

impl TcpProxy {
    /// Forwards a free loopback port to `target`.
    pub async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("local addr").port();
        Self {
            port,
            target,
            running: Some(Running::spawn(listener, target)),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Closes the listener and every open connection; returns once they are
    /// closed, so a new connection is refused and an open one sees its end.
    pub async fn stop(&mut self) {
        if let Some(running) = self.running.take() {
            running.stop.cancel();
            let _ = running.accepting.await;
        }
    }

    /// Listens on the same port again.
    pub async fn restart(&mut self) {
        assert!(self.running.is_none(), "the proxy is already running");
        let listener = TcpListener::bind(("127.0.0.1", self.port))
            .await
            .unwrap_or_else(|e| panic!("rebind 127.0.0.1:{}: {e}", self.port));
        self.running = Some(Running::spawn(listener, self.target));
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        if let Some(running) = self.running.take() {
            running.stop.cancel();
            running.accepting.abort();
        }
    }
}

impl Running {
    fn spawn(listener: TcpListener, target: SocketAddr) -> Self {
        let stop = CancellationToken::new();
        let accepting = tokio::spawn(accept(listener, target, stop.clone()));
        Self { stop, accepting }
    }
}

/// Accepts until stopped. The connections live in a `JoinSet` owned here, so
/// when this returns they are aborted and their sockets closed with it.
async fn accept(listener: TcpListener, target: SocketAddr, stop: CancellationToken) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => {
                let Ok((client, _)) = accepted else { continue };
                connections.spawn(forward(client, target));
            }
            // Reap finished connections so the set does not grow.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    connections.shutdown().await;
}

async fn forward(mut client: TcpStream, target: SocketAddr) {
    let Ok(mut server) = TcpStream::connect(target).await else {
        return;
    };
    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
}

// ---- The proxy's own specification, against a loopback echo server.

/// Echoes every byte back, on every connection, until dropped.
struct EchoServer {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl EchoServer {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let (mut read, mut write) = stream.split();
                    let _ = tokio::io::copy(&mut read, &mut write).await;
                });
            }
        });
        Self { addr, task }
    }
}

impl Drop for EchoServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn round_trip(stream: &mut TcpStream, message: &[u8]) -> Vec<u8> {
    stream.write_all(message).await.unwrap();
    let mut answer = vec![0; message.len()];
    stream.read_exact(&mut answer).await.unwrap();
    answer
}

async fn connect(proxy: &TcpProxy) -> std::io::Result<TcpStream> {
    TcpStream::connect(("127.0.0.1", proxy.port())).await
}

#[tokio::test]
async fn the_proxy_forwards_both_ways() {
    let echo = EchoServer::start().await;
    let proxy = TcpProxy::start(echo.addr).await;
    let mut stream = connect(&proxy).await.unwrap();
    assert_eq!(round_trip(&mut stream, b"ping").await, b"ping");
    assert_eq!(round_trip(&mut stream, b"pong").await, b"pong");
}

#[tokio::test]
async fn a_stopped_proxy_closes_open_connections_and_refuses_new_ones() {
    let echo = EchoServer::start().await;
    let mut proxy = TcpProxy::start(echo.addr).await;
    let mut open = connect(&proxy).await.unwrap();
    round_trip(&mut open, b"before").await;
    proxy.stop().await;
    let mut buf = [0u8; 1];
    let read = open.read(&mut buf).await;
    assert!(
        matches!(read, Ok(0) | Err(_)),
        "an open connection ends: {read:?}"
    );
    let refused = connect(&proxy).await;
    assert_eq!(
        refused.err().map(|e| e.kind()),
        Some(std::io::ErrorKind::ConnectionRefused)
    );
}

#[tokio::test]
async fn a_restarted_proxy_forwards_again_on_the_same_port() {
    let echo = EchoServer::start().await;
    let mut proxy = TcpProxy::start(echo.addr).await;
    let port = proxy.port();
    let mut open = connect(&proxy).await.unwrap();
    round_trip(&mut open, b"first").await;
    proxy.stop().await;
    proxy.restart().await;
    assert_eq!(proxy.port(), port);
    let mut stream = connect(&proxy).await.unwrap();
    assert_eq!(round_trip(&mut stream, b"again").await, b"again");
}
