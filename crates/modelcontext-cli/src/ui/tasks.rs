//! Tasks (`io.modelcontextprotocol/tasks`) in the inspector: the tasks the page started with
//! a task-augmented `tools/call`, their state (`tasks/get`) and cancelling them
//! (`tasks/cancel`); the questions a task asks are answered in the page's question dialog.
//! The extension has no way to list a server's tasks, so the page shows the ones this session
//! started.

use std::sync::{Arc, Mutex};

use axum::extract::{Json, State};
use modelcontext::Client;
use modelcontext::client::ToolCall;
use modelcontext::types::Task;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use tokio::task::AbortHandle;

use super::api::{Answer, Ui, finish, progress_options, sdk};
use super::events::Events;
use crate::failure::Failure;

/// The tasks started from the page, oldest first, each followed to its end.
#[derive(Default)]
pub struct Started {
    tasks: Mutex<Vec<StartedTask>>,
}

struct StartedTask {
    task_id: String,
    tool: String,
    /// The loop that follows it ([`Started::follow`]).
    follower: AbortHandle,
}

impl Started {
    /// Keeps `task` and follows it with the client's own loop (`wait_for_task`), which
    /// answers the task's questions with the session's callbacks, that is in the page's
    /// question dialog; its end becomes a `task` event.
    fn follow(&self, client: Arc<Client>, task: Task, tool: String, events: Events) {
        let task_id = task.task_id.clone();
        let follower = tokio::spawn(async move {
            let mut ended = json!({"taskId": task.task_id});
            if let Err(err) = client.wait_for_task(&task).await {
                ended["error"] = json!(err.to_string());
            }
            events.push("task", ended);
        });
        let started = StartedTask { task_id, tool, follower: follower.abort_handle() };
        self.lock().push(started);
    }

    fn all(&self) -> Vec<(String, String)> {
        self.lock().iter().map(|task| (task.task_id.clone(), task.tool.clone())).collect()
    }

    /// Forgets them all and stops following them: a new connection has other tasks, and
    /// the followers' hold on the client would keep the old connection open.
    pub fn clear(&self) {
        for task in self.lock().drain(..) {
            task.follower.abort();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<StartedTask>> {
        self.tasks.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[derive(Deserialize)]
pub struct TaskCallRequest {
    request: String,
    tool: String,
    #[serde(default)]
    arguments: Map<String, Value>,
}

/// `POST /api/call-task`: `tools/call` declaring the tasks extension. The server decides:
/// `{"result": ...}` when it answered at once, `{"task": ...}` when it made a task (kept for
/// `/api/tasks`).
pub async fn call_task(State(session): Ui, Json(request): Json<TaskCallRequest>) -> Answer {
    let client = session.client()?;
    let options = progress_options(&session, &request.request);
    let TaskCallRequest { request: name, tool, arguments } = request;
    let (caller, called) = (Arc::clone(&client), tool.clone());
    let call = async move { caller.call_tool_as_task_with(&called, arguments, &options).await };
    match session.cancellable(name, call).await? {
        Some(Ok(ToolCall::Task(task))) => {
            let answer = json!({"task": task});
            session.tasks.follow(client, task, tool, session.events.clone());
            Ok(Json(answer))
        }
        Some(Ok(ToolCall::Done(result))) => finish(Some(Ok(result))),
        Some(Ok(_)) => {
            Err(Failure::Other("an answer of a kind this mcp does not know".into()).into())
        }
        Some(Err(err)) => Err(sdk(err)),
        None => finish::<Value>(None),
    }
}

/// `POST /api/tasks`: every task started from the page, as the server sees it now:
/// `{"tasks": [{"tool", "task"}]}`, or `{"tool", "taskId", "error"}` for one the server no
/// longer knows.
pub async fn tasks(State(session): Ui) -> Answer {
    let client = session.client()?;
    let mut tasks = Vec::new();
    for (task_id, tool) in session.tasks.all() {
        tasks.push(match client.get_task(&task_id).await {
            Ok(task) => json!({"tool": tool, "task": task}),
            Err(err) => json!({"tool": tool, "taskId": task_id, "error": err.to_string()}),
        });
    }
    Ok(Json(json!({"tasks": tasks})))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTaskRequest {
    task_id: String,
}

/// `POST /api/cancel-task`: `tasks/cancel`, then the task as it is after: `{"task": ...}`
/// (cancellation is cooperative, so it may have finished anyway).
pub async fn cancel_task(State(session): Ui, Json(request): Json<CancelTaskRequest>) -> Answer {
    let client = session.client()?;
    client.cancel_task(&request.task_id).await.map_err(sdk)?;
    let task = client.get_task(&request.task_id).await.map_err(sdk)?;
    Ok(Json(json!({"task": task})))
}
