//! What a handler can read about the request it serves, and do back to the client.
//!
//! A handler asks for a [`Context`] by type (`|cx: Context, args: A| ..`). The same calls work
//! in both eras: logging and progress are notifications on the request's connection; the
//! questions a handler asks the client (elicitation, sampling, roots) are live requests in the
//! handshake era and an MRTR round in the modern one (see [`super::mrtr`]).

use std::any::{Any, TypeId};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use modelcontext_types::{
    ClientCapabilities, Era, Implementation, LoggingLevel, LoggingMessageNotificationParams,
    Notification, ProgressNotificationParams, ProgressToken, RequestId, RequestMeta, method,
};
use serde::Serialize;

use super::ServerInner;
use super::extensions::Extensions;
use super::mrtr::InputRound;
use crate::engine::Peer;

/// The request a handler is serving. Ask for it by type: a tool, resource or prompt handler of
/// the form `Fn(Context, Args)` receives it. The handler code is the same in both eras.
/// Cheap to clone; clones share the request's state (the last progress value, say).
///
/// | call | handshake era (2024-11-05 .. 2025-11-25) | modern era (2026-07-28) |
/// |---|---|---|
/// | [`log`](Context::log), [`info`](Context::info), ... | `notifications/message` at or above the `logging/setLevel` level (all before it) | only if the request's `_meta` asked for a `logLevel`, at or above it |
/// | [`report_progress`](Context::report_progress) | `notifications/progress` when the request has a token; non-increasing values are dropped | the same |
/// | [`elicit`](Context::elicit), [`elicit_url`](Context::elicit_url), [`sample`](Context::sample), [`list_roots`](Context::list_roots) | a live request to the client | an MRTR round: the handler runs again with the answer |
/// | [`state`](Context::state), [`read_resource`](Context::read_resource), [`cancelled`](Context::cancelled) | the same in both eras | |
///
/// A missing client capability is -32021 (`data.requiredCapabilities`) in both eras.
///
/// ```
/// # use modelcontext::__private::serde;
/// # use modelcontext::schemars;
/// use modelcontext::server::{Elicitation, NoArgs};
/// use modelcontext::types::{ElicitResult, LoggingLevel};
/// use modelcontext::{Client, Context, EraMode, McpServer, ToolDef};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// # #[serde(crate = "modelcontext::__private::serde")]
/// # #[schemars(crate = "modelcontext::schemars")]
/// struct Confirm { ok: bool }
///
/// struct Stock(u32);
///
/// let order = ToolDef::new("order", |cx: Context, _: NoArgs| async move {
///     let stock = cx.state::<Stock>().map_or(0, |s| s.0);
///     cx.info(format!("{stock} in stock")).await;
///     match cx.elicit::<Confirm>("Order one?").await? {
///         Elicitation::Accepted(Confirm { ok: true }) => Ok("ordered"),
///         _ => Ok::<_, modelcontext::McpError>("not ordered"),
///     }
/// });
/// let server = McpServer::new("shop").state(Stock(3)).tool(order)?;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// for era in [EraMode::Handshake, EraMode::Modern] {
///     let client = Client::builder()
///         .era(era)
///         .log_level(LoggingLevel::Info)
///         .on_log(|message| println!("server says {}", message.data))
///         .on_elicit(|_question| async {
///             let answer = serde_json::json!({ "ok": true });
///             Ok(ElicitResult::accept(answer.as_object().cloned().unwrap_or_default()))
///         })
///         .connect(server.in_memory())
///         .await?;
///     let result = client.call_tool("order", serde_json::json!({})).await?;
///     assert_eq!(result.is_error, None);
/// }
/// # Ok::<(), modelcontext::Error>(()) })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Context {
    inner: Arc<Inner>,
}

