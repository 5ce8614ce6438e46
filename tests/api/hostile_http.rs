//! Hostile input over HTTP on a real socket (the gateway's own accept loop):
//! slow-loris heads, huge bodies, deep JSON, invalid UTF-8, huge headers, many
//! query parameters and FTS operator soup. Each gets its documented envelope,
//! and the server keeps serving others meanwhile.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::socket_helpers::{Options, SocketServer, socket_server};

async fn server_with(header_timeout: Duration, token: Option<&str>) -> SocketServer {
    socket_server(Options {
        token,
        header_timeout,
    })
    .await
}

async fn server() -> SocketServer {
    server_with(Duration::from_secs(10), None).await
}

/// A response read off the wire.
#[derive(Debug)]
struct Raw {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Raw {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|_| {
            panic!(
                "{}: body is not JSON: {:?}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The envelope of `code`, with the status given.
    #[track_caller]
    fn assert_error(&self, status: u16, code: &str) -> Value {
        let body = self.json();
        assert_eq!(self.status, status, "{body}");
        assert_eq!(body["error"]["code"], code, "{body}");
        assert!(
            self.head
                .to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{}",
            self.head
        );
        body
    }
}

fn parse(bytes: &[u8]) -> Raw {
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head in {:?}", String::from_utf8_lossy(bytes)));
    let head = String::from_utf8_lossy(&bytes[..split]).into_owned();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let mut body = bytes[split + 4..].to_vec();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = dechunk(&body);
    }
    Raw { status, head, body }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&data[..line_end]).unwrap(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[line_end + 2..line_end + 2 + size]);
        data = &data[line_end + 4 + size..];
    }
}

/// Sends `request` as is on a new connection and reads until the server closes it.
async fn exchange(addr: SocketAddr, request: &[u8]) -> Raw {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut bytes = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut bytes))
        .await
        .expect("the server answers and closes")
        .unwrap();
    parse(&bytes)
}

/// A GET of `target` with `Connection: close` and the extra header lines given.
fn get(addr: SocketAddr, target: &[u8], extra: &[u8]) -> Vec<u8> {
    let mut request = b"GET ".to_vec();
    request.extend_from_slice(target);
    request.extend_from_slice(
        format!(" HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n").as_bytes(),
    );
    request.extend_from_slice(extra);
    request.extend_from_slice(b"\r\n");
    request
}

fn post(addr: SocketAddr, target: &str, body: &[u8]) -> Vec<u8> {
    let mut request = format!(
        "POST {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    request
}

/// The server still answers an ordinary request.
async fn assert_serving(addr: SocketAddr) {
    let res = exchange(addr, &get(addr, b"/api/v1/health", b"")).await;
    assert_eq!(res.status, 200, "{:?}", String::from_utf8_lossy(&res.body));
}

/// Peak resident memory of this process (nextest runs each test in its own).
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .map(|v| v.trim().parse().unwrap())
        .expect("VmHWM in /proc/self/status")
}

