//! [`RedisEventStore`]: the SSE event logs of handshake-era sessions, in Redis Streams.
//!
//! One SSE stream is one Redis Stream, `modelcontext:{deployment}:events:{SESSION}:<stream>`,
//! whose entries hold the message's JSON in field `m`; the Redis entry id is the event's
//! position, so the SSE id is `<stream>-<ms>-<seq>` and ids can never collide, whichever
//! instance appends. A set `…:events:{SESSION}` names the session's streams, for
//! [`EventStore::end_session`]. The session id is the hash tag: one session's keys share a
//! Redis Cluster slot. Each append is one pipeline (one round trip): `XADD … MAXLEN ~ N`,
//! `PEXPIRE` of the stream, `SADD` and `PEXPIRE` of the set; on a cluster, the same four in one
//! script (a redirection inside a pipeline is not followed).
//!
//! A resumed stream follows its log with `XREAD BLOCK` on a connection of its own (a blocked
//! connection serves nobody else), taken from a pool of at most
//! [`max_followers`](RedisEventStore::max_followers) connections; beyond that a feed polls
//! with a non-blocking `XREAD` on the shared connection.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelcontext::server::http::{
    Appended, EventFeed, EventStore, StoreError, StoreFuture, StoredEvent, StreamId, event_id,
};
use modelcontext::types::Message;
use redis::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::endpoint::{Connection, Dedicated, Endpoint};
use crate::millis;
use crate::sessions::within;
use crate::{Deployment, Error};

/// Default time an SSE stream is kept after its last event: one hour.
pub const DEFAULT_EVENT_TTL: Duration = Duration::from_secs(60 * 60);
/// Default events kept per stream (approximately: `MAXLEN ~`): 1024, as the in-memory store.
pub const DEFAULT_EVENTS_PER_STREAM: usize = 1024;
/// Default most connections blocked in `XREAD` at once (resumed streams being followed).
pub const DEFAULT_MAX_FOLLOWERS: usize = 64;

/// How long one `XREAD BLOCK` waits before the feed checks its stream still exists.
const BLOCK: Duration = Duration::from_secs(1);
/// How often a feed without a connection of its own polls.
const POLL: Duration = Duration::from_millis(100);
/// Entries read at once.
const BATCH: usize = 256;

/// An [`EventStore`] in Redis Streams, shared by every instance of a [`Deployment`]: a
/// handshake-era stream cut on one instance resumes on any other, and follows the events the
/// first instance still appends. Built by [`Deployment::event_store`]; connects on first use.
#[derive(Clone)]
pub struct RedisEventStore {
    connection: Connection,
    endpoint: Endpoint,
    prefix: String,
    timeout: Duration,
    ttl: Duration,
    per_stream: usize,
    followers: Arc<Followers>,
}

impl std::fmt::Debug for RedisEventStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisEventStore").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

/// The connections feeds block on: idle ones, and permits for at most the cap in use.
struct Followers {
    permits: Arc<Semaphore>,
    /// Each with the count of master switches when it was made (Sentinel; else always 0).
    idle: Mutex<Vec<(u64, Dedicated)>>,
}

impl RedisEventStore {
    pub(crate) fn new(deployment: &Deployment) -> Result<RedisEventStore, Error> {
        let timeout = deployment.command_timeout;
        let connection = deployment.lazy_connection()?;
        Ok(RedisEventStore {
            connection,
            endpoint: deployment.endpoint.clone(),
            prefix: deployment.key("events"),
            timeout,
            ttl: DEFAULT_EVENT_TTL,
            per_stream: DEFAULT_EVENTS_PER_STREAM,
            followers: Followers::new(DEFAULT_MAX_FOLLOWERS),
        })
    }

    /// How long a stream is kept after its last event (default [`DEFAULT_EVENT_TTL`]); set it
    /// at least to the sessions' idle timeout, so a session's events live as long as it may.
    pub fn ttl(mut self, ttl: Duration) -> RedisEventStore {
        self.ttl = ttl;
        self
    }

    /// Events kept per stream, approximately (`XADD MAXLEN ~`; default
    /// [`DEFAULT_EVENTS_PER_STREAM`]). At least 1.
    pub fn events_per_stream(mut self, events: usize) -> RedisEventStore {
        self.per_stream = events.max(1);
        self
    }

    /// The most resumed streams that block a connection of their own at once (default
    /// [`DEFAULT_MAX_FOLLOWERS`]); the others poll every 100 ms on the shared connection.
    pub fn max_followers(mut self, connections: usize) -> RedisEventStore {
        self.followers = Followers::new(connections);
        self
    }

    /// The stream's key and the session's index; `None` for a session id that cannot be a
    /// hash tag (braces), which no session of ours has.
    fn keys(&self, session: &str, stream: StreamId) -> Option<(String, String)> {
        if session.contains(['{', '}']) {
            return None;
        }
        let index = format!("{}:{{{session}}}", self.prefix);
        Some((format!("{index}:{stream}"), index))
    }

