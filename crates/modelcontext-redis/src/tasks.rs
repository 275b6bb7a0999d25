//! [`RedisTaskStore`]: the tasks extension's records in Redis.
//!
//! One key per task, `modelcontext:{deployment}:task:{ID}` (the task id in braces, a Redis
//! Cluster hash tag, as a session's id is for its keys), holding the record as JSON. The key
//! expires when the task does: its `ttlMs` counted from its creation, or
//! [`DEFAULT_UNTIMED_TASK_TTL`] for a task created without a TTL, so nothing stays in Redis
//! for ever. `create` is `SET … NX PX`, so a taken id is refused; an update is a short Lua
//! script that only replaces a live record that has not ended (the first end wins) and keeps
//! its expiry.
//!
//! Every call has the deployment's command timeout and goes through a circuit breaker; a
//! failed call is [`TaskStoreError::Unavailable`], which the server answers with an internal
//! error, never with "unknown task".

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use modelcontext::server::{StoreFuture, TaskRecord, TaskStore, TaskStoreError};
use modelcontext::types::DetailedTask;
use redis::aio::ConnectionManager;
use serde::{Deserialize, Serialize};

use crate::breaker::{BreakerStats, DEFAULT_BREAKER_COOL_DOWN, DEFAULT_BREAKER_THRESHOLD};
use crate::sessions::millis;
use crate::{Breaker, Deployment, Error};

/// How long a task created without a TTL (`McpServer::task_ttl(None)`) is kept.
pub const DEFAULT_UNTIMED_TASK_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// Replaces a live record that has not ended, keeping its expiry. KEYS: the record. ARGV: the
/// new record. 1 if replaced.
const UPDATE: &str = r"
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
if cjson.decode(current).terminal then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
return 1";

/// A [`TaskStore`] in Redis, shared by every instance of a [`Deployment`], so that any of
/// them answers `tasks/get`. Built by [`Deployment::task_store`]; connects on first use, and
/// reconnects by itself.
///
/// Unlike [`InMemoryTaskStore`](modelcontext::server::InMemoryTaskStore) it has no count
/// bounds: records leave Redis when their task expires, and Redis's own `maxmemory` bounds
/// the rest.
#[derive(Clone)]
pub struct RedisTaskStore {
    connection: ConnectionManager,
    prefix: String,
    timeout: Duration,
    untimed_ttl: Duration,
    breaker: Arc<Breaker>,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

/// A record as stored: the task as `tasks/get` shows it, and what the server keeps beside it.
#[derive(Debug, Serialize, Deserialize)]
struct Stored {
    task: DetailedTask,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
    /// Milliseconds since the Unix epoch.
    created_ms: u64,
    /// Whether the task has ended: the update script reads it (the first end wins).
    terminal: bool,
}

impl Stored {
    fn of(record: &TaskRecord) -> Stored {
        let since = record.created.duration_since(UNIX_EPOCH).unwrap_or_default();
        Stored {
            task: record.task.clone(),
            owner: record.owner.clone(),
            created_ms: u64::try_from(since.as_millis()).unwrap_or(u64::MAX),
            terminal: record.task.task.status.is_terminal(),
        }
    }

    fn into_record(self) -> TaskRecord {
        let created = UNIX_EPOCH + Duration::from_millis(self.created_ms);
        TaskRecord::new(self.task, self.owner, created)
    }
}

impl RedisTaskStore {
    pub(crate) fn new(deployment: &Deployment) -> Result<RedisTaskStore, Error> {
        Ok(RedisTaskStore {
            connection: deployment.lazy_connection()?,
            prefix: deployment.key("task"),
            timeout: deployment.command_timeout,
            untimed_ttl: DEFAULT_UNTIMED_TASK_TTL,
            breaker: Arc::new(Breaker::new(DEFAULT_BREAKER_THRESHOLD, DEFAULT_BREAKER_COOL_DOWN)),
        })
    }

    /// How long a task created without a TTL is kept (default [`DEFAULT_UNTIMED_TASK_TTL`]).
    /// At least one second.
    pub fn untimed_ttl(mut self, ttl: Duration) -> RedisTaskStore {
        self.untimed_ttl = ttl.max(Duration::from_secs(1));
        self
    }

    /// What the store's circuit breaker has done: failed calls, outages, calls failed at once.
    pub fn stats(&self) -> BreakerStats {
        self.breaker.stats()
    }

    /// The task's key; `None` for an id that cannot be a hash tag (with braces), which no task
    /// of ours has.
    fn key(&self, id: &str) -> Option<String> {
        (!id.contains(['{', '}'])).then(|| format!("{}:{{{id}}}", self.prefix))
    }

    /// How long the record has left at `now`: its TTL from its creation, or the untimed one.
    fn remaining(&self, record: &TaskRecord, now: SystemTime) -> Duration {
        let Some(ttl) = record.task.task.ttl_ms else { return self.untimed_ttl };
        let expires = record.created + Duration::from_millis(ttl);
        expires.duration_since(now).unwrap_or_default()
    }

    /// Runs `command` within the timeout, through the breaker.
    async fn run<T: redis::FromRedisValue>(
        &self,
        command: redis::Cmd,
    ) -> Result<T, TaskStoreError> {
        let mut connection = self.connection.clone();
        let answer = command.query_async(&mut connection);
        self.breaker.call(self.timeout, answer).await.map_err(TaskStoreError::Unavailable)
    }
}

fn json(record: &TaskRecord) -> String {
    // A record is plain data (strings, numbers, JSON maps): it always serializes.
    serde_json::to_string(&Stored::of(record)).unwrap_or_default()
}

impl TaskStore for RedisTaskStore {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let id = &record.task.task.task_id;
            let Some(key) = self.key(id) else {
                return Err(TaskStoreError::Unavailable("a task id may not contain braces".into()));
            };
            let remaining = self.remaining(&record, SystemTime::now());
            if remaining.is_zero() {
                // Expired already: a `get` must not find it, so there is nothing to store.
                return Ok(());
            }
            let mut command = redis::cmd("SET");
            command.arg(key).arg(json(&record)).arg("NX").arg("PX").arg(millis(remaining));
            // `OK` when stored, nil when the id is taken.
            match self.run::<redis::Value>(command).await? {
                redis::Value::Nil => Err(TaskStoreError::Exists),
                _ => Ok(()),
            }
        })
    }

    fn get<'a>(
        &'a self,
        task_id: &'a str,
    ) -> StoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move {
            let Some(key) = self.key(task_id) else { return Ok(None) };
            let mut command = redis::cmd("GET");
            command.arg(key);
            let Some(text) = self.run::<Option<String>>(command).await? else { return Ok(None) };
            let stored: Stored = serde_json::from_str(&text).map_err(|e| {
                // Not "unknown task": something wrote a record this build cannot read.
                TaskStoreError::Unavailable(format!("an unreadable task record: {e}"))
            })?;
            let record = stored.into_record();
            // Redis's clock expires the key; ours decides too, so a skew never shows a task
            // past its TTL.
            Ok((!record.is_expired(SystemTime::now())).then_some(record))
        })
    }

    fn update(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let Some(key) = self.key(&record.task.task.task_id) else { return Ok(()) };
            let mut command = redis::cmd("EVAL");
            command.arg(UPDATE).arg(1).arg(key).arg(json(&record));
            self.run::<i64>(command).await.map(|_| ())
        })
    }
}
