//! Multi round-trip requests (2026-07-28, SEP-2322) on the server side.
//!
//! A modern `tools/call`, `prompts/get` or `resources/read` runs its handler with an
//! [`InputRound`]. Each question the handler asks gets the key it named
//! ([`Context::question`](super::Context::question)) or one from its kind and its position in
//! the run (`elicit-1`, `sample-2`, ...). An answered question returns its answer; an
//! unanswered one is recorded and never returns. When the handler cannot go on (a poll leaves
//! it pending with questions recorded, so questions asked together in a `join!` travel
//! together), it is dropped and the request answers an `InputRequiredResult` with the
//! questions and a sealed `requestState`. The client retries with the answers; the handler
//! runs again from the start and this time gets them.
//!
//! `requestState` carries the answers of earlier rounds (the client only resends the last
//! round's), the keys it asked, and what binds it to the request: the method, the tool or
//! prompt name or resource URI, a SHA-256 of the arguments, the authenticated principal when
//! there is one ([`PrincipalId`](super::PrincipalId)), the server name and an expiry. It
//! is sealed with HMAC-SHA256 under the server's key ring ([`super::seal`]); anything that
//! does not open, has expired, or belongs to another request is -32602 `Invalid or expired
//! requestState`, with the real reason in the log.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use modelcontext_types::{
    InputRequest, InputRequests, InputRequiredResult, InputResponse, InputResponses, McpError,
    MrtrResult,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::ServerInner;

/// The default lifetime of a `requestState`: one round may wait this long for a person.
pub(crate) const DEFAULT_STATE_TTL: Duration = Duration::from_secs(600);

const DOMAIN: &str = "request-state";

/// What a `requestState` is bound to, as the request gives it. The arguments are digested
/// only when a state is opened or sealed: most modern calls do neither, and the digest was a
/// tenth of such a call's instructions.
#[derive(Debug)]
pub(crate) struct Binding {
    /// `tools/call`, `prompts/get` or `resources/read`.
    method: &'static str,
    /// The tool or prompt name, or the resource URI.
    name: String,
    /// The arguments object, shared with the handler's [`Arguments`](super::handler::Arguments).
    args: Arc<Value>,
    /// The authenticated principal, when the transport established one.
    principal: Option<String>,
}

impl Binding {
    /// `args` is the request's arguments object (an empty one for a resource read).
    pub(crate) fn new(method: &'static str, name: &str, args: Arc<Value>) -> Binding {
        Binding { method, name: name.to_owned(), args, principal: None }
    }

    /// The binding, also tied to `principal` (state sealed for one principal does not open
    /// for another, or for none).
    pub(crate) fn with_principal(mut self, principal: Option<&str>) -> Binding {
        self.principal = principal.map(str::to_owned);
        self
    }

    /// The binding as a sealed state records it, with the arguments' digest.
    fn sealed(&self) -> SealedBinding {
        let mut digest = Sha256::new();
        hash_canonical(&mut digest, &self.args);
        SealedBinding {
            method: self.method.to_owned(),
            name: self.name.clone(),
            args: hex(&digest.finalize()),
            principal: self.principal.clone(),
        }
    }
}

/// A [`Binding`] inside a sealed `requestState`.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
struct SealedBinding {
    method: String,
    name: String,
    /// SHA-256 (hex) of the arguments in canonical form (keys sorted).
    args: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    principal: Option<String>,
}

/// Lowercase hex, without a `format!` per byte.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}

/// Feeds `value` to `digest` as JSON with object keys sorted, so the digest does not depend on
/// the client's key order. The text is never built: this runs for every modern call.
fn hash_canonical(digest: &mut Sha256, value: &Value) {
    match value {
        Value::Object(map) => hash_canonical_object(digest, map),
        Value::Array(items) => {
            digest.update(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    digest.update(b",");
                }
                hash_canonical(digest, item);
            }
            digest.update(b"]");
        }
        scalar => hash_json(digest, scalar),
    }
}