    /// Runs `command` on the shared connection within the timeout.
    async fn execute<T: redis::FromRedisValue>(
        &self,
        command: &redis::Cmd,
    ) -> Result<T, StoreError> {
        let mut connection = self.connection.clone();
        within(self.timeout, command.query_async(&mut connection)).await
    }
}

impl Followers {
    fn new(cap: usize) -> Arc<Followers> {
        let permits = Arc::new(Semaphore::new(cap));
        Arc::new(Followers { permits, idle: Mutex::default() })
    }
}

impl EventStore for RedisEventStore {
    fn append(&self, session: &str, stream: StreamId, message: &Message) -> Appended {
        let Some((key, index)) = self.keys(session, stream) else {
            return Appended::Ready(Err(StoreError::unavailable("a session id with braces")));
        };
        let ttl = millis(self.ttl);
        let (mut connection, timeout) = (self.connection.clone(), self.timeout);
        if connection.is_cluster() {
            let mut command = redis::cmd("EVAL");
            command.arg(APPEND).arg(2).arg(&key).arg(&index).arg(self.per_stream);
            command.arg(message.encode()).arg(&ttl).arg(stream.to_string());
            return Appended::Pending(Box::pin(async move {
                let position: String =
                    within(timeout, command.query_async(&mut connection)).await?;
                Ok(event_id(stream, position))
            }));
        }
        let mut pipe = redis::pipe();
        pipe.cmd("XADD").arg(&key).arg("MAXLEN").arg("~").arg(self.per_stream).arg("*");
        pipe.arg("m").arg(message.encode());
        pipe.cmd("PEXPIRE").arg(&key).arg(&ttl).ignore();
        pipe.cmd("SADD").arg(&index).arg(stream.to_string()).ignore();
        pipe.cmd("PEXPIRE").arg(&index).arg(&ttl).ignore();
        Appended::Pending(Box::pin(async move {
            let (position,): (String,) = within(timeout, pipe.query_async(&mut connection)).await?;
            Ok(event_id(stream, position))
        }))
    }

    fn follow(
        &self,
        session: &str,
        stream: StreamId,
        after: &str,
    ) -> StoreFuture<'static, Option<EventFeed>> {
        let (store, after) = (self.clone(), after.to_owned());
        let keys = self.keys(session, stream);
        Box::pin(async move {
            let Some((key, _)) = keys.filter(|_| is_position(&after)) else { return Ok(None) };
            let exists: bool = store.execute(redis::cmd("EXISTS").arg(&key)).await?;
            Ok(exists.then(|| feed(store, key, stream, after)))
        })
    }

    fn end_session(&self, session: &str) -> StoreFuture<'static, ()> {
        let (store, keys) = (self.clone(), self.keys(session, StreamId::STANDALONE));
        Box::pin(async move {
            let Some((_, index)) = keys else { return Ok(()) };
            let mut forget = redis::cmd("EVAL");
            forget.arg(END_SESSION).arg(1).arg(index);
            store.execute::<()>(&forget).await
        })
    }
}

/// The append's pipeline as one script, on Redis Cluster (see `Connection::is_cluster`).
/// KEYS: the stream, the index. ARGV: the events kept, the message, the lifetime in ms, the
/// stream's name. Returns the entry's id.
const APPEND: &str = r"
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'm', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('SADD', KEYS[2], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return id";

/// Deletes a session's streams and their index. KEYS: the index; its members are the stream
/// names, each key being `<index>:<name>` (same hash slot).
const END_SESSION: &str = r"
for _, name in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  redis.call('DEL', KEYS[1] .. ':' .. name)
end
redis.call('DEL', KEYS[1])
return redis.status_reply('OK')";

/// `0` or a Redis entry id `<ms>-<seq>`.
fn is_position(text: &str) -> bool {
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    text == "0" || text.split_once('-').is_some_and(|(ms, seq)| digits(ms) && digits(seq))
}

/// A connection a feed blocks on, back to the pool when the feed is done with it (unless a
/// read was cut off in the middle: that connection still waits on Redis, and is dropped).
struct Lease {
    connection: Option<Dedicated>,
    /// The count of master switches when the connection was made.
    switches: u64,
    followers: Arc<Followers>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(connection) = self.connection.take() {
            let mut idle = self.followers.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.push((self.switches, connection));
        }
    }
}

/// What a feed holds between items.
struct Follow {
    store: RedisEventStore,
    key: String,
    stream: StreamId,
    after: String,
    batch: VecDeque<StoredEvent>,
    lease: Option<Lease>,
    failed: bool,
}

