//! The tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28) on the server side.
//!
//! A tool registered with [`TaskSupport`] may become a task when the client's request declares
//! the extension. The handler starts as any modern call does, in an MRTR round; if its first
//! poll finishes, the call is answered at once (the extension allows it), and if it stops at
//! questions, they are an ordinary `InputRequiredResult`. Otherwise (it waits on anything
//! else, or called [`Context::run_as_task`](super::Context::run_as_task)) the call becomes a
//! task: the record is stored, the rest of the run is spawned, and the client gets a
//! `CreateTaskResult`. From then on the handler's questions (`ctx.elicit`, `ctx.sample`,
//! `ctx.list_roots`) park the task in `input_required` until `tasks/update` answers them.
//!
//! Records live in a [`TaskStore`] (bounded in memory by default, [`InMemoryTaskStore`]), so
//! any instance sharing the store can answer `tasks/get`. The running work and its questions
//! stay with the instance that runs it. A status change is stored first and announced on the
//! [`SubscriptionBus`](super::SubscriptionBus) only once stored, so listeners never hear of an
//! end the store refused. `tasks/cancel` works on any instance: one that does not run the task
//! stores the cancellation and announces it, and the instance running the task stops the work
//! when it hears it (or when its own next change is refused by the store). `tasks/update`
//! must reach the instance running the task: with a peer router (an HTTP endpoint with
//! [`HttpOptions::peer_router`](crate::HttpOptions::peer_router)) another instance relays it
//! there and answers once the running instance took the answers in; without one it answers
//! with an error saying so (on HTTP the client sends `Mcp-Name: <taskId>`, so a load balancer
//! can route it).
//! A task belongs to the principal that created it ([`PrincipalId`](super::PrincipalId));
//! another principal is told the task does not exist.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::StreamExt;
use modelcontext_types::{
    CreateTaskResult, DetailedTask, EmptyResult, GetTaskResult, InputRequest, InputRequests,
    InputResponse, McpError, MrtrResult, ResultType, Task, TaskIdParams, TaskStatus,
    UpdateTaskParams,
};
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::mrtr::{AnswersLater, InputRound};
use super::stamp::{Stamp, WireResult, internal};
use super::{BusEvent, ChangeEvent, ServerInner};
use crate::engine::{BoxFuture, Outcome};

/// Whether a tool may run as a task (tasks extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskSupport {
    /// The tool runs as a task for clients that declare the extension, and as a plain call
    /// for the others.
    Optional,
    /// The tool only runs as a task: a modern client that does not declare the extension is
    /// refused with -32021 naming it.
    Required,
}

/// The default time a task is kept after its creation ([`McpServer::task_ttl`](super::McpServer::task_ttl)).
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(60 * 60);

/// The default polling interval suggested to clients.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// One stored task: its wire state, whom it belongs to, and when it was made.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The task as `tasks/get` shows it.
    pub task: DetailedTask,
    /// The principal that created it (`None` without authentication).
    pub owner: Option<String>,
    /// When it was created.
    pub created: SystemTime,
}

impl TaskRecord {
    /// A record of `task`, owned by `owner`, created at `created` (for stores that rebuild
    /// records, and for tests).
    pub fn new(task: DetailedTask, owner: Option<String>, created: SystemTime) -> TaskRecord {
        TaskRecord { task, owner, created }
    }

    /// Whether the task's TTL has passed at `now`.
    pub fn is_expired(&self, now: SystemTime) -> bool {
        let Some(ttl) = self.task.task.ttl_ms else { return false };
        now.duration_since(self.created).is_ok_and(|age| age >= Duration::from_millis(ttl))
    }

    fn status(&self) -> TaskStatus {
        self.task.task.status
    }
}

/// Why a store refused a new task, or could not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// A task with this id is already stored (ids are random: in practice a bug).
    Exists,
    /// The principal already has as many unfinished tasks as it may.
    TooManyRunning {
        /// The limit.
        limit: usize,
    },
    /// The store is full of unfinished tasks.
    Full {
        /// The capacity.
        capacity: usize,
    },
    /// The store could not be reached or did not answer in time. The server answers the
    /// request with an internal error (-32603), never with "unknown task": the task may well
    /// exist.
    Unavailable(String),
}

