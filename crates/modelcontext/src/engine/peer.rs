//! The outgoing side of a connection: requests to the peer and their pending answers, with
//! progress routing, timeouts and cancellation when the caller gives up.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use modelcontext_types::{
    CONNECTION_CLOSED, McpError, Message, Notification, REQUEST_TIMEOUT, RawValue, Request,
    RequestId, Response, method,
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::Outcome;

/// Where the progress updates of one outgoing request go, as raw `notifications/progress`
/// params. Called from the task that awaits the request, never from the engine loop.
pub(crate) type ProgressCallback = Arc<dyn Fn(Value) + Send + Sync>;

/// Progress updates on their way from the engine loop to the caller that asked for them.
type ProgressSink = mpsc::UnboundedSender<Value>;

/// The sending half of a connection: requests and notifications to the peer. Cheap to clone.
#[derive(Clone)]
pub struct Peer {
    pub(super) inner: Arc<PeerInner>,
}

pub(super) struct PeerInner {
    outgoing: Outbox,
    next_id: AtomicI64,
    /// What our request ids start with, when they must name this instance (a deployment
    /// with a peer router): then they are strings, `{prefix}{n}`.
    pub(super) id_prefix: std::sync::OnceLock<Box<str>>,
    /// Messages sent so far: a task that ran a handler once can tell whether the handler
    /// sent anything its answer must follow.
    pub(super) sent: AtomicU64,
    /// Outgoing requests waiting for their response. Per connection, held only for map
    /// operations, never across an `.await`.
    pending: Mutex<Pending>,
}

#[derive(Default)]
struct Pending {
    responses: HashMap<RequestId, oneshot::Sender<Outcome>>,
    progress: HashMap<String, ProgressSink>,
    closed: bool,
}

/// A [`Peer`] that does not keep the connection open: for tasks that outlive requests (change
/// notifications) and must stop when the connection does.
#[derive(Clone)]
pub(crate) struct WeakPeer {
    inner: std::sync::Weak<PeerInner>,
}

impl WeakPeer {
    /// The peer, while the connection is alive.
    pub(crate) fn upgrade(&self) -> Option<Peer> {
        self.inner.upgrade().map(|inner| Peer { inner })
    }
}

/// Where a [`Peer`]'s messages go: a queue that the transport's writer drains (stdio, memory,
/// a client's HTTP, the notifications of one stateless request), or whatever delivers them
/// from the sending task itself (an HTTP session: each message goes to the stream it belongs
/// on, with no queue and no task between).
#[derive(Clone)]
pub(crate) struct Outbox(Arc<dyn Deliver>);

/// Takes a peer's outgoing messages to where they go, in the sender's own task.
pub(crate) trait Deliver: Send + Sync + 'static {
    /// Delivers `message`; done once it is on its way (or has nowhere to go), [`Closed`] when
    /// nothing will ever take it.
    fn deliver(&self, message: Message) -> Delivering<'_>;

    /// Delivers `message` if that needs no wait (the common case of a queue with room), so
    /// that only a wait costs a boxed future.
    fn try_deliver(&self, message: Message) -> Tried {
        Tried::MustWait(message)
    }
}

/// The future of one [`Deliver::deliver`].
pub(crate) type Delivering<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), Closed>> + Send + 'a>>;

/// What [`Deliver::try_deliver`] made of a message.
pub(crate) enum Tried {
    /// It is on its way.
    Sent,
    /// Nothing will ever take it.
    Closed,
    /// It needs a wait: [`Deliver::deliver`] it.
    MustWait(Message),
}

impl Deliver for mpsc::Sender<Message> {
    fn deliver(&self, message: Message) -> Delivering<'_> {
        Box::pin(async move { self.send(message).await.map_err(|_| Closed) })
    }

    fn try_deliver(&self, message: Message) -> Tried {
        match self.try_send(message) {
            Ok(()) => Tried::Sent,
            Err(mpsc::error::TrySendError::Full(message)) => Tried::MustWait(message),
            Err(mpsc::error::TrySendError::Closed(_)) => Tried::Closed,
        }
    }
}

/// The outbox's receiving end is gone.
pub(crate) struct Closed;

impl Outbox {
    pub(super) fn new(deliver: Arc<dyn Deliver>) -> Outbox {
        Outbox(deliver)
    }

    pub(crate) async fn send(&self, message: Message) -> Result<(), Closed> {
        match self.0.try_deliver(message) {
            Tried::Sent => Ok(()),
            Tried::Closed => Err(Closed),
            Tried::MustWait(message) => self.0.deliver(message).await,
        }
    }

    /// Sends without waiting: at once when that needs no wait, else from a task of its own
    /// (for a drop, which cannot await).
    fn send_detached(&self, message: Message) {
        let Tried::MustWait(message) = self.0.try_deliver(message) else { return };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let outbox = self.clone();
            runtime.spawn(async move { outbox.0.deliver(message).await });
        }
    }
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer").finish_non_exhaustive()
    }
}

