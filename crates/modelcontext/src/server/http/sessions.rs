//! Handshake-era (2025-11-25 and older) sessions over Streamable HTTP.
//!
//! `initialize` without a session starts one: its [`ServerSession`] state, its `Peer`, and an
//! id minted from the OS CSPRNG, returned in `Mcp-Session-Id`. Each later POST dispatches its
//! own request on the session's state and runs the handler's first poll in its own task: an
//! answer ready then goes back as JSON from there. Notifications and the client's answers to
//! our requests are taken there too. Only a handler that is not done needs the session's
//! engine, started then (an idle session has no task of its own). What the session sends is
//! delivered by the task that sends it, to an HTTP stream:
//! - a response goes to the POST that carried its request;
//! - a progress notification goes to the POST whose request carried its token;
//! - anything else the server initiates (log messages, requests to the client) goes to the
//!   most recent POST still waiting, else to the standalone GET stream.
//!
//! Each POST's SSE stream and the GET stream are resumable: every event is stored in the
//! endpoint's [`EventStore`](super::EventStore) before it goes out, with the id the store
//! gave it; a `GET` with `Last-Event-ID` follows that stream in the store (its missed events,
//! then the rest as they are stored, whichever instance stores them).
//! A client that disconnects does not cancel anything (spec 2025-11-25).
//!
//! A session has one standalone GET stream at a time: a second GET is 409 Conflict. With a
//! [`PeerRouter`] that holds across the deployment: the instance that opens the stream claims
//! it ([`PeerRouter::claim_standalone`]) while it is open, a GET on another instance meanwhile
//! is 409, and what the session sends outside a request on an instance that does not hold the
//! stream is forwarded to the holder ([`Routed::to_client`]), which sends it there. Change
//! notifications (`*/list_changed`, `resources/updated`) are not forwarded: every instance
//! hears them from the [`SubscriptionBus`](crate::SubscriptionBus), the holder included.
//!
//! With a [`SessionStore`] ([`HttpOptions::session_store`](super::HttpOptions)), sessions are
//! shared by the instances of a deployment. `initialize` stores the session's record; a
//! request for a session this instance does not hold loads the record and rebuilds the
//! session from it (no `initialize` replayed into user code); `logging/setLevel`,
//! `resources/(un)subscribe` and `notifications/initialized` update it before they are
//! answered; DELETE deletes it. What other instances change arrives through
//! [`SessionStore::events`] and is applied to the sessions held here, so a request on a
//! session held here costs no store call (the idle time is pushed to the store at most once
//! per sweep period, in the background). After a [`SessionEvent::Gap`] each held session is
//! checked against the store on its next request. A store that cannot answer makes a request
//! whose session it had to load a 503 with `Retry-After`, never a 404.
//!
//! [`ServerSession`]: crate::server

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderMap, HeaderValue, StatusCode};
use modelcontext_types::{
    HANDSHAKE_VERSIONS, McpError, Message, Notification, Request, RequestId,
    Response as RpcResponse, method,
};
use serde_json::Value;
use tokio::sync::mpsc;

use super::events::{Appended, EventFeed, EventStore, StreamId, event_id, parse_event_id};
use super::exchange::{
    Delivery, Guard, StreamRx, StreamTx, accepted, answer, error_response, header_str, rpc_answer,
    sse_response, sse_stream,
};
use super::peer_router::{Direction, PeerRouter, Routed, elsewhere, ticket_instance};
use super::session_store::{SessionChange, SessionEvent, SessionRecord, SessionStore, StoreError};
use super::{Shared, caller};
use crate::engine::{
    BoxFuture, Deliver, Delivering, Handover, Outcome, Peer, Reply, Stop, Taken, admit,
    cancelled_id, poll_once, take,
};
use crate::server::{Extensions, PrincipalId, SharedSession};
use crate::transport::{CHANNEL_CAPACITY, Incoming};

pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// The shortest claim on a GET stream (renewed every 10 ms then): a renewal period of zero
/// would be no period at all.
const MIN_CLAIM_TTL: Duration = Duration::from_millis(30);

/// Every live session of one endpoint.
pub(crate) struct Sessions {
    map: Arc<Mutex<HashMap<String, Arc<Session>>>>,
    max: usize,
    idle: Duration,
    /// Where the sessions' events are kept: an ended session's are forgotten.
    store: Arc<dyn EventStore>,
    /// Where the sessions are shared with the other instances, if they are.
    records: Option<Arc<dyn SessionStore>>,
    /// This endpoint's part of its POST streams' ids (random, never 0), so streams opened by
    /// two instances serving one session are never named alike.
    instance: u64,
    /// Events the store failed to keep (sent without an id, or ending their stream).
    unstored: Arc<AtomicU64>,
    /// Where messages for sessions run elsewhere go, and come from, if anywhere.
    router: Option<Arc<dyn PeerRouter>>,
    /// Whether the task that ends idle sessions runs (started with the first session).
    sweeping: AtomicBool,
    /// Whether the task that applies the store's events runs (started with the endpoint
    /// when it is made inside a runtime, else with the first session).
    watching: AtomicBool,
    /// Whether the task that takes what other instances route here runs (started like
    /// `watching`).
    routing: AtomicBool,
    /// The number of the next claim on a GET stream (its ticket is `{instance}/{n}`).
    tickets: AtomicU64,
    /// How long a claim on a GET stream lives unrenewed (renewed every third of it).
    claim_ttl: Duration,
    /// Where routed `tasks/update` messages go (with a router).
    relay: Option<Arc<super::task_relay::RouterRelay>>,
}

pub(crate) struct Session {
    id: String,
    /// Who opened the session; only they may use it (no session hijacking by id).
    owner: Option<PrincipalId>,
    /// The session's protocol state: each POST dispatches its own request with it.
    dispatch: SharedSession,
    /// What the session sends to the client, delivered from the sending task to the stream
    /// it belongs on; a POST's answer follows what its handler sent.
    peer: Peer,
    /// The engine, for handlers that outlive their POST and every message of a 2024-11-05
    /// session: an idle session has none.
    engine: Mutex<EngineSlot>,
    routes: Arc<Mutex<Routes>>,
    last_seen: Mutex<Instant>,
    /// Where the session is shared (`None` for a session of this instance only: no store,
    /// or a 2024-11-05 session, whose one stream cannot move).
    records: Option<Arc<dyn SessionStore>>,
    /// Where the client's answers to another instance's requests, and its cancellations, go.
    router: Option<Arc<dyn PeerRouter>>,
    /// When the store last heard that the session is in use.
    touched: Mutex<Instant>,
    /// Whether what this instance holds is known to match the store: false after the store
    /// said it may have missed some changes ([`SessionEvent::Gap`]).
    verified: AtomicBool,
    /// GET streams open on this session ([`HttpOptions::max_sse_streams_per_session`]).
    ///
    /// [`HttpOptions::max_sse_streams_per_session`]: super::HttpOptions::max_sse_streams_per_session
    sse_streams: Arc<AtomicUsize>,
    /// Counts the session in the open-sessions gauge while it lives (feature `otel`).
    #[cfg(feature = "otel")]
    _gauge: SessionGauge,
}