impl std::fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskStoreError::Exists => write!(f, "a task with this id already exists"),
            TaskStoreError::TooManyRunning { limit } => {
                write!(f, "too many unfinished tasks for this caller (limit {limit})")
            }
            TaskStoreError::Full { capacity } => {
                write!(f, "the task store is full of unfinished tasks (capacity {capacity})")
            }
            TaskStoreError::Unavailable(reason) => write!(f, "the task store failed: {reason}"),
        }
    }
}

impl std::error::Error for TaskStoreError {}

/// A boxed future borrowed from a store.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where task records live. Every instance that shares a store can answer `tasks/get` for
/// any task in it. `create` returns only once a `get` would find the record (the extension
/// forbids answering `CreateTaskResult` earlier).
///
/// Every call may fail with [`TaskStoreError::Unavailable`] (a networked store that is
/// away): the server then answers with an internal error, never with "unknown task", so a
/// client does not give up on a task that exists. Run
/// [`testing::contracts::task_store`](crate::testing::contracts::task_store) against your
/// implementation.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task, enforcing the store's bounds; [`TaskStoreError::Exists`] if the id
    /// is taken.
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>>;

    /// The task, `None` if unknown or expired.
    fn get<'a>(
        &'a self,
        task_id: &'a str,
    ) -> StoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// Replaces a task's record: `Ok(true)` if it did. A terminal record is never replaced
    /// (the first end wins) and a task that is gone (expired, evicted) stays gone: both are
    /// `Ok(false)`, which tells the instance running the task that it is over (cancelled on
    /// another instance, or forgotten), so it stops the work and announces nothing. An error
    /// only when the store could not be asked.
    fn update(&self, record: TaskRecord) -> StoreFuture<'_, Result<bool, TaskStoreError>>;
}

/// The default [`TaskStore`]: records in memory, bounded. At capacity, the finished task
/// created first is forgotten to make room; a store full of unfinished tasks refuses new
/// ones. Each principal may have at most `max_running_per_principal` unfinished tasks.
/// Expired tasks are forgotten when next looked at.
#[derive(Debug)]
pub struct InMemoryTaskStore {
    records: Mutex<HashMap<String, TaskRecord>>,
    capacity: usize,
    max_running_per_principal: usize,
}

impl Default for InMemoryTaskStore {
    fn default() -> Self {
        InMemoryTaskStore::new(10_000, 100)
    }
}

impl InMemoryTaskStore {
    /// A store of at most `capacity` tasks, `max_running_per_principal` of them unfinished
    /// per principal.
    pub fn new(capacity: usize, max_running_per_principal: usize) -> InMemoryTaskStore {
        InMemoryTaskStore {
            records: Mutex::default(),
            capacity: capacity.max(1),
            max_running_per_principal: max_running_per_principal.max(1),
        }
    }

    /// How many tasks are held (expired ones included until looked at).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no task is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskRecord>> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn admit(&self, record: TaskRecord) -> Result<(), TaskStoreError> {
        let mut records = self.lock();
        let now = SystemTime::now();
        records.retain(|_, r| !r.is_expired(now));
        if records.contains_key(&record.task.task.task_id) {
            return Err(TaskStoreError::Exists);
        }
        let running = records
            .values()
            .filter(|r| r.owner == record.owner && !r.status().is_terminal())
            .count();
        if running >= self.max_running_per_principal {
            return Err(TaskStoreError::TooManyRunning { limit: self.max_running_per_principal });
        }
        if records.len() >= self.capacity {
            let oldest_finished = records
                .iter()
                .filter(|(_, r)| r.status().is_terminal())
                .min_by_key(|(_, r)| r.created)
                .map(|(id, _)| id.clone());
            match oldest_finished {
                Some(id) => records.remove(&id),
                None => return Err(TaskStoreError::Full { capacity: self.capacity }),
            };
        }
        records.insert(record.task.task.task_id.clone(), record);
        Ok(())
    }
}

