//! `tasks/update` relayed through the [`PeerRouter`] to the instance running the task.
//!
//! The instance that received the request, and does not run the task, broadcasts it as a
//! JSON-RPC request whose id names itself (`{instance}/{n}`, as the requests a session sends
//! its client); the instance running the task takes the answers in and forwards the outcome
//! back as a JSON-RPC response with that id; the others ignore it. The client is answered
//! once that response arrives, or told that nobody took the answers up after
//! [`HttpOptions::task_update_relay_timeout`](super::HttpOptions::task_update_relay_timeout)
//! (the running instance died, or the task ended meanwhile: the caller checks the record
//! again). Taking the answers in is one store write there, so the timeout only runs out when
//! no instance runs the task.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use modelcontext_types::{McpError, UpdateTaskParams};
use serde_json::Value;
use tokio::sync::oneshot;

use super::peer_router::{Direction, PeerRouter, Routed, ticket_instance};
use crate::server::front_end::{ServerInner, TaskRelay, answer_here, relay_unavailable};
use futures_util::future::BoxFuture;

/// The relay of one endpoint: its router, and the relayed updates waiting for an answer.
pub(crate) struct RouterRelay {
    router: Arc<dyn PeerRouter>,
    /// Held weakly: the server holds the relay.
    server: Weak<ServerInner>,
    waiting: Mutex<HashMap<String, oneshot::Sender<Result<(), McpError>>>>,
    next: AtomicU64,
    /// How long a relayed update waits for its answer.
    timeout: Duration,
}

impl RouterRelay {
    pub(crate) fn new(
        router: Arc<dyn PeerRouter>,
        server: Weak<ServerInner>,
        timeout: Duration,
    ) -> RouterRelay {
        let (waiting, next) = (Mutex::default(), AtomicU64::new(1));
        RouterRelay { router, server, waiting, next, timeout }
    }

    fn waiting(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Result<(), McpError>>>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes a routed task message: a relayed update (answered if the task runs here), or the
    /// answer to one this instance relayed.
    pub(crate) async fn take(&self, routed: Routed) {
        let Ok(message) = serde_json::from_str::<Value>(&routed.message) else {
            tracing::warn!(task = %routed.session, "an unreadable relayed task message");
            return;
        };
        let Some(id) = message.get("id").and_then(Value::as_str).map(str::to_owned) else {
            tracing::warn!(task = %routed.session, "a relayed task message without a string id");
            return;
        };
        match routed.direction {
            Direction::TaskUpdate => self.deliver_update(&routed.session, id, message).await,
            Direction::TaskUpdated => {
                let outcome = match message.get("error") {
                    None => Ok(()),
                    Some(error) => Err(serde_json::from_value(error.clone()).unwrap_or_else(|e| {
                        McpError::internal(format!("an unreadable answer from the task: {e}"))
                    })),
                };
                if let Some(waiting) = self.waiting().remove(&id) {
                    let _ = waiting.send(outcome);
                }
            }
            _ => {}
        }
    }

    /// Delivers a relayed update's answers if task `task` runs here, and sends the outcome
    /// back to the instance that relayed it (`id` names it).
    async fn deliver_update(&self, task: &str, id: String, mut message: Value) {
        let Some(server) = self.server.upgrade() else { return };
        let params = message.get_mut("params").map(Value::take).unwrap_or_default();
        let params: UpdateTaskParams = match serde_json::from_value::<UpdateTaskParams>(params) {
            Ok(params) if params.task_id == task => params,
            _ => {
                tracing::warn!(task, "a relayed tasks/update with unreadable params");
                return;
            }
        };
        let Some(outcome) = answer_here(&server, params).await else { return };
        let Some(relayer) = ticket_instance(&id) else { return };
        let mut reply = serde_json::json!({ "jsonrpc": "2.0", "id": id });
        match outcome {
            Ok(()) => reply["result"] = serde_json::json!({}),
            Err(error) => reply["error"] = serde_json::to_value(&error).unwrap_or_default(),
        }
        let reply = Routed::task_updated(task, reply.to_string());
        if let Err(error) = self.router.forward(relayer, reply).await {
            // The relaying instance times out and tells its client to try again.
            tracing::warn!(%error, task, "the answer to a relayed tasks/update not sent back");
        }
    }

    /// Relays `params` (see [`TaskRelay::relay`]).
    async fn relay_update(&self, params: UpdateTaskParams) -> Option<Result<(), McpError>> {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let id = format!("{}/{number}", self.router.instance());
        let task = params.task_id.clone();
        let request = serde_json::json!({
            "jsonrpc": "2.0", "id": id, "method": "tasks/update", "params": params,
        });
        let (tx, rx) = oneshot::channel();
        self.waiting().insert(id.clone(), tx);
        // Whatever happens below, nobody waits for this id afterwards.
        let _forget = Forget { relay: self, id: &id };
        let routed = Routed::task_update(task.clone(), request.to_string());
        if let Err(error) = self.router.broadcast(routed).await {
            return Some(Err(relay_unavailable(&task, &error.to_string())));
        }
        match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(outcome)) => Some(outcome),
            _ => None,
        }
    }
}

/// Forgets a relayed update's waiter when the relay ends, answered or not.
struct Forget<'a> {
    relay: &'a RouterRelay,
    id: &'a str,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.relay.waiting().remove(self.id);
    }
}

impl TaskRelay for RouterRelay {
    fn relay(&self, params: UpdateTaskParams) -> BoxFuture<'_, Option<Result<(), McpError>>> {
        Box::pin(self.relay_update(params))
    }
}
