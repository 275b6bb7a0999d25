//! Resumable SSE streams for handshake-era sessions (spec 2025-11-25 `basic/transports`,
//! resumability): every event a session sends on an SSE stream is kept in an [`EventStore`]
//! first and goes out with the id the store gave it, `<stream>-<position>`, so a client whose
//! stream dropped can `GET` with `Last-Event-ID` and receive what it missed, from that stream
//! only, and then what comes after, live.
//!
//! The store is asynchronous so that it can be shared (`modelcontext-redis` keeps each stream
//! in a Redis Stream): an event's id exists only once the event is stored, and a resumed
//! stream follows the log, so events another instance appends reach it too. The in-memory
//! store answers at once ([`Appended::Ready`]): no future is made, boxed or polled per event.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex};

use futures_util::stream::BoxStream;
use modelcontext_types::Message;
use tokio::sync::Notify;

use super::session_store::{StoreError, StoreFuture};

/// One SSE stream of a session: the standalone `GET` stream ([`StreamId::STANDALONE`], one per
/// session, shared by every instance that serves it) or the answer of one POST, numbered by the
/// endpoint that received it. Endpoints draw a random `instance` each, so two instances
/// serving one session never name two streams alike. Written `<instance>.<number>` in hex and
/// decimal; never contains `-`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamId {
    /// The endpoint that opened the stream (0 for the standalone stream).
    pub instance: u64,
    /// The stream's number on that endpoint.
    pub number: u64,
}

impl StreamId {
    /// The standalone `GET` stream of a session.
    pub const STANDALONE: StreamId = StreamId { instance: 0, number: 0 };
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:x}.{}", self.instance, self.number)
    }
}

impl std::str::FromStr for StreamId {
    type Err = ();

    fn from_str(text: &str) -> Result<StreamId, ()> {
        let (instance, number) = text.split_once('.').ok_or(())?;
        let instance = unsigned(instance, 16).ok_or(())?;
        Ok(StreamId { instance, number: unsigned(number, 10).ok_or(())? })
    }
}

/// `text` as an unsigned number in `radix`, digits only: `from_str_radix` and `parse` also
/// take a leading `+`, which would give one stream (or position) two spellings.
pub(crate) fn unsigned(text: &str, radix: u32) -> Option<u64> {
    let digits_only = !text.is_empty() && text.chars().all(|c| c.is_digit(radix));
    digits_only.then(|| u64::from_str_radix(text, radix).ok()).flatten()
}

/// An event as a store gives it back: its SSE id and its message.
#[derive(Debug, Clone)]
pub struct StoredEvent {
    /// The SSE event id, `<stream>-<position>` (see [`event_id`]).
    pub id: String,
    /// What was sent.
    pub message: Message,
}

/// The events of one stream, oldest first: first those already stored after the position the
/// client resumed from, then each one appended later (by any instance), as it is appended.
/// It ends when the stream is forgotten (its session ended, or the store evicted it) and
/// otherwise runs until the endpoint drops it (the response is complete, or the client left).
/// An `Err` item is the store failing; the endpoint ends the response there, and the client
/// can resume again from the last id it received.
pub type EventFeed = BoxStream<'static, Result<StoredEvent, StoreError>>;

/// What [`EventStore::append`] returns: the new event's id, at once or once stored.
pub enum Appended {
    /// Stored already (an in-memory store): no future to poll.
    Ready(Result<String, StoreError>),
    /// Being stored (a network store): resolves to the id once the event is stored.
    Pending(StoreFuture<'static, String>),
}

impl Appended {
    /// The id, once the event is stored.
    pub async fn stored(self) -> Result<String, StoreError> {
        match self {
            Appended::Ready(id) => id,
            Appended::Pending(storing) => storing.await,
        }
    }
}

impl fmt::Debug for Appended {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Appended::Ready(id) => f.debug_tuple("Ready").field(id).finish(),
            Appended::Pending(_) => f.write_str("Pending"),
        }
    }
}

