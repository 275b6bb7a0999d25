//! Where what a session sends goes: the POST that asked, the one whose progress token it
//! carries, the latest one waiting, or the GET stream (here or on the instance holding it),
//! each event stored first so the stream can be resumed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use modelcontext_types::{Message, Request, RequestId, method};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::engine::outside_loop::{Deliver, Delivering};
use crate::server::http::body::may_carry_meta;
use crate::server::http::events::{Appended, EventStore, StreamId};
use crate::server::http::peer_router::{PeerRouter, Routed, ticket_instance};
use crate::server::http::stream::{Delivery, StreamTx};

/// What a session sends, delivered by the task that sends it: placed on its stream, stored,
/// and handed to the stream's body (or to the instance holding the GET stream).
pub(super) struct SessionOutbox {
    pub(super) routes: Arc<Mutex<Routes>>,
    /// One message at a time, from placing to delivery: a stream's events reach it in the
    /// order the store numbered them.
    pub(super) order: tokio::sync::Mutex<()>,
    /// Whether the deployment has a peer router (only then is a GET stream's holder looked
    /// for: without one, a message costs one lock).
    pub(super) routed: bool,
}

impl Deliver for SessionOutbox {
    fn deliver(&self, message: Message) -> Delivering<'_> {
        Box::pin(async move {
            self.route(message).await;
            Ok(())
        })
    }
}

impl SessionOutbox {
    pub(super) async fn route(&self, message: Message) {
        let _order = self.order.lock().await;
        let routes = &self.routes;
        let for_holder = if self.routed { lock(routes).for_holder(&message) } else { None };
        if let Some((router, session)) = for_holder {
            if hand_to_holder(&*router, &session, &message).await {
                return;
            }
        }
        send_placed(routes, message, Routes::place).await;
    }
}

/// Where what the session sends goes, and the state resumption needs.
pub(super) struct Routes {
    pub(super) session: String,
    pub(super) store: Arc<dyn EventStore>,
    pub(super) instance: u64,
    /// An event that cannot be stored ends its stream rather than going out without an id
    /// ([`HttpOptions::durable_events`](crate::server::http::HttpOptions::durable_events)).
    pub(super) durable: bool,
    pub(super) unstored: Arc<AtomicU64>,
    pub(super) waiting: HashMap<RequestId, Waiter>,
    /// Request ids in arrival order, to find the most recent one still waiting.
    pub(super) recent: Vec<RequestId>,
    pub(super) progress: HashMap<String, RequestId>,
    pub(super) standalone: Option<StreamTx>,
    pub(super) next_stream: u64,
    /// A 2024-11-05 HTTP+SSE session: its one stream cannot be resumed, so it is never cut.
    pub(super) legacy: bool,
    /// JSON response mode: every POST is a JSON waiter.
    pub(super) json_only: bool,
    /// Where what the session sends outside a request goes when another instance holds its
    /// GET stream (`None` without a router, and for a 2024-11-05 session).
    pub(super) router: Option<Arc<dyn PeerRouter>>,
}

/// A POST waiting for its answer.
pub(super) struct Waiter {
    pub(super) tx: StreamTx,
    pub(super) stream: u64,
    /// Answered as one JSON body (JSON response mode, a batch): only its response goes to
    /// it; what its handler sends first goes to the GET stream.
    pub(super) json: bool,
    /// Messages routed to it so far: the first one decides JSON or SSE.
    pub(super) sent: u32,
}

/// The GET stream's number; POST streams count from 1.
pub(super) const STANDALONE: u64 = StreamId::STANDALONE.number;