/// Options for one outgoing request.
#[derive(Default)]
pub(crate) struct RequestOptions {
    /// How long to wait for the answer (from the start, or from the last progress update when
    /// `reset_on_progress` is set).
    pub timeout: Option<Duration>,
    /// Progress updates restart the timeout (spec `basic/utilities/cancellation`: timeouts MAY
    /// reset on progress, with a maximum).
    pub reset_on_progress: bool,
    /// The longest the request may take in total, progress or not.
    pub max_total: Option<Duration>,
    /// Progress token (already in the params' `_meta`) and where its updates go.
    pub progress: Option<(Value, ProgressCallback)>,
}

impl RequestOptions {
    /// The first deadline: the timeout, capped by the maximum.
    fn deadline(&self, start: Instant) -> Option<Instant> {
        let idle = self.timeout.map(|t| start + t);
        let max = self.max_total.map(|m| start + m);
        match (idle, max) {
            (Some(idle), Some(max)) => Some(idle.min(max)),
            (idle, max) => idle.or(max),
        }
    }

    /// Which limit a deadline that passed was: the maximum, or the timeout.
    fn expired(&self, start: Instant, deadline: Option<Instant>) -> Duration {
        match (self.max_total, self.timeout) {
            (Some(max), _) if deadline == Some(start + max) => max,
            (_, Some(timeout)) => timeout,
            (max, None) => max.unwrap_or_default(),
        }
    }

    /// The deadline after a progress update at `now`.
    fn after_progress(
        &self,
        start: Instant,
        now: Instant,
        current: Option<Instant>,
    ) -> Option<Instant> {
        if !self.reset_on_progress {
            return current;
        }
        let idle = self.timeout.map(|t| now + t);
        let max = self.max_total.map(|m| start + m);
        match (idle, max) {
            (Some(idle), Some(max)) => Some(idle.min(max)),
            (idle, max) => idle.or(max),
        }
    }
}

fn closed_error() -> McpError {
    McpError::new(CONNECTION_CLOSED, "Connection closed")
}

impl Peer {
    /// A peer whose messages go to `outgoing`. Without an engine loop nothing answers its
    /// requests: that is for one stateless request, whose handler only notifies.
    pub(crate) fn new(outgoing: mpsc::Sender<Message>) -> Peer {
        Peer::with_outbox(Outbox::new(Arc::new(outgoing)))
    }

    pub(super) fn with_outbox(outgoing: Outbox) -> Peer {
        let inner = PeerInner {
            outgoing,
            next_id: AtomicI64::new(1),
            id_prefix: std::sync::OnceLock::new(),
            sent: AtomicU64::new(0),
            pending: Default::default(),
        };
        Peer { inner: Arc::new(inner) }
    }

    fn pending(&self) -> MutexGuard<'_, Pending> {
        // A poisoned map only means another thread panicked mid-insert; the map is still valid.
        self.inner.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A handle that does not keep the connection open.
    pub(crate) fn downgrade(&self) -> WeakPeer {
        WeakPeer { inner: Arc::downgrade(&self.inner) }
    }

    /// A fresh request id.
    pub(crate) fn next_id(&self) -> RequestId {
        let number = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        match self.inner.id_prefix.get() {
            None => RequestId::Number(number),
            Some(prefix) => RequestId::String(format!("{prefix}{number}")),
        }
    }

    /// Sends a notification.
    pub(crate) async fn notify(&self, notification: Notification) -> Result<(), McpError> {
        self.send(notification.into()).await
    }

    /// Sends any message, a response included.
    pub(crate) async fn send(&self, message: Message) -> Result<(), McpError> {
        self.inner.sent.fetch_add(1, Ordering::Relaxed);
        self.inner.outgoing.send(message).await.map_err(|Closed| closed_error())
    }

    /// Sends a request and waits for its response, its timeout, or the connection's end.
    /// On timeout, and when the returned future is dropped before the answer came, the peer is
    /// told with `notifications/cancelled` (spec `basic/utilities/cancellation`).
    pub(crate) async fn request(
        &self,
        id: RequestId,
        method: &str,
        params: Option<Box<RawValue>>,
        mut options: RequestOptions,
    ) -> Outcome {
        let (tx, rx) = oneshot::channel();
        let progress = options.progress.take();
        let progress_key = progress.as_ref().map(|(token, _)| token.to_string());
        let (progress_tx, progress_rx) = mpsc::unbounded_channel();
        {
            let mut pending = self.pending();
            if pending.closed {
                return Err(closed_error());
            }
            pending.responses.insert(id.clone(), tx);
            if let Some(key) = &progress_key {
                pending.progress.insert(key.clone(), progress_tx);
            }
        }
        let mut guard = InFlight { peer: self, id: id.clone(), progress_key, armed: false };
        let request = Request { id: id.clone(), method: method.to_owned(), params };
        self.send(request.into()).await?;
        // Spec (basic/utilities/cancellation): `initialize` MUST NOT be cancelled.
        let cancellable = method != method::INITIALIZE;
        guard.armed = cancellable;
        let listener = progress.map(|(_, callback)| (progress_rx, callback));
        let waited = self.wait(rx, listener, &options).await;
        guard.armed = false;
        match waited {
            Waited::Answer(outcome) => outcome,
            Waited::TimedOut(after) => {
                let reason = format!("Timed out after {after:?} waiting for '{method}'");
                if cancellable {
                    self.cancel(&id, &reason).await;
                }
                Err(McpError::new(REQUEST_TIMEOUT, reason))
            }
        }
    }