/// Where SSE events wait for a client to resume, shared by every instance of a deployment when
/// the store is (`modelcontext-redis`'s `RedisEventStore`). Keys are scoped by session: the
/// endpoint resumes only a stream of the session the request names, and only for the
/// principal that owns the session, so one session never replays another's events. The
/// in-memory [`MemoryEventStore`] is the default.
///
/// [`testing::contracts::event_store`](crate::testing::contracts::event_store) checks the
/// rules below against any implementation.
pub trait EventStore: Send + Sync + 'static {
    /// Stores `message` as the next event of `stream` in `session`, and gives its id,
    /// [`event_id`]`(stream, position)`, only once it is stored. Positions increase along a
    /// stream, whichever instance appends, and never repeat. Called in the order the events
    /// go out; the endpoint waits for each id before it sends the event.
    fn append(&self, session: &str, stream: StreamId, message: &Message) -> Appended;
    /// The events of `stream` in `session` after `after` (the position part of an id this
    /// store gave; `"0"` for the beginning), then live: see [`EventFeed`]. `None` when the
    /// store does not know the stream (never written, evicted, or another session's).
    fn follow(
        &self,
        session: &str,
        stream: StreamId,
        after: &str,
    ) -> StoreFuture<'static, Option<EventFeed>>;
    /// Forgets every stream of `session`; feeds following them end.
    fn end_session(&self, session: &str) -> StoreFuture<'static, ()>;
}

/// `<stream>-<position>`: the SSE id of an event.
pub fn event_id(stream: StreamId, position: impl fmt::Display) -> String {
    use fmt::Write;
    // One format of three numbers into room for the longest, instead of a nested
    // `Display` writing into a growing string: every answer on a stream gets an id.
    let mut id = String::with_capacity(EVENT_ID_BYTES);
    let _ = write!(id, "{:x}.{}-{position}", stream.instance, stream.number);
    id
}

/// A stream's instance in hex, its number and a position in decimal, and the separators.
const EVENT_ID_BYTES: usize = 16 + 1 + 20 + 1 + 20;

/// Splits a `Last-Event-ID` written by [`event_id`] into its stream and position.
pub(crate) fn parse_event_id(text: &str) -> Option<(StreamId, &str)> {
    let (stream, position) = text.trim().split_once('-')?;
    let valid = !position.is_empty() && position.bytes().all(|b| b.is_ascii_graphic());
    Some((stream.parse().ok()?, position)).filter(|_| valid)
}

/// A bounded in-memory [`EventStore`]: at most `per_stream` events per stream (oldest dropped
/// first), `max_streams` streams and [`max_events`](MemoryEventStore::max_events) events in
/// all (the stream used longest ago is dropped first). A client resuming from an event that
/// was dropped gets 404 `Unknown Last-Event-ID`. Clones share the store.
#[derive(Debug, Clone)]
pub struct MemoryEventStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    per_stream: usize,
    max_streams: usize,
    max_events: usize,
    streams: Mutex<Streams>,
}

/// Default events kept per stream: 1024, enough for the progress and log notifications of a
/// long call to survive a reconnect.
pub const DEFAULT_EVENTS_PER_STREAM: usize = 1024;
/// Default streams kept: 10 000, one per session at the default
/// [`HttpOptions::max_sessions`](super::HttpOptions::max_sessions).
pub const DEFAULT_EVENT_STREAMS: usize = 10_000;
/// Default events kept in all: 100 000 (at a typical notification of a few hundred bytes, some
/// tens of MiB), so the product of the two limits above never becomes the bound.
pub const DEFAULT_MAX_EVENTS: usize = 100_000;

type Key = (String, StreamId);

/// Events of one log with their positions, oldest first.
type Events = Vec<(u64, Message)>;

#[derive(Debug, Default)]
struct Streams {
    logs: HashMap<Key, Log>,
    tick: u64,
    /// Events in all logs.
    total: usize,
}

