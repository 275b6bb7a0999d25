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

use super::{Dispatch, Peer, Stop};

pub(crate) use super::incoming::{Handover, Unsettled, admit, cancelled_id, poll_once, settle};
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
    super::incoming::run_for(peer, incoming, dispatch, false)
}
