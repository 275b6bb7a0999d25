//! [`RedisSessionStore`]: handshake-era session records in Redis.
//!
//! One session is two keys that share a Redis Cluster hash slot (the session id is the hash
//! tag): a hash `modelcontext:{deployment}:session:{ID}` (principal, protocol version,
//! `initialize` params, initialized flag, log level) and a set `…:{ID}:subscriptions`. Both
//! expire together after the idle time. Each change that must only touch a live record is one
//! short Lua script, so an update never brings back an expired or deleted session.
//!
//! Each update and delete is also published on the deployment's channel
//! `modelcontext:{deployment}:sessions` (by the same script, so only a change that happened is
//! told), and [`SessionStore::events`] follows that channel on a dedicated connection: that is
//! how the instances holding a session hear of a change made elsewhere. A lost connection is
//! made again and reported as a gap.
//!
//! Every call goes through a circuit breaker: after [`DEFAULT_BREAKER_THRESHOLD`] failures in
//! a row, calls fail at once for [`DEFAULT_BREAKER_COOL_DOWN`], so a Redis outage does not cost
//! each request a timeout.

use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::BoxStream;
use modelcontext::server::http::{
    SessionChange, SessionEvent, SessionRecord, SessionStore, StoreError, StoreFuture,
};
use serde::{Deserialize, Serialize};

use crate::breaker::{BreakerStats, DEFAULT_BREAKER_COOL_DOWN, DEFAULT_BREAKER_THRESHOLD};
use crate::endpoint::{Connection, Endpoint};
use crate::millis;
use crate::{Breaker, Deployment, Error};

/// Creates the record if no live one has its id. KEYS: record, subscriptions. ARGV: idle
/// time in ms, then the hash's fields and values.
const CREATE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1";

/// Changes a live record, and says so on the events channel. ARGV: the channel, the message,
/// then `hset FIELD VALUE`, `sadd URI` or `srem URI`. The set gets the record's remaining
/// time, so both expire together.
const UPDATE: &str = r"
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return 0 end
if ARGV[3] == 'hset' then
  redis.call('HSET', KEYS[1], ARGV[4], ARGV[5])
