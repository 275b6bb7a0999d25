//! The seam for the messages of a handshake-era session that must reach the instance running
//! something: a [`PeerRouter`] carries them between the instances of a deployment.
//!
//! With one set ([`HttpOptions::peer_router`](super::HttpOptions::peer_router)), the ids of the
//! requests a session sends its client (elicitation, sampling, roots) name the instance that
//! sent them (`{instance}/{n}`), so the client's answer, POSTed to whichever instance the load
//! balancer picks, is forwarded to the one waiting for it ([`PeerRouter::forward`]); and a
//! `notifications/cancelled` is also told to every other instance ([`PeerRouter::broadcast`]),
//! so it stops the handler wherever it runs.
//!
//! A session's standalone GET stream is held by one instance of the deployment at a time: the
//! instance that opens it claims it ([`PeerRouter::claim_standalone`]) for
//! [`HttpOptions::standalone_claim_ttl`](super::HttpOptions::standalone_claim_ttl) (default
//! [`STANDALONE_CLAIM_TTL`]), renews the claim every third of that while the stream is open
//! (ending the stream if another ticket took it meanwhile) and releases it when the stream
//! ends. A GET on another instance while the claim lives is answered 409 Conflict, as
//! a second GET on the same instance is. What the session sends outside any request (a log
//! message, a request to the client) on an instance that does not hold the stream goes to
//! the holder ([`Direction::ToClient`]), which sends it on the stream.
//!
//! A 2026-07-28 `tasks/update` for a task that runs on another instance is relayed there
//! ([`Direction::TaskUpdate`], broadcast; the running instance answers with
//! [`Direction::TaskUpdated`]), and the client is answered once the answers were taken in.
//!
//! Without a router (the default), ids stay numbers, nothing is claimed and everything stays
//! in the instance, as before. Any implementation can be checked with
//! [`testing::contracts::peer_router`](crate::testing::contracts::peer_router).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use modelcontext_types::{Message, RequestId};
use tokio::sync::mpsc;

/// One message of a session, on its way to the instance that should handle it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Routed {
    /// The `Mcp-Session-Id` it came with (the caller was checked against the session's
    /// owner by the instance that received it); for [`Direction::TaskUpdate`] and
    /// [`Direction::TaskUpdated`], the task's id (the caller was checked against the task's
    /// owner).
    pub session: String,
    /// The JSON-RPC message, as JSON text.
    pub message: String,
    /// Which side sent it, so which part of the session takes it.
    pub direction: Direction,
}

/// Which side of a session a [`Routed`] message comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Direction {
    /// From the client (its answer to one of our requests, a cancellation), for the instance
    /// running the request it is about.
    #[default]
    ToServer,
    /// From the session, outside any request (a log message, a request to the client), for
    /// the instance holding the session's standalone GET stream, which sends it there.
    ToClient,
    /// A client's `tasks/update` (a JSON-RPC request whose id names the instance relaying
    /// it, `{instance}/{n}`) for the task named by [`Routed::session`]: broadcast, taken up
    /// only by the instance running the task.
    TaskUpdate,
    /// The answer of the instance running a task to a [`Direction::TaskUpdate`] (a JSON-RPC
    /// response with the same id), forwarded to the instance its id names.
    TaskUpdated,
}

impl Routed {
    /// `message` of session `session`, from its client ([`Direction::ToServer`]).
    pub fn new(session: impl Into<String>, message: impl Into<String>) -> Routed {
        Routed { session: session.into(), message: message.into(), direction: Direction::ToServer }
    }

    /// `message` of session `session`, for its client's standalone GET stream
    /// ([`Direction::ToClient`]).
    pub fn to_client(session: impl Into<String>, message: impl Into<String>) -> Routed {
        Routed { direction: Direction::ToClient, ..Routed::new(session, message) }
    }

    /// `message` (a `tasks/update` request) for the instance running task `task`
    /// ([`Direction::TaskUpdate`]).
    pub fn task_update(task: impl Into<String>, message: impl Into<String>) -> Routed {
        Routed { direction: Direction::TaskUpdate, ..Routed::new(task, message) }
    }

    /// `message` (the answer to a relayed `tasks/update`) for the instance that relayed it
    /// ([`Direction::TaskUpdated`]).
    pub fn task_updated(task: impl Into<String>, message: impl Into<String>) -> Routed {
        Routed { direction: Direction::TaskUpdated, ..Routed::new(task, message) }
    }
}

/// A router could not take a message (a network router that is down or too slow).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteError {
    message: String,
}

impl RouteError {
    /// The router is unavailable, for the reason given.
    pub fn unavailable(message: impl Into<String>) -> RouteError {
        RouteError { message: message.into() }
    }
}

impl std::fmt::Display for RouteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "peer router unavailable: {}", self.message)
    }
}

impl std::error::Error for RouteError {}

