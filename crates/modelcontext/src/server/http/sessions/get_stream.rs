//! The standalone GET stream of a session: the stream slots that bound them, the claim that
//! keeps one stream per session across a deployment, and resumption from `Last-Event-ID`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderMap, StatusCode};
use modelcontext_types::{McpError, Message};
use tokio::sync::mpsc;

use crate::server::Extensions;
use crate::server::http::Shared;
use crate::server::http::events::{EventFeed, StreamId, event_id, parse_event_id};
use crate::server::http::peer_router::PeerRouter;
use crate::server::http::respond::{error_response, header_str};
use crate::server::http::stream::{
    BodyGuard, Delivery, StreamRx, StreamTx, sse_response, sse_stream,
};
use crate::transport::CHANNEL_CAPACITY;

use super::refusals::{event_store_unavailable, retry_later};
use super::routes::{Routes, lock};
use super::session::{SESSION_HEADER, Session};
use super::table::Sessions;

/// One open stream counted against a limit; dropping it (with the response body) frees it.
pub(crate) struct StreamSlot {
    pub(super) counter: Arc<AtomicUsize>,
    /// The endpoint's slot, the one the open-streams gauge counts (feature `otel`).
    #[cfg(feature = "otel")]
    pub(super) gauged: Option<Arc<crate::observe::otel::Instruments>>,
}

