//! The client's SSE streams: a request's answer (resumed with `Last-Event-ID` in the
//! handshake era when it drops before the response) and the standalone GET stream.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Method;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use modelcontext_types::{McpError, Message};

use super::{Body, Exchange, LAST_EVENT_ID, Shared, content_type, next_chunk};
use crate::transport::sse::{SseDecoder, SseEvent};

/// Reconnection delay when the server sent no `retry:` (the Python SDK's default too).
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// Consecutive reconnections that bring no event before a stream is given up.
const MAX_RECONNECTS: u32 = 3;
/// How long `notifications/initialized` waits for the GET stream's first answer.
const GET_OPEN_WAIT: Duration = Duration::from_secs(5);

/// How reading one SSE body ended.
#[derive(Default)]
pub(super) struct Pumped {
    /// The response to the exchange's request arrived.
    answered: bool,
    /// Events carrying a message or an id (progress, for the reconnect budget).
    events: usize,
    /// Why the stream broke, if it did not simply end.
    failure: Option<String>,
}

impl Shared {
    /// Reads a request's SSE answer; in the handshake era a stream that drops before the
    /// response is resumed with GET and `Last-Event-ID` (spec 2025-11-25, resumability).
    pub(super) async fn read_stream(&self, exchange: &Exchange, body: Body) {
        let mut decoder = SseDecoder::new(self.config.max_message_bytes);
        let mut retry = None;
        let timeout = self.config.read_timeout;
        let mut pumped = self.pump(body, &mut decoder, &mut retry, Some(exchange), timeout).await;
        let mut failures = 0;
        while !pumped.answered && !exchange.modern && failures < MAX_RECONNECTS {
            let Some(last_id) = decoder.last_event_id().map(str::to_owned) else { break };
            tokio::time::sleep(retry.map_or(DEFAULT_RETRY, Duration::from_millis)).await;
            let body = match self.open_stream(Some(&last_id)).await {
                Ok(body) => body,
                Err(reason) => {
                    tracing::debug!(%reason, "resuming the request stream failed");
                    failures += 1;
                    continue;
                }
            };
            pumped = self.pump(body, &mut decoder, &mut retry, Some(exchange), timeout).await;
            failures = if pumped.events > 0 { 0 } else { failures + 1 };
        }
        if !pumped.answered {
            let reason = pumped.failure.unwrap_or_else(|| "the stream ended".to_owned());
            let message =
                format!("no response to request {} on its SSE stream: {reason}", exchange.id);
            self.fail(&exchange.id, McpError::internal(message)).await;
        }
    }

    /// Delivers every message of an SSE body until it ends (or the request is answered).
    pub(super) async fn pump(
        &self,
        mut body: Body,
        decoder: &mut SseDecoder,
        retry: &mut Option<u64>,
        exchange: Option<&Exchange>,
        timeout: Option<Duration>,
    ) -> Pumped {
        let mut pumped = Pumped::default();
        let mut events = Vec::new();
        loop {
            let chunk = match next_chunk(&mut body, timeout).await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => return pumped,
                Err(reason) => return Pumped { failure: Some(reason), ..pumped },
            };
            decoder.feed(&chunk, &mut events);
            for event in events.drain(..) {
                match event {
                    Ok(event) => {
                        *retry = event.retry.or(*retry);
                        pumped.events += usize::from(event.id.is_some() || !event.data.is_empty());
                        pumped.answered |= self.on_event(exchange, event).await;
                    }
                    Err(too_large) if exchange.is_some() => {
                        return Pumped { failure: Some(too_large.to_string()), ..pumped };
                    }
                    Err(too_large) => tracing::warn!(%too_large, "skipped an SSE event"),
                }
            }
            if pumped.answered {
                return pumped;
            }
        }
    }

    /// One event: its data is a JSON-RPC message unless it is empty (a priming event).
    pub(super) async fn on_event(&self, exchange: Option<&Exchange>, event: SseEvent) -> bool {
        if event.data.is_empty() || !matches!(event.event.as_deref(), None | Some("message")) {
            return false;
        }
        match Message::decode(event.data.as_bytes()) {
            Ok(message) => self.deliver(exchange, message).await,
            Err(err) => {
                tracing::debug!(%err, "skipped an SSE event that is not a JSON-RPC message");
                false
            }
        }
    }

    /// Starts the standalone GET stream (2025-11-25) for server-initiated messages and waits
    /// (at most [`GET_OPEN_WAIT`]) until the server has answered the GET: a server that sends
    /// a request right after the client's next POST must find the stream already open.
    pub(super) async fn start_get_stream(self: &Arc<Self>) {
        let shared = self.clone();
        let (opened_tx, opened_rx) = tokio::sync::oneshot::channel();
        let handle = tokio::spawn(async move { shared.listen(Some(opened_tx)).await });
        if let Some(old) = self.state().get_stream.replace(handle.abort_handle()) {
            old.abort();
        }
        let _ = tokio::time::timeout(GET_OPEN_WAIT, opened_rx).await;
    }

    /// Reads the GET stream, reconnecting after `retry` with `Last-Event-ID`, until the server
    /// says there is none (405), the session is gone, or reconnecting keeps failing.
    pub(super) async fn listen(&self, mut opened: Option<tokio::sync::oneshot::Sender<()>>) {
        let mut decoder = SseDecoder::new(self.config.max_message_bytes);
        let mut retry = None;
        let mut failures = 0;
        while failures < MAX_RECONNECTS {
            let last_id = decoder.last_event_id().map(str::to_owned);
            let stream = self.open_stream(last_id.as_deref()).await;
            // The first answer, whatever it is, ends the caller's wait.
            if let Some(opened) = opened.take() {
                let _ = opened.send(());
            }
            match stream {
                Ok(body) => {
                    let pumped = self.pump(body, &mut decoder, &mut retry, None, None).await;
                    failures = if pumped.events > 0 { 0 } else { failures + 1 };
                }
                Err(reason) if reason.starts_with("HTTP 405") || reason.starts_with("HTTP 404") => {
                    tracing::debug!(%reason, "no GET stream");
                    return;
                }
                Err(reason) => {
                    tracing::debug!(%reason, "opening the GET stream failed");
                    failures += 1;
                }
            }
            tokio::time::sleep(retry.map_or(DEFAULT_RETRY, Duration::from_millis)).await;
        }
    }

    /// GET on the endpoint for an SSE stream, resuming after `last_id` when given.
    pub(super) async fn open_stream(&self, last_id: Option<&str>) -> Result<Body, String> {
        let mut headers = self.session_headers(false);
        headers.remove(CONTENT_TYPE);
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Some(value) = last_id.and_then(|id| HeaderValue::from_str(id).ok()) {
            headers.insert(LAST_EVENT_ID, value);
        }
        let answer = self.send(Method::GET, headers, Bytes::new()).await?;
        let status = answer.status();
        if !status.is_success() {
            return Err(format!("HTTP {}", status.as_u16()));
        }
        if !content_type(answer.headers()).starts_with("text/event-stream") {
            return Err("the GET answer is not an event stream".to_owned());
        }
        Ok(answer.into_body())
    }
}