elseif ARGV[3] == 'sadd' then
  redis.call('SADD', KEYS[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[2], ttl)
else
  redis.call('SREM', KEYS[2], ARGV[4])
end
redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1";

/// Restarts a live record's idle time. ARGV: the idle time in ms.
const TOUCH: &str = r"
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1";

/// Reads the record and its subscriptions (on Redis Cluster, instead of a pipeline: see
/// `Connection::is_cluster`).
const LOAD: &str = r"
return {redis.call('HGETALL', KEYS[1]), redis.call('SMEMBERS', KEYS[2])}";

/// Deletes the record, then says so on the events channel (whoever hears it finds no record).
/// ARGV: the channel, the message. A script, not a pipeline: on Redis Cluster a pipeline goes
/// to one node, and the channel's name hashes to another slot than the keys'.
const DELETE: &str = r"
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1";

/// A [`SessionStore`] in Redis, shared by every instance of a [`Deployment`]. Built by
/// [`Deployment::session_store`]; connects on first use, and reconnects by itself.
#[derive(Clone)]
pub struct RedisSessionStore {
    connection: Connection,
    prefix: String,
    timeout: Duration,
    /// Where updates and deletes are told (`modelcontext:{deployment}:sessions`).
    channel: String,
    /// This store's id in what it publishes: its own messages are not handed back to it.
    origin: String,
    /// For the events' dedicated pub/sub connections.
    endpoint: Endpoint,
    health_check: Duration,
    breaker: Arc<Breaker>,
}

/// One update or delete on the events channel: `{"origin":"…","id":"…","kind":"…",…}`.
#[derive(Debug, Serialize, Deserialize)]
struct Note {
    origin: String,
    id: String,
    #[serde(flatten)]
    what: What,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
enum What {
    Initialized,
    LogLevel(String),
    Subscribe(String),
    Unsubscribe(String),
    Deleted,
}

impl Note {
    fn into_event(self) -> Option<SessionEvent> {
        let id = self.id;
        let change = match self.what {
            What::Deleted => return Some(SessionEvent::Deleted { id }),
            What::Initialized => SessionChange::Initialized,
            What::LogLevel(level) => SessionChange::LogLevel(level),
            What::Subscribe(uri) => SessionChange::Subscribe(uri),
            What::Unsubscribe(uri) => SessionChange::Unsubscribe(uri),
        };
        Some(SessionEvent::Changed { id, change })
    }
}

impl std::fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessionStore").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

impl RedisSessionStore {
    pub(crate) fn new(deployment: &Deployment) -> Result<RedisSessionStore, Error> {
        let timeout = deployment.command_timeout;
        let connection = deployment.lazy_connection()?;
        Ok(RedisSessionStore {
            connection,
            prefix: deployment.key("session"),
            timeout,
            channel: deployment.key("sessions"),
            origin: crate::bus::random_origin(),
            endpoint: deployment.endpoint.clone(),
            health_check: deployment.health_check,
            breaker: Arc::new(Breaker::new(DEFAULT_BREAKER_THRESHOLD, DEFAULT_BREAKER_COOL_DOWN)),
        })
    }

    /// What the store's circuit breaker has done: failed calls, outages, calls failed at once.
    pub fn stats(&self) -> BreakerStats {
        self.breaker.stats()
    }

    /// The events-channel message for a change of session `id`.
    fn note(&self, id: &str, what: What) -> String {
        let note = Note { origin: self.origin.clone(), id: id.to_owned(), what };
        serde_json::to_string(&note).unwrap_or_default()
    }

    /// The record's key and its subscriptions' key; `None` for an id that cannot be a hash
    /// tag (with braces), which no session of ours has.
    fn keys(&self, id: &str) -> Option<(String, String)> {
        if id.contains(['{', '}']) {
            return None;
        }
        let record = format!("{}:{{{id}}}", self.prefix);
        let subscriptions = format!("{record}:subscriptions");
        Some((record, subscriptions))
    }

    /// Runs `command` within the timeout, through the breaker.
    async fn run<T: redis::FromRedisValue>(&self, command: redis::Cmd) -> Result<T, StoreError> {
        let mut connection = self.connection.clone();
        self.guarded(command.query_async(&mut connection)).await
    }

    /// `answer` within the timeout, unless the breaker is open (then an error at once); its
    /// outcome is recorded by the breaker.
    async fn guarded<T>(
        &self,
        answer: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, StoreError> {
        self.breaker.call(self.timeout, answer).await.map_err(StoreError::unavailable)
    }

    /// `EVAL script 2 record subscriptions args…`: 1 or 0 as a bool.
    async fn script(&self, script: &str, id: &str, args: &[&str]) -> Result<bool, StoreError> {
        let Some((record, subscriptions)) = self.keys(id) else { return Ok(false) };
        let mut command = redis::cmd("EVAL");
        command.arg(script).arg(2).arg(record).arg(subscriptions).arg(args);
        Ok(self.run::<i64>(command).await? == 1)
    }
}

/// Redis's answer within `timeout`; an error or silence is the store being unavailable.
pub(crate) async fn within<T>(
    timeout: Duration,
    answer: impl Future<Output = redis::RedisResult<T>>,
) -> Result<T, StoreError> {
    crate::breaker::timed(timeout, answer).await.map_err(StoreError::unavailable)
}

/// The hash's fields for `record` (absent options are absent fields).
fn fields(record: &SessionRecord) -> Vec<&str> {
    let mut fields = vec![
        "protocol_version",
        record.protocol_version.as_str(),
        "initialize",
        record.initialize.as_str(),
        "initialized",
        if record.initialized { "1" } else { "0" },
    ];
    if let Some(principal) = &record.principal {
        fields.extend(["principal", principal.as_str()]);
    }
    if let Some(level) = &record.log_level {
        fields.extend(["log_level", level.as_str()]);
    }
    fields
}

/// The record read back from its hash and set; `None` for an empty hash (no such session).
fn record_from(
    id: &str,
    mut hash: std::collections::HashMap<String, String>,
    subscriptions: Vec<String>,
) -> Option<SessionRecord> {
    let protocol_version = hash.remove("protocol_version")?;
    let initialize = hash.remove("initialize").unwrap_or_default();
    let mut record = SessionRecord::new(id, protocol_version, initialize);
    record.principal = hash.remove("principal");
    record.initialized = hash.get("initialized").is_some_and(|flag| flag == "1");
    record.log_level = hash.remove("log_level");
    record.subscriptions = subscriptions.into_iter().collect();
    Some(record)
}

impl SessionStore for RedisSessionStore {
    fn create(&self, record: SessionRecord, idle: Duration) -> StoreFuture<'_, bool> {
        Box::pin(async move {
            if self.keys(&record.id).is_none() {
                return Err(StoreError::unavailable("a session id may not contain braces"));
            }
            let idle = millis(idle);
            let mut args = vec![idle.as_str()];
            args.extend(fields(&record));
            self.script(CREATE, &record.id, &args).await
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<SessionRecord>> {
        Box::pin(async move {
            let Some((record, subscriptions)) = self.keys(id) else { return Ok(None) };
            // One round trip: both keys read in one pipeline, or one script on a cluster.
            let mut connection = self.connection.clone();
            let (hash, members) = if connection.is_cluster() {
                let mut command = redis::cmd("EVAL");
                command.arg(LOAD).arg(2).arg(&record).arg(&subscriptions);
                self.guarded(command.query_async(&mut connection)).await?
            } else {
                let mut pipe = redis::pipe();
                pipe.cmd("HGETALL").arg(&record).cmd("SMEMBERS").arg(&subscriptions);
                self.guarded(pipe.query_async(&mut connection)).await?
            };
            Ok(record_from(id, hash, members))
        })
    }

    fn update<'a>(&'a self, id: &'a str, change: SessionChange) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let (what, args): (What, Vec<&str>) = match &change {
                SessionChange::Initialized => (What::Initialized, vec!["hset", "initialized", "1"]),
                SessionChange::LogLevel(level) => {
                    (What::LogLevel(level.clone()), vec!["hset", "log_level", level.as_str()])
                }
                SessionChange::Subscribe(uri) => {
                    (What::Subscribe(uri.clone()), vec!["sadd", uri.as_str()])
                }
                SessionChange::Unsubscribe(uri) => {
                    (What::Unsubscribe(uri.clone()), vec!["srem", uri.as_str()])
                }
                other => {
                    let message = format!("a change this store does not know: {other:?}");
                    return Err(StoreError::unavailable(message));
                }
            };
            let note = self.note(id, what);
            let mut all = vec![self.channel.as_str(), note.as_str()];
            all.extend(args);
            self.script(UPDATE, id, &all).await
        })
    }

    fn touch<'a>(&'a self, id: &'a str, idle: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move { self.script(TOUCH, id, &[millis(idle).as_str()]).await })
    }

    fn delete<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let note = self.note(id, What::Deleted);
            self.script(DELETE, id, &[self.channel.as_str(), note.as_str()]).await.map(|_| ())
        })
    }

    fn events(&self) -> BoxStream<'static, SessionEvent> {
        let origin = self.origin.clone();
        let channels = vec![self.channel.clone()];
        self.endpoint
            .follower(channels, self.timeout, self.health_check)
            .gap(SessionEvent::Gap)
            .follow(move |payload| read(&origin, payload))
    }
}

/// The event a message on the events channel tells, `None` for this store's own; an
/// unreadable one is a gap.
fn read(origin: &str, payload: &[u8]) -> Option<SessionEvent> {
    let Ok(note) = serde_json::from_slice::<Note>(payload) else {
        tracing::warn!("an unreadable message on the session events channel");
        return Some(SessionEvent::Gap);
    };
    if note.origin == origin {
        return None;
    }
    note.into_event()
}