impl TaskStore for InMemoryTaskStore {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>> {
        let admitted = self.admit(record);
        Box::pin(async move { admitted })
    }

    fn get<'a>(
        &'a self,
        task_id: &'a str,
    ) -> StoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let mut records = self.lock();
        let found = match records.get(task_id) {
            Some(record) if record.is_expired(SystemTime::now()) => {
                records.remove(task_id);
                None
            }
            other => other.cloned(),
        };
        Box::pin(async move { Ok(found) })
    }

    fn update(&self, record: TaskRecord) -> StoreFuture<'_, Result<bool, TaskStoreError>> {
        let mut records = self.lock();
        let id = &record.task.task.task_id;
        // A record evicted or expired meanwhile stays gone; a finished one stays finished.
        let replaced = match records.get_mut(id) {
            Some(slot) if !slot.status().is_terminal() && !slot.is_expired(SystemTime::now()) => {
                *slot = record;
                true
            }
            _ => false,
        };
        Box::pin(async move { Ok(replaced) })
    }
}

/// The tasks this instance is running, by id: where `tasks/update` delivers answers and
/// `tasks/cancel` stops work.
#[derive(Default)]
pub(crate) struct LiveTasks {
    running: Mutex<HashMap<String, Arc<LiveTask>>>,
    /// Whether this instance follows the bus for its tasks ended elsewhere ([`follow_ends`]).
    following: AtomicBool,
    /// Where a `tasks/update` for a task running on another instance goes (set by the first
    /// HTTP endpoint with a peer router).
    pub(super) relay: std::sync::OnceLock<Arc<dyn TaskRelay>>,
}

/// Carries a `tasks/update` to the instance of the deployment running its task.
pub(crate) trait TaskRelay: Send + Sync + 'static {
    /// Hands `params` to the instance running the task: `Some` with its answer (the answers
    /// taken in, or the error for the client: refused, or the relay could not carry them),
    /// or `None` when no instance took it up in time.
    fn relay(
        &self,
        params: UpdateTaskParams,
    ) -> futures_util::future::BoxFuture<'_, Option<Result<(), McpError>>>;
}

impl LiveTasks {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<LiveTask>>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn get(&self, id: &str) -> Option<Arc<LiveTask>> {
        self.lock().get(id).cloned()
    }

    fn ids(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }
}

/// Starts following the bus for the tasks of this instance that end elsewhere, once (with
/// the first task, before its record is stored, so that no end is missed): a `tasks/cancel`
/// handled by another instance of the deployment stores the cancellation and publishes it,
/// and the instance running the task stops the work when it hears it. A gap on the bus may
/// hide such an end: then every running task's record is read again. Costs nothing on the
/// path of calls that are not tasks.
fn follow_ends(server: &Arc<ServerInner>) {
    if server.live_tasks.following.swap(true, Ordering::AcqRel) {
        return;
    }
    let mut events = server.bus.subscribe();
    let live = Arc::downgrade(&server.live_tasks);
    let store = Arc::clone(&server.task_store);
    tokio::spawn(async move {
        while let Some(heard) = events.next().await {
            let Some(live) = live.upgrade() else { return };
            match heard {
                BusEvent::Change(ChangeEvent::TaskStatus { task_id, task, .. }) => {
                    if let Some(running) = live.get(&task_id) {
                        if announces_an_end(&task) {
                            running.ended_elsewhere();
                        }
                    }
                }
                BusEvent::Change(_) => {}
                BusEvent::Gap => recheck(&live, store.as_ref()).await,
            }
        }
    });
}

/// Whether a task status heard on the bus (a `DetailedTask` as JSON) is terminal.
fn announces_an_end(task: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Status {
        status: TaskStatus,
    }
    serde_json::from_str::<Status>(task).is_ok_and(|heard| heard.status.is_terminal())
}