impl StreamSlot {
    /// A slot of `counter` if fewer than `max` are taken.
    pub(crate) fn take(counter: &Arc<AtomicUsize>, max: usize) -> Option<StreamSlot> {
        let taken = counter.fetch_add(1, Ordering::AcqRel);
        if taken >= max {
            counter.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(StreamSlot {
            counter: counter.clone(),
            #[cfg(feature = "otel")]
            gauged: None,
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.counter.fetch_sub(1, Ordering::AcqRel);
        #[cfg(feature = "otel")]
        if let Some(instruments) = &self.gauged {
            instruments.sse_streams(-1);
        }
    }
}

/// A slot among the endpoint's GET streams: 503 when they are all taken.
#[allow(clippy::result_large_err)] // the refusal is the HTTP answer itself, on a cold path
pub(crate) fn endpoint_stream_slot(shared: &Shared) -> Result<StreamSlot, Response> {
    let max = shared.options.streams.max_open;
    let slot = StreamSlot::take(&shared.sse_streams, max);
    #[cfg(feature = "otel")]
    let slot = slot.map(|mut slot| {
        let instruments = shared.server.instruments();
        instruments.sse_streams(1);
        slot.gauged = Some(instruments);
        slot
    });
    slot.ok_or_else(|| {
        let error =
            McpError::internal(format!("Too many SSE streams (limit {max}); try again later"));
        error_response(StatusCode::SERVICE_UNAVAILABLE, None, error)
    })
}

/// Slots for one more GET stream of `session`: 429 when the session holds its limit, 503
/// when the endpoint does.
#[allow(clippy::result_large_err)] // the refusal is the HTTP answer itself, on a cold path
pub(super) fn stream_slots(
    shared: &Shared,
    session: &Session,
) -> Result<(StreamSlot, StreamSlot), Response> {
    let max = shared.options.streams.max_per_session;
    let Some(own) = StreamSlot::take(&session.sse_streams, max) else {
        let error = McpError::invalid_request(format!(
            "Too many SSE streams for this session (limit {max})"
        ));
        return Err(error_response(StatusCode::TOO_MANY_REQUESTS, None, error));
    };
    Ok((own, endpoint_stream_slot(shared)?))
}

/// GET: the standalone SSE stream of a session, or the resumption of a dropped stream when
/// the request carries `Last-Event-ID`.
pub(crate) async fn get(shared: &Shared, headers: &HeaderMap, extensions: &Extensions) -> Response {
    let Some(id) = header_str(headers, SESSION_HEADER) else {
        let error = McpError::invalid_request("Missing Mcp-Session-Id header");
        return error_response(StatusCode::BAD_REQUEST, None, error);
    };
    let session = match shared.sessions.resolve(shared, id, extensions, headers).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    let keep_alive = Some(shared.options.streams.keep_alive);
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    if let Some(last) = header_str(headers, "last-event-id") {
        let slots = match stream_slots(shared, &session) {
            Ok(slots) => slots,
            Err(refused) => return refused,
        };
        return resume(&session, last, (tx, rx), keep_alive, slots).await;
    }
    {
        let mut routes = lock(&session.routes);
        if routes.standalone.as_ref().is_some_and(|s| !s.is_closed()) {
            return second_get_stream();
        }
        routes.standalone = Some(tx.clone());
    }
    let claimed = match stream_slots(shared, &session) {
        Ok(slots) => shared.sessions.claim_standalone(&session, &tx).await.map(|c| (slots, c)),
        Err(refused) => Err(refused),
    };
    // The body holds the stream's slots and its claim: both are let go when it ends.
    let held = match claimed {
        Ok(held) => held,
        Err(refused) => {
            lock(&session.routes).let_go(&tx);
            return refused;
        }
    };
    let mut priming = Vec::new();
    let priming_id = event_id(StreamId::STANDALONE, 0);
    crate::transport::sse::write_event(&mut priming, Some(&priming_id), None, "");
    let head = futures_util::stream::once(async move { Ok(Bytes::from(priming)) });
    let live = sse_stream(rx, None, keep_alive, BodyGuard(Some(held)));
    sse_response(Body::from_stream(head.chain(live).boxed()))
}

/// 409: the session's GET stream is open already (here, or on another instance).
pub(super) fn second_get_stream() -> Response {
    let error = McpError::invalid_request("This session already has a GET stream");
    error_response(StatusCode::CONFLICT, None, error)
}

impl Sessions {
    /// Claims `session`'s GET stream, fed by `tx`, for this instance when the deployment
    /// shares a router: the claim lives, renewed, while the returned guard does (it goes with
    /// the stream's response body). `None` without a router; 409 when another instance holds
    /// the stream, 503 when the router cannot say.
    #[allow(clippy::result_large_err)] // the refusal is the HTTP answer itself
    pub(super) async fn claim_standalone(
        &self,
        session: &Session,
        tx: &StreamTx,
    ) -> Result<Option<ClaimGuard>, Response> {
        let Some(router) = &session.router else { return Ok(None) };
        let number = self.tickets.fetch_add(1, Ordering::Relaxed);
        let ticket = format!("{}/{number}", router.instance());
        match router.claim_standalone(&session.id, &ticket, self.claim_ttl).await {
            Ok(true) => {
                let stream = (Arc::downgrade(&session.routes), tx.downgrade());
                let claim = Claim { router: router.clone(), session: session.id.clone(), ticket };
                Ok(Some(ClaimGuard::keep(claim, self.claim_ttl, stream)))
            }
            Ok(false) => Err(second_get_stream()),
            Err(error) => {
                tracing::warn!(%error, "a GET stream refused: the peer router cannot claim it");
                Err(retry_later(&error))
            }
        }
    }
}

/// A claim on a session's GET stream, renewed in the background until it is dropped (with the
/// stream's response body), then released.
pub(super) struct ClaimGuard {
    pub(super) _held: tokio::sync::oneshot::Sender<()>,
}

/// The routes of a session and its GET stream's sender, held weakly by the claim's renewal.
pub(super) type WeakStream = (std::sync::Weak<Mutex<Routes>>, mpsc::WeakSender<Box<Delivery>>);

/// Who holds which session's GET stream, through which router.
pub(super) struct Claim {
    pub(super) router: Arc<dyn PeerRouter>,
    pub(super) session: String,
    pub(super) ticket: String,
}

impl ClaimGuard {
    pub(super) fn keep(claim: Claim, ttl: Duration, stream: WeakStream) -> ClaimGuard {
        let (held, dropped) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            renew_claim(&claim, ttl, dropped, stream).await;
            let Claim { router, session, ticket } = claim;
            if let Err(error) = router.release_standalone(&session, &ticket).await {
                // It expires by itself within the claim's lifetime.
                tracing::debug!(%error, session, "GET stream claim not released");
            }
        });
        ClaimGuard { _held: held }
    }
}

/// Renews `ticket`'s claim every third of its lifetime until the stream's guard is dropped. A
/// renewal that fails leaves the claim to the next one (it takes the claim again if it
/// expired meanwhile); a claim another instance took meanwhile ends the stream here, so two
/// instances never both hold it.
pub(super) async fn renew_claim(
    Claim { router, session, ticket }: &Claim,
    ttl: Duration,
    mut dropped: tokio::sync::oneshot::Receiver<()>,
    (routes, tx): WeakStream,
) {
    let period = ttl / 3;
    let mut renewals = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    loop {
        tokio::select! {
            _ = &mut dropped => return,
            _ = renewals.tick() => {}
        }
        match router.claim_standalone(session, ticket, ttl).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(session, "GET stream claimed by another instance: ended here");
                if let (Some(routes), Some(tx)) = (routes.upgrade(), tx.upgrade()) {
                    lock(&routes).let_go(&tx);
                }
                return;
            }
            Err(error) => tracing::debug!(%error, session, "GET stream claim not renewed"),
        }
    }
}