fn hash_canonical_object(digest: &mut Sha256, map: &Map<String, Value>) {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_unstable_by_key(|(key, _)| *key);
    digest.update(b"{");
    for (i, (key, value)) in entries.into_iter().enumerate() {
        if i > 0 {
            digest.update(b",");
        }
        hash_json(digest, key);
        digest.update(b":");
        hash_canonical(digest, value);
    }
    digest.update(b"}");
}

/// A scalar or a key, as serde_json writes it (escapes included), straight into the digest.
fn hash_json(digest: &mut Sha256, value: &impl Serialize) {
    struct Feed<'a>(&'a mut Sha256);
    impl std::io::Write for Feed<'_> {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.update(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // Writing a string or a number to a sink that cannot fail cannot fail.
    let _ = serde_json::to_writer(Feed(digest), value);
}

/// The sealed payload of a `requestState`.
#[derive(Serialize, Deserialize)]
struct State {
    server: String,
    #[serde(flatten)]
    binding: SealedBinding,
    /// Expiry, milliseconds since the Unix epoch.
    expires: u64,
    /// Answers of the rounds before the last.
    answers: InputResponses,
    /// Keys of the questions the last round asked.
    asked: Vec<String>,
    /// Rounds of input so far, this one included ([`super::McpServer::max_input_rounds`]).
    #[serde(default)]
    rounds: usize,
}

/// Where a question goes once the call became a task (the tasks extension's live task): it
/// is parked there until `tasks/update` answers it, while the handler waits.
pub(crate) trait AnswersLater: Send + Sync + std::fmt::Debug {
    /// The answer to the question `request` under `key`, once the client gives it.
    fn ask(
        &self,
        key: String,
        request: InputRequest,
    ) -> futures_util::future::BoxFuture<'_, Result<InputResponse, McpError>>;
}

/// One run of a handler in an MRTR round: the request it belongs to, the answers known so
/// far, and the questions it asked that have none.
#[derive(Debug)]
pub(crate) struct InputRound {
    /// What the round's `requestState` is bound to.
    binding: Binding,
    /// Rounds of input the request has had before this run.
    rounds: usize,
    answers: InputResponses,
    asked: Mutex<InputRequests>,
    next: AtomicUsize,
    /// Set when the call became a task (tasks extension): questions from then on are the
    /// task's, answered by `tasks/update` while the handler waits.
    task: std::sync::OnceLock<std::sync::Arc<dyn AnswersLater>>,
}

impl InputRound {
    /// The round a request opens: without `requestState`, this request's own answers (a
    /// client may answer up front, and a server that never needed state takes answers by key
    /// alone); else the sealed answers plus this retry's answers to the questions the state
    /// says were asked. Answers under keys no question uses are ignored, not refused: servers
    /// ignore what they do not recognize (SEP-2322).
    pub(crate) fn open(
        server: &ServerInner,
        binding: Binding,
        responses: Option<InputResponses>,
        state: Option<&str>,
    ) -> Result<InputRound, McpError> {
        let Some(state) = state else {
            return Ok(InputRound::new(binding, 0, responses.unwrap_or_default()));
        };
        let state = unseal(server, &binding, state).map_err(|reason| {
            tracing::info!(method = %binding.method, reason, "requestState rejected");
            invalid_state()
        })?;
        let mut answers = state.answers;
        let mut responses = responses.unwrap_or_default();
        for key in state.asked {
            if let Some(answer) = responses.remove(&key) {
                answers.insert(key, answer);
            }
        }
        Ok(InputRound::new(binding, state.rounds, answers))
    }

    fn new(binding: Binding, rounds: usize, answers: InputResponses) -> InputRound {
        InputRound {
            binding,
            rounds,
            answers,
            asked: Mutex::new(InputRequests::new()),
            next: AtomicUsize::new(0),
            task: std::sync::OnceLock::new(),
        }
    }