#[derive(Debug, Default)]
struct Log {
    next: u64,
    events: VecDeque<(u64, Message)>,
    used: u64,
    /// Wakes the feeds following this log; made by the first one, so a log nobody follows
    /// costs nothing more per event.
    followers: Option<Arc<Notify>>,
}

impl Drop for Log {
    /// A forgotten log ends the feeds that follow it.
    fn drop(&mut self) {
        if let Some(followers) = &self.followers {
            followers.notify_waiters();
        }
    }
}

impl Default for MemoryEventStore {
    /// [`DEFAULT_EVENTS_PER_STREAM`] events per stream, [`DEFAULT_EVENT_STREAMS`] streams,
    /// [`DEFAULT_MAX_EVENTS`] events in all.
    fn default() -> Self {
        MemoryEventStore::new(DEFAULT_EVENTS_PER_STREAM, DEFAULT_EVENT_STREAMS)
    }
}

impl MemoryEventStore {
    /// A store keeping `per_stream` events per stream and `max_streams` streams (at least 1
    /// each), and at most [`DEFAULT_MAX_EVENTS`] events in all.
    pub fn new(per_stream: usize, max_streams: usize) -> Self {
        let inner = Inner {
            per_stream: per_stream.max(1),
            max_streams: max_streams.max(1),
            max_events: DEFAULT_MAX_EVENTS,
            streams: Mutex::default(),
        };
        MemoryEventStore { inner: Arc::new(inner) }
    }

    /// Keeps at most `limit` events (at least 1) across all streams: beyond it the streams
    /// used longest ago are dropped whole, then the oldest events of the current one.
    pub fn max_events(self, limit: usize) -> Self {
        let Inner { per_stream, max_streams, .. } = *self.inner;
        let inner =
            Inner { per_stream, max_streams, max_events: limit.max(1), streams: Mutex::default() };
        MemoryEventStore { inner: Arc::new(inner) }
    }

    /// The events of `stream` in `session` after position `after`, oldest first, without
    /// following; `None` when the stream is unknown. For tests and tools.
    pub fn events_after(&self, session: &str, stream: StreamId, after: u64) -> Option<Events> {
        let streams = self.inner.streams();
        let log = streams.logs.get(&(session.to_owned(), stream))?;
        Some(log.events.iter().filter(|(seq, _)| *seq > after).cloned().collect())
    }
}

impl Inner {
    fn streams(&self) -> std::sync::MutexGuard<'_, Streams> {
        self.streams.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn append(&self, session: &str, stream: StreamId, message: &Message) -> u64 {
        let mut streams = self.streams();
        streams.tick += 1;
        let tick = streams.tick;
        let key = (session.to_owned(), stream);
        if !streams.logs.contains_key(&key) && streams.logs.len() >= self.max_streams {
            streams.evict_oldest(None);
        }
        let log = streams.logs.entry(key.clone()).or_default();
        log.next += 1;
        log.used = tick;
        let seq = log.next;
        let dropped =
            if log.events.len() == self.per_stream { log.events.pop_front() } else { None };
        log.events.push_back((seq, message.clone()));
        if let Some(followers) = &log.followers {
            followers.notify_waiters();
        }
        if dropped.is_none() {
            streams.total += 1;
        }
        while streams.total > self.max_events {
            if !streams.evict_oldest(Some(&key)) {
                streams.pop_front(&key);
            }
        }
        seq
    }

    /// The events after `after` (none yet: an empty batch), and what wakes the caller when
    /// more come; `None` once the log is gone.
    fn next_batch(&self, key: &Key, after: u64) -> Option<(Events, Arc<Notify>)> {
        let mut streams = self.streams();
        let log = streams.logs.get_mut(key)?;
        let batch: Vec<_> = log.events.iter().filter(|(seq, _)| *seq > after).cloned().collect();
        let wake = log.followers.get_or_insert_with(Arc::default).clone();
        Some((batch, wake))
    }
}

