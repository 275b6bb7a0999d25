//! One handshake-era session: its protocol state, its engine (started only when a handler
//! outlives its POST), and how a POST's message is taken, answered here, or routed to the
//! instance that asked.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::Instant;

use axum::response::Response;
use http::HeaderMap;
use modelcontext_types::{
    McpError, Message, Notification, Request, RequestId, Response as RpcResponse, method,
};
use tokio::sync::mpsc;

use crate::engine::outside_loop::{
    Handover, Unsettled, admit, attach, cancelled_id, poll_once, settle,
};
use crate::engine::{BoxFuture, Outcome, Peer, Reply, Stop};
use crate::server::front_end::SharedSession;
use crate::server::http::Shared;
use crate::server::http::events::{EventStore, StreamId, event_id};
use crate::server::http::peer_router::{Direction, PeerRouter, Routed, elsewhere};
use crate::server::http::respond::{accepted, rpc_answer};
use crate::server::http::session_store::{SessionChange, SessionStore, StoreError};
use crate::server::http::stream::{BodyGuard, StreamRx, json_or_sse};
use crate::server::{Extensions, PrincipalId};
use crate::transport::{CHANNEL_CAPACITY, Incoming};

use super::refusals::{router_unavailable, session_not_found, store_unavailable};
use super::routes::{Routes, STANDALONE, SessionOutbox, lock, send_placed};

pub(crate) const SESSION_HEADER: http::HeaderName = http::HeaderName::from_static("mcp-session-id");

pub(crate) struct Session {
    pub(super) id: String,
    /// Who opened the session; only they may use it (no session hijacking by id).
    pub(super) owner: Option<PrincipalId>,
    /// The session's protocol state: each POST dispatches its own request with it.
    pub(super) dispatch: SharedSession,
    /// What the session sends to the client, delivered from the sending task to the stream
    /// it belongs on; a POST's answer follows what its handler sent.
    pub(super) peer: Peer,
    /// The engine, for handlers that outlive their POST and every message of a 2024-11-05
    /// session: an idle session has none.
    pub(super) engine: Mutex<EngineSlot>,
    pub(super) routes: Arc<Mutex<Routes>>,
    pub(super) last_seen: Mutex<Instant>,
    /// Where the session is shared (`None` for a session of this instance only: no store,
    /// or a 2024-11-05 session, whose one stream cannot move).
    pub(super) records: Option<Arc<dyn SessionStore>>,
    /// Where the client's answers to another instance's requests, and its cancellations, go.
    pub(super) router: Option<Arc<dyn PeerRouter>>,
    /// When the store last heard that the session is in use.
    pub(super) touched: Mutex<Instant>,
    /// Whether what this instance holds is known to match the store: false after the store
    /// said it may have missed some changes ([`SessionEvent::Gap`]).
    pub(super) verified: AtomicBool,
    /// GET streams open on this session ([`HttpOptions::max_sse_streams_per_session`]).
    ///
    /// [`HttpOptions::max_sse_streams_per_session`]: crate::server::http::HttpOptions::max_sse_streams_per_session
    pub(super) sse_streams: Arc<AtomicUsize>,
    /// Counts the session in the open-sessions gauge while it lives (feature `otel`).
    #[cfg(feature = "otel")]
    pub(super) _gauge: SessionGauge,
}

/// A session's engine, started when it is first needed (see [`Session::hand_over`]).
pub(super) enum EngineSlot {
    Idle,
    /// Dropping `_stop` (the session ends, or is dropped) ends the loop and aborts its
    /// handlers, even while a POST still holds the session.
    Running {
        incoming: mpsc::Sender<Incoming>,
        handover: Handover,
        _stop: Stop,
    },
    /// The session ended: nothing starts again.
    Stopped,
}

/// One open session in the open-sessions gauge, until dropped with its session.
#[cfg(feature = "otel")]
pub(super) struct SessionGauge(Arc<crate::observe::otel::Instruments>);

#[cfg(feature = "otel")]
impl SessionGauge {
    pub(super) fn open(instruments: Arc<crate::observe::otel::Instruments>) -> SessionGauge {
        instruments.sessions(1);
        SessionGauge(instruments)
    }
}

#[cfg(feature = "otel")]
impl Drop for SessionGauge {
    fn drop(&mut self) {
        self.0.sessions(-1);
    }
}

