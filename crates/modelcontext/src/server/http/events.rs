//! Resumable SSE streams for handshake-era sessions (spec 2025-11-25 `basic/transports`,
//! resumability): every event a session sends on an SSE stream gets an id
//! `<stream>-<sequence>` and is kept in an [`EventStore`], so a client whose stream dropped
//! can `GET` with `Last-Event-ID` and receive what it missed, from that stream only.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use modelcontext_types::Message;

/// Where SSE events wait for a client to resume. Keys are scoped by session, so one session
/// can never replay another's events. The in-memory [`MemoryEventStore`] is the default; a
/// store shared by several server instances implements this trait.
pub trait EventStore: Send + Sync + 'static {
    /// Records `message` as the next event of `stream` in `session`; returns its sequence
    /// number (1, 2, ...).
    fn append(&self, session: &str, stream: u64, message: &Message) -> u64;
    /// The events of `stream` after sequence `after`, oldest first; `None` when the store
    /// does not know the stream (never existed, or evicted).
    fn replay(&self, session: &str, stream: u64, after: u64) -> Option<Vec<(u64, Message)>>;
    /// Forgets everything of `session`.
    fn end_session(&self, session: &str);
}

/// A bounded in-memory [`EventStore`]: at most `per_stream` events per stream (oldest dropped
/// first), `max_streams` streams and [`max_events`](MemoryEventStore::max_events) events in
/// all (the stream used longest ago is dropped first). A client resuming from an event that
/// was dropped gets 404 `Unknown Last-Event-ID`.
#[derive(Debug)]
pub struct MemoryEventStore {
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

#[derive(Debug, Default)]
struct Streams {
    logs: HashMap<(String, u64), Log>,
    tick: u64,
    /// Events in all logs.
    total: usize,
}

#[derive(Debug, Default)]
struct Log {
    next: u64,
    events: VecDeque<(u64, Message)>,
    used: u64,
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
        MemoryEventStore {
            per_stream: per_stream.max(1),
            max_streams: max_streams.max(1),
            max_events: DEFAULT_MAX_EVENTS,
            streams: Mutex::default(),
        }
    }

    /// Keeps at most `limit` events (at least 1) across all streams: beyond it the streams
    /// used longest ago are dropped whole, then the oldest events of the current one.
    pub fn max_events(mut self, limit: usize) -> Self {
        self.max_events = limit.max(1);
        self
    }

    fn streams(&self) -> std::sync::MutexGuard<'_, Streams> {
        self.streams.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl EventStore for MemoryEventStore {
    fn append(&self, session: &str, stream: u64, message: &Message) -> u64 {
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

    fn replay(&self, session: &str, stream: u64, after: u64) -> Option<Vec<(u64, Message)>> {
        let streams = self.streams();
        let log = streams.logs.get(&(session.to_owned(), stream))?;
        Some(log.events.iter().filter(|(seq, _)| *seq > after).cloned().collect())
    }

    fn end_session(&self, session: &str) {
        let mut streams = self.streams();
        let mut ended = 0;
        streams.logs.retain(|(s, _), log| {
            let keep = s != session;
            if !keep {
                ended += log.events.len();
            }
            keep
        });
        streams.total -= ended;
    }
}

impl Streams {
    /// Drops the stream used longest ago, other than `keep`; `false` when there is none.
    fn evict_oldest(&mut self, keep: Option<&(String, u64)>) -> bool {
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
    fn pop_front(&mut self, key: &(String, u64)) {
        if let Some(log) = self.logs.get_mut(key) {
            if log.events.pop_front().is_some() {
                self.total -= 1;
            }
        }
    }
}

/// `<stream>-<sequence>`.
pub(crate) fn event_id(stream: u64, seq: u64) -> String {
    format!("{stream}-{seq}")
}

/// Parses a `Last-Event-ID` written by [`event_id`].
pub(crate) fn parse_event_id(text: &str) -> Option<(u64, u64)> {
    let (stream, seq) = text.trim().split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use modelcontext_types::Notification;

    fn note(n: u64) -> Message {
        Message::Notification(Notification { method: format!("n/{n}"), params: None })
    }

    #[test]
    fn replays_only_what_came_after_and_only_its_own_stream() {
        let store = MemoryEventStore::new(3, 10);
        for n in 1..=4 {
            assert_eq!(store.append("s", 1, &note(n)), n);
        }
        store.append("s", 2, &note(9));
        store.append("other", 1, &note(8));
        let replayed: Vec<u64> =
            store.replay("s", 1, 2).expect("known").iter().map(|(seq, _)| *seq).collect();
        assert_eq!(replayed, [3, 4]);
        assert_eq!(store.replay("s", 1, 0).map(|e| e.len()), Some(3), "bounded per stream");
        assert!(store.replay("s", 3, 0).is_none());
        store.end_session("s");
        assert!(store.replay("s", 1, 0).is_none());
        assert!(store.replay("other", 1, 0).is_some());
    }

    #[test]
    fn the_least_recently_used_stream_is_evicted() {
        let store = MemoryEventStore::new(10, 2);
        store.append("s", 1, &note(1));
        store.append("s", 2, &note(2));
        store.append("s", 1, &note(3));
        store.append("s", 3, &note(4));
        assert!(store.replay("s", 2, 0).is_none());
        assert!(store.replay("s", 1, 0).is_some());
    }

    #[test]
    fn the_overall_limit_drops_old_streams_then_old_events() {
        let store = MemoryEventStore::new(10, 10).max_events(3);
        store.append("s", 1, &note(1));
        store.append("s", 2, &note(2));
        store.append("s", 2, &note(3));
        assert_eq!(store.replay("s", 1, 0).map(|e| e.len()), Some(1), "at the limit");
        store.append("s", 2, &note(4));
        assert!(store.replay("s", 1, 0).is_none(), "over it: the older stream goes");
        store.append("s", 2, &note(5));
        let kept: Vec<u64> = store.replay("s", 2, 0).expect("known").iter().map(|e| e.0).collect();
        assert_eq!(kept, [2, 3, 4], "alone: its oldest event goes");
        store.end_session("s");
        store.append("t", 1, &note(6));
        store.append("t", 1, &note(7));
        store.append("t", 1, &note(8));
        assert_eq!(store.replay("t", 1, 0).map(|e| e.len()), Some(3), "ended sessions free room");
    }

    #[test]
    fn event_ids_roundtrip() {
        assert_eq!(parse_event_id(&event_id(7, 42)), Some((7, 42)));
        assert_eq!(parse_event_id("x-1"), None);
        assert_eq!(parse_event_id("5"), None);
    }
}
