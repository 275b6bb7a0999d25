//! One request on the wire: per-call options merged into `_meta`, timeouts, progress, and the
//! MRTR loop of `tools/call`, `prompts/get` and `resources/read`.

use std::sync::Arc;

use modelcontext_types::{
    Era, InputRequests, InputRequiredResult, InputResponses, McpError, ProgressNotificationParams,
    ProgressToken, RawValue, RequestId, ResultType, to_raw,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{CallOptions, Client};
use crate::Error;
use crate::engine::RequestOptions;
use crate::observe;
use modelcontext_types::method;
use tracing::Instrument;

impl Client {
    /// Sends any request and parses its result. `params` must already carry the envelope
    /// (the typed methods do that for you).
    pub async fn request<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
    ) -> Result<R, Error> {
        self.request_with(method, params, &CallOptions::default()).await
    }

    /// [`Client::request`] with per-call options: the option's `_meta` keys and progress
    /// token are added to the params' `_meta`.
    pub async fn request_with<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
        options: &CallOptions,
    ) -> Result<R, Error> {
        let raw = self.exchange(method, &mut object(params)?, options).await?;
        handled(method, self.result_type(&raw).as_ref())?;
        Ok(serde_json::from_str(raw.get())?)
    }

    /// A request that may answer `input_required` (2026-07-28 MRTR): answers the server's
    /// questions with the callbacks and retries (a fresh id each time, `requestState` echoed
    /// as received), at most `max_input_rounds` times. The answers and state of this call
    /// stay in this call's params.
    pub(super) async fn request_mrtr<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
        options: &CallOptions,
    ) -> Result<R, Error> {
        Ok(self.request_mrtr_rounds(method, params, options).await?.0)
    }

    /// [`Client::request_mrtr`], with the number of `input_required` rounds it took.
    pub(super) async fn request_mrtr_rounds<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
        options: &CallOptions,
    ) -> Result<(R, usize), Error> {
        let answered = self.request_mrtr_raw(method, params, options).await?;
        handled(method, answered.result_type.as_ref())?;
        Ok((serde_json::from_str(answered.raw.get())?, answered.rounds))
    }

    /// [`Client::request_mrtr`], its final answer left as JSON for the caller to decode.
    /// Only `resultType` is read to tell `input_required` from the rest, so a complete
    /// result is parsed once, by the caller, into its own type.
    pub(super) async fn request_mrtr_raw<P: Serialize>(
        &self,
        method: &str,
        params: P,
        options: &CallOptions,
    ) -> Result<Answered, Error> {
        self.request_mrtr_object(method, &mut object(params)?, options).await
    }

    /// [`Client::request_mrtr_raw`] with the params already an object. They stay the
    /// caller's, answers of the last round merged in.
    pub(super) async fn request_mrtr_object(
        &self,
        method: &str,
        params: &mut Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Answered, Error> {
        let mut rounds = 0;
        loop {
            let raw = self.exchange(method, params, options).await?;
            let result_type = self.result_type(&raw);
            if result_type != Some(ResultType::InputRequired) {
                return Ok(Answered { raw, result_type, rounds });
            }
            let input = serde_json::from_str::<InputRequiredResult>(raw.get())?;
            // Give up before asking the user questions whose answers would never be sent.
            if rounds == self.options.max_input_rounds {
                let message = format!("'{method}' still needed input after {rounds} rounds");
                return Err(McpError::internal(message).into());
            }
            rounds += 1;
            let responses = self.answer_all(input.input_requests.unwrap_or_default()).await?;
            params.insert("inputResponses".into(), serde_json::to_value(responses)?);
            match input.request_state {
                Some(state) => params.insert("requestState".into(), Value::String(state)),
                None => params.remove("requestState"),
            };
        }
    }

    /// A list or read result from the cache when a fresh one is there; else `fetch`es it
    /// (`true` with it if it may be kept) and keeps it as its hints allow.
    pub(super) async fn cached<R: DeserializeOwned>(
        &self,
        method: &'static str,
        target: &str,
        fetch: impl std::future::Future<Output = Result<(Value, bool), Error>>,
    ) -> Result<R, Error> {
        let Some(cache) = &self.cache else {
            return Ok(serde_json::from_value(fetch.await?.0)?);
        };
        if let Some(value) = cache.get(self.cache_owner, method, target) {
            return Ok(serde_json::from_value(value)?);
        }
        let (value, keep) = fetch.await?;
        if keep {
            cache.put(self.cache_owner, method, target, &value);
        }
        Ok(serde_json::from_value(value)?)
    }

    /// Answers every question of one round, concurrently (they were asked together).
    pub(super) async fn answer_all(
        &self,
        requests: InputRequests,
    ) -> Result<InputResponses, Error> {
        let answers = requests.into_iter().map(|(key, request)| async move {
            Ok::<_, McpError>((key, self.handlers.answer(request).await?))
        });
        Ok(futures_util::future::try_join_all(answers).await?.into_iter().collect())
    }

    /// One request on the wire, with a fresh id: merges the options into `_meta`, applies
    /// the timeouts, routes progress. Dropping the future cancels the request.
    /// The options are merged into `params` in place: a retry merges them again, over the
    /// same keys, so the params need no copy per round.
    async fn exchange(
        &self,
        method: &str,
        params: &mut Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Box<RawValue>, Error> {
        let id = self.peer.next_id();
        let token = options.on_progress.as_ref().map(|_| progress_token(&id));
        merge_meta(params, &options.meta, token.as_ref());
        let request_options = RequestOptions {
            timeout: options.timeout.unwrap_or(self.options.timeout),
            reset_on_progress: options.reset_on_progress.is_some(),
            max_total: options.reset_on_progress,
            progress: token.zip(options.on_progress.clone()).map(|(token, handler)| {
                let token = serde_json::to_value(token).unwrap_or_default();
                let forward = move |raw: Value| {
                    if let Ok(params) = serde_json::from_value::<ProgressNotificationParams>(raw) {
                        handler(params);
                    }
                };
                (token, Arc::new(forward) as crate::engine::ProgressCallback)
            }),
        };
        let span = self.span(method, &id, params);
        #[cfg(feature = "otel")]
        let timing = {
            observe::otel::inject(&span, params);
            let mut timing = observe::otel::Timing::start(
                std::sync::Arc::clone(&self.instruments),
                observe::otel::Side::Client,
                method,
                self.network_transport,
            );
            timing.identify(observe::Target::of_params(method, params), &self.protocol_version);
            timing
        };
        let raw = to_raw(params)?;
        let request = self.peer.request(id, method, Some(raw), request_options);
        let outcome = request.instrument(span.clone()).await;
        let tool_call = method == method::TOOLS_CALL;
        self.record_session(&span);
        observe::record(&span, tool_call, &outcome);
        #[cfg(feature = "otel")]
        timing.finish(tool_call, outcome.as_deref());
        Ok(outcome?)
    }

    /// `mcp.session.id`, read once the answer came (`initialize`'s brings the id).
    fn record_session(&self, span: &tracing::Span) {
        if span.is_disabled() {
            return;
        }
        if let Some(id) = self.session_id.as_ref().and_then(|watch| watch.get()) {
            span.record("mcp.session.id", &*id);
        }
    }

    /// The `resultType` of an answer. It is a 2026-07-28 member: a handshake-era answer is the
    /// result itself, whatever members it carries, and is not scanned for one.
    fn result_type(&self, raw: &RawValue) -> Option<ResultType> {
        match self.era {
            Era::Handshake => None,
            _ => result_type(raw.get()),
        }
    }

    /// The span of one outgoing request (see [`observe`]).
    fn span(&self, method: &str, id: &RequestId, params: &Map<String, Value>) -> tracing::Span {
        let span = observe::client_span(method, id, &self.protocol_version, self.network_transport);
        if !span.is_disabled() {
            observe::name_target(&span, method, observe::Target::of_params(method, params));
        }
        span
    }
}

/// Whether a result of `result_type` is one this client decodes as the method's result: a
/// modern result other than `complete` needs handling this client does not do yet; an absent
/// `resultType` means complete.
fn handled(method: &str, result_type: Option<&ResultType>) -> Result<(), Error> {
    match result_type {
        None | Some(ResultType::Complete) => Ok(()),
        Some(other) => Err(McpError::internal(format!(
            "'{method}' answered with resultType '{other}', which this client does not handle"
        ))
        .into()),
    }
}

/// A result's `resultType`, read without decoding the rest; `None` when it is absent (a
/// handshake-era server) or the result is no object.
pub(super) fn result_type(raw: &str) -> Option<ResultType> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Probe {
        result_type: Option<ResultType>,
    }
    serde_json::from_str::<Probe>(raw).ok().and_then(|probe| probe.result_type)
}