/// Lets go of a session idle here. One that is shared may still be in use on other
/// instances, which read its events from the shared store: it is only stopped here (its
/// record and events expire in their stores); one that is not shared is ended.
pub(super) fn release_session(session: &Session, store: &dyn EventStore) {
    if session.records.is_some() {
        session.stop();
    } else {
        end_session(session, store);
    }
}

/// Stops a session's engine (aborting its handlers) and forgets its events.
pub(super) fn end_session(session: &Session, store: &dyn EventStore) {
    session.stop();
    let forget = store.end_session(&session.id);
    let id = session.id.clone();
    tokio::spawn(async move {
        if let Err(error) = forget.await {
            tracing::warn!(session = %id, %error, "ended session's events not forgotten");
        }
    });
}

impl Session {
    /// A session whose handlers see `extensions` (the opening request's headers and, with
    /// `auth`, its principal, which becomes the session's owner).
    pub(super) fn start(shared: &Shared, id: String, extensions: Extensions) -> Session {
        let owner = extensions.get::<PrincipalId>().cloned();
        let dispatch = shared.server.http_session(extensions, &id);
        let router = shared.sessions.router.clone();
        let routes = Routes {
            session: id.clone(),
            store: shared.options.streams.event_store.clone(),
            instance: shared.sessions.instance,
            durable: shared.options.streams.durable_events,
            unstored: shared.sessions.unstored.clone(),
            waiting: HashMap::new(),
            recent: Vec::new(),
            progress: HashMap::new(),
            standalone: None,
            next_stream: STANDALONE + 1,
            legacy: false,
            json_only: shared.options.streams.json_response,
            router: router.clone(),
        };
        let routes = Arc::new(Mutex::new(routes));
        let order = tokio::sync::Mutex::new(());
        let outbox = SessionOutbox { routes: routes.clone(), order, routed: router.is_some() };
        let peer = Peer::delivering(Arc::new(outbox));
        if let Some(router) = &router {
            // The client's answers to our requests then say which instance waits for them.
            peer.prefix_ids(format!("{}/", router.instance()));
        }
        let last_seen = Mutex::new(Instant::now());
        let sse_streams = Arc::default();
        Session {
            id,
            owner,
            dispatch,
            peer,
            engine: Mutex::new(EngineSlot::Idle),
            routes,
            last_seen,
            records: shared.sessions.records.clone(),
            router,
            touched: Mutex::new(Instant::now()),
            verified: AtomicBool::new(true),
            sse_streams,
            #[cfg(feature = "otel")]
            _gauge: SessionGauge::open(shared.server.instruments()),
        }
    }

    /// Ends the session: its engine stops and its running handlers are aborted.
    pub(super) fn stop(&self) {
        let engine = std::mem::replace(&mut *lock(&self.engine), EngineSlot::Stopped);
        if !matches!(engine, EngineSlot::Running { .. }) {
            // A running loop closes the peer as it ends; without one, nothing else would.
            self.peer.close();
        }
    }

    /// Whether the session ended (DELETE, expiry).
    pub(super) fn ended(&self) -> bool {
        matches!(*lock(&self.engine), EngineSlot::Stopped)
    }

    /// Handlers of the session still working (what the in-flight limit counts).
    pub(super) fn working(&self) -> usize {
        match &*lock(&self.engine) {
            EngineSlot::Running { handover, .. } => handover.working(),
            _ => 0,
        }
    }

    /// Gives the engine a handler that did not finish in its POST's first poll, starting the
    /// engine if it is the session's first; `false` if the session ended.
    pub(super) fn hand_over(
        &self,
        id: RequestId,
        handler: BoxFuture<Outcome>,
        stream: bool,
    ) -> bool {
        match &*self.started_engine() {
            EngineSlot::Running { handover, .. } => handover.adopt(id, handler, stream),
            _ => false,
        }
    }

    /// The engine's input, starting the engine if need be; `None` if the session ended.
    pub(super) fn engine_input(&self) -> Option<mpsc::Sender<Incoming>> {
        match &*self.started_engine() {
            EngineSlot::Running { incoming, .. } => Some(incoming.clone()),
            _ => None,
        }
    }

