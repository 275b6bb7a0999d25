//! [`RedisSessionStore`]: handshake-era session records in Redis.
//!
//! One session is two keys that share a Redis Cluster hash slot (the session id is the hash
//! tag): a hash `modelcontext:{deployment}:session:{ID}` (principal, protocol version,
//! `initialize` params, initialized flag, log level) and a set `…:{ID}:subscriptions`. Both
//! expire together after the idle time. Each change that must only touch a live record is one
//! short Lua script, so an update never brings back an expired or deleted session.

use std::time::Duration;

use modelcontext::server::http::{
    SessionChange, SessionRecord, SessionStore, StoreError, StoreFuture,
};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::{Deployment, Error};

/// Creates the record if no live one has its id. KEYS: record, subscriptions. ARGV: idle
/// time in ms, then the hash's fields and values.
const CREATE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1";

/// Changes a live record. ARGV: `hset FIELD VALUE`, `sadd URI` or `srem URI`. The set gets the
/// record's remaining time, so both expire together.
const UPDATE: &str = r"
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return 0 end
if ARGV[1] == 'hset' then
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
elseif ARGV[1] == 'sadd' then
  redis.call('SADD', KEYS[2], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ttl)
else
  redis.call('SREM', KEYS[2], ARGV[2])
end
return 1";

/// Restarts a live record's idle time. ARGV: the idle time in ms.
const TOUCH: &str = r"
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1";

/// A [`SessionStore`] in Redis, shared by every instance of a [`Deployment`]. Built by
/// [`Deployment::session_store`]; connects on first use, and reconnects by itself.
#[derive(Clone)]
pub struct RedisSessionStore {
    connection: ConnectionManager,
    prefix: String,
    timeout: Duration,
}

impl std::fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessionStore").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

impl RedisSessionStore {
    pub(crate) fn new(deployment: &Deployment) -> Result<RedisSessionStore, Error> {
        let timeout = deployment.command_timeout;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout));
        let connection =
            ConnectionManager::new_lazy_with_config(deployment.client.clone(), config)?;
        Ok(RedisSessionStore { connection, prefix: deployment.key("session"), timeout })
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

    /// Runs `command` within the timeout.
    async fn run<T: redis::FromRedisValue>(&self, command: redis::Cmd) -> Result<T, StoreError> {
        let mut connection = self.connection.clone();
        within(self.timeout, command.query_async(&mut connection)).await
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
    match tokio::time::timeout(timeout, answer).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(StoreError::unavailable(format!("redis: {error}"))),
        Err(_) => Err(StoreError::unavailable("redis: no answer in time")),
    }
}

pub(crate) fn millis(duration: Duration) -> String {
    duration.as_millis().max(1).to_string()
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
            // One round trip: both keys read in one pipeline.
            let mut pipe = redis::pipe();
            pipe.cmd("HGETALL").arg(&record).cmd("SMEMBERS").arg(&subscriptions);
            let mut connection = self.connection.clone();
            let (hash, members) = within(self.timeout, pipe.query_async(&mut connection)).await?;
            Ok(record_from(id, hash, members))
        })
    }

    fn update<'a>(&'a self, id: &'a str, change: SessionChange) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let args: Vec<&str> = match &change {
                SessionChange::Initialized => vec!["hset", "initialized", "1"],
                SessionChange::LogLevel(level) => vec!["hset", "log_level", level.as_str()],
                SessionChange::Subscribe(uri) => vec!["sadd", uri.as_str()],
                SessionChange::Unsubscribe(uri) => vec!["srem", uri.as_str()],
                other => {
                    let message = format!("a change this store does not know: {other:?}");
                    return Err(StoreError::unavailable(message));
                }
            };
            self.script(UPDATE, id, &args).await
        })
    }

    fn touch<'a>(&'a self, id: &'a str, idle: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move { self.script(TOUCH, id, &[millis(idle).as_str()]).await })
    }

    fn delete<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let Some((record, subscriptions)) = self.keys(id) else { return Ok(()) };
            let mut command = redis::cmd("DEL");
            command.arg(record).arg(subscriptions);
            self.run::<i64>(command).await.map(|_| ())
        })
    }
}
