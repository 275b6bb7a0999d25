//! Every live session of one endpoint: the table, the sweep that ends idle sessions, and the
//! sessions shared through a [`SessionStore`]: rebuilt from a record, kept in step by the
//! store's events.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::response::Response;
use futures_util::StreamExt;
use http::{HeaderMap, StatusCode};
use modelcontext_types::McpError;

use crate::server::http::events::EventStore;
use crate::server::http::peer_router::{Direction, PeerRouter};
use crate::server::http::respond::error_response;
use crate::server::http::session_store::{SessionEvent, SessionRecord, SessionStore};
use crate::server::http::{Shared, caller};
use crate::server::{Extensions, PrincipalId};

use super::refusals::{session_not_found, store_unavailable, too_many_sessions};
use super::routes::lock;
use super::session::{Session, end_session, release_session};

/// Every live session of one endpoint.
pub(crate) struct Sessions {
    pub(super) map: Arc<Mutex<HashMap<String, Arc<Session>>>>,
    pub(super) max: usize,
    pub(super) idle: Duration,
    /// Where the sessions' events are kept: an ended session's are forgotten.
    pub(super) store: Arc<dyn EventStore>,
    /// Where the sessions are shared with the other instances, if they are.
    pub(super) records: Option<Arc<dyn SessionStore>>,
    /// This endpoint's part of its POST streams' ids (random, never 0), so streams opened by
    /// two instances serving one session are never named alike.
    pub(super) instance: u64,
    /// Events the store failed to keep (sent without an id, or ending their stream).
    pub(super) unstored: Arc<AtomicU64>,
    /// Where messages for sessions run elsewhere go, and come from, if anywhere.
    pub(super) router: Option<Arc<dyn PeerRouter>>,
    /// Whether the task that ends idle sessions runs (started with the first session).
    pub(super) sweeping: AtomicBool,
    /// Whether the task that applies the store's events runs (started with the endpoint
    /// when it is made inside a runtime, else with the first session).
    pub(super) watching: AtomicBool,
    /// Whether the task that takes what other instances route here runs (started like
    /// `watching`).
    pub(super) routing: AtomicBool,
    /// The number of the next claim on a GET stream (its ticket is `{instance}/{n}`).
    pub(super) tickets: AtomicU64,
    /// How long a claim on a GET stream lives unrenewed (renewed every third of it).
    pub(super) claim_ttl: Duration,
    /// Where routed `tasks/update` messages go (with a router).
    pub(super) relay: Option<Arc<crate::server::http::task_relay::RouterRelay>>,
}

impl Sessions {
    pub(crate) fn new(
        options: &crate::server::http::HttpOptions,
        relay: Option<Arc<crate::server::http::task_relay::RouterRelay>>,
    ) -> Sessions {
        let sessions = Sessions {
            map: Arc::default(),
            max: options.sessions.max_sessions,
            idle: options.sessions.idle_timeout,
            store: options.streams.event_store.clone(),
            records: options.sessions.store.clone(),
            instance: random_instance(),
            unstored: Arc::default(),
            router: options.sessions.peer_router.clone(),
            sweeping: AtomicBool::new(false),
            watching: AtomicBool::new(false),
            routing: AtomicBool::new(false),
            tickets: AtomicU64::new(1),
            claim_ttl: options.sessions.standalone_claim_ttl.max(MIN_CLAIM_TTL),
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
    /// is none (or it is another principal's), 503 when the store cannot say. A session
    /// rebuilt here gives its handlers `headers`, those of the request that found it.
    #[allow(clippy::result_large_err)] // the refusal is the HTTP answer itself
    pub(crate) async fn resolve(
        &self,
        shared: &Shared,
        id: &str,
        caller: &Extensions,
        headers: &HeaderMap,
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
                Some(records) => self.rebuild(shared, id, caller, headers, &**records).await,
            },
        }
    }