/// A session's engine, started when it is first needed (see [`Session::hand_over`]).
enum EngineSlot {
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

/// What a session sends, delivered by the task that sends it: placed on its stream, stored,
/// and handed to the stream's body (or to the instance holding the GET stream).
struct SessionOutbox {
    routes: Arc<Mutex<Routes>>,
    /// One message at a time, from placing to delivery: a stream's events reach it in the
    /// order the store numbered them.
    order: tokio::sync::Mutex<()>,
    /// Whether the deployment has a peer router (only then is a GET stream's holder looked
    /// for: without one, a message costs one lock).
    routed: bool,
}

impl Deliver for SessionOutbox {
    fn deliver(&self, message: Message) -> Delivering<'_> {
        Box::pin(self.route(message))
    }
}

impl SessionOutbox {
    async fn route(&self, message: Message) {
        let _order = self.order.lock().await;
        let routes = &self.routes;
        let for_holder = if self.routed { lock(routes).for_holder(&message) } else { None };
        if let Some((router, session)) = for_holder {
            if hand_to_holder(&*router, &session, &message).await {
                return;
            }
        }
        send_placed(routes, message, Routes::place).await;
    }
}

/// One open session in the open-sessions gauge, until dropped with its session.
#[cfg(feature = "otel")]
struct SessionGauge(Arc<crate::observe::otel::Instruments>);

#[cfg(feature = "otel")]
impl SessionGauge {
    fn open(instruments: Arc<crate::observe::otel::Instruments>) -> SessionGauge {
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

/// Where what the session sends goes, and the state resumption needs.
struct Routes {
    session: String,
    store: Arc<dyn EventStore>,
    instance: u64,
    /// An event that cannot be stored ends its stream rather than going out without an id
    /// ([`HttpOptions::durable_events`](super::HttpOptions::durable_events)).
    durable: bool,
    unstored: Arc<AtomicU64>,
    waiting: HashMap<RequestId, Waiter>,
    /// Request ids in arrival order, to find the most recent one still waiting.
    recent: Vec<RequestId>,
    progress: HashMap<String, RequestId>,
    standalone: Option<StreamTx>,
    next_stream: u64,
    /// A 2024-11-05 HTTP+SSE session: its one stream cannot be resumed, so it is never cut.
    legacy: bool,
    /// JSON response mode: every POST is a JSON waiter.
    json_only: bool,
    /// Where what the session sends outside a request goes when another instance holds its
    /// GET stream (`None` without a router, and for a 2024-11-05 session).
    router: Option<Arc<dyn PeerRouter>>,
}

/// A POST waiting for its answer.
struct Waiter {
    tx: StreamTx,
    stream: u64,
    /// Answered as one JSON body (JSON response mode, a batch): only its response goes to
    /// it; what its handler sends first goes to the GET stream.
    json: bool,
    /// Messages routed to it so far: the first one decides JSON or SSE.
    sent: u32,
}

/// The GET stream's number; POST streams count from 1.
const STANDALONE: u64 = StreamId::STANDALONE.number;

/// Where a message goes, decided before it is stored and looked up again once it is (a
/// resumption may have come in between).
enum Target {
    Standalone,
    Request { id: RequestId, answer: bool },
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Poisoning only means a panic elsewhere mid-update; the maps stay usable.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Sessions {
    pub(crate) fn new(
        options: &super::HttpOptions,
        relay: Option<Arc<super::task_relay::RouterRelay>>,
    ) -> Sessions {
        let sessions = Sessions {
            map: Arc::default(),
            max: options.max_sessions,
            idle: options.session_idle_timeout,
            store: options.event_store.clone(),
            records: options.session_store.clone(),
            instance: random_instance(),
            unstored: Arc::default(),
            router: options.peer_router.clone(),
            sweeping: AtomicBool::new(false),
            watching: AtomicBool::new(false),
            routing: AtomicBool::new(false),
            tickets: AtomicU64::new(1),
            claim_ttl: options.standalone_claim_ttl.max(MIN_CLAIM_TTL),
            relay,
        };
        // Following the store from the start, before any session is held here, means no
        // change to a session this instance will hold is published before it listens.
        if tokio::runtime::Handle::try_current().is_ok() {
            sessions.start_watching();
            sessions.start_routing();
        }
        sessions
    }

    /// The session `id` for this caller, held here or rebuilt from the store: 404 when there
    /// is none (or it is another principal's), 503 when the store cannot say.
    #[allow(clippy::result_large_err)] // the refusal is the HTTP answer itself
    pub(crate) async fn resolve(
        &self,
        shared: &Shared,
        id: &str,
        caller: &Extensions,
    ) -> Result<Arc<Session>, Response> {
        match self.find(id, caller) {
            Some(session) => match session.records.clone() {
                None => Ok(session),
                Some(_) if session.verified.load(Ordering::Acquire) => {
                    self.touch_if_due(&session);
                    Ok(session)
                }
                Some(records) => self.reverify(session, &*records).await,
            },
            None => match &self.records {
                None => Err(session_not_found()),
                Some(records) => self.rebuild(shared, id, caller, &**records).await,
            },
        }
    }

    /// A session held here that may have missed changes: brought up to date from its
    /// record, or ended if the record is gone.
    #[allow(clippy::result_large_err)]
    async fn reverify(
        &self,
        session: Arc<Session>,
        records: &dyn SessionStore,
    ) -> Result<Arc<Session>, Response> {
        let Some(record) = records.load(&session.id).await.map_err(store_unavailable)? else {
            self.remove_this(&session);
            return Err(session_not_found());
        };
        if let Err(reason) = session.dispatch.restore(&record, &session.peer) {
            tracing::warn!(session = %session.id, %reason, "an unreadable session record");
        }
        session.verified.store(true, Ordering::Release);
        Ok(session)
    }

    /// A session another instance made, rebuilt here from its record.
    #[allow(clippy::result_large_err)]
    async fn rebuild(
        &self,
        shared: &Shared,
        id: &str,
        caller: &Extensions,
        records: &dyn SessionStore,
    ) -> Result<Arc<Session>, Response> {
        let record = records.load(id).await.map_err(store_unavailable)?;
        let Some(record) = record else { return Err(session_not_found()) };
        let owner = record.principal.clone().map(PrincipalId);
        if !caller::owns(caller, owner.as_ref()) {
            return Err(session_not_found());
        }
        let session = Arc::new(Session::start(shared, id.to_owned(), caller.clone()));
        if let Err(reason) = session.dispatch.restore(&record, &session.peer) {
            tracing::warn!(session = %id, %reason, "an unreadable session record");
            session.stop();
            return Err(session_not_found());
        }
        tracing::debug!(session = %id, "session rebuilt from its record");
        self.adopt(session).ok_or_else(too_many_sessions)
    }

    /// Registers a rebuilt session, unless a concurrent request rebuilt it first (then that
    /// one is used); `None` when full.
    fn adopt(&self, session: Arc<Session>) -> Option<Arc<Session>> {
        let existing = lock(&self.map).get(&session.id).cloned();
        if let Some(existing) = existing {
            session.stop();
            return Some(existing);
        }
        let id = session.id.clone();
        if self.insert(session) { lock(&self.map).get(&id).cloned() } else { None }
    }

    /// Tells the store the session is in use, at most once per sweep period and in the
    /// background: the request does not wait for it. A record that is gone (deleted or
    /// expired elsewhere) ends the session here.
    fn touch_if_due(&self, session: &Arc<Session>) {
        let Some(records) = session.records.clone() else { return };
        {
            let mut touched = lock(&session.touched);
            if touched.elapsed() < sweep_period(self.idle) {
                return;
            }
            *touched = Instant::now();
        }
        let (map, store, session) =
            (Arc::downgrade(&self.map), self.store.clone(), session.clone());
        let ttl = record_ttl(self.idle);
        tokio::spawn(async move {
            match records.touch(&session.id, ttl).await {
                Ok(true) => {}
                Ok(false) => {
                    let Some(map) = map.upgrade() else { return };
                    if remove_same(&map, &session) {
                        end_session(&session, &*store);
                    }
                }
                Err(error) => tracing::debug!(%error, "the session's idle time was not pushed"),
            }
        });
    }

    /// Forgets `session` and ends it, if it is still the one registered under its id.
    fn remove_this(&self, session: &Arc<Session>) {
        if remove_same(&self.map, session) {
            self.end(session);
        }
    }

    /// Applies what the store says happened elsewhere to the sessions held here, until the
    /// endpoint is gone.
    fn start_watching(&self) {
        let Some(records) = &self.records else { return };
        if self.watching.swap(true, Ordering::Relaxed) {
            return;
        }
        let mut events = records.events();
        let (map, store) = (Arc::downgrade(&self.map), self.store.clone());
        tokio::spawn(async move {
            while let Some(event) = events.next().await {
                let Some(map) = map.upgrade() else { return };
                apply_event(&map, &*store, event);
            }
        });
    }

    /// Events the store failed to keep since the endpoint started.
    pub(crate) fn unstored_events(&self) -> u64 {
        self.unstored.load(Ordering::Relaxed)
    }

    /// Hands what other instances route here to the sessions it is for, until the endpoint
    /// is gone.
    pub(crate) fn start_routing(&self) {
        let Some(router) = &self.router else { return };
        if self.routing.swap(true, Ordering::Relaxed) {
            return;
        }
        let mut incoming = router.incoming();
        let map = Arc::downgrade(&self.map);
        let relay = self.relay.clone();
        tokio::spawn(async move {
            while let Some(routed) = incoming.next().await {
                if matches!(routed.direction, Direction::TaskUpdate | Direction::TaskUpdated) {
                    if let Some(relay) = &relay {
                        // Its own task: a store write may take a while, the next message not.
                        let relay = Arc::clone(relay);
                        tokio::spawn(async move { relay.take(routed).await });
                    }
                    continue;
                }
                let Some(map) = map.upgrade() else { return };
                let held = lock(&map).get(&routed.session).cloned();
                drop(map);
                match held {
                    Some(session) => session.take_routed(routed).await,
                    None => {
                        tracing::debug!(session = %routed.session, "routed to a session not held here")
                    }
                }
            }
        });
    }

    /// The live session `id` if the caller owns it; another principal's session looks just
    /// like an unknown one.
    pub(crate) fn find(&self, id: &str, caller: &Extensions) -> Option<Arc<Session>> {
        self.get(id).filter(|session| caller::owns(caller, session.owner.as_ref()))
    }

    /// The live session `id`; an expired one is forgotten here.
    fn get(&self, id: &str) -> Option<Arc<Session>> {
        let mut map = lock(&self.map);
        let session = map.get(id)?.clone();
        let mut last_seen = lock(&session.last_seen);
        if last_seen.elapsed() > self.idle {
            drop(last_seen);
            map.remove(id);
            drop(map);
            self.release(&session);
            return None;
        }
        *last_seen = Instant::now();
        drop(last_seen);
        Some(session)
    }

    /// Registers a new session, after ending expired ones; `false` when full.
    fn insert(&self, session: Arc<Session>) -> bool {
        self.start_sweeping();
        for expired in expired(&self.map, self.idle) {
            self.release(&expired);
        }
        let mut map = lock(&self.map);
        if map.len() >= self.max {
            return false;
        }
        map.insert(session.id.clone(), session);
        true
    }

    /// Forgets session `id` and ends it; `false` if there was none.
    fn remove(&self, id: &str) -> bool {
        let removed = lock(&self.map).remove(id);
        removed.inspect(|session| self.end(session)).is_some()
    }

    fn end(&self, session: &Session) {
        end_session(session, &*self.store);
    }

    /// Lets go of a session that has been idle here.
    fn release(&self, session: &Session) {
        release_session(session, &*self.store);
    }

    /// Ends idle sessions on a timer, so a client that vanished without DELETE does not keep
    /// its handlers running (and its session held) until somebody looks the session up. The
    /// task holds the table weakly: it stops with the endpoint.
    fn start_sweeping(&self) {
        if self.sweeping.swap(true, Ordering::Relaxed) {
            return;
        }
        self.start_watching();
        self.start_routing();
        let (map, idle, store) = (Arc::downgrade(&self.map), self.idle, self.store.clone());
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(sweep_period(idle));
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(map) = map.upgrade() else { return };
                for session in expired(&map, idle) {
                    release_session(&session, &*store);
                }
            }
        });
    }
}

