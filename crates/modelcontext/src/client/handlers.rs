//! The client's callbacks, and the dispatch that answers the server with them.
//!
//! Setting a callback is the capability declaration (reference behaviour §4.2): `on_elicit`
//! declares `elicitation` (form and URL), `on_sample` declares `sampling`, `on_roots`
//! declares `roots`. The same callbacks answer handshake-era server requests and the
//! `inputRequests` of a modern `InputRequiredResult`.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use modelcontext_types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationCapability, InputRequest, InputResponse, ListRootsResult,
    LoggingMessageNotificationParams, McpError, Notification, Request, Root, RootsCapability,
    SamplingCapability, ServerNotification, ServerRequest, to_raw,
};
use serde::Serialize;
use serde_json::Map;

use crate::engine::{BoxFuture, Dispatch, Outcome, Peer, Reply};
use crate::observe;

type Callback<P, R> = Arc<dyn Fn(P) -> BoxFuture<Result<R, McpError>> + Send + Sync>;

/// Everything the client does when the server speaks first. Shared by the dispatch and the
/// MRTR loop.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub elicit: Option<Callback<ElicitRequestParams, ElicitResult>>,
    pub sample: Option<Callback<CreateMessageRequestParams, CreateMessageResult>>,
    pub sampling_tools: bool,
    pub roots: Option<Callback<(), Vec<Root>>>,
    pub log: Option<Arc<dyn Fn(LoggingMessageNotificationParams) + Send + Sync>>,
    pub notification: Option<Arc<dyn Fn(Notification) + Send + Sync>>,
    pub elicitation_complete: Option<Arc<dyn Fn(String) + Send + Sync>>,
}

impl fmt::Debug for Handlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handlers")
            .field("elicit", &self.elicit.is_some())
            .field("sample", &self.sample.is_some())
            .field("roots", &self.roots.is_some())
            .field("log", &self.log.is_some())
            .field("notification", &self.notification.is_some())
            .field("elicitation_complete", &self.elicitation_complete.is_some())
            .finish()
    }
}

/// Boxes an async callback.
pub(crate) fn callback<P, R, F, Fut>(f: F) -> Callback<P, R>
where
    F: Fn(P) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, McpError>> + Send + 'static,
{
    Arc::new(move |params| Box::pin(f(params)))
}

impl Handlers {
    /// Adds the capabilities the set callbacks declare to `capabilities`.
    pub(crate) fn declare(&self, capabilities: &mut ClientCapabilities) {
        if self.elicit.is_some() {
            let both = ElicitationCapability::default().with_form(Map::new()).with_url(Map::new());
            capabilities.elicitation.get_or_insert(both);
        }
        if self.sample.is_some() {
            let sampling = capabilities.sampling.get_or_insert_with(SamplingCapability::default);
            if self.sampling_tools {
                sampling.tools.get_or_insert_with(Map::new);
            }
        }
        if self.roots.is_some() {
            let roots = RootsCapability::default().with_list_changed(true);
            capabilities.roots.get_or_insert(roots);
        }
    }

    /// Answers one input request of an `InputRequiredResult` with the matching callback.
    pub(crate) async fn answer(&self, request: InputRequest) -> Result<InputResponse, McpError> {
        match request {
            InputRequest::Elicit(params) => Ok(InputResponse::Elicit(self.elicit(params).await?)),
            InputRequest::CreateMessage(params) => {
                Ok(InputResponse::CreateMessage(self.sample(params).await?))
            }
            InputRequest::ListRoots(_) => Ok(InputResponse::ListRoots(self.list_roots().await?)),
            other => Err(McpError::internal(format!(
                "the server asked for '{}', which this client cannot answer",
                other.method()
            ))),
        }
    }

    async fn elicit(&self, params: ElicitRequestParams) -> Result<ElicitResult, McpError> {
        let Some(elicit) = &self.elicit else {
            return Err(McpError::invalid_request("Elicitation not supported"));
        };
        elicit(params).await
    }