    /// Waits for the answer, handing progress updates to their callback on the way.
    async fn wait(
        &self,
        mut rx: oneshot::Receiver<Outcome>,
        progress: Option<(mpsc::UnboundedReceiver<Value>, ProgressCallback)>,
        options: &RequestOptions,
    ) -> Waited {
        let start = Instant::now();
        let mut deadline = options.deadline(start);
        let (mut updates, callback) = progress.unzip();
        loop {
            let next_progress = async {
                match &mut updates {
                    Some(updates) => updates.recv().await,
                    None => std::future::pending().await,
                }
            };
            let timer = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            // Progress first: updates that came before the answer must reach the callback.
            tokio::select! {
                biased;
                Some(update) = next_progress => {
                    if let Some(callback) = &callback {
                        callback(update);
                    }
                    deadline = options.after_progress(start, Instant::now(), deadline);
                }
                outcome = &mut rx => {
                    // The loop routes progress before the response it precedes: drain it.
                    if let (Some(updates), Some(callback)) = (&mut updates, &callback) {
                        while let Ok(update) = updates.try_recv() {
                            callback(update);
                        }
                    }
                    return Waited::Answer(outcome.unwrap_or_else(|_| Err(closed_error())));
                }
                () = timer => return Waited::TimedOut(options.expired(start, deadline)),
            }
        }
    }

    /// Tells the peer we no longer want the answer to `id`.
    pub(crate) async fn cancel(&self, id: &RequestId, reason: &str) {
        let params = serde_json::json!({ "requestId": id, "reason": reason });
        if let Ok(notification) = Notification::new(method::CANCELLED, &params) {
            let _ = self.notify(notification).await;
        }
    }

    pub(crate) fn complete(&self, response: Response) {
        let Some(id) = response.id else {
            tracing::warn!(error = ?response.result.err(), "peer sent an error with a null id");
            return;
        };
        match self.pending().responses.remove(&id) {
            Some(tx) => {
                let _ = tx.send(response.result);
            }
            None => tracing::debug!(%id, "response to an unknown or finished request"),
        }
    }

    pub(crate) fn route_progress(&self, params: Option<&RawValue>) {
        let Some(params) = params.and_then(|p| serde_json::from_str::<Value>(p.get()).ok()) else {
            return;
        };
        let Some(token) = params.get("progressToken") else { return };
        if let Some(sink) = self.pending().progress.get(&token.to_string()) {
            let _ = sink.send(params);
        }
    }

    /// Sends `notifications/cancelled` without waiting: for a request future being dropped,
    /// which cannot await. A full outgoing queue falls back to a task.
    fn cancel_detached(&self, id: &RequestId) {
        let params =
            serde_json::json!({ "requestId": id, "reason": "The caller dropped the request" });
        let Ok(notification) = Notification::new(method::CANCELLED, &params) else {
            return;
        };
        self.inner.sent.fetch_add(1, Ordering::Relaxed);
        self.inner.outgoing.send_detached(notification.into());
    }

    /// The way to the peer, for a handler's task to send its answer on. Sending there
    /// directly is not counted in [`PeerInner::sent`].
    pub(super) fn outgoing(&self) -> Outbox {
        self.inner.outgoing.clone()
    }

    /// True once the connection has ended (the transport closed or the engine stopped).
    pub(crate) fn is_closed(&self) -> bool {
        self.pending().closed
    }

    /// Ends the connection for outgoing requests: those waiting are answered `Connection
    /// closed`, later ones fail at once.
    pub(crate) fn close(&self) {
        let mut pending = self.pending();
        pending.closed = true;
        for (_, tx) in pending.responses.drain() {
            let _ = tx.send(Err(closed_error()));
        }
        pending.progress.clear();
    }
}

/// How waiting for an answer ended.
enum Waited {
    Answer(Outcome),
    TimedOut(Duration),
}

/// An outgoing request between sending and answer. Dropping it forgets the request; dropping
/// it while `armed` (the caller dropped the request future) also cancels it at the peer.
struct InFlight<'a> {
    peer: &'a Peer,
    id: RequestId,
    progress_key: Option<String>,
    armed: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let closed = {
            let mut pending = self.peer.pending();
            pending.responses.remove(&self.id);
            if let Some(key) = &self.progress_key {
                pending.progress.remove(key);
            }
            pending.closed
        };
        if self.armed && !closed {
            self.peer.cancel_detached(&self.id);
        }
    }
}
