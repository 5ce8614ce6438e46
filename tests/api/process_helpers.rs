//! Real processes for the scale-out and outage tests: `cairn serve` gateways,
//! nginx in front of them, an HTTP client that reads answers the way
//! `http_helpers` does, and the database every gateway of a test shares.
//! Each process is killed, and its files removed, when its value is dropped.

#![allow(dead_code)] // shared by the test modules; not every module uses every helper

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use axum::http::{Method, StatusCode};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::Value;

use crate::http_helpers::TestResponse;
use crate::mcp::envelope_of;

// ---- The database under test: a fresh PostgreSQL schema (see pg_helpers).
pub use crate::pg_helpers::TestSchema as TestDatabase;

/// A port free on 127.0.0.1 right now. Another process may take it before it
/// is bound again, so callers that bind it retry with a new one.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

/// Polls `probe` until it yields a value, for at most `limit`.
pub async fn within<T>(limit: Duration, mut probe: impl AsyncFnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = probe().await {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A child process killed (and reaped) on drop, with its output in a file.
struct Supervised {
    child: Child,
    log: PathBuf,
}

impl Supervised {
    fn spawn(mut command: Command, log: PathBuf) -> Self {
        let out = File::create(&log).expect("create the log file");
        let child = command
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("clone the log file"))
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", command.get_program()));
        Self { child, log }
    }

    fn exited(&mut self) -> bool {
        self.child.try_wait().expect("poll the child").is_some()
    }

    fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a server with `start(port)` on a free port until one stays up and
/// answers `probe_path` (any status) on it; retries when the port was taken.
async fn start_listening(
    what: &str,
    dir: &Path,
    probe_path: &str,
    mut start: impl FnMut(u16) -> Command,
) -> (Supervised, u16) {
    let mut last_output = String::new();
    for attempt in 0..3 {
        let port = free_port();
        let mut process = Supervised::spawn(start(port), dir.join(format!("{what}-{attempt}.log")));
        let api = Api::new(&format!("http://127.0.0.1:{port}"));
        let up = within(Duration::from_secs(30), async || {
            if process.exited() {
                return Some(false);
            }
            api.try_get(probe_path).await.map(|_| true)
        })
        .await;
        match up {
            Some(true) => return (process, port),
            Some(false) => last_output = process.output(),
            None => panic!(
                "{what} did not answer on port {port} within 30 s:\n{}",
                process.output()
            ),
        }
    }
    panic!("{what} exited three times at start-up; last output:\n{last_output}")
}

/// `cairn serve` on a free loopback port, on the database `db`. It answers to
/// `127.0.0.1` on any port, as a gateway behind a proxy answers to the public
/// name clients use (here, nginx's loopback address).
pub struct Gateway {
    process: Supervised,
    port: u16,
    pub api: Api,
    _dir: tempfile::TempDir,
}

impl Gateway {
    /// Runs from an empty directory of its own: a gateway needs no files
    /// besides its binary (the SPA is embedded in it).
    pub async fn start(db: &str) -> Self {
        Self::start_with(db, &[]).await
    }

    /// [`Gateway::start`] with more `serve` flags.
    pub async fn start_with(db: &str, flags: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let cwd = dir.path().join("cwd");
        std::fs::create_dir(&cwd).expect("create the working directory");
        let (process, port) = start_listening("cairn", dir.path(), "/api/v1/health", |port| {
            let mut command = cairn_command();
            command
                .current_dir(&cwd)
                .arg("serve")
                .arg("--db")
                .arg(db)
                .arg("--bind")
                .arg(format!("127.0.0.1:{port}"))
                .arg("--allowed-hosts")
                .arg("127.0.0.1")
                .args(flags);
            command
        })
        .await;
        Self {
            api: Api::new(&format!("http://127.0.0.1:{port}")),
            process,
            port,
            _dir: dir,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The process is still the one started (it was not restarted or killed).
    pub fn is_running(&mut self) -> bool {
        !self.process.exited()
    }

    /// What the gateway logged so far.
    pub fn log(&self) -> String {
        self.process.output()
    }
}

/// `cairn serve --log-format json` on a free loopback port with `db`, its
/// stderr written to `log`, `envs` set and `flags` added; returned once its
/// health probe answers, with its base URL. The caller kills it before reading
/// the log.
pub async fn serve_with_json_log(
    db: &Path,
    log: &Path,
    envs: &[(&str, &str)],
    flags: &[&std::ffi::OsStr],
) -> (Child, String) {
    let port = free_port();
    let child = cairn_command()
        .args(["serve", "--log-format", "json", "--bind"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--db")
        .arg(db)
        .args(flags)
        .envs(envs.iter().copied())
        .stdout(Stdio::null())
        .stderr(File::create(log).expect("create the log file"))
        .spawn()
        .expect("spawn cairn serve");
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    within(Duration::from_secs(30), async || {
        client
            .get(format!("{base}/api/v1/health"))
            .send()
            .await
            .ok()
    })
    .await
    .expect("serve answers");
    (child, base)
}

/// The `cairn` binary with no `CAIRN_*` setting inherited from the caller.
pub fn cairn_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("CAIRN_") {
            command.env_remove(name);
        }
    }
    command.env("CAIRN_LOG", "warn");
    command
}

/// Debian's nginx, as a foreground process, load-balancing over `gateways`
/// with the deployment's own forwarding rules (`deploy/cairn-proxy.conf`).
/// Its access log names the upstream that served each request.
pub struct Nginx {
    _process: Supervised,
    pub api: Api,
    dir: tempfile::TempDir,
}

impl Nginx {
    pub async fn start(gateways: &[&Gateway]) -> Self {
        let binary = nginx_binary();
        let dir = tempfile::tempdir().expect("temp dir");
        // When the test runs as root, nginx's helpers may run as `nobody`.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod the nginx dir");
        let servers: String = gateways
            .iter()
            .map(|g| format!("        server 127.0.0.1:{};\n", g.port()))
            .collect();
        let proxy_rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/cairn-proxy.conf");
        let root = dir.path().to_owned();
        let (process, port) = start_listening("nginx", dir.path(), "/api/v1/health", |port| {
            let config = nginx_config(&root, port, &servers, &proxy_rules);
            let path = root.join("nginx.conf");
            std::fs::write(&path, config).expect("write nginx.conf");
            let mut command = Command::new(&binary);
            command
                .arg("-p")
                .arg(&root)
                .arg("-e")
                .arg(root.join("error.log"))
                .arg("-c")
                .arg(&path);
            command
        })
        .await;
        Self {
            _process: process,
            api: Api::new(&format!("http://127.0.0.1:{port}")),
            dir,
        }
    }

    /// One line per request: `METHOD URI STATUS UPSTREAM`.
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("access.log")).unwrap_or_default()
    }
}

fn nginx_binary() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin")])
        .map(|dir| dir.join("nginx"))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!(
                "nginx is not installed: the scale-out tests run Debian's nginx in front of \
                 the gateways. Install it with `apt-get install -y nginx` (tests/run.sh does)."
            )
        })
}

