//! The engine's HTTP-only group: what a handshake-era HTTP session uses to do the loop's work
//! outside a loop. Each POST settles its own message ([`settle`]), admits its request to the
//! in-flight limit ([`admit`]) and polls its handler once in its own task ([`poll_once`]); only
//! a handler that outlives its POST starts the session's loop ([`attach`]) and is handed over
//! to it ([`Handover`]), which then tracks it for cancellation ([`cancelled_id`]) and the
//! in-flight limit. What the session sends is delivered by the sending task itself
//! ([`Deliver`], through [`Peer::delivering`]): no queue and no task in between.
//!
//! Nothing else of the engine exists for HTTP alone; stdio and in-memory connections run
//! [`start`](super::start)'s loop and never reach this module.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use modelcontext_types::RequestId;
use tokio::sync::mpsc;

use super::incoming::Started;
use super::peer::Outbox;
use super::{BoxFuture, Dispatch, Outcome, Peer, Stop};

pub(crate) use super::incoming::{Unsettled, admit, cancelled_id, poll_once, settle};
pub(crate) use super::peer::{Deliver, Delivering};

/// The loop of an HTTP session, started once a handler outlives the POST that started it
/// (or at once for a 2024-11-05 session, whose messages all come through `incoming`): `peer`
/// is the session's, made before. The POSTs answer what they can themselves and hand the
/// rest over through the [`Handover`]. Streams keep running after end of input, until the
/// [`Stop`] handle is dropped.
pub(crate) fn attach<D: Dispatch>(
    peer: Peer,
    incoming: tokio::sync::mpsc::Receiver<crate::transport::Incoming>,
    dispatch: D,
) -> (impl Future<Output = ()> + Send + 'static, Stop, Handover) {
    let (adopt, handed_over) = mpsc::unbounded_channel();
    let working = Arc::new(AtomicUsize::new(0));
    let handover = Handover { adopt, working: Arc::clone(&working) };
    let (run, stop) =
        super::incoming::run_for(peer, incoming, dispatch, false, (handed_over, working));
    (run, stop, handover)
}

/// Lets a transport answer a connection's requests from the task that read them, handing
/// the loop only the handlers that did not finish at once. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Handover {
    adopt: mpsc::UnboundedSender<Started>,
    working: Arc<AtomicUsize>,
}

impl Handover {
    /// Handlers of the connection still working (what the in-flight limit counts).
    pub(crate) fn working(&self) -> usize {
        self.working.load(Ordering::Relaxed)
    }

    /// Gives `future` (the handler of request `id`) to the loop; `false` if the loop ended.
    pub(crate) fn adopt(&self, id: RequestId, future: BoxFuture<Outcome>, stream: bool) -> bool {
        self.adopt.send(Started { id, future, stream }).is_ok()
    }
}

/// What an HTTP session's [`Peer`] does besides what every peer does.
impl Peer {
    /// A peer whose messages are delivered by `deliver`, from the sending task.
    pub(crate) fn delivering(deliver: Arc<dyn Deliver>) -> Peer {
        Peer::with_outbox(Outbox::new(deliver))
    }

    /// Makes every later request id `{prefix}{n}`; a second call changes nothing.
    pub(crate) fn prefix_ids(&self, prefix: String) {
        let _ = self.inner.id_prefix.set(prefix.into_boxed_str());
    }

    /// How many messages were sent so far: a task that ran a handler once can tell whether
    /// the handler sent anything its answer must follow.
    pub(crate) fn sent_count(&self) -> u64 {
        self.inner.sent.load(Ordering::Relaxed)
    }
}
