//! Session lifecycle of the handshake era over HTTP: the id from `initialize`, renewal after a
//! 404, DELETE at the end, and the fallback to the 2024-11-05 HTTP+SSE transport.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use http::{Method, Uri};
use modelcontext_types::{McpError, Message, Notification, RawValue, RequestId, method};
use serde_json::Value;

use super::{Body, DEFAULT_CONNECT_TIMEOUT, SESSION_ID, Shared, content_type, next_chunk};
use crate::transport::sse::SseDecoder;

/// The session's DELETE must not hold up a closing client for long.
const DELETE_TIMEOUT: Duration = Duration::from_secs(5);

impl Shared {
    pub(super) fn remember_session(&self, headers: &HeaderMap) {
        let mut state = self.state();
        // Spec 2025-11-25: visible ASCII only; anything else is not a session id we can echo.
        let id = headers
            .get(SESSION_ID)
            .filter(|v| v.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b)));
        state.session_id = id.cloned();
        self.config.session_watch.0.set(id.and_then(|v| v.to_str().ok()));
        state.handshake_version = None;
    }

    /// Opens a new session in place of `expired`: replays the client's `initialize` (its answer
    /// stays inside the transport), sends `notifications/initialized`, restarts the GET stream.
    /// Returns true when a session other than `expired` is in place.
    pub(super) async fn renew_session(self: &Arc<Self>, expired: &HeaderValue) -> bool {
        let _renewing = self.renewing.lock().await;
        let (params, id) = {
            let mut state = self.state();
            if state.session_id.as_ref() != Some(expired) {
                // Another request renewed it while this one waited.
                return state.session_id.is_some();
            }
            let Some(params) = state.initialize_params.clone() else { return false };
            state.renewals += 1;
            (params, RequestId::String(format!("modelcontext-renew-{}", state.renewals)))
        };
        tracing::debug!("session expired (404); initializing a new one");
        let request = modelcontext_types::Request {
            id: id.clone(),
            method: method::INITIALIZE.into(),
            params,
        };
        let body = Bytes::from(Message::Request(request).encode());
        let answer = match self.send(Method::POST, self.session_headers(true), body).await {
            Ok(answer) if answer.status().is_success() => answer,
            _ => return false,
        };
        self.remember_session(answer.headers());
        let Some(Ok(result)) = self.read_own_response(&id, answer).await else { return false };
        let result: Option<Value> = serde_json::from_str(result.get()).ok();
        let version = result.as_ref().and_then(|r| r.get("protocolVersion")?.as_str());
        self.state().handshake_version = version.map(str::to_owned);
        let initialized = Notification { method: method::INITIALIZED.into(), params: None };
        self.post_in_order(initialized.into(), self.session_headers(false)).await;
        self.start_get_stream().await;
        self.state().session_id.is_some()
    }

    /// The response to `id` in an answer (JSON or SSE), without handing anything to the engine.
    pub(super) async fn read_own_response(
        &self,
        id: &RequestId,
        answer: http::Response<Body>,
    ) -> Option<Result<Box<RawValue>, McpError>> {
        let ours = |message: Result<Message, _>| match message {
            Ok(Message::Response(response)) if response.id.as_ref() == Some(id) => {
                Some(response.result)
            }
            _ => None,
        };
        if !content_type(answer.headers()).starts_with("text/event-stream") {
            return ours(Message::decode(&self.read_body(answer.into_body()).await.ok()?));
        }
        // The stream may stay open after the response: read only up to it.
        let mut body = answer.into_body();
        let mut decoder = SseDecoder::new(self.config.max_message_bytes);
        let mut events = Vec::new();
        while let Some(chunk) = next_chunk(&mut body, self.config.read_timeout).await.ok()? {
            decoder.feed(&chunk, &mut events);
            let found =
                events.drain(..).flatten().find_map(|e| ours(Message::decode(e.data.as_bytes())));
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// Switches to the 2024-11-05 HTTP+SSE transport if the server speaks it: GET on the URL
    /// answers an SSE stream whose first event, `endpoint`, names where to POST. Then the
    /// stream carries every message from the server, and `initialize` is posted again there.
    pub(super) async fn fall_back_to_sse(self: &Arc<Self>, initialize: Bytes) -> bool {
        let Ok(mut body) = self.open_stream(None).await else { return false };
        let mut decoder = SseDecoder::new(self.config.max_message_bytes);
        let mut events = Vec::new();
        let endpoint = loop {
            match next_chunk(&mut body, Some(self.fallback_wait())).await {
                Ok(Some(chunk)) => decoder.feed(&chunk, &mut events),
                _ => return false,
            }
            let first = events.drain(..).flatten().next();
            if let Some(event) = first {
                if event.event.as_deref() != Some("endpoint") {
                    return false;
                }
                break event.data;
            }
        };
        let Some(uri) = same_origin(&self.config.url, &endpoint) else {
            tracing::warn!(%endpoint, "ignoring an SSE endpoint on another origin");
            return false;
        };
        tracing::debug!(%uri, "the server speaks the 2024-11-05 HTTP+SSE transport");
        self.state().legacy_endpoint = Some(uri);
        let shared = self.clone();
        let reader = tokio::spawn(async move {
            let mut retry = None;
            shared.pump(body, &mut decoder, &mut retry, None, None).await;
            tracing::debug!("the HTTP+SSE stream ended");
        });
        if let Some(old) = self.state().get_stream.replace(reader.abort_handle()) {
            old.abort();
        }
        let posted = self.send(Method::POST, self.base_headers(), initialize).await;
        posted.is_ok_and(|answer| answer.status().is_success())
    }

    /// How long the fallback waits for the `endpoint` event.
    pub(super) fn fallback_wait(&self) -> Duration {
        self.config.read_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT)
    }

    /// Shutdown: stops every stream and ends the session with DELETE (a 405 is fine).
    pub(super) async fn close(&self) {
        let session = {
            let mut state = self.state();
            for (_, in_flight) in state.in_flight.drain() {
                in_flight.abort.abort();
            }
            if let Some(stream) = state.get_stream.take() {
                stream.abort();
            }
            state.session_id.clone()
        };
        if session.is_none() {
            return;
        }
        let mut headers = self.session_headers(false);
        headers.remove(CONTENT_TYPE);
        let delete = self.send(Method::DELETE, headers, Bytes::new());
        match tokio::time::timeout(DELETE_TIMEOUT, delete).await {
            Ok(Ok(answer)) => tracing::debug!(status = %answer.status(), "session deleted"),
            Ok(Err(err)) => tracing::debug!(%err, "DELETE of the session failed"),
            Err(_) => tracing::debug!("DELETE of the session timed out"),
        }
    }
}

/// The `endpoint` of the 2024-11-05 transport as a URI, if it is on `base`'s origin (a path,
/// or an absolute URL with the same scheme and authority): anything else could send the
/// session to another server.
pub(super) fn same_origin(base: &Uri, endpoint: &str) -> Option<Uri> {
    let endpoint = endpoint.trim();
    let uri: Uri = if endpoint.starts_with('/') {
        let authority = base.authority()?;
        format!("{}://{authority}{endpoint}", base.scheme_str()?).parse().ok()?
    } else {
        endpoint.parse().ok()?
    };
    (uri.scheme() == base.scheme() && uri.authority() == base.authority()).then_some(uri)
}
