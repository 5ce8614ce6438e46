//! Metrics in Prometheus text format at `GET /metrics`: the names, their
//! buckets, and the one recorder a process installs. Code elsewhere records
//! through the `metrics` macros with the names below; with no recorder (a CLI
//! process) they cost nothing.

use std::hash::Hash;
use std::sync::OnceLock;
use std::time::Duration;

use metrics::{Counter, Histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use parking_lot::RwLock;

/// HTTP requests answered, by `route` (the matched route template, never the
/// raw path), `method` and `status`.
pub const HTTP_REQUESTS: &str = "cairn_http_requests_total";
/// Time to the response head, in seconds, by `route` and `method`.
pub const HTTP_DURATION: &str = "cairn_http_request_duration_seconds";
/// Tool calls, by `tool`, `surface` (`rest`, `mcp`, `cli`), `project` and `code` (`ok`
/// or the error code).
pub const TOOL_CALLS: &str = "cairn_tool_calls_total";
/// Time spent in a tool, in seconds, by `tool`.
pub const TOOL_DURATION: &str = "cairn_tool_call_duration_seconds";
/// Cuts the budget trimmer made, by `kind` (`list`, `string`, `subgraph`).
pub const TRIMMER_CUTS: &str = "cairn_trimmer_cuts_total";
/// Tool answers the store could not serve, by `code` (`store_busy`, `store_unavailable`).
pub const STORE_FAILURES: &str = "cairn_store_failures_total";
/// Event streams open now (the change feed's SSE and MCP's), by `route`.
pub const STREAMS_OPEN: &str = "cairn_streams_open";
/// MCP sessions opened over streamable HTTP (an initialize answered with a new
/// `mcp-session-id`).
pub const MCP_SESSIONS_OPENED: &str = "cairn_mcp_sessions_opened_total";
/// MCP sessions a client closed (`DELETE /mcp` answered 2xx); sessions that
/// lapse or end with the server are not counted here.
pub const MCP_SESSIONS_CLOSED: &str = "cairn_mcp_sessions_closed_total";

/// MCP sessions open now over streamable HTTP: up when a session is created
/// at `initialize`, down when it ends (closed by the client, lapsed, or
/// stopped with the server).
pub const MCP_SESSIONS_OPEN: &str = "cairn_mcp_sessions_open";
/// Time a store call waited for its database connection, in seconds, by
/// `backend` (`sqlite`, `postgres`) and `pool`: SQLite's `writer` (a write's
/// wait for its turn on the one writer connection, see the group commit) and
/// `readers`, PostgreSQL's `pool`.
pub const STORE_POOL_WAIT: &str = "cairn_store_pool_wait_seconds";

/// REST reads answered from the read cache (`result` `hit`) or by the
/// store (`miss`, the answer then kept), by `tool`.
pub const READ_CACHE: &str = "cairn_read_cache_total";

/// Counts one read the cache served (`hit`) or did not.
pub fn count_read_cache(tool: &'static str, hit: bool) {
    let result = if hit { "hit" } else { "miss" };
    READ_CACHE_SERIES
        .get(
            (tool, result),
            || metrics::counter!(READ_CACHE, "tool" => tool, "result" => result),
        )
        .increment(1);
}

/// Records one wait for a store connection.
pub fn record_pool_wait(backend: &'static str, pool: &'static str, waited: Duration) {
    POOL_WAIT_SERIES
        .get(
            (backend, pool),
            || metrics::histogram!(STORE_POOL_WAIT, "backend" => backend, "pool" => pool),
        )
        .record(waited.as_secs_f64());
}

static READ_CACHE_SERIES: Series<(&str, &str), Counter> = Series::new();
static POOL_WAIT_SERIES: Series<(&str, &str), Histogram> = Series::new();

/// Latency buckets in seconds: 1 ms to 30 s (the default request time limit).
const SECONDS_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Pool-wait buckets in seconds: an idle connection is taken in microseconds;
/// a wait is for a busy writer or an exhausted pool, up to its time limit.
const POOL_WAIT_BUCKETS: &[f64] = &[
    0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0,
];

/// Writes per SQLite commit: concurrent writes share one transaction (group
/// commit), so under load this is above 1.
pub const STORE_COMMIT_WRITES: &str = "cairn_store_commit_writes";

/// Records one SQLite commit of `writes` writes.
pub fn record_commit(writes: usize) {
    metrics::histogram!(STORE_COMMIT_WRITES).record(writes as f64);
}

/// Writes-per-commit buckets, up to the group's limit of 64.
const COMMIT_WRITES_BUCKETS: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// Handles of series recorded on every call, by their labels: the registry
/// is asked once per label set, not on every call (each ask hashes the name
/// and every label under the registry's lock). Handles are kept only once
/// the process's recorder is settled ([`handle`] has run): before that a
/// macro's handle may be a no-op one that a later recorder would not replace.
pub struct Series<K, H> {
    /// By foldhash: keys are a few static labels, hashed on every call.
    known: OnceLock<RwLock<foldhash::HashMap<K, H>>>,
}

impl<K: Copy + Eq + Hash, H: Clone> Series<K, H> {
    pub const fn new() -> Self {
        Self {
            known: OnceLock::new(),
        }
    }

    /// The handle for `key`, made by `make` (a `metrics` macro) the first time.
    pub fn get(&self, key: K, make: impl FnOnce() -> H) -> H {
        if HANDLE.get().is_none() {
            return make();
        }
        let known = self.known.get_or_init(RwLock::default);
        if let Some(handle) = known.read().get(&key) {
            return handle.clone();
        }
        known.write().entry(key).or_insert_with(make).clone()
    }
}

impl<K: Copy + Eq + Hash, H: Clone> Default for Series<K, H> {
    fn default() -> Self {
        Self::new()
    }
}

static TOOL_CALL_SERIES: Series<(&str, &str, &str, &str), Counter> = Series::new();
static TOOL_DURATION_SERIES: Series<&str, Histogram> = Series::new();

static ROUTES: OnceLock<RwLock<foldhash::HashSet<&'static str>>> = OnceLock::new();
static HTTP_REQUEST_SERIES: Series<(&str, &str, u16), Counter> = Series::new();
static HTTP_DURATION_SERIES: Series<(&str, &str), Histogram> = Series::new();

/// A route template as a label that lives as long as the process: there are
/// as many as the router has routes (plus `fallback` and `refused`), so each
/// is kept once instead of copied on every request.
pub fn route_label(route: &str) -> &'static str {
    let routes = ROUTES.get_or_init(RwLock::default);
    if let Some(&known) = routes.read().get(route) {
        return known;
    }
    let mut routes = routes.write();
    match routes.get(route) {
        Some(&known) => known,
        None => {
            let leaked: &'static str = Box::leak(route.into());
            routes.insert(leaked);
            leaked
        }
    }
}

