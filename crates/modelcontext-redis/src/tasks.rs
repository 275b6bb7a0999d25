//! [`RedisTaskStore`]: the tasks extension's records in Redis.
//!
//! One key per task, `modelcontext:{deployment}:task:` then the deployment's name in braces
//! (the key's Redis Cluster hash tag: see below) and the task id (for deployment `shop`,
//! `modelcontext:shop:task:{shop}:t1`), holding the record as JSON. The key expires when the
//! task does: its `ttlMs` counted from its creation, or [`DEFAULT_UNTIMED_TASK_TTL`] for a task
//! created without a TTL, so nothing stays in Redis for ever. A taken id is refused at creation
//! (see below); an update is a short Lua script that only replaces a live record that has not
//! ended (the first end wins) and keeps its expiry.
//!
//! Each principal may have at most [`DEFAULT_MAX_RUNNING_PER_PRINCIPAL`] unfinished tasks in
//! the deployment, as in the in-memory store, and the deployment at most [`DEFAULT_MAX_RUNNING`]
//! in all: a sorted set per principal, `modelcontext:shop:tasks-running:{shop}:…` (for
//! deployment `shop`), and one for the deployment, `modelcontext:shop:tasks-running:{shop}`,
//! hold the unfinished task ids scored by their expiry. One Lua script creates a task: it
//! forgets expired places, refuses a taken id, a principal at its limit or a full deployment,
//! and otherwise takes both places and writes the record, all at once, so a refused or failed
//! create holds no place. A task's end gives both places back, in the update's script. The
//! scripts touch the record and both sets, so all of a deployment's task keys share one hash
//! tag, the deployment's name: on Redis Cluster they live in one slot, on one node (the limits
//! are exact there too; the tasks of one deployment do not spread over the cluster).
//!
//! Every call has the deployment's command timeout and goes through a circuit breaker; a
//! failed call is [`TaskStoreError::Unavailable`], which the server answers with an internal
//! error, never with "unknown task".

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use modelcontext::server::{StoreFuture, TaskRecord, TaskStore, TaskStoreError};
use modelcontext::types::DetailedTask;
use serde::{Deserialize, Serialize};

use crate::breaker::{BreakerStats, DEFAULT_BREAKER_COOL_DOWN, DEFAULT_BREAKER_THRESHOLD};
use crate::endpoint::Connection;
use crate::millis;
use crate::{Breaker, Deployment, Error};

/// How long a task created without a TTL (`McpServer::task_ttl(None)`) is kept.
pub const DEFAULT_UNTIMED_TASK_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How many unfinished tasks one principal may have in the deployment, by default (as
/// [`InMemoryTaskStore`](modelcontext::server::InMemoryTaskStore)'s default).
pub const DEFAULT_MAX_RUNNING_PER_PRINCIPAL: usize = 100;

/// How many unfinished tasks the whole deployment may have, by default (the in-memory store's
/// default capacity).
pub const DEFAULT_MAX_RUNNING: usize = 10_000;

/// Creates a task: admits it (if unfinished) below the principal's and the deployment's
/// limits, and writes its record. KEYS: the record, the principal's set, the deployment's
/// set. ARGV: now (ms since the epoch), the principal's limit, the task's expiry (ms since the
/// epoch), its id, the record, its lifetime (ms), the deployment's limit, 1 if unfinished.
/// 1 if created, 2 if the id is taken, 0 if the principal is at its limit, 3 if the
/// deployment is. Each set lives as long as its last member.
const CREATE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 2 end
if ARGV[8] == '1' then
  local limits = {0, tonumber(ARGV[2]), tonumber(ARGV[7])}
  local refusals = {0, 0, 3}
  for i = 2, 3 do
    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[1])
    if redis.call('ZCARD', KEYS[i]) >= limits[i] then
      if i == 3 then redis.call('ZREM', KEYS[2], ARGV[4]) end
      return refusals[i]
    end
    if redis.call('ZADD', KEYS[i], 'NX', ARGV[3], ARGV[4]) == 0 then
      if i == 3 then redis.call('ZREM', KEYS[2], ARGV[4]) end
      return 2
    end
    local left = tonumber(ARGV[3]) - tonumber(ARGV[1])
    if redis.call('PTTL', KEYS[i]) < left then redis.call('PEXPIRE', KEYS[i], left) end
  end