impl EventStore for MemoryEventStore {
    fn append(&self, session: &str, stream: StreamId, message: &Message) -> Appended {
        Appended::Ready(Ok(event_id(stream, self.inner.append(session, stream, message))))
    }

    fn follow(
        &self,
        session: &str,
        stream: StreamId,
        after: &str,
    ) -> StoreFuture<'static, Option<EventFeed>> {
        let key = (session.to_owned(), stream);
        let known = self.inner.streams().logs.contains_key(&key);
        let feed = match unsigned(after, 10) {
            Some(after) if known => Some(memory_feed(self.inner.clone(), key, after)),
            _ => None,
        };
        Box::pin(std::future::ready(Ok(feed)))
    }

    fn end_session(&self, session: &str) -> StoreFuture<'static, ()> {
        let mut streams = self.inner.streams();
        let mut ended = 0;
        streams.logs.retain(|(s, _), log| {
            let keep = s != session;
            if !keep {
                ended += log.events.len();
            }
            keep
        });
        streams.total -= ended;
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Follows the log `key` of `inner` from `after`: each batch of events, then a wait for the
/// next append, until the log is gone.
fn memory_feed(inner: Arc<Inner>, key: Key, after: u64) -> EventFeed {
    let state = (inner, key, after, VecDeque::new());
    let feed =
        futures_util::stream::unfold(state, |(inner, key, mut after, mut batch)| async move {
            loop {
                if let Some((seq, message)) = batch.pop_front() {
                    after = seq;
                    let event = StoredEvent { id: event_id(key.1, seq), message };
                    return Some((Ok(event), (inner, key, after, batch)));
                }
                let (events, wake) = inner.next_batch(&key, after)?;
                if !events.is_empty() {
                    batch.extend(events);
                    continue;
                }
                let woken = wake.notified();
                tokio::pin!(woken);
                // Registered before looking again: an append in between still wakes us.
                woken.as_mut().enable();
                let (events, _) = inner.next_batch(&key, after)?;
                if events.is_empty() {
                    woken.await;
                }
                batch.extend(events);
            }
        });
    Box::pin(feed)
}

impl Streams {
    /// Drops the stream used longest ago, other than `keep`; `false` when there is none.
    fn evict_oldest(&mut self, keep: Option<&Key>) -> bool {
        let oldest = self
            .logs
            .iter()
            .filter(|(key, _)| Some(*key) != keep)
            .min_by_key(|(_, log)| log.used)
            .map(|(key, _)| key.clone());
        let Some(log) = oldest.and_then(|key| self.logs.remove(&key)) else { return false };
        self.total -= log.events.len();
        true
    }

