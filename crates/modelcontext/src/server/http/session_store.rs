//! The seam for sharing handshake-era sessions between instances: a [`SessionStore`] keeps
//! what a 2025-11-25 session is ([`SessionRecord`]), so any instance could serve it.
//!
//! Set one with [`HttpOptions::session_store`](super::HttpOptions::session_store): `initialize`
//! stores the record, a request that reaches an instance which does not hold its session
//! rebuilds the session from the record (without running `initialize` again), and the
//! changes a session goes through (`logging/setLevel`, `resources/subscribe`, DELETE) reach
//! the other instances through [`SessionStore::events`]. Without one (the default), sessions
//! live in the instance that made them, as [`MemorySessionStore`] would keep them. Any
//! implementation can be checked with
//! [`testing::contracts::session_store`](crate::testing::contracts::session_store).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use tokio::sync::broadcast;
use tokio::time::Instant;

pub use crate::server::front_end::{SessionChange, SessionRecord};

/// What [`SessionStore::events`] tells each instance about the sessions of the deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionEvent {
    /// A live session changed through some instance ([`SessionStore::update`]).
    Changed {
        /// The session's id.
        id: String,
        /// What changed.
        change: SessionChange,
    },
    /// A session was deleted ([`SessionStore::delete`]): it has ended everywhere.
    Deleted {
        /// The session's id.
        id: String,
    },
    /// Some events may have been missed (the store's feed was lost and made again, or the
    /// receiver fell behind): an instance checks each session it holds against the store
    /// before serving it again.
    Gap,
}

/// A store could not answer (a network store that is down or too slow). The endpoint will
/// answer such a request with 503 and `Retry-After`, never 404: the session may well exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    message: String,
}

impl StoreError {
    /// The store is unavailable, for the reason given.
    pub fn unavailable(message: impl Into<String>) -> StoreError {
        StoreError { message: message.into() }
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "session store unavailable: {}", self.message)
    }
}

impl std::error::Error for StoreError {}

/// What every [`SessionStore`] method returns.
pub type StoreFuture<'a, T> = BoxFuture<'a, Result<T, StoreError>>;

/// Keeps handshake-era sessions where every instance of a deployment can read them. Each
/// record lives until it has been idle (neither created nor touched) for the `idle` time
/// given with its last create or touch. Each method says its rule;
/// [`testing::contracts::session_store`](crate::testing::contracts::session_store) checks
/// them all.
pub trait SessionStore: Send + Sync + 'static {
    /// Stores a new record; `false` (and nothing changed) if a live record has its id.
    fn create(&self, record: SessionRecord, idle: Duration) -> StoreFuture<'_, bool>;
    /// The record with this id; `None` if there is none or it has expired (never an expired
    /// record).
    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<SessionRecord>>;
    /// Applies `change` to a live record; `false` if there is none (an update never brings an
    /// expired or deleted record back).
    fn update<'a>(&'a self, id: &'a str, change: SessionChange) -> StoreFuture<'a, bool>;
    /// Restarts the record's idle time at `idle`; `false` if there is no live record.
    fn touch<'a>(&'a self, id: &'a str, idle: Duration) -> StoreFuture<'a, bool>;
    /// Forgets the record; deleting one that does not exist is not an error.
    fn delete<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()>;
    /// The updates and deletes made from now on through every instance of the deployment
    /// (this one's may be left out), or [`SessionEvent::Gap`] where some may have been
    /// missed. The HTTP endpoint applies them to the sessions it holds: that is how a
    /// `logging/setLevel` or a DELETE that reached another instance reaches this one without
    /// a store read per request. The default, a stream that never yields, suits only a store
    /// that a single instance uses.
    fn events(&self) -> BoxStream<'static, SessionEvent> {
        futures_util::stream::pending().boxed()
    }
}

/// The in-memory [`SessionStore`]: one process, nothing shared. Expired records are dropped
/// when next looked at, and all of them every 64 creates, so memory stays bounded by the
/// sessions alive in the last idle period. Its [`events`](SessionStore::events) reach every
/// endpoint of the process that shares it, its own included.
#[derive(Debug)]
pub struct MemorySessionStore {
    records: Mutex<Records>,
    events: broadcast::Sender<SessionEvent>,
}

/// Events a receiver may fall behind by before it hears a gap.
const MEMORY_EVENTS: usize = 1024;

impl Default for MemorySessionStore {
    fn default() -> Self {
        let (events, _) = broadcast::channel(MEMORY_EVENTS);
        MemorySessionStore { records: Mutex::default(), events }
    }
}

#[derive(Debug, Default)]
struct Records {
    live: HashMap<String, (SessionRecord, Instant)>,
    creates: u64,
}

impl Records {
    /// The record with this id, if it has not expired; an expired one is dropped.
    fn live(&mut self, id: &str) -> Option<&mut (SessionRecord, Instant)> {
        let expired = self.live.get(id).is_some_and(|(_, until)| *until <= Instant::now());
        if expired {
            self.live.remove(id);
        }
        self.live.get_mut(id)
    }
}

impl MemorySessionStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, Records> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl SessionStore for MemorySessionStore {
    fn create(&self, record: SessionRecord, idle: Duration) -> StoreFuture<'_, bool> {
        let mut records = self.lock();
        records.creates += 1;
        if records.creates % 64 == 0 {
            let now = Instant::now();
            records.live.retain(|_, (_, until)| *until > now);
        }
        let created = records.live(&record.id).is_none();
        if created {
            records.live.insert(record.id.clone(), (record, Instant::now() + idle));
        }
        Box::pin(std::future::ready(Ok(created)))
    }

    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<SessionRecord>> {
        let record = self.lock().live(id).map(|(record, _)| record.clone());
        Box::pin(std::future::ready(Ok(record)))
    }

    fn update<'a>(&'a self, id: &'a str, change: SessionChange) -> StoreFuture<'a, bool> {
        let mut records = self.lock();
        let found = records.live(id).map(|(record, _)| record.apply(&change)).is_some();
        drop(records);
        if found {
            // Nobody listening is not an error.
            let _ = self.events.send(SessionEvent::Changed { id: id.to_owned(), change });
        }
        Box::pin(std::future::ready(Ok(found)))
    }

    fn touch<'a>(&'a self, id: &'a str, idle: Duration) -> StoreFuture<'a, bool> {
        let mut records = self.lock();
        let found = records.live(id).map(|(_, until)| *until = Instant::now() + idle).is_some();
        Box::pin(std::future::ready(Ok(found)))
    }

    fn delete<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        self.lock().live.remove(id);
        let _ = self.events.send(SessionEvent::Deleted { id: id.to_owned() });
        Box::pin(std::future::ready(Ok(())))
    }

    fn events(&self) -> BoxStream<'static, SessionEvent> {
        futures_util::stream::unfold(self.events.subscribe(), |mut receiver| async move {
            match receiver.recv().await {
                Ok(event) => Some((event, receiver)),
                Err(broadcast::error::RecvError::Lagged(_)) => Some((SessionEvent::Gap, receiver)),
                Err(broadcast::error::RecvError::Closed) => None,
            }
        })
        .boxed()
    }
}
