//! Tasks (`io.modelcontextprotocol/tasks`) in the inspector: the tasks the page started with
//! a task-augmented `tools/call`, their state (`tasks/get`) and cancelling them
//! (`tasks/cancel`); the questions a task asks are answered in the page's question dialog.
//! The extension has no way to list a server's tasks, so the page shows the ones this session
//! started.

use std::sync::Arc;

use axum::extract::{Json, State};
use modelcontext::client::ToolCall;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::api::{Answer, Ui, finish, progress_options, sdk};
use crate::failure::Failure;

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