    /// The engine's slot, with the engine running unless the session ended.
    pub(super) fn started_engine(&self) -> MutexGuard<'_, EngineSlot> {
        let mut engine = lock(&self.engine);
        if let EngineSlot::Idle = &*engine {
            let (incoming, receiver) = mpsc::channel(CHANNEL_CAPACITY);
            let (run, stop, handover) = attach(self.peer.clone(), receiver, self.dispatch.clone());
            tokio::spawn(tracing::Instrument::in_current_span(run));
            *engine = EngineSlot::Running { incoming, handover, _stop: stop };
        }
        engine
    }

    /// Starts a 2024-11-05 HTTP+SSE session: everything it sends, responses included, goes
    /// to the returned stream. `None` when the endpoint is full or has no randomness.
    pub(crate) fn open_legacy(
        shared: &Shared,
        extensions: Extensions,
    ) -> Option<(String, StreamRx)> {
        let id = mint_id()?;
        let mut session = Session::start(shared, id.clone(), extensions);
        session.records = None;
        let session = Arc::new(session);
        let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
        {
            let mut routes = lock(&session.routes);
            routes.standalone = Some(tx);
            routes.legacy = true;
            routes.router = None;
        }
        shared.sessions.insert(session).then_some((id, rx))
    }

    /// Hands a message to the engine without waiting for an answer; `false` if the session
    /// has ended.
    pub(crate) async fn forward(&self, message: Message) -> bool {
        let Some(engine) = self.engine_input() else { return false };
        engine.send(Ok(message)).await.is_ok()
    }

    /// A notification or the client's answer to one of our requests, alone in a POST or in a
    /// batch: recorded when it changes the session, sent on to the instance it is for (an
    /// answer to another instance's request, a cancellation), and taken here (see
    /// [`Session::take`]). The POST's answer: 202 without a body, or why it was not taken.
    pub(crate) async fn take_message(&self, message: Message) -> Response {
        if is_initialized(&message) {
            if let Err(error) = self.share(SessionChange::Initialized).await {
                return store_unavailable(error);
            }
        }
        if let Some(router) = &self.router {
            if let Some(routed) = self.route_elsewhere(&**router, &message).await {
                return routed;
            }
        }
        if self.take(message).await { accepted() } else { session_not_found() }
    }

    /// Takes a message from the client in this task, as the engine would ([`engine::settle`]):
    /// a request goes to the engine, and a cancellation too, if one runs (only there can a
    /// handler still be running). `false` if the session ended.
    ///
    /// [`engine::settle`]: crate::engine::outside_loop::settle
    pub(super) async fn take(&self, message: Message) -> bool {
        if self.ended() {
            return false;
        }
        match settle(&self.peer, message, |n| self.dispatch.notification(n, &self.peer)) {
            Unsettled::Nothing => true,
            Unsettled::Request(request) => self.forward(Message::Request(request)).await,
            Unsettled::Cancelled(cancelled) => self.cancel(cancelled).await,
        }
    }

    /// Hands `notifications/cancelled` to the engine, if one runs, and ends the stream of the
    /// request it names: a cancelled request gets no answer. `false` if the session ended.
    pub(super) async fn cancel(&self, cancelled: Notification) -> bool {
        let engine = match &*lock(&self.engine) {
            EngineSlot::Running { incoming, .. } => Some(incoming.clone()),
            EngineSlot::Idle => None,
            EngineSlot::Stopped => return false,
        };
        if let Some(request) = cancelled_id(cancelled.params.as_deref()) {
            lock(&self.routes).finish(&request);
        }
        match engine {
            Some(engine) => engine.send(Ok(Message::Notification(cancelled))).await.is_ok(),
            None => true,
        }
    }

    pub(super) async fn post(&self, message: Message, headers: &HeaderMap) -> Response {
        let Message::Request(request) = message else {
            return self.take_message(message).await;
        };
        let id = request.id.clone();
        // The session's limit, applied here as the engine applies it to what it reads itself.
        if let Err(busy) = admit(&self.dispatch, &request, self.working()) {
            return rpc_answer(id, Err(busy));
        }
        let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
        // Registered first: whatever the handler sends while it runs is routed to this POST.
        let stream = lock(&self.routes).register(&request, tx, false);
        let sent_before = self.peer.sent_count();
        let mut change = self.records.as_ref().and_then(|_| change_of(&request));
        let outcome = match self.dispatch_here(request, headers, &mut change) {
            FirstPoll::Finished(outcome) => outcome,
            FirstPoll::HandedOver => return self.answer_later(rx, id, stream).await,
            FirstPoll::SessionEnded => return self.forget(&id),
        };
        if let (Some(change), Ok(_)) = (change, &outcome) {
            if let Err(error) = self.share(change).await {
                lock(&self.routes).finish(&id);
                return store_unavailable(error);
            }
        }
        if self.peer.sent_count() == sent_before {
            // Nothing went out while the handler ran: answered from this task, as JSON.
            lock(&self.routes).finish(&id);
            return rpc_answer(id, outcome);
        }
        // The answer must follow what was sent, on the same path.
        let response = RpcResponse { id: Some(id.clone()), result: outcome };
        if self.peer.send(Message::Response(response)).await.is_err() {
            return self.forget(&id);
        }
        self.answer_later(rx, id, stream).await
    }

    /// One request of a JSON-RPC batch: its response, never a stream (what its handler sends
    /// first goes to the GET stream).
    pub(crate) async fn answer_in_batch(
        &self,
        request: Request,
        headers: &HeaderMap,
    ) -> RpcResponse {
        let id = request.id.clone();
        if let Err(busy) = admit(&self.dispatch, &request, self.working()) {
            return RpcResponse::error(Some(id), busy);
        }
        let (tx, mut rx) = mpsc::channel(CHANNEL_CAPACITY);
        lock(&self.routes).register(&request, tx, true);
        let mut change = self.records.as_ref().and_then(|_| change_of(&request));
        let outcome = match self.dispatch_here(request, headers, &mut change) {
            FirstPoll::Finished(outcome) => outcome,
            FirstPoll::HandedOver => loop {
                match rx.recv().await.map(|delivery| delivery.message) {
                    Some(Message::Response(response)) => return response,
                    Some(_) => continue,
                    None => break Err(McpError::internal("The request ended without an answer")),
                }
            },
            FirstPoll::SessionEnded => Err(McpError::invalid_request("Session not found")),
        };
        let outcome = match (change, outcome) {
            (Some(change), Ok(result)) => match self.share(change).await {
                Ok(()) => Ok(result),
                Err(error) => Err(McpError::internal(format!("{error}; try again later"))),
            },
            (_, outcome) => outcome,
        };
        lock(&self.routes).finish(&id);
        RpcResponse { id: Some(id), result: outcome }
    }

    /// Sends the client's answer to a request another instance made to that instance, and
    /// tells every other instance of a cancellation (the handler may run on any of them; the
    /// engine here gets it too). `Some` with the POST's answer when the message is handled.
    pub(super) async fn route_elsewhere(
        &self,
        router: &dyn PeerRouter,
        message: &Message,
    ) -> Option<Response> {
        let owner = elsewhere(message, router.instance());
        if owner.is_none() && !is_cancelled(message) {
            return None;
        }
        let routed = Routed::new(&self.id, message.encode());
        let Some(owner) = owner else {
            if let Err(error) = router.broadcast(routed).await {
                tracing::warn!(%error, "a cancellation not told to the other instances");
            }
            return None;
        };
        Some(match router.forward(owner, routed).await {
            Ok(()) => accepted(),
            Err(error) => router_unavailable(error),
        })
    }

    /// A message another instance routed here. From the client, only an answer to one of our
    /// requests or a cancellation is taken here (see [`Session::take`]). From the session on another instance,
    /// for the GET stream this one holds, it goes there (stored, and sent if the stream is
    /// still connected here), never on to another instance.
    pub(super) async fn take_routed(&self, routed: Routed) {
        let Ok(message) = Message::decode_str(&routed.message) else {
            tracing::warn!(session = %self.id, "an unreadable routed message");
            return;
        };
        match routed.direction {
            Direction::ToClient => {
                send_placed(&self.routes, message, Routes::place_standalone).await
            }
            Direction::ToServer => {
                if matches!(message, Message::Response(_)) || is_cancelled(&message) {
                    self.take(message).await;
                }
            }
            // Unsettled by the task relay before a session is looked for.
            Direction::TaskUpdate | Direction::TaskUpdated => {}
        }
    }

    /// Records `change` in the session store, if the session is shared, before the request
    /// that made it is answered: the next request may reach another instance.
    pub(super) async fn share(&self, change: SessionChange) -> Result<(), StoreError> {
        let Some(records) = &self.records else { return Ok(()) };
        // `false`: the record is gone (deleted or expired elsewhere); the next request finds out.
        records.update(&self.id, change).await.map(|_| ())
    }

    /// The protocol revision the session negotiated.
    pub(crate) fn protocol_version(&self) -> Option<&'static str> {
        self.dispatch.handshake_version()
    }

    /// Dispatches `request`, which came in a POST with `headers`, on the session and polls its
    /// handler once in this task.
    ///
    /// `change` is what the request changes in the session's record if it succeeds. An answer
    /// that is a future (a middleware may await before a `logging/setLevel` is answered) takes
    /// it and records it before answering, wherever that future ends (here or, handed over,
    /// in the engine); an answer given at once leaves it to the caller.
    pub(super) fn dispatch_here(
        &self,
        request: Request,
        headers: &HeaderMap,
        change: &mut Option<SessionChange>,
    ) -> FirstPoll {
        let id = request.id.clone();
        match self.dispatch.request_over_http(request, &self.peer, headers) {
            Reply::Now(outcome) => FirstPoll::Finished(outcome),
            Reply::Later(handler) => self.run_here(id, self.sharing(handler, change.take()), false),
            Reply::Stream(handler) => self.run_here(id, self.sharing(handler, change.take()), true),
        }
    }

    /// `handler`, then `change` recorded in the store if the handler succeeded; a store that
    /// cannot answer makes the answer an error to retry, as in a batch.
    fn sharing(
        &self,
        handler: BoxFuture<Outcome>,
        change: Option<SessionChange>,
    ) -> BoxFuture<Outcome> {
        let (Some(change), Some(records)) = (change, self.records.clone()) else {
            return handler;
        };
        let id = self.id.clone();
        Box::pin(async move {
            let result = handler.await?;
            match records.update(&id, change).await {
                Ok(_) => Ok(result),
                Err(error) => Err(McpError::internal(format!("{error}; try again later"))),
            }
        })
    }

    /// Runs a handler's first poll in this task: most finish there. One that does not goes to
    /// the engine, which tracks it for `notifications/cancelled` and sends its answer.
    pub(super) fn run_here(
        &self,
        id: RequestId,
        mut handler: BoxFuture<Outcome>,
        stream: bool,
    ) -> FirstPoll {
        if !stream {
            if let Poll::Ready(outcome) = poll_once(&mut handler) {
                return FirstPoll::Finished(outcome);
            }
        }
        if self.hand_over(id, handler, stream) {
            FirstPoll::HandedOver
        } else {
            FirstPoll::SessionEnded
        }
    }

    /// The answer of a request whose handler the engine finishes: JSON if the response comes
    /// first, else a resumable SSE stream.
    pub(super) async fn answer_later(&self, rx: StreamRx, id: RequestId, stream: u64) -> Response {
        // Spec 2025-11-25: a dropped connection is not a cancellation, so nothing to guard.
        let stream = StreamId { instance: lock(&self.routes).instance, number: stream };
        json_or_sse(rx, id, Some(event_id(stream, 0)), BodyGuard(None::<()>)).await
    }

    /// A POST whose session ended under it.
    pub(super) fn forget(&self, id: &RequestId) -> Response {
        lock(&self.routes).finish(id);
        session_not_found()
    }
}