/// Counts one answered request and its time to the response head. A method
/// outside the standard ones is counted without a kept handle.
pub fn record_request(
    route: &'static str,
    method: &axum::http::Method,
    status: u16,
    elapsed: Duration,
) {
    let seconds = elapsed.as_secs_f64();
    let Some(method) = standard_method(method) else {
        let method = method.as_str().to_owned();
        metrics::counter!(HTTP_REQUESTS, "route" => route, "method" => method.clone(), "status" => status.to_string())
            .increment(1);
        metrics::histogram!(HTTP_DURATION, "route" => route, "method" => method).record(seconds);
        return;
    };
    HTTP_REQUEST_SERIES
        .get((route, method, status), || {
            metrics::counter!(HTTP_REQUESTS, "route" => route, "method" => method, "status" => status.to_string())
        })
        .increment(1);
    HTTP_DURATION_SERIES
        .get(
            (route, method),
            || metrics::histogram!(HTTP_DURATION, "route" => route, "method" => method),
        )
        .record(seconds);
}

fn standard_method(method: &axum::http::Method) -> Option<&'static str> {
    const STANDARD: [&str; 9] = [
        "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT",
    ];
    STANDARD.into_iter().find(|m| *m == method.as_str())
}

/// Counts one tool call on `surface` answered with `code`, and its time.
pub fn record_tool_call(
    tool: &'static str,
    surface: &'static str,
    code: &'static str,
    project: &'static str,
    elapsed: Duration,
) {
    TOOL_CALL_SERIES
        .get((tool, surface, code, project), || {
            metrics::counter!(TOOL_CALLS, "tool" => tool, "surface" => surface, "code" => code, "project" => project)
        })
        .increment(1);
    TOOL_DURATION_SERIES
        .get(tool, || metrics::histogram!(TOOL_DURATION, "tool" => tool))
        .record(elapsed.as_secs_f64());
}