    /// A session held here that may have missed changes: brought up to date from its
    /// record, or ended if the record is gone.
    #[allow(clippy::result_large_err)]
    pub(super) async fn reverify(
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
    pub(super) async fn rebuild(
        &self,
        shared: &Shared,
        id: &str,
        caller: &Extensions,
        headers: &HeaderMap,
        records: &dyn SessionStore,
    ) -> Result<Arc<Session>, Response> {
        let record = records.load(id).await.map_err(store_unavailable)?;
        let Some(record) = record else { return Err(session_not_found()) };
        let owner = record.principal.clone().map(PrincipalId);
        if !caller::owns(caller, owner.as_ref()) {
            return Err(session_not_found());
        }
        let extensions = caller::with_headers(caller.clone(), headers.clone());
        let session = Arc::new(Session::start(shared, id.to_owned(), extensions));
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
    pub(super) fn adopt(&self, session: Arc<Session>) -> Option<Arc<Session>> {
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
    pub(super) fn touch_if_due(&self, session: &Arc<Session>) {
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
    pub(super) fn remove_this(&self, session: &Arc<Session>) {
        if remove_same(&self.map, session) {
            self.end(session);
        }
    }

    /// Applies what the store says happened elsewhere to the sessions held here, until the
    /// endpoint is gone.
    pub(super) fn start_watching(&self) {
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
    pub(super) fn get(&self, id: &str) -> Option<Arc<Session>> {
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
    pub(super) fn insert(&self, session: Arc<Session>) -> bool {
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
    pub(super) fn remove(&self, id: &str) -> bool {
        let removed = lock(&self.map).remove(id);
        removed.inspect(|session| self.end(session)).is_some()
    }

    pub(super) fn end(&self, session: &Session) {
        end_session(session, &*self.store);
    }

    /// Lets go of a session that has been idle here.
    pub(super) fn release(&self, session: &Session) {
        release_session(session, &*self.store);
    }

    /// Ends idle sessions on a timer, so a client that vanished without DELETE does not keep
    /// its handlers running (and its session held) until somebody looks the session up. The
    /// task holds the table weakly: it stops with the endpoint.
    pub(super) fn start_sweeping(&self) {
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
pub(super) fn apply_event(
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
pub(super) fn remove_same(
    map: &Mutex<HashMap<String, Arc<Session>>>,
    session: &Arc<Session>,
) -> bool {
    let mut map = lock(map);
    let same = map.get(&session.id).is_some_and(|held| Arc::ptr_eq(held, session));
    if same {
        map.remove(&session.id);
    }
    same
}

/// How long a record lives in the store without a touch: the idle timeout, plus the touch
/// period, so that a session used here within the idle timeout is never gone from the store.
pub(super) fn record_ttl(idle: Duration) -> Duration {
    idle + sweep_period(idle)
}

/// A random, nonzero instance part for stream ids.
pub(super) fn random_instance() -> u64 {
    let mut bytes = [0u8; 8];
    // Without randomness two instances may share a number; only their streams could mix.
    let _ = getrandom::fill(&mut bytes);
    u64::from_le_bytes(bytes).max(1)
}

/// How often idle sessions are looked for: a quarter of the idle timeout, so one is ended at
/// most 25% after it expires, within 10 ms and 1 minute.
pub(super) fn sweep_period(idle: Duration) -> Duration {
    (idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(60))
}

/// Removes and returns the sessions idle for longer than `idle`.
pub(super) fn expired(
    map: &Mutex<HashMap<String, Arc<Session>>>,
    idle: Duration,
) -> Vec<Arc<Session>> {
    let mut map = lock(map);
    let ids: Vec<String> = map
        .iter()
        .filter(|(_, session)| lock(&session.last_seen).elapsed() > idle)
        .map(|(id, _)| id.clone())
        .collect();
    ids.iter().filter_map(|id| map.remove(id)).collect()
}

impl Sessions {
    /// Stores a new session's record: 503 when the store cannot, 500 in the (astronomically
    /// unlikely) case that its id is taken.
    #[allow(clippy::result_large_err)]
    pub(super) async fn create(&self, record: SessionRecord) -> Result<(), Response> {
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
pub(super) fn end(shared: &Shared, id: &str) -> bool {
    shared.sessions.remove(id)
}

/// The shortest claim on a GET stream (renewed every 10 ms then): a renewal period of zero
/// would be no period at all.
pub(super) const MIN_CLAIM_TTL: Duration = Duration::from_millis(30);
