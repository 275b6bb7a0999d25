//! What the page learns without asking: every JSON-RPC message both ways, server logs,
//! progress, notifications, and the questions the server asks the person. The page fetches
//! `/api/events?after=N` in a loop (a long poll: the answer waits until there is something
//! newer than N, or a few seconds pass).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::Notify;

/// Events kept for a page that (re)loads; older ones are dropped.
const KEPT: usize = 5000;

/// How long a poll waits for something new before answering with nothing.
const POLL_WAIT: Duration = Duration::from_secs(20);

/// The numbered events, shared by the connection's callbacks and the API.
#[derive(Clone, Default)]
pub struct Events {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    log: Mutex<Log>,
    arrived: Notify,
}

#[derive(Default)]
struct Log {
    /// The number of the next event (the first is 1).
    next: u64,
    kept: VecDeque<Value>,
}

impl Events {
    /// Adds an event of `kind` with `fields` (an object), numbered and timestamped.
    pub fn push(&self, kind: &str, mut fields: Value) {
        {
            let mut log = self.inner.log.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            log.next += 1;
            let millis = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| since.as_millis() as u64);
            if let Value::Object(map) = &mut fields {
                map.insert("seq".into(), json!(log.next));
                map.insert("type".into(), json!(kind));
                map.insert("time".into(), json!(millis));
            }
            log.kept.push_back(fields);
            if log.kept.len() > KEPT {
                log.kept.pop_front();
            }
        }
        self.inner.arrived.notify_waiters();
    }

    /// The events after number `after`, waiting up to [`POLL_WAIT`] for the first of them.
    pub async fn after(&self, after: u64) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + POLL_WAIT;
        loop {
            // Registered before looking, so an event pushed in between is not missed.
            let arrived = self.inner.arrived.notified();
            let newer = self.newer_than(after);
            if !newer.is_empty() {
                return newer;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return Vec::new();
            }
        }
    }

    fn newer_than(&self, after: u64) -> Vec<Value> {
        let log = self.inner.log.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let seq = |event: &Value| event.get("seq").and_then(Value::as_u64).unwrap_or(0);
        log.kept.iter().filter(|event| seq(event) > after).cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn a_poll_gets_what_is_newer_and_waits_for_the_next() {
        let events = Events::default();
        events.push("log", json!({"data": "one"}));
        events.push("log", json!({"data": "two"}));
        let got = events.after(1).await;
        assert_eq!(got.len(), 1);
        assert_eq!(got[0]["data"], "two");
        assert_eq!(got[0]["seq"], 2);
        let later = events.clone();
        let waiting = tokio::spawn(async move { later.after(2).await });
        tokio::task::yield_now().await;
        events.push("progress", json!({"progress": 1}));
        let got = waiting.await.expect("the poll ends");
        assert_eq!(got[0]["type"], "progress");
    }
}