    /// The answer to the next question, or never (the question is recorded for the client).
    pub(crate) async fn ask(
        &self,
        kind: &str,
        key: Option<String>,
        request: InputRequest,
    ) -> Result<InputResponse, McpError> {
        let key = key
            .unwrap_or_else(|| format!("{kind}-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1));
        if let Some(answer) = self.answers.get(&key) {
            return Ok(answer.clone());
        }
        if let Some(task) = self.task.get() {
            return task.ask(key, request).await;
        }
        self.lock().insert(key, request);
        std::future::pending().await
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, InputRequests> {
        self.asked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// From now on, questions are `task`'s (the call became a task).
    pub(crate) fn become_task(&self, task: std::sync::Arc<dyn AnswersLater>) {
        let _ = self.task.set(task);
    }

    /// Whether the call became a task.
    pub(crate) fn is_task(&self) -> bool {
        self.task.get().is_some()
    }

    pub(crate) fn has_questions(&self) -> bool {
        !self.lock().is_empty()
    }

    /// The `InputRequiredResult` for the questions recorded so far; -32603 when the request
    /// has had its [`max_input_rounds`](super::McpServer::max_input_rounds) already.
    pub(crate) fn input_required(
        &self,
        server: &ServerInner,
    ) -> Result<InputRequiredResult, McpError> {
        if self.rounds >= server.max_input_rounds {
            let limit = server.max_input_rounds;
            let name = &self.binding.name;
            let message = format!("'{name}' asked for input more than {limit} times");
            return Err(McpError::internal(message));
        }
        let questions = std::mem::take(&mut *self.lock());
        let state = State {
            server: server.info.name.clone(),
            binding: self.binding.sealed(),
            expires: now_ms().saturating_add(millis(server.request_state_ttl)),
            answers: self.answers.clone(),
            asked: questions.keys().cloned().collect(),
            rounds: self.rounds + 1,
        };
        let payload = serde_json::to_vec(&state).unwrap_or_default();
        Ok(InputRequiredResult::new(questions, Some(server.keys.seal(DOMAIN, &payload))))
    }
}

/// Runs `handler` in `round`: its result, or the questions it stopped at.
pub(crate) async fn run_round<R>(
    server: &ServerInner,
    round: &InputRound,
    handler: impl Future<Output = Result<R, McpError>>,
) -> Result<MrtrResult<R>, McpError> {
    let mut handler = pin!(handler);
    std::future::poll_fn(|cx| match handler.as_mut().poll(cx) {
        Poll::Ready(outcome) => Poll::Ready(outcome.map(MrtrResult::Complete)),
        Poll::Pending if round.has_questions() => {
            Poll::Ready(round.input_required(server).map(MrtrResult::InputRequired))
        }
        Poll::Pending => Poll::Pending,
    })
    .await
}

fn unseal(server: &ServerInner, binding: &Binding, token: &str) -> Result<State, &'static str> {
    let payload = server.keys.open(DOMAIN, token).ok_or("not sealed by this server's keys")?;
    let state: State = serde_json::from_slice(&payload).map_err(|_| "malformed")?;
    if state.server != server.info.name {
        return Err("issued by another server");
    }
    if state.binding != binding.sealed() {
        return Err("issued for another request");
    }
    if now_ms() >= state.expires {
        return Err("expired");
    }
    Ok(state)
}

fn invalid_state() -> McpError {
    McpError::invalid_params("Invalid or expired requestState")
        .with_data(json!({ "reason": "invalid_request_state" }))
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(millis).unwrap_or_default()
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use sha2::{Digest, Sha256};

    use super::{Binding, hex};

    /// The digest is that of the canonical text (keys sorted at every depth, serde_json's
    /// escapes), so states sealed before this way of hashing still open.
    #[test]
    fn the_arguments_digest_is_the_sha256_of_their_canonical_text() {
        let args = json!({"b": 1.5, "a": [{"y": "é\"\n", "x": null}, true], "c": {}});
        let args = args.as_object().expect("an object");
        let canonical = r#"{"a":[{"x":null,"y":"é\"\n"},true],"b":1.5,"c":{}}"#;
        let expected = hex(&Sha256::digest(canonical.as_bytes()));
        let args = serde_json::Value::Object(args.clone());
        assert_eq!(Binding::new("tools/call", "t", Arc::new(args)).sealed().args, expected);
    }
}
