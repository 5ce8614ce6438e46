//! MCP over streamable HTTP, each session in one project: a session made by
//! a request for project `web` (`/mcp?project=web`, `/projects/web/mcp`)
//! lives in that project's own service, so every call, resource and
//! subscription of it is `web`'s, and its session id means nothing to
//! another project's. The gateway resolves the project (and whether the
//! caller's token may use it) and hands the project's application over in
//! the request's extensions; a request without one is the `default`
//! project's.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::http::{Request, Response};
use parking_lot::Mutex;
use tower::{Service, ServiceExt};

use super::{HttpOptions, McpHttpService, http_service_with};
use crate::tools::Cairn;

/// One streamable HTTP service per project, made on its first session.
#[derive(Clone)]
pub struct ProjectSessions {
    default: McpHttpService,
    options: HttpOptions,
    others: Arc<Mutex<HashMap<&'static str, McpHttpService>>>,
}

impl ProjectSessions {
    /// `cairn` is the `default` project's application.
    pub fn new(cairn: Cairn, options: HttpOptions) -> Self {
        Self {
            default: http_service_with(cairn, options.clone()),
            options,
            others: Arc::default(),
        }
    }

    fn service_of(&self, cairn: Option<Cairn>) -> McpHttpService {
        match cairn {
            Some(cairn) if cairn.project() != crate::store::DEFAULT_PROJECT => self
                .others
                .lock()
                .entry(cairn.project())
                .or_insert_with(|| http_service_with(cairn, self.options.clone()))
                .clone(),
            _ => self.default.clone(),
        }
    }
}

impl Service<Request<Body>> for ProjectSessions {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: Request<Body>) -> Self::Future {
        let service = self.service_of(req.extensions_mut().remove::<Cairn>());
        Box::pin(async move {
            let response = service.oneshot(req).await?;
            Ok(response.map(Body::new))
        })
    }
}
