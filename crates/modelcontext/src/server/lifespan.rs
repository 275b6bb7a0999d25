//! Lifespan: async start-up and shutdown around serving (open a pool, close it), with the
//! state start-up builds available to every handler.
//!
//! [`McpServer::lifespan`](super::McpServer::lifespan) registers a pair of hooks;
//! [`McpServer::start`](super::McpServer::start) runs every start hook in registration order
//! and publishes what each built, [`Running::shutdown`] runs the stop hooks in reverse order
//! and withdraws the state. `run_stdio` does both around serving; `serve_http` starts, and
//! stops only if serving fails (it serves until the process ends); a server served connection
//! by connection (`serve`, `in_memory`), or stopped on a signal, calls `start` and `shutdown`
//! itself.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, RwLock};

use crate::Error;
use crate::engine::BoxFuture;

type AnyState = Arc<dyn Any + Send + Sync>;

/// One start/stop pair, type-erased.
pub(crate) trait Hook: Send + Sync + 'static {
    /// Builds the state, or fails start-up.
    fn start(&self) -> BoxFuture<Result<(TypeId, AnyState), Error>>;
    /// Tears the state down.
    fn stop(&self, state: AnyState) -> BoxFuture<()>;
}

struct Pair<Start, Stop, E> {
    start: Start,
    stop: Stop,
    error: std::marker::PhantomData<fn() -> E>,
}

impl<T, E, Start, StartFut, Stop, StopFut> Hook for Pair<Start, Stop, E>
where
    T: Send + Sync + 'static,
    E: Into<Box<dyn std::error::Error + Send + Sync>> + 'static,
    Start: Fn() -> StartFut + Send + Sync + 'static,
    StartFut: Future<Output = Result<T, E>> + Send + 'static,
    Stop: Fn(Arc<T>) -> StopFut + Send + Sync + 'static,
    StopFut: Future<Output = ()> + Send + 'static,
{
    fn start(&self) -> BoxFuture<Result<(TypeId, AnyState), Error>> {
        let future = (self.start)();
        Box::pin(async move {
            // The hook's own error type, kept as the source of ours.
            let state = future.await.map_err(|e| Error::from(std::io::Error::other(e)))?;
            let state: AnyState = Arc::new(state);
            Ok((TypeId::of::<T>(), state))
        })
    }

    fn stop(&self, state: AnyState) -> BoxFuture<()> {
        match state.downcast::<T>() {
            Ok(state) => Box::pin((self.stop)(state)),
            Err(_) => Box::pin(async {}),
        }
    }
}

/// Boxes a start/stop pair.
pub(crate) fn hook<T, E, Start, StartFut, Stop, StopFut>(start: Start, stop: Stop) -> Arc<dyn Hook>
where
    T: Send + Sync + 'static,
    E: Into<Box<dyn std::error::Error + Send + Sync>> + 'static,
    Start: Fn() -> StartFut + Send + Sync + 'static,
    StartFut: Future<Output = Result<T, E>> + Send + 'static,
    Stop: Fn(Arc<T>) -> StopFut + Send + Sync + 'static,
    StopFut: Future<Output = ()> + Send + 'static,
{
    Arc::new(Pair { start, stop, error: std::marker::PhantomData })
}

/// The hooks (copied with the server's settings, so a clone that adds one does not change the
/// original) and, while the server runs, the state they built (shared by every clone, so
/// connections served after `start` see it).
#[derive(Clone, Default)]
pub(crate) struct Lifespan {
    hooks: Vec<Arc<dyn Hook>>,
    state: Arc<RwLock<HashMap<TypeId, AnyState>>>,
}

impl Lifespan {
    pub(crate) fn add(&mut self, hook: Arc<dyn Hook>) {
        self.hooks.push(hook);
    }

    /// The state of type `T`, while the server runs.
    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let state = self.state.read().unwrap_or_else(|e| e.into_inner());
        state.get(&TypeId::of::<T>()).cloned()?.downcast::<T>().ok()
    }

    /// Runs the start hooks in order. If one fails, the ones that succeeded are stopped (in
    /// reverse order) before the error is returned: a failed start-up leaks nothing.
    pub(crate) async fn start(&self) -> Result<Running, Error> {
        let mut running = Running { state: Arc::clone(&self.state), started: Vec::new() };
        for hook in &self.hooks {
            match hook.start().await {
                Ok((type_id, state)) => {
                    let mut published = self.state.write().unwrap_or_else(|e| e.into_inner());
                    published.insert(type_id, Arc::clone(&state));
                    drop(published);
                    running.started.push((Arc::clone(hook), type_id, state));
                }
                Err(err) => {
                    running.shutdown().await;
                    return Err(err);
                }
            }
        }
        Ok(running)
    }
}

/// A started server's lifespan: call [`Running::shutdown`] when serving is over.
#[must_use = "call `shutdown` when serving ends, or the stop hooks never run"]
pub struct Running {
    state: Arc<RwLock<HashMap<TypeId, AnyState>>>,
    started: Vec<(Arc<dyn Hook>, TypeId, AnyState)>,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running").field("hooks", &self.started.len()).finish()
    }
}

impl Running {
    /// Withdraws the state and runs the stop hooks, last started first. Handlers still
    /// holding the state keep their `Arc` until they finish.
    pub async fn shutdown(mut self) {
        while let Some((hook, type_id, state)) = self.started.pop() {
            self.state.write().unwrap_or_else(|e| e.into_inner()).remove(&type_id);
            hook.stop(state).await;
        }
    }
}