    /// Drops the oldest event of stream `key`.
    fn pop_front(&mut self, key: &Key) {
        if let Some(log) = self.logs.get_mut(key) {
            if log.events.pop_front().is_some() {
                self.total -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use modelcontext_types::Notification;

    fn note(n: u64) -> Message {
        Message::Notification(Notification { method: format!("n/{n}"), params: None })
    }

    fn stream(number: u64) -> StreamId {
        StreamId { instance: 0xab, number }
    }

    fn append(store: &MemoryEventStore, session: &str, number: u64, n: u64) -> u64 {
        store.inner.append(session, stream(number), &note(n))
    }

    fn kept(store: &MemoryEventStore, session: &str, number: u64) -> Option<Vec<u64>> {
        let events = store.events_after(session, stream(number), 0)?;
        Some(events.iter().map(|(seq, _)| *seq).collect())
    }

    #[test]
    fn replays_only_what_came_after_and_only_its_own_stream() {
        let store = MemoryEventStore::new(3, 10);
        for n in 1..=4 {
            assert_eq!(append(&store, "s", 1, n), n);
        }
        append(&store, "s", 2, 9);
        append(&store, "other", 1, 8);
        let replayed: Vec<u64> =
            store.events_after("s", stream(1), 2).expect("known").iter().map(|e| e.0).collect();
        assert_eq!(replayed, [3, 4]);
        assert_eq!(kept(&store, "s", 1).map(|e| e.len()), Some(3), "bounded per stream");
        assert!(kept(&store, "s", 3).is_none());
        drop(store.end_session("s"));
        assert!(kept(&store, "s", 1).is_none());
        assert!(kept(&store, "other", 1).is_some());
    }

    #[test]
    fn the_least_recently_used_stream_is_evicted() {
        let store = MemoryEventStore::new(10, 2);
        append(&store, "s", 1, 1);
        append(&store, "s", 2, 2);
        append(&store, "s", 1, 3);
        append(&store, "s", 3, 4);
        assert!(kept(&store, "s", 2).is_none());
        assert!(kept(&store, "s", 1).is_some());
    }

    #[test]
    fn the_overall_limit_drops_old_streams_then_old_events() {
        let store = MemoryEventStore::new(10, 10).max_events(3);
        append(&store, "s", 1, 1);
        append(&store, "s", 2, 2);
        append(&store, "s", 2, 3);
        assert_eq!(kept(&store, "s", 1).map(|e| e.len()), Some(1), "at the limit");
        append(&store, "s", 2, 4);
        assert!(kept(&store, "s", 1).is_none(), "over it: the older stream goes");
        append(&store, "s", 2, 5);
        assert_eq!(kept(&store, "s", 2).expect("known"), [2, 3, 4], "alone: its oldest goes");
        drop(store.end_session("s"));
        for n in 6..=8 {
            append(&store, "t", 1, n);
        }
        assert_eq!(kept(&store, "t", 1).map(|e| e.len()), Some(3), "ended sessions free room");
    }

    #[test]
    fn numbers_in_ids_are_digits_only() {
        assert_eq!(unsigned("ab", 16), Some(0xab));
        assert_eq!(unsigned("AB", 16), Some(0xab));
        assert_eq!(unsigned("42", 10), Some(42));
        for text in ["", "+ab", "-1", " 1", "1 ", "0x1", "g", "+0", "ab", "1_0"] {
            let radix = if text == "ab" { 10 } else { 16 };
            assert_eq!(unsigned(text, radix), None, "{text:?} in radix {radix}");
        }
        assert_eq!(unsigned("ffffffffffffffff", 16), Some(u64::MAX));
        assert_eq!(unsigned("10000000000000000", 16), None, "overflow");
    }

    #[test]
    fn event_ids_roundtrip() {
        let id = event_id(stream(7), 42);
        assert_eq!(id, "ab.7-42");
        assert_eq!(parse_event_id(&id), Some((stream(7), "42")));
        assert_eq!(
            parse_event_id("0.0-1733000000000-3"),
            Some((StreamId::STANDALONE, "1733000000000-3"))
        );
        assert_eq!(parse_event_id("x.1-1"), None);
        assert_eq!(parse_event_id("5"), None);
        assert_eq!(parse_event_id("1.2-"), None);
        assert_eq!(parse_event_id("1.2-a b"), None);
        // A sign is not a digit: `+ab.7` is not stream `ab.7` spelt another way.
        assert_eq!(parse_event_id("+ab.7-42"), None);
        assert_eq!(parse_event_id("ab.+7-42"), None);
        assert_eq!(parse_event_id("-ab.7-42"), None);
        assert_eq!(parse_event_id("ab.-7-42"), None);
        // Hex digits only in the instance part, and nothing that overflows.
        assert_eq!(parse_event_id("0xab.7-42"), None);
        assert_eq!(parse_event_id("ag.7-42"), None);
        assert_eq!(parse_event_id("10000000000000000.7-42"), None);
        assert_eq!(parse_event_id("ab.7-42"), Some((stream(7), "42")));
    }
}
