//! The JSON-RPC engine both peers run on.
//!
//! One loop per connection owns the connection's state. For every incoming message, in order:
//! responses complete the matching outgoing request; `notifications/cancelled` aborts the
//! handler it names (a cancelled request gets no answer); `notifications/progress` reaches the
//! caller that asked for it; other notifications go to the [`Dispatch`] in order; requests go
//! to the [`Dispatch`] too, which answers at once or returns a future that runs concurrently
//! with everything else.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::Duration;

use tokio::time::Instant;

use futures_util::FutureExt;
use modelcontext_types::{
    CONNECTION_CLOSED, McpError, Message, Notification, REQUEST_TIMEOUT, RawValue, Request,
    RequestId, Response,
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;

use crate::transport::{Connection, Incoming};

/// A boxed, sendable future: what request handlers return.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// The outcome of a request as it goes on the wire.
pub type Outcome = Result<Box<RawValue>, McpError>;

/// How the [`Dispatch`] answers a request.
pub(crate) enum Reply {
    /// The answer is ready.
    Now(Outcome),
    /// The answer needs work; it runs concurrently and can be cancelled.
    Later(BoxFuture<Outcome>),
    /// A stream that lives until cancelled (`subscriptions/listen`): it runs like `Later`, but
    /// when the peer goes away it is stopped instead of awaited.
    Stream(BoxFuture<Outcome>),
}

/// The protocol side of a connection: what to do with requests and notifications.
///
/// Called from the engine loop, one message at a time and in arrival order, with `&mut self`:
/// per-connection state (the negotiated era, say) needs no lock.
pub(crate) trait Dispatch: Send + 'static {
    fn request(&mut self, request: Request, peer: &Peer) -> Reply;
    fn notification(&mut self, notification: Notification, peer: &Peer);

    /// How many of the peer's requests may have a handler running at once (listen streams
    /// aside); a request that would start one more is refused at once, while immediate
    /// answers, responses and cancellations keep flowing.
    fn max_in_flight(&self) -> usize {
        usize::MAX
    }
}

/// Where the progress updates of one outgoing request go, as raw `notifications/progress`
/// params. Called from the task that awaits the request, never from the engine loop.
pub(crate) type ProgressCallback = Arc<dyn Fn(Value) + Send + Sync>;

/// Progress updates on their way from the engine loop to the caller that asked for them.
type ProgressSink = mpsc::UnboundedSender<Value>;

/// The sending half of a connection: requests and notifications to the peer. Cheap to clone.
#[derive(Clone)]
pub struct Peer {
    inner: Arc<PeerInner>,
}

