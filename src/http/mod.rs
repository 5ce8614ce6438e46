//! The REST gateway: routers per domain that call the tool functions with the
//! browser tier and unwrap envelopes into HTTP, the tower-http stack, the
//! OpenAPI document, Swagger UI, MCP over streamable HTTP at `/mcp` and the
//! SPA (embedded in the binary).

pub mod middleware;
pub mod openapi;
pub mod routes;
pub mod semantics;
pub mod server;
pub(crate) use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::Response;
use tokio_util::sync::CancellationToken;
use tower::ServiceBuilder;
use tower::util::BoxCloneSyncService;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::request_id::{PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

use crate::tools::Cairn;
pub use middleware::guard::HostPattern;
use middleware::{
    access, cors, framework_errors, guard, head_limits, metrics, project, request_id,
    security_headers, tool_set,
};
use routes::{changes, spa};
use semantics::extract::REQUEST_ID;

/// How the gateway is exposed. Not `Debug`: it holds the bearer secret.
#[derive(Clone)]
pub struct HttpSettings {
    /// The address listened on. On a loopback address the loopback host names
    /// on its port are allowed (see [`guard::Allowed`]), so it must be the
    /// address actually bound (`serve` sets it after binding port 0).
    pub bind: SocketAddr,
    /// Bearer token required on `/api` and `/mcp` when set: one admin token,
    /// named `default`.
    pub token: Option<String>,
    /// Named tokens with scopes (`--tokens-file`, `CAIRN_TOKENS`), accepted
    /// besides `token`; with either, every guarded request needs one.
    pub tokens: crate::auth::tokens::Tokens,
    /// Requests per client; `None` does not limit.
    pub rate_limit: Option<middleware::rate_limit::RateLimit>,
    /// Key calls without a token by the `X-Forwarded-For` address the proxy
    /// in front appended, instead of the peer address (the proxy's).
    pub trust_forwarded_for: bool,
    /// Origins allowed to call the API from a browser; empty means same-origin only.
    pub cors_origins: Vec<HeaderValue>,
    /// Longest a request may take before it answers 503 `timeout`.
    pub timeout: Duration,
    /// Largest request body accepted.
    pub body_limit: usize,
    /// Events a change-feed stream may queue for a slow reader before its `reset`.
    pub sse_buffer: usize,
    /// A built SPA on disk (`--web-dir`, for SPA development) served at `/`
    /// instead of the one embedded in the binary.
    pub web_dir: Option<PathBuf>,
    /// Host names allowed besides the loopback names a loopback bind allows;
    /// on any other bind, the only ones (`--allowed-hosts`).
    pub allowed_hosts: Vec<HostPattern>,
    /// Cancelled when the server shuts down (ends open MCP streams).
    pub shutdown: CancellationToken,
    /// How connections are read (the header read timeout).
    pub connections: server::ConnectionLimits,
    /// The tools an MCP session lists and may call when its URL names no
    /// set (`/mcp?tools=`).
    pub tools: crate::tools::sets::ToolSet,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 8787)),
            token: None,
            tokens: Default::default(),
            rate_limit: None,
            trust_forwarded_for: false,
            cors_origins: Vec::new(),
            timeout: Duration::from_secs(30),
            body_limit: 4 * 1024 * 1024,
            sse_buffer: 1024,
            web_dir: None,
            allowed_hosts: Vec::new(),
            shutdown: CancellationToken::new(),
            connections: server::ConnectionLimits::default(),
            tools: Default::default(),
        }
    }
}

/// What handlers share, in one allocation: axum clones the state for every
/// request (the route, its handler, each extractor), and a clone is then one
/// reference count, not one for each part.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The parts of [`AppState`].
pub struct Shared {
    pub cairn: Cairn,
    pub settings: Arc<HttpSettings>,
    /// The change feed's broadcast to SSE streams.
    pub feed: Arc<changes::FeedHub>,
    /// Read answers kept while the store is unchanged (the board's).
    pub reads: Arc<semantics::cache::ReadCache>,
}

/// The whole gateway as one service: what [`serve`] answers with, and what
/// tests call. Not an axum `Router` around the stack: a router whose only
/// route is its fallback still matches every request against its catch-all
/// path, stores the parameter and records the match, to hand the request to
/// the same service.
pub type App = BoxCloneSyncService<Request, Response, Infallible>;

/// The whole application.
pub fn app(cairn: Cairn, settings: HttpSettings) -> App {
    app_with(cairn, settings, Router::new())
}

