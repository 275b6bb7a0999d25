//! The loop: the peer's messages in arrival order, its requests' handlers (polled once
//! inline, the rest spawned), admission to the in-flight limit ([`admit`], which the HTTP
//! server's sessions ask too), `notifications/cancelled`, and the handlers those sessions
//! started and hand over ([`Started`]).

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;

use futures_util::FutureExt;
use modelcontext_types::{
    DecodeError, McpError, Message, Notification, RawValue, Request, RequestId, Response, method,
};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use tracing::Instrument;

use super::{BoxFuture, Dispatch, Outcome, Peer, Reply, Stop};
use crate::transport::Incoming;

mod batch;

use batch::BatchSlot;

/// The loop's own state: requests from the peer that are still running.
struct Engine<D> {
    dispatch: D,
    peer: Peer,
    running: HashMap<RequestId, AbortHandle>,
    /// The running requests that are streams, stopped rather than awaited at end of input.
    streams: std::collections::HashSet<RequestId>,
    /// Whether end of input means the peer is gone, so streams stop (see [`start`](super::start)).
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

/// Admission to the in-flight limit, for every path that starts a connection's handlers (the
/// loop, and an HTTP session's POSTs): refuses `request` when it would start work while
/// `working` handlers already do. Asked before the dispatch sees the request, so a refused
/// one costs no lookup, no argument parsing and no context.
pub(crate) fn admit(
    dispatch: &impl Dispatch,
    request: &Request,
    working: usize,
) -> Result<(), McpError> {
    if !dispatch.starts_work(request) {
        return Ok(());
    }
    let limit = dispatch.max_in_flight();
    if working < limit {
        return Ok(());
    }
    let error = busy(limit);
    dispatch.refused(request, &error);
    Err(error)
}

/// The answer to a request refused because `limit` handlers are already working.
fn busy(limit: usize) -> McpError {
    McpError::internal(format!("Server busy: {limit} requests already in flight; retry later"))
}

/// A request's handler to run as a task of the loop: tracked for cancellation, counted
/// against the in-flight limit (unless a stream), answered on the connection. The loop makes
/// them of its own requests' handlers; an HTTP session's POSTs hand over those they started
/// (see [`Handover`](super::outside_loop::Handover)).
pub(crate) struct Started {
    pub(crate) id: RequestId,
    pub(crate) future: BoxFuture<Outcome>,
    /// A stream (`subscriptions/listen`): stopped rather than awaited at end of input.
    pub(crate) stream: bool,
}

/// What a message from the peer still needs once [`settle`] settled what it could.
pub(crate) enum Unsettled {
    /// Nothing more.
    Nothing,
    /// A request, for whoever dispatches them.
    Request(Request),
    /// A `notifications/cancelled`, for whoever knows the running handlers.
    Cancelled(Notification),
}

/// Settles what needs no loop of a message from the peer: an answer completes our request,
/// progress reaches whoever waits for it, and any other notification but a cancellation goes
/// to `notify`. The loop settles messages this way, and so does an HTTP session's POST.
pub(crate) fn settle(
    peer: &Peer,
    message: Message,
    notify: impl FnOnce(Notification),
) -> Unsettled {
    match message {
        Message::Request(request) => return Unsettled::Request(request),
        Message::Response(response) => peer.complete(response),
        Message::BatchResponse(responses) => responses.into_iter().for_each(|r| peer.complete(r)),
        Message::Notification(n) => match n.method.as_str() {
            method::CANCELLED => return Unsettled::Cancelled(n),
            method::PROGRESS => peer.route_progress(n.params.as_deref()),
            _ => notify(n),
        },
    }
    Unsettled::Nothing
}

/// The request a `notifications/cancelled` names, from its params.
pub(crate) fn cancelled_id(params: Option<&RawValue>) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cancelled {
        request_id: RequestId,
    }
    let Cancelled { request_id } = serde_json::from_str(params?.get()).ok()?;
    Some(request_id)
}

/// Sends `response` to the peer, or gives it to the batch its request came in. (A function
/// of the peer, not of the engine: the loop's future is `Send` without the dispatch `Sync`.)
async fn send_answer(peer: &Peer, response: Response, slot: Option<BatchSlot>) {
    match slot {
        None => {
            let _ = peer.send(response.into()).await;
        }
        Some(slot) => slot.fill(response),
    }
}

/// Holds one place in [`Engine::working`] until dropped.
struct Working(Arc<AtomicUsize>);