/// One event of the store's feed, applied to the sessions held here.
fn apply_event(
    map: &Mutex<HashMap<String, Arc<Session>>>,
    store: &dyn EventStore,
    event: SessionEvent,
) {
    match event {
        SessionEvent::Changed { id, change } => {
            let held = lock(map).get(&id).cloned();
            if let Some(session) = held.filter(|session| session.records.is_some()) {
                session.dispatch.apply(&change);
            }
        }
        SessionEvent::Deleted { id } => {
            let removed = lock(map).remove(&id);
            if let Some(session) = removed {
                tracing::debug!(session = %id, "session deleted on another instance");
                end_session(&session, store);
            }
        }
        SessionEvent::Gap => {
            for session in lock(map).values() {
                session.verified.store(false, Ordering::Release);
            }
        }
    }
}

/// Removes `session` from `map` if it is the one registered under its id.
fn remove_same(map: &Mutex<HashMap<String, Arc<Session>>>, session: &Arc<Session>) -> bool {
    let mut map = lock(map);
    let same = map.get(&session.id).is_some_and(|held| Arc::ptr_eq(held, session));
    if same {
        map.remove(&session.id);
    }
    same
}

/// How long a record lives in the store without a touch: the idle timeout, plus the touch
/// period, so that a session used here within the idle timeout is never gone from the store.
fn record_ttl(idle: Duration) -> Duration {
    idle + sweep_period(idle)
}

/// How long a client should wait before retrying a request the session store could not serve.
const RETRY_AFTER_SECONDS: &str = "1";

/// 503 with `Retry-After`: the session store could not answer, so the session may well exist.
fn store_unavailable(error: StoreError) -> Response {
    tracing::warn!(%error, "a handshake-era request refused: the session store is unavailable");
    retry_later(&error)
}

/// 503 with `Retry-After`: the event store could not answer, so the stream may well exist.
fn event_store_unavailable(error: &StoreError) -> Response {
    tracing::warn!(%error, "a resumption refused: the event store is unavailable");
    retry_later(&"Event store unavailable")
}

