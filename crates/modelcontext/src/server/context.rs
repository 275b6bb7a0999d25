//! What a handler can read about the request it serves, and do back to the client.

use std::sync::Arc;

use modelcontext_types::{
    ClientCapabilities, Era, Implementation, Notification, ProgressNotificationParams,
    ProgressToken, RequestId, RequestMeta,
};

use crate::engine::Peer;

/// The request a handler is serving. Ask for it by type: a tool, resource or prompt handler of
/// the form `Fn(Context, Args)` receives it. The handler code is the same in both eras.
#[derive(Clone, Debug)]
pub struct Context {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    request_id: RequestId,
    era: Era,
    protocol_version: &'static str,
    client_info: Option<Implementation>,
    client_capabilities: ClientCapabilities,
    meta: Option<RequestMeta>,
    peer: Peer,
}

/// Who the client said it was, fixed per connection (handshake era) or per request (modern).
#[derive(Clone, Debug)]
pub(crate) struct ClientView {
    pub era: Era,
    pub protocol_version: &'static str,
    pub info: Option<Implementation>,
    pub capabilities: ClientCapabilities,
}

impl Context {
    pub(crate) fn new(
        request_id: RequestId,
        client: &ClientView,
        meta: Option<RequestMeta>,
        peer: &Peer,
    ) -> Context {
        let inner = Inner {
            request_id,
            era: client.era,
            protocol_version: client.protocol_version,
            client_info: client.info.clone(),
            client_capabilities: client.capabilities.clone(),
            meta,
            peer: peer.clone(),
        };
        Context { inner: Arc::new(inner) }
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.request_id
    }

    /// The protocol era of the request.
    pub fn era(&self) -> Era {
        self.inner.era
    }

    /// The protocol revision in use, e.g. `2025-11-25` or `2026-07-28`.
    pub fn protocol_version(&self) -> &'static str {
        self.inner.protocol_version
    }

    /// The client's self-description (`clientInfo`), when it sent one. Not for security
    /// decisions: any client can claim any name.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.client_info.as_ref()
    }

    /// The capabilities the client declared.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.client_capabilities
    }

    /// The request's `_meta`, if it had one.
    pub fn meta(&self) -> Option<&RequestMeta> {
        self.inner.meta.as_ref()
    }

    /// The progress token the client attached, if any.
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.meta()?.progress_token.as_ref()
    }

    /// Sends `notifications/progress` for this request. Does nothing when the client gave no
    /// progress token (the spec forbids progress without one). `progress` must increase from
    /// one call to the next.
    pub async fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = self.progress_token() else { return };
        let params = ProgressNotificationParams {
            progress_token: token.clone(),
            progress,
            total,
            message: message.map(str::to_owned),
            meta: None,
        };
        if let Ok(notification) = Notification::new("notifications/progress", &params) {
            let _ = self.inner.peer.notify(notification).await;
        }
    }
}
