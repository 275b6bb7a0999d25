//! The tasks extension (`io.modelcontextprotocol/tasks`) on the client side.
//!
//! [`Client::call_tool_as_task`] declares the extension on one `tools/call`; the server then
//! answers either the tool's result or a task handle ([`ToolCall`]). [`Client::wait_for_task`]
//! polls `tasks/get` at the interval the server suggests, answers the task's questions with
//! the client's callbacks (`tasks/update`), and returns the result. A plain
//! [`Client::call_tool`] does all of this by itself when the server insists on a task (a
//! -32021 naming the extension), so callers that only want a result never see tasks.

use std::collections::HashSet;
use std::time::Duration;

use modelcontext_types::{
    CallToolRequestParams, CallToolResult, CreateTaskResult, DetailedTask, Era, GetTaskResult,
    InputRequests, InputResponses, McpError, RawValue, RequestMeta, ResultType, TASKS_EXTENSION,
    Task, TaskIdParams, TaskStatus, UpdateTaskParams, method,
};
use serde_json::{Map, Value};

use super::{CallOptions, Client};
use crate::Error;
use crate::engine::RequestOptions;

/// How a task-capable `tools/call` was answered: the server decides.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolCall {
    /// The tool's result, at once.
    Done(CallToolResult),
    /// A task to poll ([`Client::wait_for_task`], [`Client::get_task`]).
    Task(Task),
}

/// The interval used when the server suggests none.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// The shortest interval honoured, whatever the server says.
const MIN_POLL: Duration = Duration::from_millis(10);

/// A `tools/call` answer that may be a task handle (`resultType: "task"`).
pub(super) enum CallAnswer {
    Result(CallToolResult),
    Task(CreateTaskResult),
}

impl CallAnswer {
    /// The answer `raw`, whose `resultType` is `result_type`: a task handle or the result,
    /// each parsed straight from the text.
    fn from_raw(raw: &RawValue, result_type: Option<&ResultType>) -> Result<CallAnswer, Error> {
        let is_task = result_type.is_some_and(|result_type| result_type.as_str() == "task");
        Ok(match is_task {
            true => CallAnswer::Task(serde_json::from_str(raw.get())?),
            false => CallAnswer::Result(serde_json::from_str(raw.get())?),
        })
    }
}

impl Client {
    /// Sends `tools/call` with `params` and parses the answer, a result or a task handle.
    pub(super) async fn call_answer(
        &self,
        params: CallToolRequestParams,
        options: &CallOptions,
    ) -> Result<CallAnswer, Error> {
        self.call_answer_object(&mut super::calls::object(params)?, options).await
    }

    /// [`Client::call_answer`] with the params already an object, which stay the caller's.
    pub(super) async fn call_answer_object(
        &self,
        params: &mut Map<String, Value>,
        options: &CallOptions,
    ) -> Result<CallAnswer, Error> {
        let answered = self.request_mrtr_object(method::TOOLS_CALL, params, options).await?;
        CallAnswer::from_raw(&answered.raw, answered.result_type.as_ref())
    }