/// The process's recorder, installed on first use (every gateway in a process
/// shares it; counters are process-wide). `None` when another recorder was
/// installed first.
pub fn handle() -> Option<&'static PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            // A `Full` matcher is tried before a `Suffix` one.
            let installed = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Full(STORE_POOL_WAIT.into()), POOL_WAIT_BUCKETS)
                .and_then(|b| {
                    b.set_buckets_for_metric(
                        Matcher::Full(STORE_COMMIT_WRITES.into()),
                        COMMIT_WRITES_BUCKETS,
                    )
                })
                .and_then(|b| {
                    b.set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS_BUCKETS)
                })
                .and_then(PrometheusBuilder::install_recorder);
            match installed {
                Ok(handle) => {
                    describe();
                    spawn_upkeep(handle.clone());
                    Some(handle)
                }
                Err(error) => {
                    tracing::warn!(%error, "metrics recorder not installed; /metrics stays empty");
                    None
                }
            }
        })
        .as_ref()
}

/// The text a scrape gets.
pub fn render() -> String {
    handle().map(PrometheusHandle::render).unwrap_or_default()
}

/// Histograms keep samples until upkeep folds them into buckets.
fn spawn_upkeep(handle: PrometheusHandle) {
    let spawned = std::thread::Builder::new()
        .name("metrics-upkeep".into())
        .spawn(move || {
            loop {
                std::thread::sleep(Duration::from_secs(5));
                handle.run_upkeep();
            }
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "metrics upkeep thread not started");
    }
}

fn describe() {
    use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(
        HTTP_REQUESTS,
        "HTTP requests answered, by route template, method and status."
    );
    describe_histogram!(
        HTTP_DURATION,
        Unit::Seconds,
        "Time to the response head, by route template and method."
    );
    describe_counter!(
        TOOL_CALLS,
        "Tool calls, by tool, surface, project and result code (ok or the error code)."
    );
    describe_histogram!(
        TOOL_DURATION,
        Unit::Seconds,
        "Time spent in a tool, by tool."
    );
    describe_counter!(TRIMMER_CUTS, "Cuts the budget trimmer made, by kind.");
    describe_counter!(
        STORE_FAILURES,
        "Tool answers the store could not serve (busy or unavailable), by code."
    );
    describe_gauge!(MCP_SESSIONS_OPEN, "MCP sessions open over streamable HTTP.");
    describe_counter!(
        READ_CACHE,
        "REST reads answered from the read cache (hit) or by the store (miss), by tool."
    );
    describe_histogram!(
        STORE_POOL_WAIT,
        Unit::Seconds,
        "Time a store call waited for its database connection, by backend and pool."
    );
    describe_histogram!(
        STORE_COMMIT_WRITES,
        "Writes per SQLite commit (concurrent writes share one transaction)."
    );
    describe_gauge!(
        STREAMS_OPEN,
        "Event streams open (change feed SSE and MCP), by route."
    );
}