struct Inner {
    request_id: RequestId,
    /// Shared with the session in the handshake era, so a request does not copy it.
    client: Arc<ClientView>,
    meta: Option<RequestMeta>,
    peer: Peer,
    server: Arc<ServerInner>,
    log_threshold: LogThreshold,
    /// The last progress value sent, so that progress only ever increases.
    last_progress: Mutex<Option<f64>>,
    /// Modern era: the answers this MRTR round carries and the questions it raises.
    input: Option<Arc<InputRound>>,
    /// Raised when the request ends without its handler finishing.
    cancelled: Arc<Cancelled>,
    /// What the transport knows about the connection or request.
    extensions: Arc<Extensions>,
}

/// A request's cancellation flag, for work that outlives the handler future (a spawned task
/// holding a clone of the context).
#[derive(Debug, Default)]
struct Cancelled {
    flag: std::sync::atomic::AtomicBool,
    notify: tokio::sync::Notify,
}

/// Raises the cancellation flag if dropped before [`CancelGuard::disarm`]: the request's
/// future owns it, so an abort (the client's `notifications/cancelled`, a lost connection)
/// raises it.
pub(crate) struct CancelGuard {
    cancelled: Option<Arc<Cancelled>>,
}

impl CancelGuard {
    /// The handler finished: nothing to cancel.
    pub(crate) fn disarm(mut self) {
        self.cancelled = None;
    }
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if let Some(cancelled) = self.cancelled.take() {
            cancelled.flag.store(true, Ordering::SeqCst);
            cancelled.notify.notify_waiters();
        }
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("request_id", &self.inner.request_id)
            .field("era", &self.inner.client.era)
            .field("protocol_version", &self.inner.client.protocol_version)
            .finish_non_exhaustive()
    }
}

/// Who the client said it was, fixed per connection (handshake era) or per request (modern).
#[derive(Clone, Debug)]
pub(crate) struct ClientView {
    pub era: Era,
    pub protocol_version: &'static str,
    pub info: Option<Implementation>,
    pub capabilities: ClientCapabilities,
}

/// The log level a handshake-era connection asked for with `logging/setLevel`. Shared between
/// the session (which writes it) and every context of the connection (which read it when they
/// log), so a change applies to requests already running.
#[derive(Clone, Debug, Default)]
pub(crate) struct SessionLogLevel(Arc<AtomicU8>);

impl SessionLogLevel {
    /// Stores the level `logging/setLevel` asked for.
    pub(crate) fn set(&self, level: LoggingLevel) {
        self.0.store(level as u8 + 1, Ordering::Relaxed);
    }

    fn get(&self) -> Option<LoggingLevel> {
        const LEVELS: [LoggingLevel; 8] = [
            LoggingLevel::Debug,
            LoggingLevel::Info,
            LoggingLevel::Notice,
            LoggingLevel::Warning,
            LoggingLevel::Error,
            LoggingLevel::Critical,
            LoggingLevel::Alert,
            LoggingLevel::Emergency,
        ];
        let stored = self.0.load(Ordering::Relaxed);
        LEVELS.get(usize::from(stored.checked_sub(1)?)).copied()
    }
}

/// Which log messages this request may send.
#[derive(Debug)]
enum LogThreshold {
    /// Handshake era: what `logging/setLevel` said; everything until it is called (the spec
    /// lets the server choose before the client asks).
    Session(SessionLogLevel),
    /// Modern era: only what the request's `_meta` asked for; nothing without it (spec
    /// 2026-07-28 `utilities/logging`: no log level, no log messages).
    Request(Option<LoggingLevel>),
}

impl LogThreshold {
    fn allows(&self, level: LoggingLevel) -> bool {
        match self {
            LogThreshold::Session(session) => session.get().is_none_or(|min| level >= min),
            LogThreshold::Request(min) => min.is_some_and(|min| level >= min),
        }
    }
}

/// Everything [`Context::new`] needs from the session.
pub(crate) struct ContextParts<'a> {
    pub request_id: RequestId,
    pub client: &'a Arc<ClientView>,
    pub meta: Option<RequestMeta>,
    pub peer: &'a Peer,
    pub server: &'a Arc<ServerInner>,
    pub session_log_level: Option<&'a SessionLogLevel>,
    pub input: Option<Arc<InputRound>>,
    pub extensions: Arc<Extensions>,
}

