//! The gauge of MCP sessions open over streamable HTTP: rmcp's in-memory
//! session manager, counted. A session is open from its creation at
//! `initialize` until it is closed, whichever way it ends: the client's
//! `DELETE`, its idle time running out, or the server stopping (rmcp closes
//! every session whose service ends, so each close comes through here).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use tokio_stream::Stream;

use crate::metrics::MCP_SESSIONS_OPEN;

/// [`LocalSessionManager`] with every open session on the gauge, once: a
/// session closed twice (a `DELETE`, then its service ending) counts down once.
#[derive(Default)]
pub struct GaugedSessions {
    inner: LocalSessionManager,
    open: Mutex<HashSet<SessionId>>,
}

impl GaugedSessions {
    fn opened(&self, id: &SessionId) {
        let new = self
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone());
        if new {
            metrics::gauge!(MCP_SESSIONS_OPEN).increment(1.0);
        }
    }

    fn closed(&self, id: &SessionId) {
        let was_open = self
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        if was_open {
            metrics::gauge!(MCP_SESSIONS_OPEN).decrement(1.0);
        }
    }
}

impl SessionManager for GaugedSessions {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        self.opened(&id);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.inner.close_session(id).await;
        self.closed(id);
        closed
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        let outcome = self.inner.restore_session(id.clone()).await?;
        if matches!(outcome, RestoreOutcome::Restored(_)) {
            self.opened(&id);
        }
        Ok(outcome)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