/// Follows the stream `last_event_id` names in the store, after that event: what was missed,
/// then what comes, until the stream's answer (a POST stream) or the client leaves. The
/// session was found for this caller, so only its own streams can be named.
pub(super) async fn resume(
    session: &Session,
    last_event_id: &str,
    (tx, rx): (StreamTx, StreamRx),
    keep_alive: Option<Duration>,
    slots: (StreamSlot, StreamSlot),
) -> Response {
    let unknown = || {
        let error = McpError::invalid_request(format!("Unknown Last-Event-ID: {last_event_id}"));
        error_response(StatusCode::NOT_FOUND, None, error)
    };
    let Some((stream, after)) = parse_event_id(last_event_id) else { return unknown() };
    let store = lock(&session.routes).store.clone();
    let feed = match store.follow(&session.id, stream, after).await {
        Ok(Some(feed)) => feed,
        Ok(None) => return unknown(),
        Err(error) => return event_store_unavailable(&error),
    };
    let (marker, marked) = mpsc::channel(CHANNEL_CAPACITY);
    lock(&session.routes).followed(stream, marker);
    tokio::spawn(forward(feed, tx, stream != StreamId::STANDALONE, marked));
    sse_response(Body::from_stream(sse_stream(rx, None, keep_alive, BodyGuard(Some(slots)))))
}

/// Sends a followed stream's events to its response until a POST stream's answer, the end of
/// the feed, or the client leaving; the response ends with it.
///
/// `marked` is the channel that marks the stream as connected in the session's routes (see
/// [`Routes::followed`]): what arrives there is also in the store, and comes from the feed.
pub(super) async fn forward(
    mut feed: EventFeed,
    tx: StreamTx,
    ends_with_answer: bool,
    mut marked: StreamRx,
) {
    loop {
        let next = tokio::select! {
            next = feed.next() => next,
            () = tx.closed() => return,
            Some(_) = marked.recv() => continue,
        };
        let event = match next {
            Some(Ok(event)) => event,
            Some(Err(error)) => {
                tracing::warn!(%error, "resumed SSE stream ended: the event store failed");
                return;
            }
            None => return,
        };
        let answer = ends_with_answer && matches!(event.message, Message::Response(_));
        let delivery = Delivery { event_id: Some(event.id), message: event.message };
        if tx.send(Box::new(delivery)).await.is_err() || answer {
            return;
        }
    }
}