/// A self-contained configuration: every path nginx writes is under `root`.
/// One process, no master (`master_process off`), so killing it leaves no
/// worker behind.
fn nginx_config(root: &Path, port: u16, servers: &str, proxy_rules: &Path) -> String {
    let root = root.display();
    let proxy_rules = proxy_rules.display();
    format!(
        r#"daemon off;
master_process off;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{
    worker_connections 512;
}}
http {{
    log_format upstream '$request_method $request_uri $status $upstream_addr';
    access_log {root}/access.log upstream;
    client_body_temp_path {root}/client_body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    upstream cairn {{
{servers}        keepalive 16;
    }}
    upstream cairn_mcp {{
        hash $remote_addr consistent;
{servers}        keepalive 16;
    }}
    server {{
        listen 127.0.0.1:{port};
        include {proxy_rules};
    }}
}}
"#
    )
}

/// An HTTP client bound to one base URL; answers become `TestResponse`s.
#[derive(Clone)]
pub struct Api {
    pub base: String,
    client: reqwest::Client,
}

impl Api {
    pub fn new(base: &str) -> Self {
        Self {
            base: base.to_owned(),
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .expect("HTTP client"),
        }
    }

    pub async fn get(&self, path: &str) -> TestResponse {
        self.send(self.client.get(self.url(path))).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> TestResponse {
        self.send_json(Method::POST, path, body).await
    }

    pub async fn patch(&self, path: &str, body: &Value) -> TestResponse {
        self.send_json(Method::PATCH, path, body).await
    }

    pub async fn send_json(&self, method: Method, path: &str, body: &Value) -> TestResponse {
        self.send(self.client.request(method, self.url(path)).json(body))
            .await
    }

    /// `GET`, or `None` when nothing answers (refused, reset, timed out).
    pub async fn try_get(&self, path: &str) -> Option<TestResponse> {
        self.try_send(self.client.get(self.url(path))).await
    }

    /// `POST`, or `None` when nothing answers.
    pub async fn try_post(&self, path: &str, body: &Value) -> Option<TestResponse> {
        self.try_send(self.client.post(self.url(path)).json(body))
            .await
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> TestResponse {
        let description = format!("{request:?}");
        self.try_send(request)
            .await
            .unwrap_or_else(|| panic!("no answer to {description}"))
    }

    async fn try_send(&self, request: reqwest::RequestBuilder) -> Option<TestResponse> {
        let response = request.send().await.ok()?;
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.ok()?;
        let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
            panic!(
                "{status}: body is not JSON: {:?}",
                String::from_utf8_lossy(&bytes)
            )
        });
        Some(TestResponse {
            status,
            headers,
            body,
        })
    }

    /// Creates a task; returns its data.
    pub async fn create_task(&self, title: &str) -> Value {
        let res = self
            .post("/api/v1/tasks", &serde_json::json!({"title": title}))
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
        res.body["data"].clone()
    }

    /// Reads a task that must exist; returns its data.
    pub async fn task(&self, id: &str) -> Value {
        let res = self.get(&format!("/api/v1/tasks/{id}")).await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        res.body["data"].clone()
    }
}

pub type McpClient = RunningService<rmcp::RoleClient, ()>;

/// An MCP session over streamable HTTP at `{api}/mcp`.
pub async fn mcp_client(api: &Api) -> McpClient {
    let url = format!("{}/mcp", api.base);
    ().serve(StreamableHttpClientTransport::from_uri(url))
        .await
        .expect("an MCP session over HTTP")
}

/// A tool's envelope over MCP, with whether the result was marked `isError`.
pub async fn mcp_call(client: &McpClient, tool: &str, arguments: Value) -> (Value, Option<bool>) {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .unwrap_or_else(|e| panic!("{tool} over MCP answered with a protocol error: {e}"));
    (envelope_of(&result), result.is_error)
}