/// What [`PeerRouter::forward`], [`PeerRouter::broadcast`] and
/// [`PeerRouter::release_standalone`] return.
pub type RouteFuture<'a> = BoxFuture<'a, Result<(), RouteError>>;

/// What [`PeerRouter::claim_standalone`] returns: whether the ticket now holds the stream.
pub type ClaimFuture<'a> = BoxFuture<'a, Result<bool, RouteError>>;

/// What [`PeerRouter::standalone_holder`] returns: the ticket holding the stream, if any.
pub type HolderFuture<'a> = BoxFuture<'a, Result<Option<String>, RouteError>>;

/// How long, by default, a claim on a session's standalone GET stream lives without being
/// renewed: 15 s ([`HttpOptions::standalone_claim_ttl`](super::HttpOptions::standalone_claim_ttl)).
/// The holder renews it every third of that while the stream is open; an instance that dies
/// holding one keeps it from the others for at most this long.
pub const STANDALONE_CLAIM_TTL: Duration = Duration::from_secs(15);

/// Carries session messages between the instances of a deployment. Delivery is at most once:
/// a message to an instance that is gone, or one lost in an outage, is dropped (the request
/// waiting for an answer times out, as it would if the client never answered).
pub trait PeerRouter: Send + Sync + 'static {
    /// This instance's name: unique in the deployment, made of ASCII letters, digits, `-`
    /// and `_` (see [`valid_instance`]), at most 64 of them.
    fn instance(&self) -> &str;
    /// Hands `routed` to instance `to`'s [`incoming`](PeerRouter::incoming); `Ok` once it is
    /// on its way (an unknown instance is not an error: nobody gets it).
    fn forward<'a>(&'a self, to: &'a str, routed: Routed) -> RouteFuture<'a>;
    /// Hands `routed` to every other instance's [`incoming`](PeerRouter::incoming).
    fn broadcast(&self, routed: Routed) -> RouteFuture<'_>;
    /// What other instances forward to this one or broadcast. Called once, when the endpoint
    /// starts.
    fn incoming(&self) -> BoxStream<'static, Routed>;
    /// Claims session `session`'s standalone GET stream for `ticket` (`{instance}/{n}`, one
    /// per stream) for `ttl`: `true` if no live claim was held, or `ticket` held it (the claim
    /// is renewed); `false` if another ticket holds it. Atomic across the deployment: of two
    /// instances claiming at once, one gets `false`. A router that can tell an instance is
    /// gone (crashed, stopped without releasing) should treat its claims as free, so a dead
    /// holder does not keep the stream until `ttl` runs out
    /// ([`testing::contracts::peer_router_takeover`](crate::testing::contracts::peer_router_takeover)).
    fn claim_standalone<'a>(
        &'a self,
        session: &'a str,
        ticket: &'a str,
        ttl: Duration,
    ) -> ClaimFuture<'a>;
    /// Ends `ticket`'s claim on session `session`'s standalone GET stream; a claim held by
    /// another ticket (or none) is left as it is.
    fn release_standalone<'a>(&'a self, session: &'a str, ticket: &'a str) -> RouteFuture<'a>;
    /// The ticket holding a live claim on session `session`'s standalone GET stream, if any
    /// (it may name an instance that is gone, until its claim is taken over or expires).
    fn standalone_holder<'a>(&'a self, session: &'a str) -> HolderFuture<'a>;
}

/// Most characters in an instance name.
pub const MAX_INSTANCE_LEN: usize = 64;

/// Whether `name` can be an instance name: 1 to [`MAX_INSTANCE_LEN`] ASCII letters, digits,
/// `-` or `_`.
pub fn valid_instance(name: &str) -> bool {
    let allowed = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    (1..=MAX_INSTANCE_LEN).contains(&name.len()) && name.bytes().all(allowed)
}

/// The instance named by the id of a request we sent (`{instance}/{n}`); `None` for an id of
/// any other shape, which no instance of ours made.
pub(crate) fn owner_of(id: &RequestId) -> Option<&str> {
    let RequestId::String(id) = id else { return None };
    ticket_instance(id)
}

/// The instance a claim's ticket (`{instance}/{n}`) names.
pub(crate) fn ticket_instance(ticket: &str) -> Option<&str> {
    let (instance, number) = ticket.split_once('/')?;
    let numeric = !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit());
    (numeric && valid_instance(instance)).then_some(instance)
}

/// The instance a client's answer must go to, when that is not this one.
pub(crate) fn elsewhere<'m>(message: &'m Message, here: &str) -> Option<&'m str> {
    let Message::Response(response) = message else { return None };
    owner_of(response.id.as_ref()?).filter(|owner| *owner != here)
}