impl Context {
    pub(crate) fn new(parts: ContextParts<'_>) -> Context {
        let ContextParts {
            request_id,
            client,
            meta,
            peer,
            server,
            session_log_level,
            input,
            extensions,
        } = parts;
        let log_threshold = match (client.era, session_log_level) {
            (Era::Handshake, Some(level)) => LogThreshold::Session(level.clone()),
            _ => LogThreshold::Request(meta.as_ref().and_then(|m| m.log_level)),
        };
        let inner = Inner {
            request_id,
            client: Arc::clone(client),
            meta,
            peer: peer.clone(),
            server: Arc::clone(server),
            log_threshold,
            last_progress: Mutex::new(None),
            input,
            cancelled: Arc::default(),
            extensions,
        };
        Context { inner: Arc::new(inner) }
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.request_id
    }

    /// The protocol era of the request.
    pub fn era(&self) -> Era {
        self.inner.client.era
    }

    /// The protocol revision in use, e.g. `2025-11-25` or `2026-07-28`.
    pub fn protocol_version(&self) -> &'static str {
        self.inner.client.protocol_version
    }

    /// The client's self-description (`clientInfo`), when it sent one. Not for security
    /// decisions: any client can claim any name.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.client.info.as_ref()
    }

    /// The capabilities the client declared.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.client.capabilities
    }

    /// The request's `_meta`, if it had one.
    pub fn meta(&self) -> Option<&RequestMeta> {
        self.inner.meta.as_ref()
    }

    /// The progress token the client attached, if any.
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.meta()?.progress_token.as_ref()
    }

    /// The lifespan state of type `T` given to [`McpServer::state`](super::McpServer::state):
    /// built once, shared by every connection and request. `None` if none was given.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        let state: &(dyn Any + Send + Sync) = &**self.inner.server.state.get(&TypeId::of::<T>())?;
        state.downcast_ref::<T>()
    }

    /// The state of type `T` a [`lifespan`](super::McpServer::lifespan) start hook built,
    /// while the server runs. `None` before [`McpServer::start`](super::McpServer::start) and
    /// after shutdown.
    pub fn lifespan<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.inner.server.lifespan.get::<T>()
    }

    /// A value the transport attached to this connection or request, by type: the
    /// authenticated [`PrincipalId`](super::PrincipalId), HTTP headers... `None` on transports
    /// that attach nothing (stdio, memory) unless served with
    /// [`McpServer::serve_with`](super::McpServer::serve_with).
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.inner.extensions.get::<T>()
    }

    /// Whom the request's OAuth access token speaks for (feature `auth`, HTTP with
    /// [`HttpOptions::auth`](crate::server::http::HttpOptions::auth) set).
    #[cfg(feature = "auth-server")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth-server")))]
    pub fn principal(&self) -> Option<&crate::auth::Principal> {
        self.extension::<crate::auth::Principal>()
    }

    /// Whether the request was cancelled (by the client, or because the connection is gone).
    /// The handler itself is simply dropped when that happens; this is for work it handed to
    /// other tasks with a clone of the context.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.flag.load(Ordering::SeqCst)
    }

    /// Resolves once the request is cancelled (see [`Context::is_cancelled`]).
    pub async fn cancelled(&self) {
        let cancelled = &self.inner.cancelled;
        loop {
            let notified = cancelled.notify.notified();
            if cancelled.flag.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }

    /// The guard the request's future holds (see [`CancelGuard`]).
    pub(crate) fn cancel_guard(&self) -> CancelGuard {
        CancelGuard { cancelled: Some(Arc::clone(&self.inner.cancelled)) }
    }

    /// Tells the clients watching `uri` that its contents changed (see
    /// [`McpServer::notify_resource_updated`](super::McpServer::notify_resource_updated)).
    pub fn notify_resource_updated(&self, uri: impl Into<String>) {
        self.inner.server.bus.publish(super::ChangeEvent::ResourceUpdated(uri.into()));
    }

    /// Turns this call into a task now, when it may become one (a tool declared with
    /// [`ToolDef::task`](super::ToolDef::task), a client that declares the tasks extension):
    /// the client gets its task handle, and questions asked after this are the task's
    /// (`input_required` until `tasks/update` answers them) rather than MRTR rounds. Any
    /// await that does not finish at once has the same effect; this makes it explicit, for a
    /// tool whose first act is a question. Otherwise it does nothing.
    pub async fn run_as_task(&self) {
        let Some(round) = &self.inner.input else { return };
        let mut yielded = false;
        std::future::poll_fn(|cx| {
            if yielded || round.is_task() {
                return std::task::Poll::Ready(());
            }
            yielded = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        })
        .await;
    }

    pub(super) fn peer(&self) -> &Peer {
        &self.inner.peer
    }

    /// The server answering the request.
    pub(super) fn server(&self) -> &Arc<ServerInner> {
        &self.inner.server
    }

    pub(super) fn input_round(&self) -> Option<&Arc<InputRound>> {
        self.inner.input.as_ref()
    }

    /// Sends `notifications/progress` for this request. Does nothing when the client gave no
    /// progress token (the spec forbids progress without one). The spec requires progress to
    /// increase: a value not above the last one sent (or not a number) is dropped, not sent.
    pub async fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = self.progress_token() else { return };
        if !self.advance_progress(progress) {
            tracing::debug!(progress, "progress did not increase; not sent");
            return;
        }
        let mut params = ProgressNotificationParams::new(token.clone(), progress, total);
        params.message = message.map(str::to_owned);
        self.notify(method::PROGRESS, &params).await;
    }

    /// Records `progress` as the last value if it is above the previous one.
    fn advance_progress(&self, progress: f64) -> bool {
        let mut last = self.inner.last_progress.lock().unwrap_or_else(|e| e.into_inner());
        if progress.is_nan() || last.is_some_and(|last| progress <= last) {
            return false;
        }
        *last = Some(progress);
        true
    }

    /// Sends a `notifications/message` to the client if its level passes the client's filter:
    /// handshake era, the level of `logging/setLevel` (everything before it is called); modern
    /// era, the `io.modelcontextprotocol/logLevel` of this request's `_meta` (nothing without
    /// it). `data` is any JSON-serializable value, usually a string.
    pub async fn log(&self, level: LoggingLevel, data: impl Serialize) {
        self.log_to(None, level, data).await;
    }

    /// [`Context::log`] with a logger name.
    pub async fn log_to(&self, logger: Option<&str>, level: LoggingLevel, data: impl Serialize) {
        if !self.inner.log_threshold.allows(level) {
            return;
        }
        let Ok(data) = serde_json::to_value(data) else { return };
        let mut params = LoggingMessageNotificationParams::new(level, data);
        params.logger = logger.map(str::to_owned);
        self.notify(method::LOGGING_MESSAGE, &params).await;
    }

    /// Logs at `debug`.
    pub async fn debug(&self, data: impl Serialize) {
        self.log(LoggingLevel::Debug, data).await;
    }

    /// Logs at `info`.
    pub async fn info(&self, data: impl Serialize) {
        self.log(LoggingLevel::Info, data).await;
    }

    /// Logs at `warning`.
    pub async fn warning(&self, data: impl Serialize) {
        self.log(LoggingLevel::Warning, data).await;
    }

    /// Logs at `error`.
    pub async fn error(&self, data: impl Serialize) {
        self.log(LoggingLevel::Error, data).await;
    }

    async fn notify(&self, method: &str, params: &impl Serialize) {
        if let Ok(notification) = Notification::new(method, params) {
            // A closed connection has nobody to tell; the handler carries on.
            let _ = self.inner.peer.notify(notification).await;
        }
    }
}
