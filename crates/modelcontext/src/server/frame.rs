//! The frame a request's handler runs in: the guard that raises the context's cancellation
//! flag if the run is dropped unfinished, the MRTR round of a modern request, and the stamp of
//! the result. Below both the handler forms (`handler.rs`) and the request's dispatch
//! (`call.rs`), which share it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use modelcontext_types::McpError;

use super::ServerInner;
use super::context::CancelGuard;
use super::mrtr::{self, InputRound};
use super::stamp::{Stamp, WireResult};
use crate::engine::Outcome;

/// The MRTR round a modern request runs its handler in.
pub(super) struct Round {
    pub server: Arc<ServerInner>,
    pub input: Arc<InputRound>,
}

/// What a request wraps its handler's run in. Generic over the run only in
/// [`HandlerFrame::finish`], so a handler's whole answer is one future.
pub(super) struct HandlerFrame {
    pub guard: CancelGuard,
    pub round: Option<Round>,
    pub stamp: Stamp,
}

impl HandlerFrame {
    /// The answer to the request: `run`, guarded, in the round if there is one, converted to
    /// the wire result by `into_wire` (the kind's, a function item: a static call), stamped
    /// and serialized.
    pub(super) async fn finish<V, W: WireResult>(
        self,
        run: Pin<&mut impl Future<Output = Result<V, McpError>>>,
        into_wire: impl FnOnce(V) -> W,
    ) -> Outcome {
        let HandlerFrame { guard, round, stamp } = self;
        let run = guarded(guard, async move { run.await.map(into_wire) });
        match round {
            Some(Round { server, input }) => {
                stamp.apply(mrtr::run_round(&server, &input, run).await?)
            }
            None => stamp.apply(run.await?),
        }
    }
}

/// `future`, raising its context's cancellation flag if dropped before it finishes.
pub(super) async fn guarded<T>(guard: CancelGuard, future: impl Future<Output = T>) -> T {
    let output = future.await;
    guard.disarm();
    output
}