end
redis.call('SET', KEYS[1], ARGV[5], 'PX', ARGV[6])
return 1";

/// Replaces a live record that has not ended, keeping its expiry; for an end, first gives back
/// the task's places (given back already if the record ended before: removing it again
/// changes nothing). KEYS: the record, the owner's set, the deployment's set. ARGV: the new
/// record, 1 if it is an end, the task's id. 1 if replaced. (One script, not a pipeline, so a
/// cluster's `MOVED` and `ASK` are followed: see `Connection::is_cluster`.)
const UPDATE: &str = r"
if ARGV[2] == '1' then
  redis.call('ZREM', KEYS[2], ARGV[3])
  redis.call('ZREM', KEYS[3], ARGV[3])
end
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
if cjson.decode(current).terminal then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
return 1";

/// A [`TaskStore`] in Redis, shared by every instance of a [`Deployment`], so that any of
/// them answers `tasks/get`. Built by [`Deployment::task_store`]; connects on first use, and
/// reconnects by itself.
///
/// Each principal may have [`DEFAULT_MAX_RUNNING_PER_PRINCIPAL`] unfinished tasks
/// ([`max_running_per_principal`](RedisTaskStore::max_running_per_principal)), and the
/// deployment [`DEFAULT_MAX_RUNNING`] ([`max_running`](RedisTaskStore::max_running)). Finished
/// tasks are not counted: unlike [`InMemoryTaskStore`](modelcontext::server::InMemoryTaskStore),
/// which forgets the oldest finished one to make room, their records leave Redis when their
/// task expires, and Redis's own `maxmemory` bounds the rest.
#[derive(Clone)]
pub struct RedisTaskStore {
    connection: Connection,
    prefix: String,
    /// The prefix of the per-principal sets of unfinished tasks.
    running: String,
    timeout: Duration,
    untimed_ttl: Duration,
    max_running: usize,
    /// The most unfinished tasks in the deployment.
    max_total: usize,
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
        Stored {
            task: record.task.clone(),
            owner: record.owner.clone(),
            created_ms: epoch_millis(record.created),
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
            prefix: deployment.slot_key("task"),
            running: deployment.slot_key("tasks-running"),
            timeout: deployment.command_timeout,
            untimed_ttl: DEFAULT_UNTIMED_TASK_TTL,
            max_running: DEFAULT_MAX_RUNNING_PER_PRINCIPAL,
            max_total: DEFAULT_MAX_RUNNING,
            breaker: Arc::new(Breaker::new(DEFAULT_BREAKER_THRESHOLD, DEFAULT_BREAKER_COOL_DOWN)),
        })
    }

    /// How long a task created without a TTL is kept (default [`DEFAULT_UNTIMED_TASK_TTL`]).
    /// At least one second.
    pub fn untimed_ttl(mut self, ttl: Duration) -> RedisTaskStore {
        self.untimed_ttl = ttl.max(Duration::from_secs(1));
        self
    }

    /// How many unfinished tasks one principal may have in the deployment (default
    /// [`DEFAULT_MAX_RUNNING_PER_PRINCIPAL`]); at least 1. Another is refused with
    /// [`TaskStoreError::TooManyRunning`].
    pub fn max_running_per_principal(mut self, limit: usize) -> RedisTaskStore {
        self.max_running = limit.max(1);
        self
    }

    /// How many unfinished tasks the whole deployment may have (default
    /// [`DEFAULT_MAX_RUNNING`]); at least 1. Another is refused with
    /// [`TaskStoreError::Full`]. Every instance should be given the same limit.
    pub fn max_running(mut self, limit: usize) -> RedisTaskStore {
        self.max_total = limit.max(1);
        self
    }

    /// What the store's circuit breaker has done: failed calls, outages, calls failed at once.
    pub fn stats(&self) -> BreakerStats {
        self.breaker.stats()
    }

    /// The task's key; `None` for an id with braces, which no task of ours has (refused, as
    /// the other stores refuse such ids, though the deployment's tag comes first here).
    fn key(&self, id: &str) -> Option<String> {
        (!id.contains(['{', '}'])).then(|| format!("{}:{id}", self.prefix))
    }

    /// The set of `owner`'s unfinished tasks (`-` for tasks made without authentication, `:`
    /// before a principal's name, so no name can be mistaken for none, nor for the
    /// deployment's set, which has neither).
    fn running_key(&self, owner: Option<&str>) -> String {
        match owner {
            Some(owner) => format!("{}:{owner}", self.running),
            None => format!("{}-", self.running),
        }
    }

    /// Stores `record`, living `remaining` from `now`, after taking its places among the
    /// unfinished tasks (if it is unfinished): one script.
    async fn insert(
        &self,
        key: String,
        record: &TaskRecord,
        now: SystemTime,
        remaining: Duration,
    ) -> Result<(), TaskStoreError> {
        let unfinished = !record.task.task.status.is_terminal();
        let mut command = redis::cmd("EVAL");
        command
            .arg(CREATE)
            .arg(3)
            .arg(key)
            .arg(self.running_key(record.owner.as_deref()))
            .arg(&self.running)
            .arg(epoch_millis(now))
            .arg(self.max_running)
            .arg(epoch_millis(now + remaining))
            .arg(&record.task.task.task_id)
            .arg(json(record))
            .arg(millis(remaining))
            .arg(self.max_total)
            .arg(if unfinished { "1" } else { "0" });
        match self.execute::<i64>(command).await? {
            1 => Ok(()),
            2 => Err(TaskStoreError::Exists),
            3 => Err(TaskStoreError::Full { capacity: self.max_total }),
            _ => Err(TaskStoreError::TooManyRunning { limit: self.max_running }),
        }
    }

    /// How long the record has left at `now`: its TTL from its creation, or the untimed one.
    fn remaining(&self, record: &TaskRecord, now: SystemTime) -> Duration {
        let Some(ttl) = record.task.task.ttl_ms else { return self.untimed_ttl };
        let expires = record.created + Duration::from_millis(ttl);
        expires.duration_since(now).unwrap_or_default()
    }

    /// Runs `command` within the timeout, through the breaker.
    async fn execute<T: redis::FromRedisValue>(
        &self,
        command: redis::Cmd,
    ) -> Result<T, TaskStoreError> {
        let mut connection = self.connection.clone();
        let answer = command.query_async(&mut connection);
        self.breaker.call(self.timeout, answer).await.map_err(TaskStoreError::Unavailable)
    }
}

/// Milliseconds since the Unix epoch.
fn epoch_millis(time: SystemTime) -> u64 {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
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
            let now = SystemTime::now();
            let remaining = self.remaining(&record, now);
            if remaining.is_zero() {
                // Expired already: a `get` must not find it, so there is nothing to store.
                return Ok(());
            }
            self.insert(key, &record, now, remaining).await
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
            let Some(text) = self.execute::<Option<String>>(command).await? else {
                return Ok(None);
            };
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

    fn update(&self, record: TaskRecord) -> StoreFuture<'_, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let Some(key) = self.key(&record.task.task.task_id) else { return Ok(false) };
            let ended = record.task.task.status.is_terminal();
            let mut command = redis::cmd("EVAL");
            command
                .arg(UPDATE)
                .arg(3)
                .arg(key)
                .arg(self.running_key(record.owner.as_deref()))
                .arg(&self.running)
                .arg(json(&record))
                .arg(if ended { "1" } else { "0" })
                .arg(&record.task.task.task_id);
            Ok(self.execute::<i64>(command).await? == 1)
        })
    }
}