/// Where a message goes, decided before it is stored and looked up again once it is (a
/// resumption may have come in between).
pub(super) enum Target {
    Standalone,
    Request { id: RequestId, answer: bool },
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Poisoning only means a panic elsewhere mid-update; the maps stay usable.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Sends `message`, which the session sent outside any request and which has no GET stream
/// here, to the instance holding the session's GET stream: `true` once it is on its way.
/// `false` (it is then placed here, as without a router) when no instance holds the stream,
/// this one does, or the router cannot say.
pub(super) async fn hand_to_holder(
    router: &dyn PeerRouter,
    session: &str,
    message: &Message,
) -> bool {
    let holder = match router.standalone_holder(session).await {
        Ok(holder) => holder,
        Err(error) => {
            tracing::debug!(%error, session, "GET stream holder unknown: kept here");
            return false;
        }
    };
    let Some(instance) = holder.as_deref().and_then(ticket_instance) else { return false };
    if instance == router.instance() {
        return false;
    }
    match router.forward(instance, Routed::to_client(session, message.encode())).await {
        Ok(()) => true,
        Err(error) => {
            tracing::warn!(%error, session, "not forwarded to the GET stream's holder: kept here");
            false
        }
    }
}

/// Places `message` with `place` and sends it once the store has it.
pub(super) async fn send_placed(
    routes: &Mutex<Routes>,
    message: Message,
    place: fn(&mut Routes, &Message) -> Option<Placing>,
) {
    let placed = {
        let mut routes = lock(routes);
        match place(&mut routes, &message) {
            None => return,
            Some((target, None)) => Placed::Now(routes.send_to(target, Ok(None), message)),
            Some((target, Some(Appended::Ready(id)))) => {
                Placed::Now(routes.send_to(target, id.map(Some), message))
            }
            Some((target, Some(Appended::Pending(storing)))) => {
                Placed::Later(target, storing, message)
            }
        }
    };
    let send = match placed {
        Placed::Now(send) => send,
        Placed::Later(target, storing, message) => {
            let id = storing.await.map(Some);
            lock(routes).send_to(target, id, message)
        }
    };
    if let Some(send) = send {
        deliver(routes, send).await;
    }
}

/// Where a message goes, and its storing there when its stream is (or may become) SSE.
pub(super) type Placing = (Target, Option<Appended>);

/// A message placed on its stream: where to send it now, or once the store has it.
pub(super) enum Placed {
    Now(Option<Outgoing>),
    Later(Target, crate::server::http::StoreFuture<'static, String>, Message),
}

/// A delivery and the stream it goes to, decided under the routes' lock.
pub(super) struct Outgoing {
    pub(super) tx: StreamTx,
    pub(super) delivery: Box<Delivery>,
    /// Whether the delivery cannot be resumed (an answer going out as plain JSON, anything on
    /// a 2024-11-05 stream), so it is waited for rather than cutting a full stream.
    pub(super) wait: bool,
}

/// Hands a delivery to its stream without letting one stream whose reader stopped reading
/// hold up the session's others. A resumable stream that is full is cut: its events are in
/// the store, and the client resumes with `Last-Event-ID`. One that cannot be resumed is
/// waited for. A client that went away can resume from the store too: nothing is lost here.
pub(super) async fn deliver(routes: &Mutex<Routes>, Outgoing { tx, delivery, wait }: Outgoing) {
    if wait {
        let _ = tx.send(delivery).await;
        return;
    }
    if let Err(mpsc::error::TrySendError::Full(_)) = tx.try_send(delivery) {
        lock(routes).cut(&tx);
    }
}

impl Routes {
    /// Registers a POST's request; returns its stream number.
    pub(super) fn register(&mut self, request: &Request, tx: StreamTx, json: bool) -> u64 {
        let stream = self.next_stream;
        self.next_stream += 1;
        let json = json || self.json_only;
        if let Some(token) = progress_token(request).filter(|_| !json) {
            self.progress.insert(token, request.id.clone());
        }
        self.recent.push(request.id.clone());
        self.waiting.insert(request.id.clone(), Waiter { tx, stream, json, sent: 0 });
        stream
    }

    /// Picks the stream for `message` and starts storing it there when the stream is (or may
    /// become) SSE; `None` when it has nowhere to go.
    pub(super) fn place(&mut self, message: &Message) -> Option<Placing> {
        let Some(request) = self.owner(message) else { return self.place_standalone(message) };
        let answer = matches!(message, Message::Response(r) if r.id.as_ref() == Some(&request));
        let waiter = self.waiting.get_mut(&request)?;
        let open = !waiter.tx.is_closed();
        // The JSON fast path: an answer that comes first to a connected client is one JSON
        // body, never a stream, so there is nothing to resume and nothing to store.
        let json = answer && waiter.sent == 0 && open;
        waiter.sent += 1;
        let stream = StreamId { instance: self.instance, number: waiter.stream };
        let stored = (!json).then(|| self.store.append(&self.session, stream, message));
        Some((Target::Request { id: request, answer }, stored))
    }

    /// Stores `message` on the GET stream, to be sent there if it is connected here.
    pub(super) fn place_standalone(&mut self, message: &Message) -> Option<Placing> {
        let stored = self.store.append(&self.session, StreamId::STANDALONE, message);
        Some((Target::Standalone, Some(stored)))
    }

    /// The router and session id to send `message` to the holder of the GET stream with,
    /// when there is a router, the stream is not open here, and the message belongs on it
    /// (no request claims it, and it is not a change notification, which the holder hears
    /// from the bus itself).
    pub(super) fn for_holder(&self, message: &Message) -> Option<(Arc<dyn PeerRouter>, String)> {
        let router = self.router.as_ref()?;
        let open_here = self.standalone.as_ref().is_some_and(|s| !s.is_closed());
        if open_here || is_change(message) || self.owner(message).is_some() {
            return None;
        }
        Some((router.clone(), self.session.clone()))
    }

