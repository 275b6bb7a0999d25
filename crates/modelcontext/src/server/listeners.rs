//! Change notifications for the many sessions of an HTTP server, from one task: an idle
//! session then costs an entry here rather than a task and a bus receiver of its own.

use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use futures_util::stream::BoxStream;

use super::ServerInner;
use super::notify::{BusEvent, ChangeEvent, Subscribed, SubscriptionBus, handshake_due, tell};
use super::session::{Forwarder, ServerSession};
use crate::engine::WeakPeer;

/// The HTTP sessions of one server that hear its changes, all from one task (an idle session
/// then costs an entry here rather than a task and a bus receiver of its own). A session is
/// registered by [`Listeners::register`] and forgotten when the returned [`Listening`] drops.
#[derive(Default)]
pub(crate) struct Listeners {
    sessions: Mutex<std::collections::HashMap<u64, Listener>>,
    next_key: std::sync::atomic::AtomicU64,
    /// Whether the task that reads the bus for them runs.
    started: std::sync::atomic::AtomicBool,
}

struct Listener {
    peer: WeakPeer,
    subscribed: Subscribed,
}

/// A session's place among the [`Listeners`], kept until dropped.
pub(crate) struct Listening {
    listeners: std::sync::Weak<Listeners>,
    key: u64,
}

impl Drop for Listening {
    fn drop(&mut self) {
        if let Some(listeners) = self.listeners.upgrade() {
            listeners.lock().remove(&self.key);
        }
    }
}

impl Listeners {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<u64, Listener>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a handshake-era session: what it wants of `bus`'s changes goes to `peer`.
    /// The first registration starts the task that reads `bus` for all of them.
    pub(crate) fn register(
        self: &Arc<Self>,
        bus: &dyn SubscriptionBus,
        peer: WeakPeer,
        subscribed: Subscribed,
    ) -> Listening {
        use std::sync::atomic::Ordering;
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(key, Listener { peer, subscribed });
        if !self.started.swap(true, Ordering::AcqRel) {
            tokio::spawn(fan_out(bus.subscribe(), Arc::downgrade(self)));
        }
        Listening { listeners: Arc::downgrade(self), key }
    }

    /// The notifications each listening session is due for `heard`, with its peer.
    fn due(&self, heard: &BusEvent) -> Vec<(crate::engine::Peer, Vec<ChangeEvent>)> {
        let sessions = self.lock();
        let due = sessions.values().filter_map(|listener| {
            let events = handshake_due(&listener.subscribed, heard);
            if events.is_empty() {
                return None;
            }
            Some((listener.peer.upgrade()?, events))
        });
        due.collect()
    }
}

/// How many sessions [`fan_out`] hands an event to before it yields.
const FAN_OUT_SLICE: usize = 64;

/// Reads the bus for every listening session while the server lives. Each session's
/// notifications are sent in order; a delivery that cannot finish at once (a network event
/// store) goes on in a task of its own, so one session never holds up the others.
async fn fan_out(mut events: BoxStream<'static, BusEvent>, listeners: std::sync::Weak<Listeners>) {
    while let Some(heard) = events.next().await {
        let Some(due) = listeners.upgrade().map(|listeners| listeners.due(&heard)) else {
            return;
        };
        for (n, (peer, events)) in due.into_iter().enumerate() {
            // Let the connections write what they were given before giving them more: a burst
            // to every session at once would hold every message and write buffer at once.
            if n % FAN_OUT_SLICE == FAN_OUT_SLICE - 1 {
                tokio::task::yield_now().await;
            }
            finish_soon(Box::pin(async move {
                let _ = tell(&peer, &events).await;
            }));
        }
    }
}

/// Polls `future` once here and, if it is not done, lets a task finish it. (A future polled
/// once with a no-op waker registers the task's waker when the task polls it again.)
fn finish_soon(mut future: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>) {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    if future.as_mut().poll(&mut cx).is_pending() {
        tokio::spawn(future);
    }
}

/// Forwards changes through the server's shared [`Listeners`] (see
/// [`ServerSession::with_shared_forwarder`]).
fn forward_through_listeners(
    server: &ServerInner,
    peer: WeakPeer,
    subscribed: Subscribed,
) -> Forwarder {
    let listening = server.first_use.listeners.register(&*server.bus, peer, subscribed);
    Box::new(listening)
}

/// What only an HTTP session does of a handshake-era session's change notifications.
impl ServerSession {
    /// Makes the session hear changes through the server's shared [`Listeners`]: for HTTP
    /// sessions, many of which sit idle.
    pub(crate) fn with_shared_forwarder(mut self) -> ServerSession {
        self.start_forwarding = forward_through_listeners;
        self
    }
}