/// The application with `extra` routes merged into the API (tests use it to
/// add routes that panic or stall).
pub fn app_with(cairn: Cairn, settings: HttpSettings, extra: Router<AppState>) -> App {
    // Counters are process-wide; the recorder is installed by the first app.
    let _ = crate::metrics::handle();
    // One pump per gateway feeds both the SSE streams and MCP subscriptions.
    let feed = Arc::<changes::FeedHub>::default();
    let mcp_cairn = cairn.on(crate::tools::Surface::Mcp);
    let mcp = crate::mcp::projects::ProjectSessions::new(
        mcp_cairn.clone(),
        crate::mcp::HttpOptions {
            // rmcp's own Host check is off: the gateway's guard checks Host and
            // Origin on `/mcp` (and everywhere else) before rmcp sees a request.
            allowed_hosts: Vec::new(),
            shutdown: settings.shutdown.clone(),
            feed: feed.clone(),
            tools: settings.tools.clone(),
        },
    );
    let settings = Arc::new(settings);
    let state = AppState(Arc::new(Shared {
        cairn: cairn.on(crate::tools::Surface::Rest),
        settings: settings.clone(),
        feed,
        reads: Arc::default(),
    }));
    let (api, _) = routes::api_router().split_for_parts();
    let api = api.merge(extra);
    // Swagger UI's policy (on `/docs` and, harmlessly, on `/openapi.json`,
    // which the same router serves); every other response gets the SPA's.
    let docs = openapi::docs_router().layer(SetResponseHeaderLayer::overriding(
        header::CONTENT_SECURITY_POLICY,
        security_headers::csp(security_headers::DOCS_POLICY),
    ));
    let allowed = guard::Allowed::new(&settings);

    let routes = Router::new()
        .merge(api)
        .merge(docs)
        .nest_service(
            "/mcp",
            ServiceBuilder::new()
                .layer(from_fn(tool_set::from_query))
                .layer(from_fn_with_state(mcp_cairn, project::mcp_in_project))
                .service(mcp),
        )
        .route("/metrics", axum::routing::get(metrics::scrape))
        .fallback(spa::fallback)
        // The route template, around the idempotency of keyed POSTs.
        .layer(from_fn_with_state(state.clone(), metrics::tag_route))
        .with_state(state);
    // The stack wraps the whole router as one service (not each route, as
    // `Router::layer` would), so it sees final responses, `Allow` included.
    // Outermost first.
    let stack = ServiceBuilder::new()
        .layer(from_fn(metrics::record))
        // Compression outside the problem-details rewrite, which reads the
        // error bodies every layer below it (guards included) produces.
        .layer(CompressionLayer::new().compress_when(security_headers::Compressible))
        // Problem details for the error answers of everything below, when
        // asked; the head limits first of all (they drop a hostile request id).
        .layer(from_fn(head_limits::front))
        .layer(SetRequestIdLayer::new(REQUEST_ID, request_id::NewRequestId))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        // The request's span only: the request's log line is `metrics::record`'s.
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(request_id::request_span)
                .on_request(())
                .on_response(())
                .on_body_chunk(())
                .on_eos(())
                .on_failure(()),
        )
        // Everything below sees a project's route as the route inside it
        // (`/api/v1/projects/{project}/tasks` as `/api/v1/tasks`, with the
        // project beside it); the log and its span, the path as sent.
        .layer(from_fn(project::route_in_project))
        // Before CORS, the token and every handler: a foreign Host or Origin
        // is refused before anything else looks at the request; every answer,
        // a refusal too, gets the hardening headers and the SPA's policy
        // where it set none.
        .layer(from_fn_with_state(guard::Guard::new(allowed), guard::guard))
        // CORS for preflights and cross-origin calls; any other `OPTIONS`
        // answered with what its route allows.
        .layer(cors::OptionsLayer::new(&settings.cors_origins))
        // The token rule, the rate limit, the scope and the envelope for
        // framework-made errors, in that order.
        .layer(from_fn_with_state(
            access::Access::new(&settings),
            access::access,
        ))
        .layer(CatchPanicLayer::custom(framework_errors::panic_response))
        // Past the time limit, a plain 503 that `access` makes the `timeout` envelope.
        .layer(TimeoutLayer::with_status_code(
            StatusCode::SERVICE_UNAVAILABLE,
            settings.timeout,
        ))
        .layer(RequestBodyLimitLayer::new(settings.body_limit))
        // Extractors take what that limit lets through. Outside the router,
        // not `Router::layer`: that would wrap every route in one more boxed,
        // cloned-per-request service only to set this request extension.
        .layer(DefaultBodyLimit::disable())
        .service(routes);
    BoxCloneSyncService::new(stack)
}

/// Binds and serves until SIGINT or SIGTERM; in-flight requests finish first.
pub async fn serve(cairn: Cairn, mut settings: HttpSettings) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(settings.bind).await?;
    // The allowed loopback hosts carry the port actually bound (`--bind 127.0.0.1:0`).
    settings.bind = listener.local_addr()?;
    let shutdown = settings.shutdown.clone();
    let signalled = async move {
        shutdown_signal().await;
        shutdown.cancel();
    };
    // Token names and scopes only (their `Debug` shows no digest).
    tracing::info!(tokens = ?settings.tokens, rate_limit = ?settings.rate_limit, "access rules");
    let limits = settings.connections;
    serve_listener_with(listener, app(cairn, settings), limits, signalled).await
}

/// Serves `app` on a bound listener until `shutdown` completes, then lets
/// in-flight requests finish.
pub async fn serve_listener(
    listener: tokio::net::TcpListener,
    app: App,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_listener_with(listener, app, server::ConnectionLimits::default(), shutdown).await
}

/// [`serve_listener`] with the connection limits given.
pub async fn serve_listener_with(
    listener: tokio::net::TcpListener,
    app: App,
    limits: server::ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    tracing::info!(addr = %listener.local_addr()?, "cairn listening");
    server::serve_connections(listener, app, limits, shutdown).await
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}