struct PeerInner {
    outgoing: mpsc::Sender<Message>,
    next_id: AtomicI64,
    /// Messages sent so far: a task that ran a handler once can tell whether the handler
    /// sent anything its answer must follow.
    sent: AtomicU64,
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
        let inner = PeerInner {
            outgoing,
            next_id: AtomicI64::new(1),
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
        RequestId::Number(self.inner.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends a notification.
    pub(crate) async fn notify(&self, notification: Notification) -> Result<(), McpError> {
        self.send(notification.into()).await
    }

    /// Sends any message, a response included.
    pub(crate) async fn send(&self, message: Message) -> Result<(), McpError> {
        self.inner.sent.fetch_add(1, Ordering::Relaxed);
        self.inner.outgoing.send(message).await.map_err(|_| closed_error())
    }

    /// How many messages were sent so far (see [`PeerInner::sent`]).
    #[cfg(feature = "http")]
    pub(crate) fn sent_count(&self) -> u64 {
        self.inner.sent.load(Ordering::Relaxed)
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
        let cancellable = method != "initialize";
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
        if let Ok(notification) = Notification::new("notifications/cancelled", &params) {
            let _ = self.notify(notification).await;
        }
    }

    fn complete(&self, response: Response) {
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

    fn route_progress(&self, params: Option<&RawValue>) {
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
        let Ok(notification) = Notification::new("notifications/cancelled", &params) else {
            return;
        };
        let message: Message = notification.into();
        self.inner.sent.fetch_add(1, Ordering::Relaxed);
        if let Err(mpsc::error::TrySendError::Full(message)) = self.inner.outgoing.try_send(message)
        {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                let outgoing = self.inner.outgoing.clone();
                runtime.spawn(async move { outgoing.send(message).await });
            }
        }
    }

    /// True once the connection has ended (the transport closed or the engine stopped).
    pub(crate) fn is_closed(&self) -> bool {
        self.pending().closed
    }

    fn close(&self) {
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

/// The loop's own state: requests from the peer that are still running.
struct Engine<D> {
    dispatch: D,
    peer: Peer,
    running: HashMap<RequestId, AbortHandle>,
    /// The running requests that are streams, stopped rather than awaited at end of input.
    streams: std::collections::HashSet<RequestId>,
    /// Whether end of input means the peer is gone, so streams stop (see [`start`]).
    input_end_is_peer_gone: bool,
    finished_tx: mpsc::UnboundedSender<RequestId>,
    /// Handlers still working (not streams, not answers waiting to be written): what the
    /// in-flight limit counts. Each task lowers it the moment its handler ends or is aborted.
    working: Arc<AtomicUsize>,
}

/// Polls a handler once, in the engine loop. The no-op waker is enough: a handler that is not
/// done is spawned and polled again at once by its task, with the task's waker. A panic is
/// answered as an internal error, so a handler without its own guard cannot take the
/// connection down.
pub(crate) fn poll_once(future: &mut BoxFuture<Outcome>) -> Poll<Outcome> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx))) {
        Ok(poll) => poll,
        Err(payload) => Poll::Ready(panicked(payload)),
    }
}

/// The answer to a request whose handler panicked (the payload is not shown to the peer).
fn panicked(_payload: Box<dyn std::any::Any + Send>) -> Outcome {
    Err(McpError::internal("Internal error: the request handler panicked"))
}

/// `future`, with a panic in it answered as an internal error: the guard every handler runs
/// behind, whoever polls it (a task of the engine, or an HTTP response body).
pub(crate) fn catching_panics(future: BoxFuture<Outcome>) -> impl Future<Output = Outcome> + Send {
    AssertUnwindSafe(future).catch_unwind().map(|caught| caught.unwrap_or_else(panicked))
}

/// The answer to a request refused because `limit` handlers are already working.
pub(crate) fn busy(limit: usize) -> McpError {
    McpError::internal(format!("Server busy: {limit} requests already in flight; retry later"))
}

/// A handler that a transport ran once in its own task and hands to the loop to finish:
/// tracked for cancellation, counted against the in-flight limit, answered on the connection.
pub(crate) struct Adopted {
    id: RequestId,
    future: BoxFuture<Outcome>,
    /// A stream (`subscriptions/listen`): stopped rather than awaited at end of input.
    stream: bool,
}

/// Lets a transport answer a connection's requests from the task that read them, handing
/// the loop only the handlers that did not finish at once. Cheap to clone. Only the HTTP
/// server's sessions use it; the loop listens for handovers either way.
#[derive(Clone)]
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) struct Handover {
    adopt: mpsc::UnboundedSender<Adopted>,
    working: Arc<AtomicUsize>,
}

#[cfg(feature = "http")]
impl Handover {
    /// Handlers of the connection still working (what the in-flight limit counts).
    pub(crate) fn working(&self) -> usize {
        self.working.load(Ordering::Relaxed)
    }

    /// Gives `future` (the handler of request `id`) to the loop; `false` if the loop ended.
    pub(crate) fn adopt(&self, id: RequestId, future: BoxFuture<Outcome>, stream: bool) -> bool {
        self.adopt.send(Adopted { id, future, stream }).is_ok()
    }
}

/// Holds one place in [`Engine::working`] until dropped.
struct Working(Arc<AtomicUsize>);