/// In-process instances sharing one [`MemoryPeerRouter`]: for tests, and for several
/// endpoints of one process. Each [`instance`](MemoryPeerRouter::instance) is the router of
/// one endpoint.
#[derive(Debug, Default, Clone)]
pub struct MemoryPeerRouter {
    inboxes: Arc<Mutex<HashMap<String, mpsc::UnboundedSender<Routed>>>>,
    /// Each session's standalone-stream claim: its ticket and when it expires.
    claims: Arc<Mutex<HashMap<String, (String, Instant)>>>,
    /// Each instance's life: gone once its [`MemoryInstance`] is dropped, and then its
    /// claims may be taken by the others.
    lives: Arc<Mutex<HashMap<String, std::sync::Weak<()>>>>,
}

/// One endpoint's side of a [`MemoryPeerRouter`].
#[derive(Debug)]
pub struct MemoryInstance {
    name: String,
    router: MemoryPeerRouter,
    inbox: Mutex<Option<mpsc::UnboundedReceiver<Routed>>>,
    /// Held while the instance lives (see `MemoryPeerRouter::lives`).
    _life: Arc<()>,
}

impl MemoryPeerRouter {
    /// A router with no instances yet.
    pub fn new() -> MemoryPeerRouter {
        MemoryPeerRouter::default()
    }

    /// The router of the instance `name` (replacing any earlier one of that name). Panics on
    /// a name [`valid_instance`] refuses: that is a programming error in the caller.
    pub fn instance(&self, name: &str) -> Arc<MemoryInstance> {
        assert!(valid_instance(name), "instance name {name:?}: use ASCII letters, digits, - or _");
        let (tx, rx) = mpsc::unbounded_channel();
        self.lock().insert(name.to_owned(), tx);
        let inbox = Mutex::new(Some(rx));
        let life = Arc::new(());
        let lives = &mut self.lives.lock().unwrap_or_else(|e| e.into_inner());
        lives.insert(name.to_owned(), Arc::downgrade(&life));
        let name = name.to_owned();
        Arc::new(MemoryInstance { name, router: self.clone(), inbox, _life: life })
    }

    /// Whether the instance named by `ticket` is gone (its [`MemoryInstance`] dropped).
    fn holder_gone(&self, ticket: &str) -> bool {
        let Some(instance) = ticket_instance(ticket) else { return false };
        let lives = self.lives.lock().unwrap_or_else(|e| e.into_inner());
        lives.get(instance).is_none_or(|life| life.strong_count() == 0)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, mpsc::UnboundedSender<Routed>>> {
        self.inboxes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The claims, expired ones included (see [`live_claim`]).
    fn claims(&self) -> std::sync::MutexGuard<'_, HashMap<String, (String, Instant)>> {
        self.claims.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl PeerRouter for MemoryInstance {
    fn instance(&self) -> &str {
        &self.name
    }

    fn forward<'a>(&'a self, to: &'a str, routed: Routed) -> RouteFuture<'a> {
        if let Some(inbox) = self.router.lock().get(to) {
            // An instance that stopped listening gets nothing, like an unknown one.
            let _ = inbox.send(routed);
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn broadcast(&self, routed: Routed) -> RouteFuture<'_> {
        for (name, inbox) in self.router.lock().iter() {
            if *name != self.name {
                let _ = inbox.send(routed.clone());
            }
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn incoming(&self) -> BoxStream<'static, Routed> {
        let inbox = self.inbox.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(inbox) = inbox else { return futures_util::stream::pending().boxed() };
        futures_util::stream::unfold(inbox, |mut rx| async move { Some((rx.recv().await?, rx)) })
            .boxed()
    }

    fn claim_standalone<'a>(
        &'a self,
        session: &'a str,
        ticket: &'a str,
        ttl: Duration,
    ) -> ClaimFuture<'a> {
        let mut claims = self.router.claims();
        let now = Instant::now();
        // A claim of an instance that is gone is free: it will never be renewed or released.
        let free = live_claim(&claims, session, now)
            .is_none_or(|held| held == ticket || self.router.holder_gone(held));
        if free {
            // Expired claims are forgotten when a new one is made (not at each renewal), so
            // the map stays about as small as the streams open; a lookup skips an expired one.
            if !claims.contains_key(session) {
                claims.retain(|_, (_, until)| *until > now);
            }
            claims.insert(session.to_owned(), (ticket.to_owned(), now + ttl));
        }
        Box::pin(std::future::ready(Ok(free)))
    }

    fn release_standalone<'a>(&'a self, session: &'a str, ticket: &'a str) -> RouteFuture<'a> {
        let mut claims = self.router.claims();
        if claims.get(session).is_some_and(|(held, _)| held == ticket) {
            claims.remove(session);
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn standalone_holder<'a>(&'a self, session: &'a str) -> HolderFuture<'a> {
        let holder = live_claim(&self.router.claims(), session, Instant::now()).cloned();
        Box::pin(std::future::ready(Ok(holder)))
    }
}

/// The ticket of `session`'s claim if it is still live at `now`.
fn live_claim<'a>(
    claims: &'a HashMap<String, (String, Instant)>,
    session: &str,
    now: Instant,
) -> Option<&'a String> {
    claims.get(session).filter(|(_, until)| *until > now).map(|(ticket, _)| ticket)
}