/// 503 with `Retry-After` for what could not be done now but may work when tried again.
fn retry_later(error: &dyn std::fmt::Display) -> Response {
    let error = McpError::internal(format!("{error}; try again later"));
    let mut response = error_response(StatusCode::SERVICE_UNAVAILABLE, None, error);
    response
        .headers_mut()
        .insert(http::header::RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER_SECONDS));
    response
}

/// 503 with `Retry-After`: the client's answer could not be passed to the instance waiting
/// for it; posting it again may work.
fn router_unavailable(error: super::RouteError) -> Response {
    tracing::warn!(%error, "an answer for another instance refused: the peer router is unavailable");
    retry_later(&error)
}

fn too_many_sessions() -> Response {
    let error = McpError::internal("Too many sessions; try again later");
    error_response(StatusCode::SERVICE_UNAVAILABLE, None, error)
}

/// Lets go of a session idle here. One that is shared may still be in use on other
/// instances, which read its events from the shared store: it is only stopped here (its
/// record and events expire in their stores); one that is not shared is ended.
fn release_session(session: &Session, store: &dyn EventStore) {
    if session.records.is_some() {
        session.stop();
    } else {
        end_session(session, store);
    }
}

/// Stops a session's engine (aborting its handlers) and forgets its events.
fn end_session(session: &Session, store: &dyn EventStore) {
    session.stop();
    let forget = store.end_session(&session.id);
    let id = session.id.clone();
    tokio::spawn(async move {
        if let Err(error) = forget.await {
            tracing::warn!(session = %id, %error, "ended session's events not forgotten");
        }
    });
}

/// A random, nonzero instance part for stream ids.
fn random_instance() -> u64 {
    let mut bytes = [0u8; 8];
    // Without randomness two instances may share a number; only their streams could mix.
    let _ = getrandom::fill(&mut bytes);
    u64::from_le_bytes(bytes).max(1)
}

/// How often idle sessions are looked for: a quarter of the idle timeout, so one is ended at
/// most 25% after it expires, within 10 ms and 1 minute.
fn sweep_period(idle: Duration) -> Duration {
    (idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(60))
}

/// Removes and returns the sessions idle for longer than `idle`.
fn expired(map: &Mutex<HashMap<String, Arc<Session>>>, idle: Duration) -> Vec<Arc<Session>> {
    let mut map = lock(map);
    let ids: Vec<String> = map
        .iter()
        .filter(|(_, session)| lock(&session.last_seen).elapsed() > idle)
        .map(|(id, _)| id.clone())
        .collect();
    ids.iter().filter_map(|id| map.remove(id)).collect()
}

/// One open stream counted against a limit; dropping it (with the response body) frees it.
pub(crate) struct StreamSlot {
    counter: Arc<AtomicUsize>,
    /// The endpoint's slot, the one the open-streams gauge counts (feature `otel`).
    #[cfg(feature = "otel")]
    gauged: Option<Arc<crate::observe::otel::Instruments>>,
}

