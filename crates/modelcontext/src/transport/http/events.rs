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
/// first) and `max_streams` streams in all (the stream used longest ago is dropped first).
#[derive(Debug)]
pub struct MemoryEventStore {
    per_stream: usize,
    max_streams: usize,
    streams: Mutex<Streams>,
}

#[derive(Debug, Default)]
struct Streams {
    logs: HashMap<(String, u64), Log>,
    tick: u64,
}

#[derive(Debug, Default)]
struct Log {
    next: u64,
    events: VecDeque<(u64, Message)>,
    used: u64,
}

impl Default for MemoryEventStore {
    /// 1024 events per stream, 10 000 streams.
    fn default() -> Self {
        MemoryEventStore::new(1024, 10_000)
    }
}

impl MemoryEventStore {
    /// A store keeping `per_stream` events per stream and `max_streams` streams.
    pub fn new(per_stream: usize, max_streams: usize) -> Self {
        MemoryEventStore {
            per_stream: per_stream.max(1),
            max_streams: max_streams.max(1),
            streams: Mutex::default(),
        }
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
            evict_oldest(&mut streams.logs);
        }
        let log = streams.logs.entry(key).or_default();
        log.next += 1;
        log.used = tick;
        if log.events.len() == self.per_stream {
            log.events.pop_front();
        }
        log.events.push_back((log.next, message.clone()));
        log.next
    }

    fn replay(&self, session: &str, stream: u64, after: u64) -> Option<Vec<(u64, Message)>> {
        let streams = self.streams();
        let log = streams.logs.get(&(session.to_owned(), stream))?;
        Some(log.events.iter().filter(|(seq, _)| *seq > after).cloned().collect())
    }

    fn end_session(&self, session: &str) {
        self.streams().logs.retain(|(s, _), _| s != session);
    }
}

fn evict_oldest(logs: &mut HashMap<(String, u64), Log>) {
    let oldest = logs.iter().min_by_key(|(_, log)| log.used).map(|(key, _)| key.clone());
    if let Some(key) = oldest {
        logs.remove(&key);
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
    fn event_ids_roundtrip() {
        assert_eq!(parse_event_id(&event_id(7, 42)), Some((7, 42)));
        assert_eq!(parse_event_id("x-1"), None);
        assert_eq!(parse_event_id("5"), None);
    }
}