    /// Calls a tool declaring the tasks extension on this request, so the server may answer
    /// with a task. Handshake-era servers know no tasks: the call is a plain one there.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: impl serde::Serialize,
    ) -> Result<ToolCall, Error> {
        self.call_tool_as_task_with(name, arguments, &CallOptions::default()).await
    }

    /// [`Client::call_tool_as_task`] with per-call options.
    pub async fn call_tool_as_task_with(
        &self,
        name: &str,
        arguments: impl serde::Serialize,
        options: &CallOptions,
    ) -> Result<ToolCall, Error> {
        let mut params = CallToolRequestParams::new(name, super::tool_arguments(arguments)?);
        params.meta = self.tasks_meta();
        match self.call_answer(params, options).await? {
            CallAnswer::Result(result) => Ok(ToolCall::Done(result)),
            CallAnswer::Task(created) => Ok(ToolCall::Task(created.task)),
        }
    }

    /// The task's current state (`tasks/get`). An unknown or expired id is a JSON-RPC error
    /// (-32602).
    pub async fn get_task(&self, task_id: &str) -> Result<DetailedTask, Error> {
        let mut params = TaskIdParams::new(task_id);
        params.meta = self.tasks_meta();
        let result: GetTaskResult = self.request(method::TASKS_GET, params).await?;
        Ok(result.task)
    }

    /// Answers some of the task's questions (`tasks/update`), by their keys.
    pub async fn update_task(&self, task_id: &str, responses: InputResponses) -> Result<(), Error> {
        let responses = match serde_json::to_value(responses)? {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let mut params = UpdateTaskParams::new(task_id, responses);
        params.meta = self.tasks_meta();
        let _: Value = self.request(method::TASKS_UPDATE, params).await?;
        Ok(())
    }

    /// Asks the server to cancel the task (`tasks/cancel`). Cancellation is cooperative: the
    /// task may still finish otherwise; [`Client::get_task`] tells.
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), Error> {
        let mut params = TaskIdParams::new(task_id);
        params.meta = self.tasks_meta();
        let _: Value = self.request(method::TASKS_CANCEL, params).await?;
        Ok(())
    }

    /// Polls the task until it ends, at the interval the server suggests, answering its
    /// questions with the client's callbacks. `completed` is the tool's result (which may
    /// be a tool error, `is_error`); `failed` is the task's JSON-RPC error; `cancelled` is an
    /// error too, and so is a task still unfinished when its `ttlMs` has passed (the
    /// extension's backstop; a task without a TTL is polled until it ends). Dropping the
    /// future stops polling; it does not cancel the task (see [`Client::cancel_task`]).
    pub async fn wait_for_task(&self, task: &Task) -> Result<CallToolResult, Error> {
        let mut interval = poll_interval(task.poll_interval_ms);
        let mut answered = HashSet::new();
        let started = std::time::Instant::now();
        loop {
            if task.ttl_ms.is_some_and(|ttl| started.elapsed() > Duration::from_millis(ttl)) {
                let message = format!("task '{}' did not finish within its TTL", task.task_id);
                return Err(McpError::internal(message).into());
            }
            let detailed = self.get_task(&task.task_id).await?;
            match detailed.task.status {
                TaskStatus::Completed => return completed(detailed),
                TaskStatus::Failed => return Err(failed(&detailed)),
                TaskStatus::Cancelled => {
                    let message = format!("task '{}' was cancelled", task.task_id);
                    return Err(McpError::internal(message).into());
                }
                TaskStatus::InputRequired => {
                    let questions = detailed.input_requests.clone().unwrap_or_default();
                    self.answer_task(&task.task_id, questions, &mut answered).await?;
                }
                _ => {}
            }
            interval = poll_interval(detailed.task.poll_interval_ms.or(Some(millis(interval))));
            tokio::time::sleep(interval).await;
        }
    }

    /// Answers the questions not answered before (the server repeats them until it has
    /// taken the answers in).
    async fn answer_task(
        &self,
        task_id: &str,
        questions: InputRequests,
        answered: &mut HashSet<String>,
    ) -> Result<(), Error> {
        let fresh: InputRequests =
            questions.into_iter().filter(|(key, _)| !answered.contains(key)).collect();
        if fresh.is_empty() {
            return Ok(());
        }
        answered.extend(fresh.keys().cloned());
        let responses = self.answer_all(fresh).await?;
        self.update_task(task_id, responses).await
    }

    /// `call_tool` when the server insists on a task: the call again, declaring the
    /// extension, then the task waited for. Dropping the future cancels the task.
    pub(super) async fn call_tool_through_task(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        let arguments = arguments.map(Value::Object).unwrap_or(Value::Null);
        match self.call_tool_as_task_with(name, arguments, options).await? {
            ToolCall::Done(result) => Ok(result),
            ToolCall::Task(task) => self.wait_cancelling_on_drop(&task).await,
        }
    }

    /// [`Client::wait_for_task`], sending `tasks/cancel` if dropped before the end: the
    /// caller of a plain `call_tool` never saw the task, so nobody else would cancel it.
    pub(super) async fn wait_cancelling_on_drop(
        &self,
        task: &Task,
    ) -> Result<CallToolResult, Error> {
        let guard = CancelOnDrop { client: self, task_id: Some(task.task_id.clone()) };
        let outcome = self.wait_for_task(task).await;
        guard.disarm();
        outcome
    }

    /// The request `_meta` with the tasks extension declared (modern era only).
    fn tasks_meta(&self) -> Option<RequestMeta> {
        let mut meta = self.meta()?;
        let capabilities = meta.client_capabilities.get_or_insert_with(Default::default);
        let extensions = capabilities.extensions.get_or_insert_with(Map::new);
        extensions.entry(TASKS_EXTENSION).or_insert_with(|| Value::Object(Map::new()));
        Some(meta)
    }

    pub(super) fn speaks_tasks(&self) -> bool {
        self.era == Era::Modern
    }
}

/// Sends `tasks/cancel` from a spawned task when dropped armed.
struct CancelOnDrop<'a> {
    client: &'a Client,
    task_id: Option<String>,
}

impl CancelOnDrop<'_> {
    fn disarm(mut self) {
        self.task_id = None;
    }
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let Some(task_id) = self.task_id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let mut params = TaskIdParams::new(task_id);
        params.meta = self.client.tasks_meta();
        let Ok(raw) = modelcontext_types::to_raw(&params) else { return };
        let peer = self.client.peer.clone();
        let options =
            RequestOptions { timeout: self.client.options.timeout, ..RequestOptions::default() };
        runtime.spawn(async move {
            let id = peer.next_id();
            if let Err(error) = peer.request(id, method::TASKS_CANCEL, Some(raw), options).await {
                tracing::debug!(%error, "tasks/cancel of an abandoned task failed");
            }
        });
    }
}

/// Whether `error` is the server insisting on the tasks extension (-32021 naming it).
pub(super) fn insists_on_task(error: &Error) -> bool {
    let Some(error) = error.as_mcp_error() else { return false };
    error.code == modelcontext_types::MISSING_REQUIRED_CLIENT_CAPABILITY
        && error
            .data
            .as_ref()
            .and_then(|d| d.pointer("/requiredCapabilities/extensions"))
            .and_then(Value::as_object)
            .is_some_and(|e| e.contains_key(TASKS_EXTENSION))
}

fn completed(task: DetailedTask) -> Result<CallToolResult, Error> {
    let result = task.result.unwrap_or_default();
    Ok(serde_json::from_value(Value::Object(result))?)
}

fn failed(task: &DetailedTask) -> Error {
    let error = task.error.clone().map(Value::Object).unwrap_or(Value::Null);
    match serde_json::from_value::<McpError>(error) {
        Ok(error) => error.into(),
        Err(_) => McpError::internal(format!("task '{}' failed", task.task.task_id)).into(),
    }
}

fn poll_interval(ms: Option<u64>) -> Duration {
    ms.map_or(DEFAULT_POLL, Duration::from_millis).max(MIN_POLL)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