/// Serializes request params into the object `_meta` can be merged into.
pub(super) fn object(params: impl Serialize) -> Result<Map<String, Value>, Error> {
    match serde_json::to_value(params)? {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => {
            Err(McpError::invalid_params(format!("params must be an object, not {other}")).into())
        }
    }
}

/// The progress token of a request: its own id, which is unique among our active requests.
fn progress_token(id: &RequestId) -> ProgressToken {
    match id {
        RequestId::Number(n) => ProgressToken::Number(*n),
        other => ProgressToken::String(other.to_string()),
    }
}

/// Adds the caller's `_meta` keys (without overriding the SDK's) and the progress token.
fn merge_meta(
    params: &mut Map<String, Value>,
    extra: &Map<String, Value>,
    token: Option<&ProgressToken>,
) {
    if extra.is_empty() && token.is_none() {
        return;
    }
    let meta = params.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(meta) = meta else { return };
    for (key, value) in extra {
        meta.entry(key.clone()).or_insert_with(|| value.clone());
    }
    if let Some(token) = token {
        meta.insert("progressToken".into(), serde_json::to_value(token).unwrap_or_default());
    }
}

/// The final answer of a request that may have needed input first.
pub(super) struct Answered {
    /// The result, as the server sent it.
    pub raw: Box<RawValue>,
    /// Its `resultType` ([`result_type`]).
    pub result_type: Option<ResultType>,
    /// The `input_required` rounds it took.
    pub rounds: usize,
}
