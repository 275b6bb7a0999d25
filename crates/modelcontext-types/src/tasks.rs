//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, for 2026-07-28).
//!
//! A server that the client's per-request capabilities allow may answer `tools/call` with a
//! task handle ([`CreateTaskResult`], `resultType: "task"`) instead of the tool's result. The
//! client then polls `tasks/get` (a [`DetailedTask`]: the status and, once there, the result,
//! the error or the questions the task waits on), answers questions with `tasks/update`, and
//! may ask for cancellation with `tasks/cancel`. `tasks/update` and `tasks/cancel` answer an
//! empty acknowledgement. The server alone decides whether a call becomes a task.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{ClientCapabilities, InputRequests, Meta, RequestMeta, ResultType};

/// The extension's identifier, the key under `capabilities.extensions` on both sides.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Whether `capabilities` declare the tasks extension.
pub fn declares_tasks(capabilities: &ClientCapabilities) -> bool {
    capabilities.extensions.as_ref().is_some_and(|e| e.contains_key(TASKS_EXTENSION))
}

/// Client capabilities that declare the tasks extension (with nothing else), as a request's
/// `_meta` carries them and as -32021's `requiredCapabilities` names them.
pub fn tasks_capabilities() -> ClientCapabilities {
    let mut extensions = Map::new();
    extensions.insert(TASKS_EXTENSION.into(), Value::Object(Map::new()));
    ClientCapabilities::default().with_extensions(extensions)
}

/// Where a task is in its life. `completed`, `failed` and `cancelled` are terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// The request is being processed.
    Working,
    /// The task waits for the answers to its `inputRequests` (`tasks/update`).
    InputRequired,
    /// Finished with a result (a tool result with `isError: true` included).
    Completed,
    /// Finished with a JSON-RPC error.
    Failed,
    /// Cancelled before it finished.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task is finished and will not change again.
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }
}

/// What every task carries: its identity, status and timing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// The server-chosen, unguessable id.
    pub task_id: String,
    /// The current status.
    pub status: TaskStatus,
    /// A human-readable word on the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time.
    pub created_at: String,
    /// ISO 8601 time of the last change.
    pub last_updated_at: String,
    /// How long after creation the server keeps the task, in milliseconds; `null` for ever.
    /// Always on the wire.
    #[serde(default)]
    pub ttl_ms: Option<u64>,
    /// How often the server suggests polling, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
}

impl Task {
    /// A task with the required fields.
    pub fn new(
        task_id: impl Into<String>,
        status: TaskStatus,
        created_at: impl Into<String>,
        last_updated_at: impl Into<String>,
        ttl_ms: Option<u64>,
    ) -> Task {
        Task {
            task_id: task_id.into(),
            status,
            status_message: None,
            created_at: created_at.into(),
            last_updated_at: last_updated_at.into(),
            ttl_ms,
            poll_interval_ms: None,
        }
    }
}

/// A task with what its status carries: the questions of `input_required`, the result of
/// `completed`, the JSON-RPC error of `failed`. The body of `tasks/get` and of
/// `notifications/tasks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DetailedTask {
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// `input_required`: the questions still unanswered, by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// `completed`: the result the request would have answered (a `CallToolResult`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Map<String, Value>>,
    /// `failed`: the JSON-RPC error (`code`, `message`, `data`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Map<String, Value>>,
}

impl From<Task> for DetailedTask {
    fn from(task: Task) -> DetailedTask {
        DetailedTask { task, input_requests: None, result: None, error: None }
    }
}

/// The answer of a request the server turned into a task: `resultType: "task"` and the task,
/// flat (no `task` wrapper).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateTaskResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `"task"`.
    pub result_type: ResultType,
    /// The task's seed state.
    #[serde(flatten)]
    pub task: Task,
}

impl CreateTaskResult {
    /// The handle for `task`.
    pub fn new(task: Task) -> CreateTaskResult {
        CreateTaskResult { meta: None, result_type: ResultType::Other("task".into()), task }
    }
}

/// The answer to `tasks/get`: the detailed task, `resultType: "complete"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetTaskResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `"complete"` (absent from a legacy peer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The task.
    #[serde(flatten)]
    pub task: DetailedTask,
}

impl GetTaskResult {
    /// The answer carrying `task`.
    pub fn new(task: DetailedTask) -> GetTaskResult {
        GetTaskResult { meta: None, result_type: None, task }
    }
}

/// The params of `tasks/get` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskIdParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The task.
    pub task_id: String,
}

impl TaskIdParams {
    /// The params naming `task_id`.
    pub fn new(task_id: impl Into<String>) -> TaskIdParams {
        TaskIdParams { meta: None, task_id: task_id.into() }
    }
}

/// The params of `tasks/update`: answers to the task's outstanding questions. Kept as JSON
/// per key, so that an answer to a key the task did not ask (which the server ignores) can
/// never make the whole update invalid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UpdateTaskParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The task.
    pub task_id: String,
    /// Answers by the key of the question each answers.
    pub input_responses: Map<String, Value>,
}

impl UpdateTaskParams {
    /// Answers for `task_id`.
    pub fn new(task_id: impl Into<String>, input_responses: Map<String, Value>) -> Self {
        UpdateTaskParams { meta: None, task_id: task_id.into(), input_responses }
    }
}
