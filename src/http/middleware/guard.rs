//! Local means local: every request names a host this server answers to (the
//! DNS-rebinding guard), and every request that changes something, and every
//! MCP request, comes from no browser origin, this server's own, or one listed
//! in `--cors-origin`. Both checks run before any handler, on every route, as
//! one layer ([`guard`]) that also sets the hardening headers on every answer.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::uri::Authority;
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::envelope::budget::{LONG_STRING_CHARS, STRING_MARKER};
use crate::envelope::{ErrorCode, ToolError};
use crate::http::HttpSettings;
use crate::http::middleware::security_headers::{API_POLICY, SPA_POLICY, harden};
use crate::http::semantics::extract::request_id_of;
use crate::http::semantics::response::ApiResponse;

/// One allowed host: a name (lower case; IPv6 in brackets), on one port or on any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    name: String,
    port: Option<u16>,
}

impl HostPattern {
    /// What a loopback bind allows: `localhost`, `127.0.0.1` and `[::1]` on its port.
    pub fn loopback(port: u16) -> [Self; 3] {
        ["localhost", "127.0.0.1", "[::1]"].map(|name| Self {
            name: name.to_owned(),
            port: Some(port),
        })
    }

    /// A pattern without a port matches the name on every port; `port` is the
    /// port the client used, or its scheme's default.
    fn matches(&self, name: &str, port: u16) -> bool {
        self.name.eq_ignore_ascii_case(name) && self.port.is_none_or(|p| p == port)
    }
}

impl FromStr for HostPattern {
    type Err = String;