/// After a gap on the bus: stops each running task whose record ended or is gone.
async fn recheck(live: &LiveTasks, store: &dyn TaskStore) {
    for id in live.ids() {
        let over = match store.get(&id).await {
            Ok(record) => record.is_none_or(|record| record.status().is_terminal()),
            // Unknown: keep the work; its next change asks the store again.
            Err(_) => false,
        };
        if let Some(running) = live.get(&id).filter(|_| over) {
            running.ended_elsewhere();
        }
    }
}

/// What listeners hear of `record`: its status, for `notifications/tasks`, and for the
/// instance running the task.
fn status_event(record: &TaskRecord) -> ChangeEvent {
    ChangeEvent::TaskStatus {
        task_id: record.task.task.task_id.clone(),
        owner: record.owner.clone(),
        task: serde_json::to_string(&record.task).unwrap_or_default(),
    }
}

/// A running task: its current record and the questions it waits on.
pub(crate) struct LiveTask {
    server: Arc<ServerInner>,
    state: Mutex<LiveState>,
}

struct LiveState {
    record: TaskRecord,
    /// Unanswered questions: the request and where its answer goes.
    waiting: BTreeMap<String, (InputRequest, oneshot::Sender<InputResponse>)>,
    /// Every key ever asked: a key is never reused within a task (the extension says so).
    asked: std::collections::HashSet<String>,
    abort: Option<tokio::task::AbortHandle>,
}

impl std::fmt::Debug for LiveTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("LiveTask").field("task", &state.record.task.task.task_id).finish()
    }
}

impl AnswersLater for LiveTask {
    fn ask(
        &self,
        key: String,
        request: InputRequest,
    ) -> futures_util::future::BoxFuture<'_, Result<InputResponse, McpError>> {
        Box::pin(LiveTask::ask(self, key, request))
    }
}

impl LiveTask {
    fn lock(&self) -> std::sync::MutexGuard<'_, LiveState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets the status (and what it carries), stores the record, and only then tells the
    /// listeners, so that what they hear is what `tasks/get` answers. A record the store
    /// refuses has ended elsewhere (cancelled on another instance) or is gone: the work stops
    /// here and nothing is announced, so no client hears of an end that did not happen.
    async fn publish(&self, change: impl FnOnce(&mut DetailedTask)) {
        let record = {
            let mut state = self.lock();
            let LiveState { record, waiting, .. } = &mut *state;
            change(&mut record.task);
            let task = &mut record.task;
            if !task.task.status.is_terminal() {
                let questions: InputRequests =
                    waiting.iter().map(|(k, (q, _))| (k.clone(), q.clone())).collect();
                task.task.status = if questions.is_empty() {
                    TaskStatus::Working
                } else {
                    TaskStatus::InputRequired
                };
                task.input_requests = (!questions.is_empty()).then_some(questions);
            }
            task.task.last_updated_at = iso8601(SystemTime::now());
            record.clone()
        };
        let event = status_event(&record);
        let task_id = record.task.task.task_id.clone();
        match self.server.task_store.update(record).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::info!(task = %task_id, "the task ended elsewhere or is gone: its work stops");
                self.stop();
                return;
            }
            Err(error) => {
                // Nobody to answer: the change still reaches listening clients (the
                // notification carries the task), and the next change writes the whole
                // record again.
                tracing::warn!(task = %task_id, %error, "a task's change was not stored");
            }
        }
        // After the store: a client told of a change can read it with tasks/get.
        self.server.bus.publish(event);
    }

    /// The task ended on another instance (heard on the bus): stops the work here, unless
    /// the end heard is this instance's own.
    fn ended_elsewhere(&self) {
        if !self.lock().record.status().is_terminal() {
            tracing::info!(task = %self.id(), "the task ended elsewhere: its work stops");
            self.stop();
        }
    }

    /// Stops the work and forgets the task here, announcing nothing (its record says how it
    /// ended). The handler's questions get no answer; the handler is dropped, which raises
    /// its context's cancellation flag. Stopping twice does nothing more.
    fn stop(&self) {
        let abort = {
            let mut state = self.lock();
            state.waiting.clear();
            state.abort.take()
        };
        self.server.live_tasks.lock().remove(&self.id());
        if let Some(abort) = abort {
            abort.abort();
        }
    }

    fn id(&self) -> String {
        self.lock().record.task.task.task_id.clone()
    }

    /// A question asked inside the task: parks it in `input_required` until answered.
    pub(crate) async fn ask(
        &self,
        key: String,
        request: InputRequest,
    ) -> Result<InputResponse, McpError> {
        let (send, receive) = oneshot::channel();
        {
            let mut state = self.lock();
            let mut unique = key.clone();
            let mut n = 1;
            while !state.asked.insert(unique.clone()) {
                n += 1;
                unique = format!("{key}-{n}");
            }
            state.waiting.insert(unique, (request, send));
        }
        self.publish(|_| {}).await;
        receive.await.map_err(|_| McpError::internal("the task ended while waiting for input"))
    }

    /// Delivers the answers to outstanding questions; others are ignored (spec: SHOULD).
    pub(super) async fn answer(&self, responses: Map<String, Value>) -> Result<(), McpError> {
        let mut delivered = false;
        {
            let mut state = self.lock();
            for (key, value) in responses {
                if !state.waiting.contains_key(&key) {
                    continue;
                }
                let answer: InputResponse = serde_json::from_value(value).map_err(|e| {
                    McpError::invalid_params(format!("Invalid answer for input '{key}': {e}"))
                })?;
                if let Some((_, send)) = state.waiting.remove(&key) {
                    // The handler may have stopped waiting (cancelled); nothing to deliver to.
                    let _ = send.send(answer);
                    delivered = true;
                }
            }
        }
        if delivered {
            self.publish(|_| {}).await;
        }
        Ok(())
    }
}