impl StreamSlot {
    /// A slot of `counter` if fewer than `max` are taken.
    pub(crate) fn take(counter: &Arc<AtomicUsize>, max: usize) -> Option<StreamSlot> {
        let taken = counter.fetch_add(1, Ordering::AcqRel);
        if taken >= max {
            counter.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(StreamSlot {
            counter: counter.clone(),
            #[cfg(feature = "otel")]
            gauged: None,
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.counter.fetch_sub(1, Ordering::AcqRel);
        #[cfg(feature = "otel")]
        if let Some(instruments) = &self.gauged {
            instruments.sse_streams(-1);
        }
    }
}

/// A slot among the endpoint's GET streams: 503 when they are all taken.
#[allow(clippy::result_large_err)] // the refusal is the HTTP answer itself, on a cold path
pub(crate) fn endpoint_stream_slot(shared: &Shared) -> Result<StreamSlot, Response> {
    let max = shared.options.max_sse_streams;
    let slot = StreamSlot::take(&shared.sse_streams, max);
    #[cfg(feature = "otel")]
    let slot = slot.map(|mut slot| {
        let instruments = shared.server.instruments();
        instruments.sse_streams(1);
        slot.gauged = Some(instruments);
        slot
    });
    slot.ok_or_else(|| {
        let error =
            McpError::internal(format!("Too many SSE streams (limit {max}); try again later"));
        error_response(StatusCode::SERVICE_UNAVAILABLE, None, error)
    })
}

/// Slots for one more GET stream of `session`: 429 when the session holds its limit, 503
/// when the endpoint does.
#[allow(clippy::result_large_err)] // the refusal is the HTTP answer itself, on a cold path
fn stream_slots(shared: &Shared, session: &Session) -> Result<(StreamSlot, StreamSlot), Response> {
    let max = shared.options.max_sse_streams_per_session;
    let Some(own) = StreamSlot::take(&session.sse_streams, max) else {
        let error = McpError::invalid_request(format!(
            "Too many SSE streams for this session (limit {max})"
        ));
        return Err(error_response(StatusCode::TOO_MANY_REQUESTS, None, error));
    };
    Ok((own, endpoint_stream_slot(shared)?))
}

/// A session id: 32 random bytes as hex, visible ASCII as the spec requires.
fn mint_id() -> Option<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A handshake-era POST.
pub(crate) async fn post(
    shared: &Shared,
    headers: &HeaderMap,
    message: Message,
    extensions: Extensions,
) -> Response {
    if let Some(version) = header_str(headers, "mcp-protocol-version") {
        if !HANDSHAKE_VERSIONS.contains(&version.trim()) {
            let error =
                McpError::invalid_request(format!("Unsupported MCP-Protocol-Version: {version}"));
            return error_response(StatusCode::BAD_REQUEST, None, error);
        }
    }
    if caller::checks_tool_scopes(shared) {
        if let Some(tool) = called_tool(&message) {
            if let Err(refused) = caller::check_tool_scopes(shared, &extensions, &tool) {
                return refused;
            }
        }
    }
    match (header_str(headers, SESSION_HEADER), message) {
        (None, Message::Request(request)) if request.method == method::INITIALIZE => {
            initialize(shared, headers, request, extensions).await
        }
        (None, _) => {
            let error = McpError::invalid_request(
                "Missing Mcp-Session-Id header: send initialize first (or use the 2026-07-28 _meta envelope)",
            );
            error_response(StatusCode::BAD_REQUEST, None, error)
        }
        (Some(id), message) => match shared.sessions.resolve(shared, id, &extensions).await {
            Ok(session) => session.post(message, headers).await,
            Err(refused) => refused,
        },
    }
}

/// The tool a `tools/call` names, read without parsing the rest of its params (the session
/// parses them once it has the request; scopes are checked before that).
pub(crate) fn called_tool(message: &Message) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Name {
        name: String,
    }
    let Message::Request(request) = message else { return None };
    if request.method != method::TOOLS_CALL {
        return None;
    }
    serde_json::from_str::<Name>(request.params.as_ref()?.get()).ok().map(|n| n.name)
}

pub(crate) fn session_not_found() -> Response {
    error_response(StatusCode::NOT_FOUND, None, McpError::invalid_request("Session not found"))
}

async fn initialize(
    shared: &Shared,
    headers: &HeaderMap,
    request: Request,
    extensions: Extensions,
) -> Response {
    let Some(id) = mint_id() else {
        let error = McpError::internal("No randomness available for a session id");
        return error_response(StatusCode::INTERNAL_SERVER_ERROR, Some(request.id), error);
    };
    let principal = extensions.get::<PrincipalId>().map(|p| p.0.clone());
    let session = Arc::new(Session::start(shared, id.clone(), extensions));
    if !shared.sessions.insert(session.clone()) {
        let error = McpError::internal("Too many sessions; try again later");
        return error_response(StatusCode::SERVICE_UNAVAILABLE, Some(request.id), error);
    }
    // Kept for the record only when there is a store to keep it in.
    let params = shared.sessions.records.as_ref().map(|_| raw_params(&request));
    let mut response = session.post(Message::Request(request), headers).await;
    if let (Some(params), Some(version)) = (params, session.protocol_version()) {
        let mut record = SessionRecord::new(&id, version, params);
        record.principal = principal;
        if let Err(refused) = shared.sessions.create(record).await {
            end(shared, &id);
            return refused;
        }
    }
    if response.status().is_success() {
        if let Ok(value) = HeaderValue::from_str(&id) {
            response.headers_mut().insert(SESSION_HEADER, value);
        }
    } else {
        end(shared, &id);
    }
    response
}

/// A request's params as JSON text (`{}` without any).
fn raw_params(request: &Request) -> String {
    request.params.as_ref().map_or_else(|| "{}".to_owned(), |params| params.get().to_owned())
}

impl Sessions {
    /// Stores a new session's record: 503 when the store cannot, 500 in the (astronomically
    /// unlikely) case that its id is taken.
    #[allow(clippy::result_large_err)]
    async fn create(&self, record: SessionRecord) -> Result<(), Response> {
        let Some(records) = &self.records else { return Ok(()) };
        match records.create(record, record_ttl(self.idle)).await {
            Ok(true) => Ok(()),
            Ok(false) => {
                let error = McpError::internal("A session with this id exists; try again");
                Err(error_response(StatusCode::INTERNAL_SERVER_ERROR, None, error))
            }
            Err(error) => Err(store_unavailable(error)),
        }
    }
}

/// Ends a session: its engine, its handlers and its stored events.
fn end(shared: &Shared, id: &str) -> bool {
    shared.sessions.remove(id)
}

impl Session {
    /// A session whose handlers see `extensions` (the opening request's headers and, with
    /// `auth`, its principal, which becomes the session's owner).
    fn start(shared: &Shared, id: String, extensions: Extensions) -> Session {
        let owner = extensions.get::<PrincipalId>().cloned();
        let dispatch = shared.server.http_session(extensions, &id);
        let router = shared.sessions.router.clone();
        let routes = Routes {
            session: id.clone(),
            store: shared.options.event_store.clone(),
            instance: shared.sessions.instance,
            durable: shared.options.durable_events,
            unstored: shared.sessions.unstored.clone(),
            waiting: HashMap::new(),
            recent: Vec::new(),
            progress: HashMap::new(),
            standalone: None,
            next_stream: STANDALONE + 1,
            legacy: false,
            json_only: shared.options.json_response,
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
    fn stop(&self) {
        let engine = std::mem::replace(&mut *lock(&self.engine), EngineSlot::Stopped);
        if !matches!(engine, EngineSlot::Running { .. }) {
            // A running loop closes the peer as it ends; without one, nothing else would.
            self.peer.close();
        }
    }

    /// Whether the session ended (DELETE, expiry).
    fn ended(&self) -> bool {
        matches!(*lock(&self.engine), EngineSlot::Stopped)
    }

    /// Handlers of the session still working (what the in-flight limit counts).
    fn working(&self) -> usize {
        match &*lock(&self.engine) {
            EngineSlot::Running { handover, .. } => handover.working(),
            _ => 0,
        }
    }

    /// Gives the engine a handler that did not finish in its POST's first poll, starting the
    /// engine if it is the session's first; `false` if the session ended.
    fn hand_over(&self, id: RequestId, handler: BoxFuture<Outcome>, stream: bool) -> bool {
        match &*self.started_engine() {
            EngineSlot::Running { handover, .. } => handover.adopt(id, handler, stream),
            _ => false,
        }
    }

    /// The engine's input, starting the engine if need be; `None` if the session ended.
    fn engine_input(&self) -> Option<mpsc::Sender<Incoming>> {
        match &*self.started_engine() {
            EngineSlot::Running { incoming, .. } => Some(incoming.clone()),
            _ => None,
        }
    }

    /// The engine's slot, with the engine running unless the session ended.
    fn started_engine(&self) -> MutexGuard<'_, EngineSlot> {
        let mut engine = lock(&self.engine);
        if let EngineSlot::Idle = &*engine {
            let (incoming, receiver) = mpsc::channel(CHANNEL_CAPACITY);
            let (run, stop, handover) =
                crate::engine::attach(self.peer.clone(), receiver, self.dispatch.clone());
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

    /// Takes a message from the client in this task, as the engine would ([`engine::take`]):
    /// a request goes to the engine, and a cancellation too, if one runs (only there can a
    /// handler still be running). `false` if the session ended.
    ///
    /// [`engine::take`]: crate::engine::take
    async fn take(&self, message: Message) -> bool {
        if self.ended() {
            return false;
        }
        match take(&self.peer, message, |n| self.dispatch.notification(n, &self.peer)) {
            Taken::Done => true,
            Taken::Request(request) => self.forward(Message::Request(request)).await,
            Taken::Cancelled(cancelled) => self.cancel(cancelled).await,
        }
    }

    /// Hands `notifications/cancelled` to the engine, if one runs, and ends the stream of the
    /// request it names: a cancelled request gets no answer. `false` if the session ended.
    async fn cancel(&self, cancelled: Notification) -> bool {
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

    async fn post(&self, message: Message, headers: &HeaderMap) -> Response {
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
        let change = self.records.as_ref().and_then(|_| change_of(&request));
        let outcome = match self.dispatch_here(request, headers) {
            Ran::Finished(outcome) => outcome,
            Ran::HandedOver => return self.answer_later(rx, id, stream).await,
            Ran::SessionEnded => return self.forget(&id),
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
        let change = self.records.as_ref().and_then(|_| change_of(&request));
        let outcome = match self.dispatch_here(request, headers) {
            Ran::Finished(outcome) => outcome,
            Ran::HandedOver => loop {
                match rx.recv().await.map(|delivery| delivery.message) {
                    Some(Message::Response(response)) => return response,
                    Some(_) => continue,
                    None => break Err(McpError::internal("The request ended without an answer")),
                }
            },
            Ran::SessionEnded => Err(McpError::invalid_request("Session not found")),
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
    async fn route_elsewhere(
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
    async fn take_routed(&self, routed: Routed) {
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
            // Taken by the task relay before a session is looked for.
            Direction::TaskUpdate | Direction::TaskUpdated => {}
        }
    }

    /// Records `change` in the session store, if the session is shared, before the request
    /// that made it is answered: the next request may reach another instance.
    async fn share(&self, change: SessionChange) -> Result<(), StoreError> {
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
    fn dispatch_here(&self, request: Request, headers: &HeaderMap) -> Ran {
        let id = request.id.clone();
        match self.dispatch.request_over_http(request, &self.peer, headers) {
            Reply::Now(outcome) => Ran::Finished(outcome),
            Reply::Later(handler) => self.run_here(id, handler, false),
            Reply::Stream(handler) => self.run_here(id, handler, true),
        }
    }

    /// Runs a handler's first poll in this task: most finish there. One that does not goes to
    /// the engine, which tracks it for `notifications/cancelled` and sends its answer.
    fn run_here(&self, id: RequestId, mut handler: BoxFuture<Outcome>, stream: bool) -> Ran {
        if !stream {
            if let Poll::Ready(outcome) = poll_once(&mut handler) {
                return Ran::Finished(outcome);
            }
        }
        if self.hand_over(id, handler, stream) { Ran::HandedOver } else { Ran::SessionEnded }
    }

    /// The answer of a request whose handler the engine finishes: JSON if the response comes
    /// first, else a resumable SSE stream.
    async fn answer_later(&self, rx: StreamRx, id: RequestId, stream: u64) -> Response {
        // Spec 2025-11-25: a dropped connection is not a cancellation, so nothing to guard.
        let stream = StreamId { instance: lock(&self.routes).instance, number: stream };
        answer(rx, id, Some(event_id(stream, 0)), Guard(None::<()>)).await
    }

    /// A POST whose session ended under it.
    fn forget(&self, id: &RequestId) -> Response {
        lock(&self.routes).finish(id);
        session_not_found()
    }
}

/// Whether `message` is `notifications/cancelled`.
fn is_cancelled(message: &Message) -> bool {
    matches!(message, Message::Notification(n) if n.method == method::CANCELLED)
}

/// Whether `message` is `notifications/initialized`.
fn is_initialized(message: &Message) -> bool {
    matches!(message, Message::Notification(n) if n.method == method::INITIALIZED)
}

/// The change to the session's record that `request` makes if it succeeds, if any. The
/// method is checked first: only these three requests have their params read here.
fn change_of(request: &Request) -> Option<SessionChange> {
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
enum Ran {
    Finished(Outcome),
    HandedOver,
    SessionEnded,
}

/// The `_meta.progressToken` of a request, as canonical JSON text. Reads only that member
/// (serde skips the others without building them): this runs for every POSTed request.
fn progress_token(request: &Request) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "_meta")]
        meta: Option<Token>,
    }
    let params: Params = serde_json::from_str(request.params.as_ref()?.get()).ok()?;
    params.meta?.canonical()
}

/// The `progressToken` member of an object, read alone.
#[derive(serde::Deserialize)]
struct Token {
    #[serde(rename = "progressToken")]
    token: Option<Value>,
}

impl Token {
    fn canonical(self) -> Option<String> {
        self.token.map(|token| token.to_string())
    }
}

/// Sends `message`, which the session sent outside any request and which has no GET stream
/// here, to the instance holding the session's GET stream: `true` once it is on its way.
/// `false` (it is then placed here, as without a router) when no instance holds the stream,
/// this one does, or the router cannot say.
async fn hand_to_holder(router: &dyn PeerRouter, session: &str, message: &Message) -> bool {
    let holder = match router.standalone_holder(session).await {
        Ok(holder) => holder,
        Err(error) => {
            tracing::debug!(%error, session, "GET stream holder unknown: kept here");
            return false;
        }
    };
    let Some(instance) = holder.as_deref().and_then(ticket_instance) else { return false };
    if instance == router.instance() {
        return false;
    }
    match router.forward(instance, Routed::to_client(session, message.encode())).await {
        Ok(()) => true,
        Err(error) => {
            tracing::warn!(%error, session, "not forwarded to the GET stream's holder: kept here");
            false
        }
    }
}

/// Places `message` with `place` and sends it once the store has it.
async fn send_placed(
    routes: &Mutex<Routes>,
    message: Message,
    place: fn(&mut Routes, &Message) -> Option<Placing>,
) {
    let placed = {
        let mut routes = lock(routes);
        match place(&mut routes, &message) {
            None => return,
            Some((target, None)) => Placed::Now(routes.send_to(target, Ok(None), message)),
            Some((target, Some(Appended::Ready(id)))) => {
                Placed::Now(routes.send_to(target, id.map(Some), message))
            }
            Some((target, Some(Appended::Pending(storing)))) => {
                Placed::Later(target, storing, message)
            }
        }
    };
    let send = match placed {
        Placed::Now(send) => send,
        Placed::Later(target, storing, message) => {
            let id = storing.await.map(Some);
            lock(routes).send_to(target, id, message)
        }
    };
    if let Some(send) = send {
        deliver(routes, send).await;
    }
}

/// Where a message goes, and its storing there when its stream is (or may become) SSE.
type Placing = (Target, Option<Appended>);

/// A message placed on its stream: where to send it now, or once the store has it.
enum Placed {
    Now(Option<Outgoing>),
    Later(Target, crate::server::http::StoreFuture<'static, String>, Message),
}

/// A delivery and the stream it goes to, decided under the routes' lock.
struct Outgoing {
    tx: StreamTx,
    delivery: Box<Delivery>,
    /// Whether the delivery cannot be resumed (an answer going out as plain JSON, anything on
    /// a 2024-11-05 stream), so it is waited for rather than cutting a full stream.
    wait: bool,
}

/// Hands a delivery to its stream without letting one stream whose reader stopped reading
/// hold up the session's others. A resumable stream that is full is cut: its events are in
/// the store, and the client resumes with `Last-Event-ID`. One that cannot be resumed is
/// waited for. A client that went away can resume from the store too: nothing is lost here.
async fn deliver(routes: &Mutex<Routes>, Outgoing { tx, delivery, wait }: Outgoing) {
    if wait {
        let _ = tx.send(delivery).await;
        return;
    }
    if let Err(mpsc::error::TrySendError::Full(_)) = tx.try_send(delivery) {
        lock(routes).cut(&tx);
    }
}

impl Routes {
    /// Registers a POST's request; returns its stream number.
    fn register(&mut self, request: &Request, tx: StreamTx, json: bool) -> u64 {
        let stream = self.next_stream;
        self.next_stream += 1;
        let json = json || self.json_only;
        if let Some(token) = progress_token(request).filter(|_| !json) {
            self.progress.insert(token, request.id.clone());
        }
        self.recent.push(request.id.clone());
        self.waiting.insert(request.id.clone(), Waiter { tx, stream, json, sent: 0 });
        stream
    }

    /// Picks the stream for `message` and starts storing it there when the stream is (or may
    /// become) SSE; `None` when it has nowhere to go.
    fn place(&mut self, message: &Message) -> Option<Placing> {
        let Some(request) = self.owner(message) else { return self.place_standalone(message) };
        let answer = matches!(message, Message::Response(r) if r.id.as_ref() == Some(&request));
        let waiter = self.waiting.get_mut(&request)?;
        let open = !waiter.tx.is_closed();
        // The JSON fast path: an answer that comes first to a connected client is one JSON
        // body, never a stream, so there is nothing to resume and nothing to store.
        let json = answer && waiter.sent == 0 && open;
        waiter.sent += 1;
        let stream = StreamId { instance: self.instance, number: waiter.stream };
        let stored = (!json).then(|| self.store.append(&self.session, stream, message));
        Some((Target::Request { id: request, answer }, stored))
    }

    /// Stores `message` on the GET stream, to be sent there if it is connected here.
    fn place_standalone(&mut self, message: &Message) -> Option<Placing> {
        let stored = self.store.append(&self.session, StreamId::STANDALONE, message);
        Some((Target::Standalone, Some(stored)))
    }

    /// The router and session id to send `message` to the holder of the GET stream with,
    /// when there is a router, the stream is not open here, and the message belongs on it
    /// (no request claims it, and it is not a change notification, which the holder hears
    /// from the bus itself).
    fn for_holder(&self, message: &Message) -> Option<(Arc<dyn PeerRouter>, String)> {
        let router = self.router.as_ref()?;
        let open_here = self.standalone.as_ref().is_some_and(|s| !s.is_closed());
        if open_here || is_change(message) || self.owner(message).is_some() {
            return None;
        }
        Some((router.clone(), self.session.clone()))
    }

    /// Where to send `message` now that the store has it (`id`, or no id for a JSON answer),
    /// if its stream is connected. An event the store failed to keep goes out without an id,
    /// counted, or with durable events ends its stream.
    fn send_to(
        &mut self,
        target: Target,
        id: Result<Option<String>, crate::server::http::StoreError>,
        message: Message,
    ) -> Option<Outgoing> {
        let event_id = match id {
            Ok(id) => id,
            Err(error) => {
                let lost = self.unstored.fetch_add(1, Ordering::Relaxed) + 1;
                tracing::warn!(session = %self.session, %error, lost, durable = self.durable,
                    "SSE event not stored: sent without an id, it cannot be resumed");
                if self.durable {
                    self.fail(&target);
                    return None;
                }
                None
            }
        };
        let tx = match &target {
            Target::Standalone => self.standalone.clone(),
            Target::Request { id, answer } => {
                let tx = self.waiting.get(id).map(|waiter| waiter.tx.clone());
                if *answer {
                    self.finish(id);
                }
                tx
            }
        };
        let tx = tx.filter(|tx| !tx.is_closed())?;
        let wait = event_id.is_none() || self.legacy;
        Some(Outgoing { tx, delivery: Box::new(Delivery { event_id, message }), wait })
    }

    /// A resumption follows `stream`: if it is the stream of a request running here, `marker`
    /// makes it connected again, so what the request sends without an owner (a request to the
    /// client) goes to it as before the cut. The resumption reads the events from the store;
    /// `marker`'s receiver only drains.
    fn followed(&mut self, stream: StreamId, marker: StreamTx) {
        if stream.instance != self.instance {
            return;
        }
        if let Some(waiter) = self.waiting.values_mut().find(|w| w.stream == stream.number) {
            waiter.tx = marker;
        }
    }

    /// Ends the stream of `target`: an event of it could not be stored.
    fn fail(&mut self, target: &Target) {
        match target {
            Target::Standalone => self.standalone = None,
            Target::Request { id, answer: true } => self.finish(id),
            Target::Request { id, answer: false } => {
                if let Some(waiter) = self.waiting.get_mut(id) {
                    waiter.tx = mpsc::channel(1).0;
                }
            }
        }
    }

    /// The request whose stream carries `message`, if any.
    fn owner(&self, message: &Message) -> Option<RequestId> {
        match message {
            Message::Response(response) => {
                response.id.clone().filter(|id| self.waiting.contains_key(id))
            }
            Message::Notification(n) if n.method == method::PROGRESS => {
                let token = progress_token_of(n.params.as_deref())?;
                self.progress.get(&token).cloned()
            }
            _ => self.latest_waiting(),
        }
    }

    /// Detaches the live stream that `tx` feeds: once its body has sent what is queued, it
    /// ends. Later events of that stream are only stored, until a `Last-Event-ID` resumes it.
    fn cut(&mut self, tx: &StreamTx) {
        if self.let_go(tx) {
            tracing::debug!(session = %self.session, "GET stream not read: cut, resumable");
            return;
        }
        let slow = self.waiting.values_mut().find(|waiter| waiter.tx.same_channel(tx));
        if let Some(waiter) = slow {
            tracing::debug!(session = %self.session, "POST stream not read: cut, resumable");
            waiter.tx = mpsc::channel(1).0;
        }
    }

    /// Forgets the GET stream `tx` feeds, if it is still the session's GET stream: its body
    /// ends once it has sent what is queued. Whether it was.
    fn let_go(&mut self, tx: &StreamTx) -> bool {
        let same = self.standalone.as_ref().is_some_and(|standalone| standalone.same_channel(tx));
        if same {
            self.standalone = None;
        }
        same
    }

    fn finish(&mut self, request: &RequestId) {
        self.waiting.remove(request);
        self.recent.retain(|r| r != request);
        self.progress.retain(|_, r| r != request);
    }

    fn latest_waiting(&self) -> Option<RequestId> {
        self.recent
            .iter()
            .rev()
            .find(|id| self.waiting.get(*id).is_some_and(|w| !w.json && !w.tx.is_closed()))
            .cloned()
    }
}

/// Whether `message` is a change notification, which every instance sends its sessions from
/// the subscription bus.
fn is_change(message: &Message) -> bool {
    let Message::Notification(n) = message else { return false };
    matches!(
        n.method.as_str(),
        method::TOOLS_LIST_CHANGED
            | method::PROMPTS_LIST_CHANGED
            | method::RESOURCES_LIST_CHANGED
            | method::RESOURCES_UPDATED
    )
}

fn progress_token_of(params: Option<&serde_json::value::RawValue>) -> Option<String> {
    serde_json::from_str::<Token>(params?.get()).ok()?.canonical()
}

/// GET: the standalone SSE stream of a session, or the resumption of a dropped stream when
/// the request carries `Last-Event-ID`.
pub(crate) async fn get(shared: &Shared, headers: &HeaderMap, extensions: &Extensions) -> Response {
    let Some(id) = header_str(headers, SESSION_HEADER) else {
        let error = McpError::invalid_request("Missing Mcp-Session-Id header");
        return error_response(StatusCode::BAD_REQUEST, None, error);
    };
    let session = match shared.sessions.resolve(shared, id, extensions).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    let keep_alive = Some(shared.options.keep_alive);
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    if let Some(last) = header_str(headers, "last-event-id") {
        let slots = match stream_slots(shared, &session) {
            Ok(slots) => slots,
            Err(refused) => return refused,
        };
        return resume(&session, last, (tx, rx), keep_alive, slots).await;
    }
    {
        let mut routes = lock(&session.routes);
        if routes.standalone.as_ref().is_some_and(|s| !s.is_closed()) {
            return second_get_stream();
        }
        routes.standalone = Some(tx.clone());
    }
    let claimed = match stream_slots(shared, &session) {
        Ok(slots) => shared.sessions.claim_standalone(&session, &tx).await.map(|c| (slots, c)),
        Err(refused) => Err(refused),
    };
    // The body holds the stream's slots and its claim: both are let go when it ends.
    let held = match claimed {
        Ok(held) => held,
        Err(refused) => {
            lock(&session.routes).let_go(&tx);
            return refused;
        }
    };
    let mut priming = Vec::new();
    let priming_id = event_id(StreamId::STANDALONE, 0);
    crate::transport::sse::write_event(&mut priming, Some(&priming_id), None, "");
    let head = futures_util::stream::once(async move { Ok(Bytes::from(priming)) });
    let live = sse_stream(rx, None, keep_alive, Guard(Some(held)));
    sse_response(Body::from_stream(head.chain(live).boxed()))
}

/// 409: the session's GET stream is open already (here, or on another instance).
fn second_get_stream() -> Response {
    let error = McpError::invalid_request("This session already has a GET stream");
    error_response(StatusCode::CONFLICT, None, error)
}

impl Sessions {
    /// Claims `session`'s GET stream, fed by `tx`, for this instance when the deployment
    /// shares a router: the claim lives, renewed, while the returned guard does (it goes with
    /// the stream's response body). `None` without a router; 409 when another instance holds
    /// the stream, 503 when the router cannot say.
    #[allow(clippy::result_large_err)] // the refusal is the HTTP answer itself
    async fn claim_standalone(
        &self,
        session: &Session,
        tx: &StreamTx,
    ) -> Result<Option<ClaimGuard>, Response> {
        let Some(router) = &session.router else { return Ok(None) };
        let number = self.tickets.fetch_add(1, Ordering::Relaxed);
        let ticket = format!("{}/{number}", router.instance());
        match router.claim_standalone(&session.id, &ticket, self.claim_ttl).await {
            Ok(true) => {
                let stream = (Arc::downgrade(&session.routes), tx.downgrade());
                let claim = Claim { router: router.clone(), session: session.id.clone(), ticket };
                Ok(Some(ClaimGuard::keep(claim, self.claim_ttl, stream)))
            }
            Ok(false) => Err(second_get_stream()),
            Err(error) => {
                tracing::warn!(%error, "a GET stream refused: the peer router cannot claim it");
                Err(retry_later(&error))
            }
        }
    }
}

/// A claim on a session's GET stream, renewed in the background until it is dropped (with the
/// stream's response body), then released.
struct ClaimGuard {
    _held: tokio::sync::oneshot::Sender<()>,
}

/// The routes of a session and its GET stream's sender, held weakly by the claim's renewal.
type WeakStream =
    (std::sync::Weak<Mutex<Routes>>, mpsc::WeakSender<Box<super::exchange::Delivery>>);

/// Who holds which session's GET stream, through which router.
struct Claim {
    router: Arc<dyn PeerRouter>,
    session: String,
    ticket: String,
}

impl ClaimGuard {
    fn keep(claim: Claim, ttl: Duration, stream: WeakStream) -> ClaimGuard {
        let (held, dropped) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            renew_claim(&claim, ttl, dropped, stream).await;
            let Claim { router, session, ticket } = claim;
            if let Err(error) = router.release_standalone(&session, &ticket).await {
                // It expires by itself within the claim's lifetime.
                tracing::debug!(%error, session, "GET stream claim not released");
            }
        });
        ClaimGuard { _held: held }
    }
}

/// Renews `ticket`'s claim every third of its lifetime until the stream's guard is dropped. A
/// renewal that fails leaves the claim to the next one (it takes the claim again if it
/// expired meanwhile); a claim another instance took meanwhile ends the stream here, so two
/// instances never both hold it.
async fn renew_claim(
    Claim { router, session, ticket }: &Claim,
    ttl: Duration,
    mut dropped: tokio::sync::oneshot::Receiver<()>,
    (routes, tx): WeakStream,
) {
    let period = ttl / 3;
    let mut renewals = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    loop {
        tokio::select! {
            _ = &mut dropped => return,
            _ = renewals.tick() => {}
        }
        match router.claim_standalone(session, ticket, ttl).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(session, "GET stream claimed by another instance: ended here");
                if let (Some(routes), Some(tx)) = (routes.upgrade(), tx.upgrade()) {
                    lock(&routes).let_go(&tx);
                }
                return;
            }
            Err(error) => tracing::debug!(%error, session, "GET stream claim not renewed"),
        }
    }
}

/// Follows the stream `last_event_id` names in the store, after that event: what was missed,
/// then what comes, until the stream's answer (a POST stream) or the client leaves. The
/// session was found for this caller, so only its own streams can be named.
async fn resume(
    session: &Session,
    last_event_id: &str,
    (tx, rx): (StreamTx, StreamRx),
    keep_alive: Option<Duration>,
    slots: (StreamSlot, StreamSlot),
) -> Response {
    let unknown = || {
        let error = McpError::invalid_request(format!("Unknown Last-Event-ID: {last_event_id}"));
        error_response(StatusCode::NOT_FOUND, None, error)
    };
    let Some((stream, after)) = parse_event_id(last_event_id) else { return unknown() };
    let store = lock(&session.routes).store.clone();
    let feed = match store.follow(&session.id, stream, after).await {
        Ok(Some(feed)) => feed,
        Ok(None) => return unknown(),
        Err(error) => return event_store_unavailable(&error),
    };
    let (marker, marked) = mpsc::channel(CHANNEL_CAPACITY);
    lock(&session.routes).followed(stream, marker);
    tokio::spawn(forward(feed, tx, stream != StreamId::STANDALONE, marked));
    sse_response(Body::from_stream(sse_stream(rx, None, keep_alive, Guard(Some(slots)))))
}

/// Sends a followed stream's events to its response until a POST stream's answer, the end of
/// the feed, or the client leaving; the response ends with it.
///
/// `marked` is the channel that marks the stream as connected in the session's routes (see
/// [`Routes::followed`]): what arrives there is also in the store, and comes from the feed.
async fn forward(mut feed: EventFeed, tx: StreamTx, ends_with_answer: bool, mut marked: StreamRx) {
    loop {
        let next = tokio::select! {
            next = feed.next() => next,
            () = tx.closed() => return,
            Some(_) = marked.recv() => continue,
        };
        let event = match next {
            Some(Ok(event)) => event,
            Some(Err(error)) => {
                tracing::warn!(%error, "resumed SSE stream ended: the event store failed");
                return;
            }
            None => return,
        };
        let answer = ends_with_answer && matches!(event.message, Message::Response(_));
        let delivery = Delivery { event_id: Some(event.id), message: event.message };
        if tx.send(Box::new(delivery)).await.is_err() || answer {
            return;
        }
    }
}

/// DELETE: ends a session (on every instance, when it is shared); later requests with its id
/// get 404.
pub(crate) async fn delete(
    shared: &Shared,
    headers: &HeaderMap,
    extensions: &Extensions,
) -> Response {
    let Some(id) = header_str(headers, SESSION_HEADER) else {
        let error = McpError::invalid_request("Missing Mcp-Session-Id header");
        return error_response(StatusCode::BAD_REQUEST, None, error);
    };
    let session = match shared.sessions.resolve(shared, id, extensions).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    if let Some(records) = &session.records {
        // Deleted in the store first: if that fails the session lives on, and the client can
        // retry.
        if let Err(error) = records.delete(id).await {
            return store_unavailable(error);
        }
    }
    if end(shared, id) {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::OK;
        response
    } else {
        session_not_found()
    }
}