    /// `name` or `name:port`, as a `Host` header carries it (`[::1]:8787`).
    fn from_str(text: &str) -> Result<Self, String> {
        let authority = parse_host(text.trim()).ok_or_else(|| {
            format!("`{text}` is not a host name or `name:port` (IPv6 in brackets: `[::1]`)")
        })?;
        Ok(Self {
            name: authority.host().to_ascii_lowercase(),
            port: authority.port_u16(),
        })
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.port {
            Some(port) => write!(f, "{}:{port}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// A bare `host[:port]`: no user info, no scheme, no path.
fn parse_host(text: &str) -> Option<Authority> {
    let authority = Authority::from_str(text).ok()?;
    (!text.is_empty() && !text.contains('@')).then_some(authority)
}

/// The hosts and origins one server accepts, decided once at start-up.
#[derive(Debug)]
pub struct Allowed {
    hosts: Vec<HostPattern>,
    /// The `Host` headers a client of a pattern with a port sends, as text
    /// (`localhost:8787`): one of them is allowed without being parsed.
    exact: Vec<String>,
    cors_origins: Vec<HeaderValue>,
}

impl Allowed {
    /// On a loopback bind the loopback names on its port, plus every
    /// configured name; on any other bind only the configured names.
    pub fn new(settings: &HttpSettings) -> Self {
        let mut hosts = Vec::new();
        if settings.bind.ip().is_loopback() {
            hosts.extend(HostPattern::loopback(settings.bind.port()));
        }
        hosts.extend(settings.allowed_hosts.iter().cloned());
        let exact = hosts
            .iter()
            .filter(|p| p.port.is_some())
            .map(HostPattern::to_string)
            .collect();
        Self {
            hosts,
            exact,
            cors_origins: settings.cors_origins.clone(),
        }
    }

    /// A `Host` header that names an allowed host and port as written: what
    /// parsing it would find allowed, found without parsing it.
    fn is_exact(&self, host: &HeaderValue) -> bool {
        self.exact
            .iter()
            .any(|e| e.as_bytes().eq_ignore_ascii_case(host.as_bytes()))
    }

    fn allows(&self, authority: &Authority, default_port: u16) -> bool {
        let port = authority.port_u16().unwrap_or(default_port);
        self.hosts.iter().any(|p| p.matches(authority.host(), port))
    }

    /// Every host the request names (the `Host` header, and the URI's authority
    /// in HTTP/2 or absolute form) must be allowed. A request naming none is
    /// let through: browsers always send `Host`, so it is no rebinding attack.
    fn check_host(&self, req: &Request) -> Result<(), ToolError> {
        let header = req.headers().get(header::HOST);
        let header = header.filter(|v| !self.is_exact(v)).map(|v| {
            v.to_str()
                .ok()
                .and_then(parse_host)
                .ok_or_else(|| String::from_utf8_lossy(v.as_bytes()).into_owned())
        });
        let uri = req.uri().authority().cloned().map(Ok);
        for host in header.into_iter().chain(uri) {
            match host {
                Ok(authority) if self.allows(&authority, 80) => {}
                Ok(authority) => return Err(host_not_allowed(authority.as_str())),
                Err(raw) => return Err(host_not_allowed(&raw)),
            }
        }
        Ok(())
    }

    /// A browser's `Origin` must be this server's own (a host it answers to)
    /// or listed in `--cors-origin`; `null` and unparsable origins are foreign.
    fn check_origin(&self, req: &Request) -> Result<(), ToolError> {
        let Some(origin) = req.headers().get(header::ORIGIN) else {
            return Ok(());
        };
        let listed = self
            .cors_origins
            .iter()
            .any(|o| o.as_bytes().eq_ignore_ascii_case(origin.as_bytes()));
        let own = origin
            .to_str()
            .ok()
            .and_then(|o| Uri::from_str(o).ok())
            .is_some_and(|uri| {
                let default_port = match uri.scheme_str() {
                    Some("http") => 80,
                    Some("https") => 443,
                    _ => return false,
                };
                uri.authority()
                    .is_some_and(|a| self.allows(a, default_port))
            });
        if listed || own {
            Ok(())
        } else {
            Err(origin_not_allowed(&String::from_utf8_lossy(
                origin.as_bytes(),
            )))
        }
    }
}

fn host_not_allowed(host: &str) -> ToolError {
    ToolError::new(
        ErrorCode::HostNotAllowed,
        "This server does not answer to the host name the request used (a guard against DNS rebinding); start it with `--allowed-hosts <name>` to allow that name.",
    )
    .detail("host", echo(host))
}

fn origin_not_allowed(origin: &str) -> ToolError {
    ToolError::new(
        ErrorCode::OriginNotAllowed,
        "Requests that change something, and MCP requests, are accepted only from this server's own pages or an origin listed in `--cors-origin`.",
    )
    .detail("origin", echo(origin))
}

/// A header value echoed into `details`, cut like any long string (failure
/// envelopes stay small whatever a client sends).
fn echo(value: &str) -> String {
    if value.chars().count() < LONG_STRING_CHARS {
        return value.to_owned();
    }
    let kept: String = value.chars().take(LONG_STRING_CHARS).collect();
    kept + STRING_MARKER
}

/// Whether a request may change something: any method but the safe ones
/// (GET, HEAD, OPTIONS, TRACE).
fn is_write(method: &Method) -> bool {
    !method.is_safe()
}

fn is_mcp(path: &str) -> bool {
    path == "/mcp" || path.starts_with("/mcp/")
}

fn is_api(path: &str) -> bool {
    path == "/api" || path.starts_with("/api/")
}

/// The step that runs before CORS, the token and every handler: refuses a
/// foreign host, then a foreign origin, with an envelope under `/api` and a
/// plain 403 page elsewhere (the SPA, `/docs`, `/openapi.json`, `/mcp`). It
/// also sets the hardening headers on every answer, refusals included.
#[derive(Clone)]
pub struct Guard(Arc<Allowed>);

impl Guard {
    pub fn new(allowed: Allowed) -> Self {
        Self(Arc::new(allowed))
    }

    fn check(&self, req: &Request) -> Result<(), ToolError> {
        self.0.check_host(req)?;
        if is_write(req.method()) || is_mcp(req.uri().path()) {
            self.0.check_origin(req)?;
        }
        Ok(())
    }
}

/// What an answer's hardening headers depend on: whether the request is a
/// `HEAD` (its answer's headers are the `GET`'s), and the content security
/// policy of what answers its path.
#[derive(Clone, Copy)]
pub struct Hardening {
    head: bool,
    policy: &'static str,
}

impl Hardening {
    fn of(req: &Request) -> Self {
        let path = req.uri().path();
        let documents = !(is_api(path) || is_mcp(path) || path == "/metrics");
        Hardening {
            head: req.method() == Method::HEAD,
            policy: if documents { SPA_POLICY } else { API_POLICY },
        }
    }

    fn apply(self, response: Response) -> Response {
        harden(response, self.head, self.policy)
    }
}

/// The guard as a layer (`from_fn_with_state`): a foreign Host or Origin is
/// refused before anything else looks at the request; every answer, a
/// refusal too, gets the hardening headers.
pub async fn guard(State(guard): State<Guard>, req: Request, next: Next) -> Response {
    let hardening = Hardening::of(&req);
    let response = match guard.check(&req) {
        Ok(()) => next.run(req).await,
        Err(error) => refusal(error, &req),
    };
    hardening.apply(response)
}

fn refusal(error: ToolError, req: &Request) -> Response {
    tracing::warn!(code = %error.code, details = ?error.details, "refused a foreign request");
    if is_api(req.uri().path()) {
        return ApiResponse::error(error, &request_id_of(req.headers())).into_response();
    }
    (
        StatusCode::FORBIDDEN,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("403 Forbidden ({}): {}\n", error.code, error.message),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(bind: &str, extra: &[&str]) -> Allowed {
        Allowed::new(&HttpSettings {
            bind: bind.parse().unwrap(),
            allowed_hosts: extra.iter().map(|h| h.parse().unwrap()).collect(),
            ..HttpSettings::default()
        })
    }

    fn request(method: &str, name: header::HeaderName, value: &str) -> Request {
        Request::builder()
            .method(method)
            .uri("/")
            .header(name, value)
            .body(Default::default())
            .unwrap()
    }

    fn with_host(host: &str) -> Request {
        request("GET", header::HOST, host)
    }

    fn with_origin(origin: &str) -> Request {
        request("POST", header::ORIGIN, origin)
    }

    /// `a` serves each of `served` as a Host and refuses each of `refused`.
    fn assert_hosts(a: &Allowed, served: &[&str], refused: &[&str]) {
        for host in served {
            assert!(a.check_host(&with_host(host)).is_ok(), "{host} is served");
        }
        for host in refused {
            assert!(a.check_host(&with_host(host)).is_err(), "{host} is refused");
        }
    }

    #[test]
    fn a_loopback_bind_allows_the_loopback_names_on_its_port() {
        assert_hosts(
            &allowed("127.0.0.1:8787", &[]),
            &[
                "localhost:8787",
                "127.0.0.1:8787",
                "[::1]:8787",
                "LocalHost:8787",
            ],
            &[
                "localhost:8788",
                "localhost",
                "evil.test:8787",
                "127.0.0.2:8787",
            ],
        );
    }

    #[test]
    fn a_name_without_a_port_is_allowed_on_every_port() {
        assert_hosts(
            &allowed("127.0.0.1:8787", &["cairn.example.com"]),
            &["cairn.example.com", "cairn.example.com:9000"],
            &["other.example.com"],
        );
        assert_hosts(
            &allowed("127.0.0.1:8787", &["cairn.example.com:9000"]),
            &["cairn.example.com:9000"],
            &["cairn.example.com:9001", "cairn.example.com"],
        );
    }

    #[test]
    fn a_public_bind_allows_only_what_is_configured() {
        assert_hosts(
            &allowed("0.0.0.0:8787", &["cairn.example.com"]),
            &["cairn.example.com"],
            &["localhost:8787", "127.0.0.1:8787"],
        );
    }

    #[test]
    fn malformed_hosts_are_refused() {
        assert_hosts(
            &allowed("127.0.0.1:8787", &[]),
            &[],
            &["user@localhost:8787", "localhost:8787/x", "local host"],
        );
    }

    #[test]
    fn own_and_listed_origins_pass_and_others_do_not() {
        let mut a = allowed("127.0.0.1:8787", &["cairn.example.com"]);
        a.cors_origins = vec![HeaderValue::from_static("http://app.example")];
        let served = [
            "http://localhost:8787",
            "http://127.0.0.1:8787",
            "https://cairn.example.com",
            "http://app.example",
        ];
        for origin in served {
            assert!(a.check_origin(&with_origin(origin)).is_ok(), "{origin}");
        }
        let refused = [
            "http://localhost:5173",
            "http://evil.test:8787",
            "null",
            "file://",
            "http://app.example.evil",
        ];
        for origin in refused {
            assert!(a.check_origin(&with_origin(origin)).is_err(), "{origin}");
        }
    }

    #[test]
    fn a_long_foreign_host_is_echoed_cut() {
        let host = format!("{}.example", "a".repeat(500));
        let error = allowed("127.0.0.1:8787", &[])
            .check_host(&with_host(&host))
            .unwrap_err();
        let echoed = error.details["host"].as_str().unwrap();
        assert!(echoed.ends_with(STRING_MARKER), "{echoed}");
        assert_eq!(
            echoed.chars().count(),
            LONG_STRING_CHARS + STRING_MARKER.chars().count()
        );
    }

    #[test]
    fn patterns_parse_as_host_headers_do() {
        assert_eq!(
            "[::1]:8787".parse::<HostPattern>().unwrap().to_string(),
            "[::1]:8787"
        );
        assert_eq!(
            "Cairn.Example.com"
                .parse::<HostPattern>()
                .unwrap()
                .to_string(),
            "cairn.example.com"
        );
        for bad in ["http://x", "x/y", "", "a@b", "::1"] {
            assert!(bad.parse::<HostPattern>().is_err(), "{bad}");
        }
    }
}