    async fn sample(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, McpError> {
        let Some(sample) = &self.sample else {
            return Err(McpError::invalid_request("Sampling not supported"));
        };
        sample(params).await
    }

    async fn list_roots(&self) -> Result<ListRootsResult, McpError> {
        let Some(roots) = &self.roots else {
            return Err(McpError::invalid_request("Roots not supported"));
        };
        Ok(ListRootsResult::new(roots(()).await?))
    }
}

/// The client side of the protocol: answers the server's requests with the callbacks and
/// hands its notifications to them.
pub(crate) struct ClientDispatch {
    pub handlers: Arc<Handlers>,
    pub listeners: super::listen::Listeners,
    /// Dropped from on change notifications.
    pub cache: Option<super::ResultCache>,
    /// `network.transport` of the request spans.
    pub network_transport: &'static str,
    /// Set once `initialize` negotiated 2025-03-26, whose servers may send batches.
    pub batches: Arc<std::sync::atomic::AtomicBool>,
}

impl ClientDispatch {
    /// The answer to a request of the server: at once (ping, an unknown method) or from a
    /// handler.
    fn answer(&self, request: Request) -> Reply {
        let parsed = match ServerRequest::parse(&request.method, request.params.as_deref()) {
            Ok(parsed) => parsed,
            Err(err) => return Reply::Now(Err(McpError::from(err).with_method(&request.method))),
        };
        let handlers = Arc::clone(&self.handlers);
        match parsed {
            ServerRequest::Ping(_) => Reply::Now(raw(&Map::new())),
            ServerRequest::Elicit(params) => {
                Reply::Later(Box::pin(async move { raw(&handlers.elicit(params).await?) }))
            }
            ServerRequest::CreateMessage(params) => {
                Reply::Later(Box::pin(async move { raw(&handlers.sample(params).await?) }))
            }
            ServerRequest::ListRoots(_) => {
                Reply::Later(Box::pin(async move { raw(&handlers.list_roots().await?) }))
            }
            other => Reply::Now(Err(McpError::method_not_found(other.method()))),
        }
    }
}

impl Dispatch for ClientDispatch {
    fn accepts_batches(&self) -> bool {
        self.batches.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn request(&mut self, request: Request, _peer: &Peer) -> Reply {
        let span =
            observe::client_incoming_span(&request.method, &request.id, self.network_transport);
        #[cfg(feature = "otel")]
        if !span.is_disabled() {
            // The server's CLIENT span, sent in `_meta`, is the parent.
            let meta = observe::otel::meta_of_raw(request.params.as_deref());
            let carrier = meta.as_ref().map(|m| m.carrier()).unwrap_or_default();
            observe::otel::adopt_remote_parent(&span, carrier, Default::default());
        }
        let reply = span.in_scope(|| self.answer(request));
        observe::traced_reply(span, reply)
    }

    fn notification(&mut self, notification: Notification, _peer: &Peer) {
        let parsed =
            ServerNotification::parse(&notification.method, notification.params.as_deref());
        if let (Ok(parsed), Some(cache)) = (&parsed, &self.cache) {
            cache.invalidate(parsed);
        }
        match (parsed, &self.handlers.log, &self.handlers.elicitation_complete) {
            (Ok(ServerNotification::LoggingMessage(params)), Some(log), _) => log(params),
            (Ok(ServerNotification::ElicitationComplete(params)), _, Some(complete)) => {
                complete(params.elicitation_id)
            }
            _ => {}
        }
        super::listen::route(&self.listeners, &notification);
        match &self.handlers.notification {
            Some(handler) => handler(notification),
            None => tracing::debug!(method = %notification.method, "server notification"),
        }
    }
}

fn raw(value: &impl Serialize) -> Outcome {
    to_raw(value).map_err(|e| McpError::internal(e.to_string()))
}

/// Names the method in an "unknown method" error, as the server side does.
trait WithMethod {
    fn with_method(self, method: &str) -> McpError;
}

impl WithMethod for McpError {
    fn with_method(self, method: &str) -> McpError {
        if self.code == modelcontext_types::METHOD_NOT_FOUND {
            McpError::method_not_found(method)
        } else {
            self
        }
    }
}
