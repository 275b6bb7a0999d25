//! The downstream requests waiting on an upstream, so that what the upstream asks while it
//! works (sampling, elicitation, roots, log messages) reaches the client that caused it.
//!
//! A question asked inside the call's own task (the 2026-07-28 era, where the client answers
//! `input_required` rounds within the call) knows its caller through a task-local. A live
//! server-to-client request of the handshake era arrives on the connection's loop with nothing
//! naming the call it belongs to; it goes to the most recent call still waiting on that
//! upstream, the only choice when one call is in flight, and the likeliest otherwise.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;

use modelcontext_types::McpError;
use tokio::sync::Notify;

use crate::server::Context;

tokio::task_local! {
    /// The downstream request a forwarded call belongs to, inside that call's task.
    static CALLER: Caller;
}

/// A downstream request waiting on an upstream answer.
#[derive(Clone)]
pub(super) struct Caller {
    pub cx: Context,
    /// Woken after a question is recorded for the caller from another task, so that the
    /// forwarded call is polled again and its frame sees the question (2026-07-28 era).
    pub asked: Arc<Notify>,
}

/// The downstream requests in flight on one upstream, oldest first.
#[derive(Default)]
pub(super) struct Callers {
    next: AtomicU64,
    live: Mutex<Vec<(u64, Caller)>>,
}

/// Removes its caller from the list when the forwarded call ends.
pub(super) struct Registered<'a> {
    callers: &'a Callers,
    id: u64,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.callers.lock().retain(|(id, _)| *id != self.id);
    }
}

impl Callers {
    /// Records `caller` until the returned guard is dropped.
    pub(super) fn register(&self, caller: Caller) -> Registered<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().push((id, caller));
        Registered { callers: self, id }
    }

    /// The caller a question or log message from the upstream belongs to.
    pub(super) fn current(&self) -> Option<Caller> {
        CALLER.try_with(Caller::clone).ok().or_else(|| self.latest())
    }

    fn latest(&self) -> Option<Caller> {
        self.lock().last().map(|(_, caller)| caller.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Caller)>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs `call` with `caller` as the task's caller.
pub(super) fn within<F: Future>(caller: Caller, call: F) -> impl Future<Output = F::Output> {
    CALLER.scope(caller, call)
}

/// Asks the caller's client through `ask` (a question on the caller's context). A modern
/// caller's question is recorded on its first poll and never answers in this round; the
/// caller is woken then, so that its request answers `input_required`.
pub(super) async fn ask_caller<T, F>(
    callers: &Callers,
    ask: impl FnOnce(Context) -> F,
) -> Result<T, McpError>
where
    F: Future<Output = Result<T, McpError>>,
{
    let Some(caller) = callers.current() else {
        return Err(McpError::internal(
            "the upstream server asked the client for input outside any request",
        ));
    };
    let mut asking = pin!(ask(caller.cx.clone()));
    let first = std::future::poll_fn(|cx| Poll::Ready(asking.as_mut().poll(cx))).await;
    if let Poll::Ready(answer) = first {
        return answer;
    }
    caller.asked.notify_one();
    // A modern caller's request ends here, answering `input_required`; the question is
    // asked again when the client retries with the answer.
    tokio::select! {
        answer = asking => answer,
        () = caller.cx.cancelled() => Err(McpError::internal("the request asking ended first")),
    }
}