// ---- slow loris

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_never_finishes_its_headers_is_closed() {
    let server = server_with(Duration::from_secs(1), None).await;
    let addr = server.addr;
    let mut loris = TcpStream::connect(addr).await.unwrap();
    let started = Instant::now();
    loris
        .write_all(format!("GET /api/v1/health HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ").as_bytes())
        .await
        .unwrap();
    // Others are served while it dawdles.
    assert_serving(addr).await;
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(10), loris.read_to_end(&mut rest)).await;
    assert!(
        closed.is_ok(),
        "the slow connection is still open after 10 s"
    );
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(900),
        "closed after {waited:?}, before the timeout"
    );
    assert_serving(addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_sending_one_header_byte_at_a_time_is_closed_at_the_timeout() {
    let server = server_with(Duration::from_secs(1), None).await;
    let addr = server.addr;
    let mut loris = TcpStream::connect(addr).await.unwrap();
    let started = Instant::now();
    let head = format!(
        "GET /api/v1/health HTTP/1.1\r\nHost: {addr}\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    );
    let mut cut = false;
    for byte in head.as_bytes() {
        if loris.write_all(&[*byte]).await.is_err() {
            cut = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        if started.elapsed() > Duration::from_secs(10) {
            break;
        }
    }
    let mut rest = Vec::new();
    let closed = cut
        || tokio::time::timeout(Duration::from_secs(3), loris.read_to_end(&mut rest))
            .await
            .is_ok();
    assert!(
        closed,
        "a trickling head kept its connection for {:?}",
        started.elapsed()
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

// ---- bodies

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_100_mb_body_is_refused_before_it_is_sent() {
    let server = server().await;
    let addr = server.addr;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /api/v1/tasks HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        100 * 1024 * 1024
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // No body byte is sent: the answer comes from the declared length alone.
    let mut bytes = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut bytes))
        .await
        .expect("answered without the body")
        .unwrap();
    let body = parse(&bytes).assert_error(413, "payload_too_large");
    assert_eq!(body["error"]["details"]["limit_bytes"], 4 * 1024 * 1024);
    assert_serving(addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_100_mb_body_is_refused_at_the_limit_without_being_held() {
    let server = server().await;
    let addr = server.addr;
    let before = peak_rss_kib();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /api/v1/tasks HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let sender = tokio::spawn(async move {
        let chunk = vec![b' '; 64 * 1024];
        let framed = [
            format!("{:x}\r\n", chunk.len()).into_bytes(),
            chunk,
            b"\r\n".to_vec(),
        ]
        .concat();
        let mut sent = 0usize;
        while sent < 100 * 1024 * 1024 {
            if writer.write_all(&framed).await.is_err() {
                break;
            }
            sent += 64 * 1024;
        }
        sent
    });
    let mut bytes = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), reader.read_to_end(&mut bytes))
        .await
        .expect("answered")
        .unwrap();
    let sent = sender.await.unwrap();
    parse(&bytes).assert_error(413, "payload_too_large");
    assert!(sent < 100 * 1024 * 1024, "the server read all {sent} bytes");
    let grown_mib = (peak_rss_kib() - before) / 1024;
    assert!(grown_mib < 40, "peak memory grew by {grown_mib} MiB");
    assert_serving(addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_nested_10000_deep_is_invalid_json() {
    let server = server().await;
    let addr = server.addr;
    for deep in [
        format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)),
        format!("{}1{}", "{\"a\":".repeat(10_000), "}".repeat(10_000)),
        format!(
            "{{\"title\": \"x\", \"tags\": {}{}}}",
            "[".repeat(10_000),
            "]".repeat(10_000)
        ),
    ] {
        let res = exchange(addr, &post(addr, "/api/v1/tasks", deep.as_bytes())).await;
        res.assert_error(400, "invalid_json");
    }
    assert_serving(addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_of_invalid_utf8_is_invalid_json() {
    let server = server().await;
    let addr = server.addr;
    for body in [
        &b"{\"title\": \"\xff\xfe\"}"[..],
        b"\xc3\x28",
        b"{\"title\": \"a\xed\xa0\x80b\"}",
    ] {
        let res = exchange(addr, &post(addr, "/api/v1/tasks", body)).await;
        res.assert_error(400, "invalid_json");
    }
    assert_eq!(
        server
            .cairn
            .call("task_list", json!({}), "t")
            .await
            .outcome
            .unwrap()["total"],
        0
    );
}

// ---- paths and headers

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_utf8_in_a_path_is_an_envelope() {
    let server = server().await;
    let addr = server.addr;
    // Percent-encoded bytes that are not UTF-8, in an id and in a query.
    let res = exchange(addr, &get(addr, b"/api/v1/tasks/%ff%fe%fd", b"")).await;
    res.assert_error(400, "invalid_input");
    let res = exchange(addr, &get(addr, b"/api/v1/search?q=%ff%fe", b"")).await;
    res.assert_error(400, "invalid_input");
    let res = exchange(addr, &get(addr, b"/api/v1/nope/%ff", b"")).await;
    res.assert_error(404, "route_not_found");
    assert_serving(addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_utf8_in_headers_is_an_envelope() {
    let server = server_with(Duration::from_secs(10), Some("s3cret")).await;
    let addr = server.addr;
    let res = exchange(
        addr,
        &get(
            addr,
            b"/api/v1/tasks",
            b"Authorization: Bearer \xff\xfe\r\n",
        ),
    )
    .await;
    res.assert_error(401, "unauthorized");
    // A request id that is not a short token is replaced, never echoed.
    let res = exchange(
        addr,
        &get(
            addr,
            b"/api/v1/tasks",
            b"X-Request-Id: \xff\xfe\r\nAuthorization: Bearer s3cret\r\n",
        ),
    )
    .await;
    assert_eq!(res.status, 200);
    let id = res.json()["meta"]["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(id.is_ascii() && id.len() == 32, "{id}");
    assert!(
        res.head.contains(&format!("x-request-id: {id}")),
        "{}",
        res.head
    );
    let res = exchange(
        addr,
        &get(
            addr,
            b"/api/v1/tasks",
            b"X-Whatever: \xc3\x28\r\nAuthorization: Bearer s3cret\r\n",
        ),
    )
    .await;
    assert_eq!(res.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1_mb_header_value_is_headers_too_large() {
    let server = server().await;
    let addr = server.addr;
    let big = format!("X-Big: {}\r\n", "a".repeat(1024 * 1024));
    let res = exchange(addr, &get(addr, b"/api/v1/health", big.as_bytes())).await;
    let body = res.assert_error(431, "headers_too_large");
    assert_eq!(body["error"]["details"]["limit_bytes"], 64 * 1024);
    assert!(res.head.contains("x-request-id: "), "{}", res.head);
    // A 1 MB request id is not echoed either.
    let huge_id = format!("X-Request-Id: {}\r\n", "b".repeat(1024 * 1024));
    let res = exchange(addr, &get(addr, b"/api/v1/health", huge_id.as_bytes())).await;
    res.assert_error(431, "headers_too_large");
    assert!(res.head.len() < 4096 && res.body.len() < 4096);
    assert_serving(addr).await;
    // Any route may answer it, so the document declares it on every operation.
    let doc = cairn::http::openapi::document();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            assert_eq!(
                op["responses"]["431"]["$ref"],
                "#/components/responses/RequestHeaderFieldsTooLarge",
                "{method} {path}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_id_of_a_short_token_is_echoed() {
    let server = server().await;
    let addr = server.addr;
    let res = exchange(
        addr,
        &get(addr, b"/api/v1/health", b"X-Request-Id: trace-1.2:3_x\r\n"),
    )
    .await;
    assert!(
        res.head.contains("x-request-id: trace-1.2:3_x"),
        "{}",
        res.head
    );
    let long = format!("X-Request-Id: {}\r\n", "c".repeat(129));
    let res = exchange(addr, &get(addr, b"/api/v1/health", long.as_bytes())).await;
    assert!(!res.head.contains("ccccc"), "{}", res.head);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_query_parameters_are_an_envelope() {
    let server = server().await;
    let addr = server.addr;
    // 10,000 unknown parameters: refused naming one.
    let unknown: String = (0..10_000).map(|_| "&a=1").collect();
    let res = exchange(
        addr,
        &get(addr, format!("/api/v1/search?q=x{unknown}").as_bytes(), b""),
    )
    .await;
    res.assert_error(400, "unknown_field");
    // The same known name 10,000 times.
    let same: String = (0..10_000).map(|_| "&q=a").collect();
    let res = exchange(
        addr,
        &get(addr, format!("/api/v1/search?q=x{same}").as_bytes(), b""),
    )
    .await;
    assert!(res.status == 200 || res.status == 400, "{res:?}");
    assert!(res.json()["data"].is_object() || res.json()["error"]["code"] == "invalid_input");
    // An array parameter given 4,000 times (as many as fit in a request line).
    let columns: String = (0..4_000).map(|_| "&columns=open").collect();
    let res = exchange(
        addr,
        &get(
            addr,
            format!("/api/v1/board?limit=5{columns}").as_bytes(),
            b"",
        ),
    )
    .await;
    assert!(res.status == 200 || res.status == 400, "{res:?}");
    assert!(res.json()["data"].is_object() || res.json()["error"]["code"] == "invalid_input");
    assert_serving(addr).await;
}

/// Documented limit of the HTTP layer (README): a request line over 64 KiB
/// never reaches the gateway; hyper answers a bare 414 and closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_line_over_64_kib_is_refused_by_the_http_layer() {
    let server = server().await;
    let addr = server.addr;
    let long: String = (0..10_000).map(|_| "&tags=t").collect();
    let res = exchange(
        addr,
        &get(addr, format!("/api/v1/tasks?limit=5{long}").as_bytes(), b""),
    )
    .await;
    assert_eq!(res.status, 414);
    assert_serving(addr).await;
}

// ---- search soup on every surface

const SOUP: &[&str] = &[
    "a\0b",
    "NEAR(",
    "NEAR(a b",
    "\"",
    "\"unbalanced",
    "*",
    "**",
    "title:x",
    "body:x",
    "^",
    "^x",
    "-",
    "-x",
    "a OR",
    "AND",
    "NOT x",
    "(",
    ")",
    "{a b}",
    "a:*",
    "x*",
    "'",
    "'a''",
    "\\",
    "a & b",
    "!x",
    "a <-> b",
    "a | b",
    "\u{1}",
    "\u{202e}x",
];

fn encode(q: &str) -> String {
    q.bytes().map(|b| format!("%{b:02X}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fts_operator_soup_over_rest_answers_hits_or_invalid_input() {
    let server = server().await;
    let addr = server.addr;
    server
        .cairn
        .call(
            "task_create",
            json!({"title": "quote \"me\" NEAR(x) title:x"}),
            "t",
        )
        .await;
    for q in SOUP {
        let res = exchange(
            addr,
            &get(
                addr,
                format!("/api/v1/search?q={}", encode(q)).as_bytes(),
                b"",
            ),
        )
        .await;
        let body = res.json();
        match res.status {
            200 => assert!(body["data"]["items"].is_array(), "{q:?}: {body}"),
            400 => assert_eq!(body["error"]["code"], "invalid_input", "{q:?}: {body}"),
            other => panic!("{q:?} answered {other}: {body}"),
        }
    }
    let res = exchange(addr, &get(addr, b"/api/v1/search?q=a%00b", b"")).await;
    let body = res.assert_error(400, "invalid_input");
    assert_eq!(body["error"]["details"]["field"], "q");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fts_operator_soup_over_mcp_answers_hits_or_invalid_input() {
    let harness = crate::mcp::connect(crate::mcp::Transport::Duplex).await;
    harness
        .ok("task_create", json!({"title": "NEAR(x) title:x"}))
        .await;
    for q in SOUP {
        let result = harness.call("search", json!({"q": q})).await;
        let envelope = crate::mcp::envelope_of(&result);
        if envelope["ok"] == false {
            assert_eq!(
                envelope["error"]["code"], "invalid_input",
                "{q:?}: {envelope}"
            );
            assert_eq!(result.is_error, Some(true));
        }
    }
    let result = harness.call("search", json!({"q": "a\0b"})).await;
    assert_eq!(
        crate::mcp::envelope_of(&result)["error"]["code"],
        "invalid_input"
    );
}

#[test]
fn fts_operator_soup_over_the_cli_answers_hits_or_invalid_input() {
    let cli = crate::cli::Cli::new();
    cli.ok(&["task_create", "--title", "NEAR(x) title:x"]);
    for q in SOUP {
        let arguments = json!({"q": q}).to_string();
        let run = cli.run(&["call", "search", &arguments]);
        let envelope = run.envelope();
        if envelope["ok"] == false {
            assert_eq!(
                envelope["error"]["code"], "invalid_input",
                "{q:?}: {envelope}"
            );
            assert_eq!(run.code(), 2);
        } else {
            assert_eq!(run.code(), 0);
        }
    }
    let run = cli.run(&["call", "search", r#"{"q": "a\u0000b"}"#]);
    assert_eq!(run.error_code(), "invalid_input");
    assert_eq!(run.code(), 2);
}
