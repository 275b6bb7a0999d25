//! A handshake-era HTTP session's protocol state, shared by its engine loop and the POSTs
//! that answer their own requests (see [`Handover`](crate::engine::outside_loop::Handover)), and rebuilt
//! from a [`SessionRecord`] on an instance that did not run its `initialize`.

use std::sync::Arc;

use modelcontext_types::{Era, InitializeRequestParams, McpError, Notification, Request};

use super::context::ClientView;
use super::session::{EraState, ServerSession, starts_work};
use super::session_record::{SessionChange, SessionRecord};
use super::telemetry::Link;
use crate::engine::{Dispatch, Peer, Reply};

/// A session's state shared by its engine loop and the HTTP POSTs that answer their own
/// requests (see [`Handover`](crate::engine::outside_loop::Handover)). The lock is held while a request is
/// parsed and its handler built, never while a handler runs.
#[derive(Clone)]
pub(crate) struct SharedSession {
    state: Arc<std::sync::Mutex<ServerSession>>,
    /// The server's in-flight limit, read by every POST's admission without the lock.
    max_in_flight: usize,
}

impl SharedSession {
    pub(crate) fn new(session: ServerSession) -> SharedSession {
        let max_in_flight = session.server.max_in_flight;
        SharedSession { state: Arc::new(std::sync::Mutex::new(session)), max_in_flight }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ServerSession> {
        // A panic mid-dispatch leaves the state as valid as any other moment does.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The revision `initialize` negotiated, once it did.
    pub(crate) fn handshake_version(&self) -> Option<&'static str> {
        match &self.lock().era {
            EraState::Handshake(view) => Some(view.protocol_version),
            _ => None,
        }
    }

    /// Puts the session where a stored `initialize` left it, on an instance that did not
    /// run it: the negotiated revision, the client's info and capabilities, its log level
    /// and resource subscriptions (replacing what it held). No user code runs (no handler, no
    /// layer): the session already began elsewhere. Fails on a record this build cannot read.
    pub(crate) fn restore(&self, record: &SessionRecord, peer: &Peer) -> Result<(), String> {
        let version = modelcontext_types::HANDSHAKE_VERSIONS
            .iter()
            .find(|v| **v == record.protocol_version)
            .ok_or_else(|| format!("unknown protocol version {:?}", record.protocol_version))?;
        let params: InitializeRequestParams = serde_json::from_str(&record.initialize)
            .map_err(|e| format!("unreadable initialize params: {e}"))?;
        let view = ClientView {
            era: Era::Handshake,
            protocol_version: version,
            info: Some(params.client_info),
            capabilities: params.capabilities,
        };
        let mut session = self.lock();
        session.era = EraState::Handshake(Arc::new(view));
        if let Some(level) = &record.log_level {
            session.set_log_level(level);
        }
        let mut subscribed = session.subscribed.lock().unwrap_or_else(|e| e.into_inner());
        *subscribed = record.subscriptions.iter().cloned().collect();
        drop(subscribed);
        session.forward_changes(peer);
        Ok(())
    }

    /// Applies a change made through another instance (the store said so).
    pub(crate) fn apply(&self, change: &SessionChange) {
        let session = self.lock();
        let subscribed = || session.subscribed.lock().unwrap_or_else(|e| e.into_inner());
        match change {
            SessionChange::LogLevel(level) => session.set_log_level(level),
            SessionChange::Subscribe(uri) => {
                subscribed().insert(uri.clone());
            }
            SessionChange::Unsubscribe(uri) => {
                subscribed().remove(uri);
            }
            // Nothing on the server waits for it; the record keeps it for the next rebuild.
            _ => {}
        }
    }

    /// Answers `request` at once or returns its handler, as the engine would.
    pub(crate) fn request(&self, request: Request, peer: &Peer) -> Reply {
        self.lock().request(request, peer)
    }

    /// Takes a notification from the client, as the engine would.
    pub(crate) fn notification(&self, notification: Notification, peer: &Peer) {
        self.lock().notification(notification, peer);
    }

    /// [`SharedSession::request`] for a request that came in an HTTP POST with `headers`
    /// (with feature `otel`, its `traceparent` is the fallback parent of the request's span).
    pub(crate) fn request_over_http(
        &self,
        request: Request,
        peer: &Peer,
        headers: &http::HeaderMap,
    ) -> Reply {
        #[cfg(not(feature = "otel"))]
        let _ = headers;
        self.lock().request_from(
            request,
            peer,
            #[cfg(feature = "otel")]
            crate::observe::otel::Carrier::headers(headers),
        )
    }
}

impl Dispatch for SharedSession {
    fn max_in_flight(&self) -> usize {
        self.max_in_flight
    }

    fn starts_work(&self, request: &Request) -> bool {
        starts_work(&request.method)
    }

    fn request(&mut self, request: Request, peer: &Peer) -> Reply {
        SharedSession::request(self, request, peer)
    }

    fn refused(&self, request: &Request, error: &McpError) {
        self.lock().refused(request, error);
    }

    fn notification(&mut self, notification: Notification, peer: &Peer) {
        SharedSession::notification(self, notification, peer);
    }
}

/// What only an HTTP session does of a session's state.
impl ServerSession {
    /// Tells the spans and the middleware which transport and session this connection is.
    pub(crate) fn with_link(mut self, link: Link) -> ServerSession {
        self.link = link;
        self
    }

    /// Sets the log level from its wire name (`"debug"`...); an unknown one is ignored.
    fn set_log_level(&self, level: &str) {
        match serde_json::from_value(serde_json::Value::String(level.to_owned())) {
            Ok(level) => self.log_level.set(level),
            Err(_) => tracing::warn!(level, "a stored log level this build does not know"),
        }
    }
}