impl Drop for Working {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The loop for `peer`, which exists already, reading `incoming`, and taking over the
/// handlers that arrive on `handed_over` (see [`Started`]); `working` counts the handlers
/// still working.
pub(super) fn run_for<D: Dispatch>(
    peer: Peer,
    incoming: mpsc::Receiver<Incoming>,
    dispatch: D,
    input_end_is_peer_gone: bool,
    (handed_over, working): (mpsc::UnboundedReceiver<Started>, Arc<AtomicUsize>),
) -> (impl Future<Output = ()> + Send + 'static, Stop) {
    let (finished_tx, finished_rx) = mpsc::unbounded_channel();
    let (stop_tx, stop_rx) = oneshot::channel();
    let engine = Engine {
        dispatch,
        peer,
        running: HashMap::new(),
        streams: Default::default(),
        input_end_is_peer_gone,
        finished_tx,
        working,
    };
    let run = engine.serve(incoming, handed_over, finished_rx, stop_rx);
    (run, Stop(stop_tx))
}

impl<D: Dispatch> Engine<D> {
    async fn serve(
        mut self,
        mut incoming: mpsc::Receiver<Incoming>,
        mut handed_over: mpsc::UnboundedReceiver<Started>,
        mut finished: mpsc::UnboundedReceiver<RequestId>,
        mut stop: oneshot::Receiver<()>,
    ) {
        let peer_gone = loop {
            // Handovers before input: a handler is handed over before its POST's stream shows
            // the client anything, so a cancellation the client sends after seeing it must
            // find the handler already adopted. Finished handlers before input too, so that a
            // busy peer never keeps their entries (and their ids) from being let go.
            tokio::select! {
                biased;
                _ = &mut stop => break false,
                Some(handler) = handed_over.recv() => self.adopt(handler).await,
                Some(id) = finished.recv() => {
                    self.running.remove(&id);
                    self.streams.remove(&id);
                }
                message = incoming.recv() => match message {
                    Some(message) => self.handle(message).await,
                    None => break true,
                },
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
            Ok(message) => {
                match settle(&self.peer, message, |n| self.dispatch.notification(n, &self.peer)) {
                    Unsettled::Nothing => {}
                    Unsettled::Request(request) => self.handle_request(request, None).await,
                    Unsettled::Cancelled(cancelled) => self.cancel(cancelled.params.as_deref()),
                }
            }
            Err(DecodeError::Batch(items)) if self.dispatch.accepts_batches() => {
                self.handle_batch(items).await
            }
            Err(err) => {
                tracing::debug!(%err, "undecodable message");
                let _ = self.peer.send(err.to_response().into()).await;
            }
        }
    }

    /// Answers `request` on the wire, or into its batch's `slot` when it came in one.
    async fn handle_request(&mut self, request: Request, slot: Option<BatchSlot>) {
        let id = request.id.clone();
        if self.running.contains_key(&id) {
            let error = McpError::invalid_request(format!("Request id {id} is already in use"));
            return send_answer(&self.peer, Response::error(Some(id), error), slot).await;
        }
        // Only requests that start work are limited, and refused before anything is built.
        if let Err(busy) = admit(&self.dispatch, &request, self.working.load(Ordering::Relaxed)) {
            return send_answer(&self.peer, Response::error(Some(id), busy), slot).await;
        }
        match self.dispatch.request(request, &self.peer) {
            Reply::Now(outcome) => {
                send_answer(&self.peer, Response { id: Some(id), result: outcome }, slot).await
            }
            Reply::Later(mut future) => {
                // Most handlers (a synchronous tool, a list) finish in their first poll: answer
                // those here, without a task and its wake-ups. The others run on as a task.
                if let Poll::Ready(outcome) = poll_once(&mut future) {
                    return send_answer(
                        &self.peer,
                        Response { id: Some(id), result: outcome },
                        slot,
                    )
                    .await;
                }
                self.run_started(Started { id, future, stream: false }, slot);
            }
            Reply::Stream(future) => self.run_started(Started { id, future, stream: true }, slot),
        }
    }

    /// Takes over a handler a transport started (see [`Started`]).
    async fn adopt(&mut self, started: Started) {
        if self.running.contains_key(&started.id) {
            let id = started.id;
            let error = McpError::invalid_request(format!("Request id {id} is already in use"));
            let _ = self.peer.send(Response::error(Some(id), error).into()).await;
        } else {
            self.run_started(started, None);
        }
    }

    /// Runs a started handler as a task: a stream as one, any other counted as working.
    fn run_started(&mut self, Started { id, future, stream }: Started, slot: Option<BatchSlot>) {
        if stream {
            self.streams.insert(id.clone());
            self.spawn(id, future, None, slot);
        } else {
            self.working.fetch_add(1, Ordering::Relaxed);
            let working = Working(Arc::clone(&self.working));
            self.spawn(id, future, Some(working), slot);
        }
    }

    fn spawn(
        &mut self,
        id: RequestId,
        future: BoxFuture<Outcome>,
        working: Option<Working>,
        slot: Option<BatchSlot>,
    ) {
        let outgoing = self.peer.outgoing();
        let finished = self.finished_tx.clone();
        let task_id = id.clone();
        // The task runs in the loop's span (one the application opened around `serve`); a
        // handler whose request has a span of its own carries it inside `future`.
        let task = async move {
            let outcome = catching_panics(future).await;
            // The handler is done: it no longer counts toward the limit, even while its
            // answer waits for room on the wire (or when the task is aborted, via drop).
            drop(working);
            let response = Response { id: Some(task_id.clone()), result: outcome };
            match slot {
                None => {
                    let _ = outgoing.send(response.into()).await;
                }
                Some(slot) => slot.fill(response),
            }
            let _ = finished.send(task_id);
        };
        let handle = tokio::spawn(task.in_current_span());
        self.running.insert(id, handle.abort_handle());
    }

    /// Aborts the handler named by `notifications/cancelled`. Unknown or finished ids are
    /// ignored, as the spec allows.
    fn cancel(&mut self, params: Option<&RawValue>) {
        let Some(request_id) = cancelled_id(params) else { return };
        if let Some(handle) = self.running.remove(&request_id) {
            handle.abort();
        }
        self.streams.remove(&request_id);
    }
}