fn feed(store: RedisEventStore, key: String, stream: StreamId, after: String) -> EventFeed {
    let follow =
        Follow { store, key, stream, after, batch: VecDeque::new(), lease: None, failed: false };
    Box::pin(futures_util::stream::unfold(follow, |mut follow| async move {
        loop {
            if let Some(event) = follow.batch.pop_front() {
                return Some((Ok(event), follow));
            }
            if follow.failed {
                return None;
            }
            match follow.read().await {
                Ok(true) => continue,
                Ok(false) => return None,
                Err(error) => {
                    follow.failed = true;
                    return Some((Err(error), follow));
                }
            }
        }
    }))
}

impl Follow {
    /// Reads what came after `after` into the batch, waiting for it; `false` once the stream
    /// is gone (its session ended or it expired).
    async fn read(&mut self) -> Result<bool, StoreError> {
        let mut xread = redis::cmd("XREAD");
        xread.arg("COUNT").arg(BATCH);
        let leased = self.lease().await;
        if leased {
            xread.arg("BLOCK").arg(BLOCK.as_millis() as u64);
        }
        xread.arg("STREAMS").arg(&self.key).arg(&self.after);
        let answer = match self.lease.as_mut().and_then(|lease| lease.connection.take()) {
            Some(mut connection) => {
                let wait = BLOCK + self.store.timeout;
                let answer = within(wait, xread.query_async::<Value>(&mut connection)).await;
                match (&mut self.lease, answer) {
                    (Some(lease), Ok(answer)) => {
                        lease.connection = Some(connection);
                        answer
                    }
                    // A connection that failed is not given back to the pool.
                    (_, answer) => {
                        self.lease = None;
                        answer?
                    }
                }
            }
            None => self.store.execute::<Value>(&xread).await?,
        };
        let before = self.batch.len();
        entries(answer, |position, message| {
            self.batch.push_back(StoredEvent { id: event_id(self.stream, position), message });
            self.after = position.to_owned();
        });
        if self.batch.len() > before {
            return Ok(true);
        }
        if !leased {
            tokio::time::sleep(POLL).await;
        }
        self.store.execute(redis::cmd("EXISTS").arg(&self.key)).await
    }

    /// Makes sure the feed has a connection of its own if the pool allows; `true` if it has.
    /// A connection made before the master moved (Sentinel) blocks on a node that no longer
    /// takes the appends: it is dropped, not given back.
    async fn lease(&mut self) -> bool {
        let switches = self.store.endpoint.switches();
        match &mut self.lease {
            Some(lease) if lease.switches == switches => return true,
            Some(stale) => {
                stale.connection = None;
                self.lease = None;
            }
            None => {}
        }
        let followers = self.store.followers.clone();
        let Ok(permit) = followers.permits.clone().try_acquire_owned() else { return false };
        let idle = {
            let mut idle = followers.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.retain(|(made_at, _)| *made_at == switches);
            idle.pop().map(|(_, connection)| connection)
        };
        let connection = match idle {
            Some(connection) => connection,
            None => {
                let timeout = self.store.timeout;
                let connecting = self.store.endpoint.dedicated(timeout, BLOCK + timeout);
                match within(self.store.timeout, connecting).await {
                    Ok(connection) => connection,
                    Err(_) => return false,
                }
            }
        };
        let lease = Lease { connection: Some(connection), switches, followers, _permit: permit };
        self.lease = Some(lease);
        true
    }
}

/// Calls `each(position, message)` for every entry of an `XREAD` answer (RESP2 arrays or
/// RESP3 maps); entries whose message is missing or malformed are skipped with a warning.
fn entries(answer: Value, mut each: impl FnMut(&str, Message)) {
    let streams = match answer {
        Value::Map(pairs) => pairs.into_iter().map(|(_, entries)| entries).collect(),
        Value::Array(streams) => streams
            .into_iter()
            .filter_map(|stream| match stream {
                Value::Array(mut pair) if pair.len() == 2 => pair.pop(),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    for entry in streams.into_iter().flat_map(array) {
        let mut parts = array(entry).into_iter();
        let (Some(position), Some(fields)) = (parts.next(), parts.next()) else { continue };
        let Some(position) = text(&position) else { continue };
        let message = array(fields)
            .chunks(2)
            .find(|pair| pair.first().and_then(text).as_deref() == Some("m"))
            .and_then(|pair| pair.get(1).and_then(text))
            .and_then(|json| Message::decode_str(&json).ok());
        match message {
            Some(message) => each(&position, message),
            None => tracing::warn!(%position, "an SSE event in Redis without a valid message"),
        }
    }
}

fn array(value: Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items,
        _ => Vec::new(),
    }
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok(),
        Value::SimpleString(text) => Some(text.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_zero_or_redis_ids() {
        assert!(is_position("0"));
        assert!(is_position("1733000000000-12"));
        for bad in ["", "-", "1-", "-1", "a-1", "1-2-3", "1 -2"] {
            assert!(!is_position(bad), "{bad:?}");
        }
    }
}
