//! `notifications/roots/list_changed` (handshake era): the server's hook, given a handle that
//! can ask the client for its new roots.
//!
//! 2026-07-28 removed the notification (a modern server asks for roots in each request that
//! needs them), so the hook only ever runs on handshake-era connections.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use modelcontext_types::{ListRootsResult, McpError, RequestParams, Root, method, to_raw};

use super::extensions::Extensions;
use crate::engine::{BoxFuture, Peer, RequestOptions, WeakPeer};

/// How long the hook's `roots/list` waits for the client: a client answers it from memory.
const ROOTS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The hook, boxed.
pub(crate) type RootsHook = Arc<dyn Fn(RootsChanged) -> BoxFuture<()> + Send + Sync>;

/// Boxes a hook.
pub(crate) fn hook<F, Fut>(f: F) -> RootsHook
where
    F: Fn(RootsChanged) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    Arc::new(move |changed| Box::pin(f(changed)))
}

/// What the hook of [`McpServer::on_roots_changed`](super::McpServer::on_roots_changed) gets:
/// the connection whose client changed its roots.
#[derive(Clone)]
pub struct RootsChanged {
    peer: WeakPeer,
    extensions: Arc<Extensions>,
}

impl std::fmt::Debug for RootsChanged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RootsChanged").finish_non_exhaustive()
    }
}

impl RootsChanged {
    /// Asks the client for its roots now (`roots/list`, 60 s timeout).
    pub async fn list_roots(&self) -> Result<Vec<Root>, McpError> {
        let Some(peer) = self.peer.upgrade() else {
            return Err(McpError::new(modelcontext_types::CONNECTION_CLOSED, "Connection closed"));
        };
        let params =
            to_raw(&RequestParams::default()).map_err(|e| McpError::internal(e.to_string()))?;
        let options = RequestOptions { timeout: Some(ROOTS_TIMEOUT), ..RequestOptions::default() };
        let raw = crate::observe::request_client(&peer, method::ROOTS_LIST, params, options, None)
            .await?;
        let result: ListRootsResult = serde_json::from_str(raw.get()).map_err(|e| {
            McpError::invalid_params(format!("Invalid answer to 'roots/list': {e}"))
        })?;
        Ok(result.roots)
    }

    /// A value the transport attached to the connection (see
    /// [`Context::extension`](super::Context::extension)).
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.extensions.get::<T>()
    }
}

/// Whether a connection's hook is running, and whether a change came in meanwhile: one run
/// at a time per connection, so a client that floods the notification starts one task, not
/// one per message.
#[derive(Clone, Default)]
pub(crate) struct Runs(Arc<AtomicU8>);

const IDLE: u8 = 0;
const RUNNING: u8 = 1;
/// Running, and changed again since the run began: run once more when it ends.
const AGAIN: u8 = 2;

/// Runs `hook` for a notification in its own task (the engine loop does not wait for it), or,
/// if a run is under way, has that run go once more when it ends.
pub(crate) fn changed(
    hook: Option<&RootsHook>,
    peer: &Peer,
    extensions: &Arc<Extensions>,
    runs: &Runs,
) {
    let Some(hook) = hook else {
        tracing::debug!("roots changed; no hook set");
        return;
    };
    let next = |state| Some(if state == IDLE { RUNNING } else { AGAIN });
    let Ok(IDLE) = runs.0.fetch_update(Ordering::AcqRel, Ordering::Acquire, next) else {
        return;
    };
    let changed = RootsChanged { peer: peer.downgrade(), extensions: Arc::clone(extensions) };
    let (hook, runs) = (Arc::clone(hook), runs.clone());
    tokio::spawn(async move {
        loop {
            hook(changed.clone()).await;
            if runs.0.compare_exchange(RUNNING, IDLE, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                return;
            }
            runs.0.store(RUNNING, Ordering::Release);
        }
    });
}