impl Drop for Working {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Stops the engine loop when dropped (or when [`Stop::stop`] is called).
pub(crate) struct Stop(#[allow(dead_code)] oneshot::Sender<()>);

/// Starts the engine on `connection`. Returns the [`Peer`] for sending, the loop's future
/// (the caller spawns or awaits it; it ends when the peer goes away or [`Stop`] is dropped,
/// then finishes the transport's shutdown), and the [`Stop`] handle. End of input means the
/// peer is gone (stdio, memory): streams stop, other requests are answered first.
pub(crate) fn start<D: Dispatch>(
    connection: Connection,
    dispatch: D,
) -> (Peer, impl Future<Output = ()> + Send + 'static, Stop) {
    let (peer, run, stop, _handover) = start_with(connection, dispatch, true);
    (peer, run, stop)
}

/// [`start`] for a transport whose input ends before the peer is gone (an HTTP session: its
/// requests arrive on separate POSTs, which answer what they can themselves through the
/// [`Handover`]). Streams keep running after end of input, until the [`Stop`] handle is
/// dropped.
#[cfg(feature = "http")]
pub(crate) fn start_until_stopped<D: Dispatch>(
    connection: Connection,
    dispatch: D,
) -> (Peer, impl Future<Output = ()> + Send + 'static, Stop, Handover) {
    start_with(connection, dispatch, false)
}

fn start_with<D: Dispatch>(
    connection: Connection,
    dispatch: D,
    input_end_is_peer_gone: bool,
) -> (Peer, impl Future<Output = ()> + Send + 'static, Stop, Handover) {
    let Connection { sender, receiver, shutdown } = connection;
    let peer = Peer::new(sender);
    let (finished_tx, finished_rx) = mpsc::unbounded_channel();
    let (stop_tx, stop_rx) = oneshot::channel();
    let (adopt_tx, adopt_rx) = mpsc::unbounded_channel();
    let working = Arc::new(AtomicUsize::new(0));
    let handover = Handover { adopt: adopt_tx, working: Arc::clone(&working) };
    let engine = Engine {
        dispatch,
        peer: peer.clone(),
        running: HashMap::new(),
        streams: Default::default(),
        input_end_is_peer_gone,
        finished_tx,
        working,
    };
    let run = async move {
        engine.run(receiver, adopt_rx, finished_rx, stop_rx).await;
        if let Some(shutdown) = shutdown {
            shutdown.await;
        }
    };
    (peer, run, Stop(stop_tx), handover)
}

impl<D: Dispatch> Engine<D> {
    async fn run(
        mut self,
        mut incoming: mpsc::Receiver<Incoming>,
        mut adopted: mpsc::UnboundedReceiver<Adopted>,
        mut finished: mpsc::UnboundedReceiver<RequestId>,
        mut stop: oneshot::Receiver<()>,
    ) {
        let peer_gone = loop {
            tokio::select! {
                _ = &mut stop => break false,
                message = incoming.recv() => match message {
                    Some(message) => self.handle(message).await,
                    None => break true,
                },
                Some(handler) = adopted.recv() => self.adopt(handler).await,
                Some(id) = finished.recv() => {
                    self.running.remove(&id);
                    self.streams.remove(&id);
                }
            }
        };
        // End of input is how a stdio client asks a server to exit: answer what is already
        // running first (`printf ... | server` must not lose answers), unless told to stop.
        // Streams never finish on their own, and nobody is left to read them.
        if self.input_end_is_peer_gone {
            for id in self.streams.drain() {
                if let Some(handle) = self.running.remove(&id) {
                    handle.abort();
                }
            }
        }
        while peer_gone && !self.running.is_empty() {
            tokio::select! {
                _ = &mut stop => break,
                Some(id) = finished.recv() => {
                    self.running.remove(&id);
                }
            }
        }
        for (_, handle) in self.running.drain() {
            handle.abort();
        }
        self.peer.close();
    }

    async fn handle(&mut self, incoming: Incoming) {
        match incoming {
            Ok(Message::Request(request)) => self.handle_request(request).await,
            Ok(Message::Response(response)) => self.peer.complete(response),
            Ok(Message::Notification(notification)) => self.handle_notification(notification),
            Err(err) => {
                tracing::debug!(%err, "undecodable message");
                let _ = self.peer.send(err.to_response().into()).await;
            }
        }
    }

    async fn handle_request(&mut self, request: Request) {
        let id = request.id.clone();
        if self.running.contains_key(&id) {
            let error = McpError::invalid_request(format!("Request id {id} is already in use"));
            let _ = self.peer.send(Response::error(Some(id), error).into()).await;
            return;
        }
        match self.dispatch.request(request, &self.peer) {
            Reply::Now(outcome) => {
                let _ = self.peer.send(Response { id: Some(id), result: outcome }.into()).await;
            }
            Reply::Later(_)
                if self.working.load(Ordering::Relaxed) >= self.dispatch.max_in_flight() =>
            {
                // Only work that would run on is limited; the future is dropped unstarted.
                let error = busy(self.dispatch.max_in_flight());
                let _ = self.peer.send(Response::error(Some(id), error).into()).await;
            }
            Reply::Later(mut future) => {
                // Most handlers (a synchronous tool, a list) finish in their first poll: answer
                // those here, without a task and its wake-ups. The others run on as a task.
                if let Poll::Ready(outcome) = poll_once(&mut future) {
                    let _ = self.peer.send(Response { id: Some(id), result: outcome }.into()).await;
                    return;
                }
                self.working.fetch_add(1, Ordering::Relaxed);
                let working = Working(Arc::clone(&self.working));
                self.spawn(id, future, Some(working));
            }
            Reply::Stream(future) => {
                self.streams.insert(id.clone());
                self.spawn(id, future, None);
            }
        }
    }

    /// Takes over a handler a transport started (see [`Handover`]).
    async fn adopt(&mut self, Adopted { id, future, stream }: Adopted) {
        if self.running.contains_key(&id) {
            let error = McpError::invalid_request(format!("Request id {id} is already in use"));
            let _ = self.peer.send(Response::error(Some(id), error).into()).await;
        } else if stream {
            self.streams.insert(id.clone());
            self.spawn(id, future, None);
        } else {
            self.working.fetch_add(1, Ordering::Relaxed);
            let working = Working(Arc::clone(&self.working));
            self.spawn(id, future, Some(working));
        }
    }

    fn spawn(&mut self, id: RequestId, future: BoxFuture<Outcome>, working: Option<Working>) {
        let outgoing = self.peer.inner.outgoing.clone();
        let finished = self.finished_tx.clone();
        let task_id = id.clone();
        let handle = tokio::spawn(async move {
            let outcome = catching_panics(future).await;
            // The handler is done: it no longer counts toward the limit, even while its
            // answer waits for room on the wire (or when the task is aborted, via drop).
            drop(working);
            let _ =
                outgoing.send(Response { id: Some(task_id.clone()), result: outcome }.into()).await;
            let _ = finished.send(task_id);
        });
        self.running.insert(id, handle.abort_handle());
    }

    fn handle_notification(&mut self, notification: Notification) {
        match notification.method.as_str() {
            "notifications/cancelled" => self.cancel(notification.params.as_deref()),
            "notifications/progress" => self.peer.route_progress(notification.params.as_deref()),
            _ => self.dispatch.notification(notification, &self.peer),
        }
    }

    /// Aborts the handler named by `notifications/cancelled`. Unknown or finished ids are
    /// ignored, as the spec allows.
    fn cancel(&mut self, params: Option<&RawValue>) {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Cancelled {
            request_id: RequestId,
        }
        let Some(params) = params else { return };
        let Ok(Cancelled { request_id }) = serde_json::from_str(params.get()) else { return };
        if let Some(handle) = self.running.remove(&request_id) {
            handle.abort();
        }
        self.streams.remove(&request_id);
    }
}
