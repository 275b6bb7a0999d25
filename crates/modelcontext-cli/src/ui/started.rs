//! The tasks a session started from the page, each followed to its end by the client's own
//! loop; forgotten, and no longer followed, when the session connects elsewhere.

use std::sync::{Arc, Mutex};

use modelcontext::Client;
use modelcontext::types::Task;
use serde_json::json;
use tokio::task::AbortHandle;

use super::events::Events;

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
    pub(super) fn follow(&self, client: Arc<Client>, task: Task, tool: String, events: Events) {
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

    pub(super) fn all(&self) -> Vec<(String, String)> {
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
