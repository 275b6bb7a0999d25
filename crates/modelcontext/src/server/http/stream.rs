//! The SSE side of the endpoint's answers: one message as an event, a stream of them, and the
//! choice between one JSON body and a stream for a request whose first message may come
//! before its response.

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderValue, StatusCode, header};
use modelcontext_types::{McpError, Message, RequestId};
use tokio::sync::mpsc;

use super::respond::{error_response, rpc_response, status_of};

/// One message as an SSE event without an id (a stateless stream cannot be resumed).
pub(crate) fn sse_message(message: Message) -> Bytes {
    sse_event(&Delivery { event_id: None, message })
}

/// Keeps the exchange alive; dropped with the response body, so a client that goes away
/// cancels the handler (spec 2026-07-28: closing the stream is the cancellation).
pub(crate) struct BodyGuard<T>(pub Option<T>);

/// One message for an HTTP stream, with its SSE event id when the stream is resumable.
pub(crate) struct Delivery {
    pub event_id: Option<String>,
    pub message: Message,
}

impl From<Message> for Delivery {
    fn from(message: Message) -> Delivery {
        Delivery { event_id: None, message }
    }
}

impl From<Box<Delivery>> for Delivery {
    fn from(delivery: Box<Delivery>) -> Delivery {
        *delivery
    }
}

/// The sending end of one HTTP stream of a session. Deliveries are boxed: a channel allocates
/// its first block of 32 slots when it is made, and a session holds its GET stream's channel
/// for as long as the stream is open, idle or not (5 KiB of slots unboxed, 256 bytes boxed).
pub(crate) type StreamTx = mpsc::Sender<Box<Delivery>>;

/// The receiving end of [`StreamTx`], read by the stream's response body.
pub(crate) type StreamRx = mpsc::Receiver<Box<Delivery>>;

/// Turns the messages for request `id` into the HTTP answer: one JSON body when the response
/// comes first, an SSE stream when notifications (progress, logs) or server requests come
/// before it. `priming` is the id of the priming event a resumable stream starts with.
pub(crate) async fn json_or_sse<D, T>(
    mut rx: mpsc::Receiver<D>,
    id: RequestId,
    priming: Option<String>,
    guard: BodyGuard<T>,
) -> Response
where
    D: Into<Delivery> + Send + 'static,
    T: Send + 'static,
{
    let Some(first) = rx.recv().await.map(Into::into) else {
        let error = McpError::internal("The request ended without an answer");
        return error_response(StatusCode::INTERNAL_SERVER_ERROR, Some(id), error);
    };
    if let Message::Response(response) = &first.message {
        return rpc_response(status_of(response), response);
    }
    let mut prefix = Vec::new();
    if let Some(priming) = priming {
        // Spec 2025-11-25: an event with an id and empty data first, so even a stream that
        // drops before its first message can be resumed; `retry` paces the reconnection.
        crate::transport::sse::write_event(&mut prefix, Some(&priming), None, "");
        crate::transport::sse::retry(&mut prefix, RETRY_MS);
    }
    prefix.extend_from_slice(&sse_event(&first));
    let head = futures_util::stream::once(async move {
        Ok::<_, std::convert::Infallible>(Bytes::from(prefix))
    });
    let rest = sse_stream(rx, Some(id), None, guard);
    sse_response(Body::from_stream(head.chain(rest).boxed()))
}

/// How long a client waits before reconnecting a dropped stream, in milliseconds.
pub(crate) const RETRY_MS: u64 = 1000;

/// The rest of an SSE stream: each delivery as an event, until the response to `end_on`
/// (never, for `None`), with a `:` comment after `keep_alive` of silence if given.
pub(crate) fn sse_stream<D, T>(
    rx: mpsc::Receiver<D>,
    end_on: Option<RequestId>,
    keep_alive: Option<std::time::Duration>,
    guard: BodyGuard<T>,
) -> impl futures_util::Stream<Item = Result<Bytes, std::convert::Infallible>> + Send + 'static
where
    D: Into<Delivery> + Send + 'static,
    T: Send + 'static,
{
    futures_util::stream::unfold((rx, guard, false), move |(mut rx, guard, done)| {
        let end_on = end_on.clone();
        async move {
            if done {
                return None;
            }
            let next = match keep_alive {
                Some(period) => match tokio::time::timeout(period, rx.recv()).await {
                    Ok(next) => next,
                    Err(_) => {
                        let mut buf = Vec::new();
                        crate::transport::sse::comment(&mut buf, "keep-alive");
                        return Some((Ok(Bytes::from(buf)), (rx, guard, false)));
                    }
                },
                None => rx.recv().await,
            };
            let delivery: Delivery = next?.into();
            let finished = end_on.is_some()
                && matches!(&delivery.message, Message::Response(r) if r.id == end_on);
            Some((Ok(sse_event(&delivery)), (rx, guard, finished)))
        }
    })
}

/// One message as one SSE event (messages are single-line JSON, so one `data:` line).
pub(crate) fn sse_event(delivery: &Delivery) -> Bytes {
    let mut buf = Vec::with_capacity(256);
    let data = delivery.message.encode();
    let id = delivery.event_id.as_deref();
    crate::transport::sse::write_event(&mut buf, id, Some("message"), &data);
    Bytes::from(buf)
}

pub(crate) fn sse_response(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}