/// The run of a tool call that may become a task. `run` is the handler's whole run (guarded,
/// converted to its wire result); `round` its MRTR round.
pub(crate) struct TaskCall<W> {
    pub server: Arc<ServerInner>,
    pub round: Arc<InputRound>,
    pub owner: Option<String>,
    pub stamp: Stamp,
    pub run: BoxFuture<Result<W, McpError>>,
}

impl<W: WireResult + 'static> TaskCall<W> {
    /// Polls the run once: finished is answered at once, stopped at questions is an MRTR
    /// round, anything else becomes a task.
    pub(crate) async fn respond(self) -> Outcome {
        let TaskCall { server, round, owner, stamp, mut run } = self;
        let first = std::future::poll_fn(|cx| match run.as_mut().poll(cx) {
            Poll::Ready(outcome) => Poll::Ready(Some(outcome)),
            Poll::Pending => Poll::Ready(None),
        })
        .await;
        if let Some(outcome) = first {
            return stamp.apply(outcome?);
        }
        if round.has_questions() {
            let questions = round.input_required(&server)?;
            return stamp.apply(MrtrResult::<W>::InputRequired(questions));
        }
        let live = create(&server, owner).await?;
        round.become_task(Arc::clone(&live) as Arc<dyn AnswersLater>);
        let created = CreateTaskResult::new(live.lock().record.task.task.clone());
        let work = tokio::spawn(finish(Arc::clone(&live), run));
        live.lock().abort = Some(work.abort_handle());
        stamp.apply(created)
    }
}