    /// Where to send `message` now that the store has it (`id`, or no id for a JSON answer),
    /// if its stream is connected. An event the store failed to keep goes out without an id,
    /// counted, or with durable events ends its stream.
    pub(super) fn send_to(
        &mut self,
        target: Target,
        id: Result<Option<String>, crate::server::http::StoreError>,
        message: Message,
    ) -> Option<Outgoing> {
        let event_id = match id {
            Ok(id) => id,
            Err(error) => {
                let lost = self.unstored.fetch_add(1, Ordering::Relaxed) + 1;
                tracing::warn!(session = %self.session, %error, lost, durable = self.durable,
                    "SSE event not stored: sent without an id, it cannot be resumed");
                if self.durable {
                    self.fail(&target);
                    return None;
                }
                None
            }
        };
        let tx = match &target {
            Target::Standalone => self.standalone.clone(),
            Target::Request { id, answer } => {
                let tx = self.waiting.get(id).map(|waiter| waiter.tx.clone());
                if *answer {
                    self.finish(id);
                }
                tx
            }
        };
        let tx = tx.filter(|tx| !tx.is_closed())?;
        let wait = event_id.is_none() || self.legacy;
        Some(Outgoing { tx, delivery: Box::new(Delivery { event_id, message }), wait })
    }

    /// A resumption follows `stream`: if it is the stream of a request running here, `marker`
    /// makes it connected again, so what the request sends without an owner (a request to the
    /// client) goes to it as before the cut. The resumption reads the events from the store;
    /// `marker`'s receiver only drains.
    pub(super) fn followed(&mut self, stream: StreamId, marker: StreamTx) {
        if stream.instance != self.instance {
            return;
        }
        if let Some(waiter) = self.waiting.values_mut().find(|w| w.stream == stream.number) {
            waiter.tx = marker;
        }
    }

    /// Ends the stream of `target`: an event of it could not be stored.
    pub(super) fn fail(&mut self, target: &Target) {
        match target {
            Target::Standalone => self.standalone = None,
            Target::Request { id, answer: true } => self.finish(id),
            Target::Request { id, answer: false } => {
                if let Some(waiter) = self.waiting.get_mut(id) {
                    waiter.tx = mpsc::channel(1).0;
                }
            }
        }
    }

    /// The request whose stream carries `message`, if any.
    pub(super) fn owner(&self, message: &Message) -> Option<RequestId> {
        match message {
            Message::Response(response) => {
                response.id.clone().filter(|id| self.waiting.contains_key(id))
            }
            Message::Notification(n) if n.method == method::PROGRESS => {
                let token = progress_token_of(n.params.as_deref())?;
                self.progress.get(&token).cloned()
            }
            _ => self.latest_waiting(),
        }
    }

    /// Detaches the live stream that `tx` feeds: once its body has sent what is queued, it
    /// ends. Later events of that stream are only stored, until a `Last-Event-ID` resumes it.
    pub(super) fn cut(&mut self, tx: &StreamTx) {
        if self.let_go(tx) {
            tracing::debug!(session = %self.session, "GET stream not read: cut, resumable");
            return;
        }
        let slow = self.waiting.values_mut().find(|waiter| waiter.tx.same_channel(tx));
        if let Some(waiter) = slow {
            tracing::debug!(session = %self.session, "POST stream not read: cut, resumable");
            waiter.tx = mpsc::channel(1).0;
        }
    }

    /// Forgets the GET stream `tx` feeds, if it is still the session's GET stream: its body
    /// ends once it has sent what is queued. Whether it was.
    pub(super) fn let_go(&mut self, tx: &StreamTx) -> bool {
        let same = self.standalone.as_ref().is_some_and(|standalone| standalone.same_channel(tx));
        if same {
            self.standalone = None;
        }
        same
    }

    pub(super) fn finish(&mut self, request: &RequestId) {
        self.waiting.remove(request);
        self.recent.retain(|r| r != request);
        self.progress.retain(|_, r| r != request);
    }

    pub(super) fn latest_waiting(&self) -> Option<RequestId> {
        self.recent
            .iter()
            .rev()
            .find(|id| self.waiting.get(*id).is_some_and(|w| !w.json && !w.tx.is_closed()))
            .cloned()
    }
}

/// Whether `message` is a change notification, which every instance sends its sessions from
/// the subscription bus.
pub(super) fn is_change(message: &Message) -> bool {
    let Message::Notification(n) = message else { return false };
    matches!(
        n.method.as_str(),
        method::TOOLS_LIST_CHANGED
            | method::PROMPTS_LIST_CHANGED
            | method::RESOURCES_LIST_CHANGED
            | method::RESOURCES_UPDATED
    )
}

pub(super) fn progress_token_of(params: Option<&serde_json::value::RawValue>) -> Option<String> {
    serde_json::from_str::<Token>(params?.get()).ok()?.canonical()
}

/// The `_meta.progressToken` of a request, as canonical JSON text. Reads only that member
/// (serde skips the others without building them): this runs for every POSTed request.
pub(super) fn progress_token(request: &Request) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "_meta")]
        meta: Option<Token>,
    }
    let params = request.params.as_ref()?.get();
    if !may_carry_meta(params) {
        return None;
    }
    let params: Params = serde_json::from_str(params).ok()?;
    params.meta?.canonical()
}

/// The `progressToken` member of an object, read alone.
#[derive(serde::Deserialize)]
pub(super) struct Token {
    #[serde(rename = "progressToken")]
    pub(super) token: Option<Value>,
}

impl Token {
    pub(super) fn canonical(self) -> Option<String> {
        self.token.map(|token| token.to_string())
    }
}