/// Whether `message` is `notifications/cancelled`.
pub(super) fn is_cancelled(message: &Message) -> bool {
    matches!(message, Message::Notification(n) if n.method == method::CANCELLED)
}

/// Whether `message` is `notifications/initialized`.
pub(super) fn is_initialized(message: &Message) -> bool {
    matches!(message, Message::Notification(n) if n.method == method::INITIALIZED)
}

/// The change to the session's record that `request` makes if it succeeds, if any. The
/// method is checked first: only these three requests have their params read here.
pub(super) fn change_of(request: &Request) -> Option<SessionChange> {
    #[derive(serde::Deserialize)]
    struct Params {
        level: Option<String>,
        uri: Option<String>,
    }
    let read = || serde_json::from_str::<Params>(request.params.as_ref()?.get()).ok();
    match request.method.as_str() {
        method::LOGGING_SET_LEVEL => Some(SessionChange::LogLevel(read()?.level?)),
        method::RESOURCES_SUBSCRIBE => Some(SessionChange::Subscribe(read()?.uri?)),
        method::RESOURCES_UNSUBSCRIBE => Some(SessionChange::Unsubscribe(read()?.uri?)),
        _ => None,
    }
}

/// How a POST's first poll of its handler went.
pub(super) enum FirstPoll {
    Finished(Outcome),
    HandedOver,
    SessionEnded,
}

/// A session id: 32 random bytes as hex, visible ASCII as the spec requires.
pub(super) fn mint_id() -> Option<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