/// Stores a new task record and registers it as running here.
async fn create(
    server: &Arc<ServerInner>,
    owner: Option<String>,
) -> Result<Arc<LiveTask>, McpError> {
    let now = SystemTime::now();
    let stamp = iso8601(now);
    let ttl = server.task_ttl.map(|ttl| u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
    let mut task = Task::new(task_id()?, TaskStatus::Working, stamp.clone(), stamp, ttl);
    task.poll_interval_ms =
        Some(u64::try_from(server.task_poll_interval.as_millis()).unwrap_or(u64::MAX).max(1));
    let record = TaskRecord { task: task.into(), owner, created: now };
    follow_ends(server);
    server
        .task_store
        .create(record.clone())
        .await
        .map_err(|e| McpError::internal(format!("Could not create a task: {e}")))?;
    let id = record.task.task.task_id.clone();
    let live = Arc::new(LiveTask {
        server: Arc::clone(server),
        state: Mutex::new(LiveState {
            record,
            waiting: BTreeMap::new(),
            asked: Default::default(),
            abort: None,
        }),
    });
    server.live_tasks.lock().insert(id, Arc::clone(&live));
    Ok(live)
}

/// Runs the rest of the handler and records how it ended.
async fn finish<W: Serialize>(live: Arc<LiveTask>, run: BoxFuture<Result<W, McpError>>) {
    let outcome = run.await;
    let ended = match outcome.map(|result| serde_json::to_value(result)) {
        Ok(Ok(Value::Object(result))) => Ended::Completed(result),
        Ok(Ok(_)) => Ended::Failed(McpError::internal("the result is not a JSON object")),
        Ok(Err(e)) => Ended::Failed(internal(e)),
        Err(error) => Ended::Failed(error),
    };
    end(&live, ended).await;
}

/// The status message of a task cancelled by `tasks/cancel`.
const CANCELLED_MESSAGE: &str = "Cancelled at the client's request";

enum Ended {
    Completed(Map<String, Value>),
    Failed(McpError),
    Cancelled,
}

/// Moves a live task to its terminal state and forgets it here.
async fn end(live: &LiveTask, ended: Ended) {
    let id = live.id();
    live.publish(|task| {
        if task.task.status.is_terminal() {
            return;
        }
        task.input_requests = None;
        match ended {
            Ended::Completed(result) => {
                task.task.status = TaskStatus::Completed;
                task.result = Some(result);
            }
            Ended::Failed(error) => {
                task.task.status = TaskStatus::Failed;
                task.task.status_message = Some(error.message.clone());
                task.error = serde_json::to_value(&error).ok().and_then(|v| match v {
                    Value::Object(map) => Some(map),
                    _ => None,
                });
            }
            Ended::Cancelled => {
                task.task.status = TaskStatus::Cancelled;
                task.task.status_message = Some(CANCELLED_MESSAGE.into());
            }
        }
    })
    .await;
    live.server.live_tasks.lock().remove(&id);
}

/// The task `id` as `principal` may see it: unknown, expired and another's are one error,
/// so that nobody learns of a task that is not theirs.
async fn find(
    server: &ServerInner,
    id: &str,
    principal: Option<&str>,
) -> Result<TaskRecord, McpError> {
    match server.task_store.get(id).await.map_err(store_failed)? {
        Some(record) if record.owner.as_deref() == principal => Ok(record),
        Some(_) => {
            tracing::info!(task = id, "a principal asked for another's task");
            Err(unknown_task(id))
        }
        None => Err(unknown_task(id)),
    }
}

/// A store that could not answer is an internal error: the task may exist, so "unknown
/// task" would be a wrong answer.
fn store_failed(error: TaskStoreError) -> McpError {
    tracing::warn!(%error, "the task store did not answer");
    McpError::internal(format!("The task store did not answer, try again: {error}"))
}

fn runs_elsewhere(id: &str) -> McpError {
    McpError::internal(format!(
        "Task '{id}' runs on another instance of this server, which alone can take its \
         answers: send tasks/update with the header Mcp-Name: {id} so that the load balancer \
         routes it there"
    ))
}

fn nobody_runs(id: &str) -> McpError {
    McpError::internal(format!(
        "No instance of this server took up the answers for task '{id}': the instance running \
         it may have stopped; try again, or cancel the task"
    ))
}

fn unknown_task(id: &str) -> McpError {
    McpError::invalid_params(format!("Failed to retrieve task: unknown or expired task '{id}'"))
}

/// `tasks/get`.
pub(crate) async fn get(
    server: Arc<ServerInner>,
    params: TaskIdParams,
    principal: Option<String>,
) -> Result<GetTaskResult, McpError> {
    let record = find(&server, &params.task_id, principal.as_deref()).await?;
    Ok(GetTaskResult::new(record.task))
}

/// `tasks/update`: an empty acknowledgement once the answers are delivered.
pub(crate) async fn update(
    server: Arc<ServerInner>,
    params: UpdateTaskParams,
    principal: Option<String>,
) -> Result<EmptyResult, McpError> {
    let record = find(&server, &params.task_id, principal.as_deref()).await?;
    if let Some(live) = server.live_tasks.get(&params.task_id) {
        live.answer(params.input_responses).await?;
    } else if !record.status().is_terminal() {
        // Its work (and any question it asks) is on another instance: accepting the answers
        // here would lose them. Relayed there if this instance can; else the client may
        // retry, and a load balancer should send it there.
        let Some(relay) = server.live_tasks.relay.get() else {
            return Err(runs_elsewhere(&params.task_id));
        };
        let id = params.task_id.clone();
        match relay.relay(params).await {
            Some(answer) => answer?,
            // It may have ended meanwhile: then its answers are ignored, as below.
            None => {
                let record = find(&server, &id, principal.as_deref()).await?;
                if !record.status().is_terminal() {
                    return Err(nobody_runs(&id));
                }
            }
        }
    }
    // A finished task asks nothing: its answers are ignored, as unknown keys are.
    Ok(EmptyResult::default())
}

/// `tasks/cancel`: stops the work if it runs here, marks the task cancelled, acknowledges.
/// A finished task is acknowledged unchanged.
pub(crate) async fn cancel(
    server: Arc<ServerInner>,
    params: TaskIdParams,
    principal: Option<String>,
) -> Result<EmptyResult, McpError> {
    let mut record = find(&server, &params.task_id, principal.as_deref()).await?;
    if record.status().is_terminal() {
        return Ok(EmptyResult::default());
    }
    match server.live_tasks.get(&params.task_id) {
        Some(live) => {
            if let Some(abort) = live.lock().abort.take() {
                abort.abort();
            }
            end(&live, Ended::Cancelled).await;
        }
        None => {
            // Running elsewhere (or lost with an instance): the record says cancelled, and
            // once it is stored, every instance hears it: the one running the task stops the
            // work (`follow_ends`), listening clients are told.
            record.task.task.status = TaskStatus::Cancelled;
            record.task.task.status_message = Some(CANCELLED_MESSAGE.into());
            record.task.input_requests = None;
            record.task.task.last_updated_at = iso8601(SystemTime::now());
            let event = status_event(&record);
            if server.task_store.update(record).await.map_err(store_failed)? {
                server.bus.publish(event);
            }
        }
    }
    Ok(EmptyResult::default())
}

impl WireResult for GetTaskResult {
    fn stamp(&mut self) {
        self.result_type = Some(ResultType::Complete);
    }

    fn meta_mut(&mut self) -> Option<&mut Option<modelcontext_types::Meta>> {
        Some(&mut self.meta)
    }
}

impl WireResult for CreateTaskResult {
    fn stamp(&mut self) {}

    fn meta_mut(&mut self) -> Option<&mut Option<modelcontext_types::Meta>> {
        Some(&mut self.meta)
    }
}

/// 128 random bits, hex: unguessable, as the extension requires of ids that act as bearer
/// tokens for the task's state. Without an entropy source no task is created at all.
fn task_id() -> Result<String, McpError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| McpError::internal(format!("Could not create a task: no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// `time` as ISO 8601 UTC with milliseconds (`2026-08-01T12:00:00.000Z`).
pub(crate) fn iso8601(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    let (h, m, s) = (rest / 3600, rest % 3600 / 60, rest % 60);
    let ms = since.subsec_millis();
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z")
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::iso8601;

    #[test]
    fn timestamps_are_iso8601_utc() {
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap_day = UNIX_EPOCH + Duration::from_millis(951_782_400_123);
        assert_eq!(iso8601(leap_day), "2000-02-29T00:00:00.123Z");
        let later = UNIX_EPOCH + Duration::from_secs(1_785_196_800);
        assert_eq!(iso8601(later), "2026-07-28T00:00:00.000Z");
    }
}
