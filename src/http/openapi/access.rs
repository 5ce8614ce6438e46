//! Who may call what, as the document states it: the bearer scheme
//! (optional at the root: a server without `--token` takes anonymous calls),
//! the public health probes, which never answer 401, and a relative
//! `servers` entry (the gateway is wherever it was started).

use serde_json::Value;
use utoipa::Modify;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityRequirement, SecurityScheme};
use utoipa::openapi::server::Server;
use utoipa::openapi::{OpenApi, RefOr};

use super::{keyword, operations};
use crate::http::middleware::is_probe;

pub(super) struct Access;

const BEARER: &str = "bearer";

impl Modify for Access {
    fn modify(&self, doc: &mut OpenApi) {
        let mut server = Server::new("/");
        server.description = Some("The cairn that serves this document, wherever it runs (local by default, or a production gateway).".into());
        keyword(&mut server.extensions, "x-internal", Value::Bool(true));
        doc.servers = Some(vec![server]);
        let mut scheme = Http::new(HttpAuthScheme::Bearer);
        scheme.description = Some("A token a server started with `--token` (`CAIRN_TOKEN`), `--tokens-file` or `CAIRN_TOKENS` accepts, required on every route but the health probes. A `read` token may only read (GET), a `write` token also write, an `admin` token everything. Without one configured, calls need no token.".into());
        doc.components
            .get_or_insert_with(Default::default)
            .security_schemes
            .insert(BEARER.into(), RefOr::T(SecurityScheme::Http(scheme)));
        let anonymous = SecurityRequirement::default();
        doc.security = Some(vec![
            anonymous.clone(),
            SecurityRequirement::new(BEARER, Vec::<String>::new()),
        ]);
        for (path, _, op) in operations(&mut doc.paths) {
            if is_probe(path) {
                op.security = Some(vec![anonymous.clone()]);
                op.responses.responses.remove("401");
            }
        }
    }
}
