//! Questions a handler asks the client: elicitation (form and URL), sampling, roots.
//!
//! The calls are era-blind. On a handshake-era connection they are live server-to-client
//! requests through the engine's [`Peer`](crate::engine::Peer). On a modern request they are
//! questions of an MRTR round ([`super::mrtr`]): the first run stops at the first unanswered
//! question, the client answers, and the handler runs again from the start, this time getting
//! the answer. Either way a capability the client did not declare is -32021 with
//! `data.requiredCapabilities`, before anything is sent.

use modelcontext_types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitRequestFormParams, ElicitRequestParams, ElicitRequestURLParams, ElicitResult,
    ElicitationCapability, ElicitationSchema, Era, IncludeContext, InputRequest, InputResponse,
    ListRootsResult, McpError, RequestParams, Root, RootsCapability, SamplingCapability, method,
    to_raw,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::context::Context;
use super::elicit::{Elicitation, form_for};
use super::schema::Validator;
use crate::engine::RequestOptions;

/// A question to the client under a key the handler chooses: the key of its input request in
/// an MRTR round (modern era), where peers or tests may expect a particular name. Without
/// one ([`Context::elicit`] and friends) the SDK numbers questions by kind and position
/// (`elicit-1`, `roots-2`, ...). A key must be unique within one run of the handler.
/// Handshake-era questions are live requests; the key plays no part there.
#[derive(Debug)]
pub struct Question<'a> {
    cx: &'a Context,
    key: Option<String>,
}

impl Context {
    /// A question under `key` (see [`Question`]): `ctx.question("user_name").elicit::<T>(..)`.
    pub fn question(&self, key: impl Into<String>) -> Question<'_> {
        Question { cx: self, key: Some(key.into()) }
    }

    fn numbered(&self) -> Question<'_> {
        Question { cx: self, key: None }
    }

    /// Asks the user to fill in a form derived from `T` (a struct of primitive fields; see
    /// [`Elicitation`]). Needs the client's `elicitation` capability (form mode).
    ///
    /// Modern era: the handler runs again from the start once the client answers, so code
    /// before this call runs once per round; keep it free of side effects.
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, McpError> {
        self.numbered().elicit(message).await
    }

    /// Asks the user to open `url` (URL mode, for sensitive input that must not pass through
    /// the client). Returns what the user chose; `Accept` means they consented to open it, not
    /// that they finished there. Needs the client's `elicitation.url` capability.
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<ElicitAction, McpError> {
        self.numbered().elicit_url(message, url).await
    }

    /// Any elicitation, with the client's answer as sent.
    pub async fn elicit_raw(&self, params: ElicitRequestParams) -> Result<ElicitResult, McpError> {
        self.numbered().elicit_raw(params).await
    }

    /// Asks the client's LLM for a message (`sampling/createMessage`), with `tools` and
    /// `toolChoice` when the client declared `sampling.tools`. Needs the `sampling` capability.
    pub async fn sample(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, McpError> {
        self.numbered().sample(params).await
    }

    /// The client's roots (`roots/list`). Needs the `roots` capability.
    pub async fn list_roots(&self) -> Result<Vec<Root>, McpError> {
        self.numbered().list_roots().await
    }
}

impl Question<'_> {
    /// [`Context::elicit`] under this question's key.
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, McpError> {
        let requested_schema = form_for::<T>()?;
        let params = ElicitRequestFormParams::new(message, requested_schema);
        let result = self.elicit_raw(ElicitRequestParams::Form(params)).await?;
        match result.action {
            ElicitAction::Accept => {
                let content = Value::Object(result.content.unwrap_or_default());
                let value = T::deserialize(content).map_err(|e| {
                    McpError::invalid_params(format!(
                        "Elicitation answer does not match the requested form: {e}"
                    ))
                })?;
                Ok(Elicitation::Accepted(value))
            }
            ElicitAction::Decline => Ok(Elicitation::Declined),
            // An action a later revision adds is, to this SDK, not an answer: dismissed.
            ElicitAction::Cancel | _ => Ok(Elicitation::Cancelled),
        }
    }

    /// [`Context::elicit_url`] under this question's key.
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<ElicitAction, McpError> {
        // 2025-11-25 requires an id (echoed by `notifications/elicitation/complete`);
        // 2026-07-28 has none.
        let elicitation_id = (self.cx.era() == Era::Handshake).then(random_id);
        let mut params = ElicitRequestURLParams::new(message, url);
        params.elicitation_id = elicitation_id;
        Ok(self.elicit_raw(ElicitRequestParams::Url(params)).await?.action)
    }

    /// [`Context::elicit_raw`] under this question's key.
    /// An accepted form answer is checked against the requested form first: the handler
    /// never sees values outside it.
    pub async fn elicit_raw(&self, params: ElicitRequestParams) -> Result<ElicitResult, McpError> {
        let form = match &params {
            ElicitRequestParams::Form(form) => Some(form.requested_schema.clone()),
            _ => None,
        };
        match self.ask("elicit", InputRequest::Elicit(params)).await? {
            InputResponse::Elicit(result) => match form {
                Some(form) => check_answer(&form, result),
                None => Ok(result),
            },
            _ => Err(mismatched(method::ELICITATION_CREATE)),
        }
    }

    /// [`Context::sample`] under this question's key.
    pub async fn sample(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, McpError> {
        match self.ask("sample", InputRequest::CreateMessage(params)).await? {
            InputResponse::CreateMessage(result) => Ok(result),
            _ => Err(mismatched(method::SAMPLING_CREATE_MESSAGE)),
        }
    }

    /// [`Context::list_roots`] under this question's key.
    pub async fn list_roots(&self) -> Result<Vec<Root>, McpError> {
        match self.ask("roots", InputRequest::ListRoots(RequestParams::default())).await? {
            InputResponse::ListRoots(result) => Ok(result.roots),
            _ => Err(mismatched(method::ROOTS_LIST)),
        }
    }

    /// Checks the capability, then asks in the request's era.
    async fn ask(&self, kind: &str, request: InputRequest) -> Result<InputResponse, McpError> {
        check_capability(self.cx.client_capabilities(), &request)?;
        match self.cx.input_round() {
            Some(round) => round.ask(kind, self.key.clone(), request).await,
            None if self.cx.era() == Era::Handshake => self.ask_live(request).await,
            None => Err(McpError::internal(
                "a modern request can only ask the client for input in tools/call, prompts/get \
                 and resources/read",
            )),
        }
    }

    /// A live server-to-client request. No timeout: a person may be answering; if the
    /// client cancels the tool call, this future is dropped and the question is cancelled too.
    async fn ask_live(&self, request: InputRequest) -> Result<InputResponse, McpError> {
        let method = request.method();
        let params = match &request {
            InputRequest::Elicit(p) => to_raw(p),
            InputRequest::CreateMessage(p) => to_raw(p),
            InputRequest::ListRoots(p) => to_raw(p),
            _ => return Err(mismatched(method)),
        }
        .map_err(|e| McpError::internal(e.to_string()))?;
        let peer = self.cx.peer();
        let version = Some(self.cx.protocol_version());
        let options = RequestOptions::default();
        let raw = crate::observe::request_client(peer, method, params, options, version).await?;
        let parsed = match request {
            InputRequest::Elicit(_) => serde_json::from_str(raw.get()).map(InputResponse::Elicit),
            InputRequest::CreateMessage(_) => {
                serde_json::from_str(raw.get()).map(InputResponse::CreateMessage)
            }
            _ => serde_json::from_str::<ListRootsResult>(raw.get()).map(InputResponse::ListRoots),
        };
        parsed.map_err(|e| McpError::invalid_params(format!("Invalid answer to '{method}': {e}")))
    }
}

/// -32602 when an accepted answer breaks the requested form (a missing required field, a
/// value of the wrong type, out of range, too long, not one of the options). `format` is an
/// annotation in JSON Schema 2020-12 and is not asserted.
fn check_answer(form: &ElicitationSchema, result: ElicitResult) -> Result<ElicitResult, McpError> {
    if result.action != ElicitAction::Accept {
        return Ok(result);
    }
    let schema = match serde_json::to_value(form) {
        Ok(Value::Object(schema)) => schema,
        _ => return Err(McpError::internal("the requested form does not serialize")),
    };
    let validator = Validator::compile(&schema)
        .map_err(|e| McpError::internal(format!("the requested form does not compile: {e}")))?;
    let content = Value::Object(result.content.clone().unwrap_or_default());
    validator.check(&content).map_err(|problems| {
        McpError::invalid_params(format!(
            "Elicitation answer does not match the requested form: {problems}"
        ))
    })?;
    Ok(result)
}

fn mismatched(method: &str) -> McpError {
    McpError::invalid_params(format!("The answer to '{method}' is of another kind"))
}

/// -32021 when `request` needs a capability the client did not declare (spec: a server MUST
/// NOT send requests for capabilities the client lacks).
pub(super) fn check_capability(
    caps: &ClientCapabilities,
    request: &InputRequest,
) -> Result<(), McpError> {
    let (declared, what, required) = match request {
        InputRequest::Elicit(ElicitRequestParams::Form(_)) => (
            caps.elicitation.as_ref().is_some_and(ElicitationCapability::supports_form),
            "form elicitation",
            elicitation(true),
        ),
        InputRequest::Elicit(ElicitRequestParams::Url(_)) => (
            caps.elicitation.as_ref().is_some_and(|e| e.url.is_some()),
            "URL elicitation",
            elicitation(false),
        ),
        InputRequest::CreateMessage(params) => sampling_needs(caps, params),
        _ => (
            caps.roots.is_some(),
            "roots",
            ClientCapabilities::default().with_roots(RootsCapability::default()),
        ),
    };
    if declared {
        return Ok(());
    }
    Err(McpError::missing_required_client_capability(
        format!("Client did not declare the {what} capability"),
        required,
    ))
}

fn elicitation(form: bool) -> ClientCapabilities {
    let capability = ElicitationCapability::default();
    let capability =
        if form { capability.with_form(Map::new()) } else { capability.with_url(Map::new()) };
    ClientCapabilities::default().with_elicitation(capability)
}

/// Sampling needs `sampling`; tools or a tool choice need `sampling.tools`; context from
/// this or all servers needs `sampling.context`.
fn sampling_needs(
    caps: &ClientCapabilities,
    params: &CreateMessageRequestParams,
) -> (bool, &'static str, ClientCapabilities) {
    let mut needed = SamplingCapability::default();
    let mut what = "sampling";
    if params.tools.is_some() || params.tool_choice.is_some() {
        needed.tools = Some(Map::new());
        what = "sampling with tools";
    }
    if matches!(
        params.include_context,
        Some(IncludeContext::ThisServer | IncludeContext::AllServers)
    ) {
        needed.context = Some(Map::new());
        what = "sampling with context";
    }
    let declared = caps.sampling.as_ref().is_some_and(|have| {
        (needed.tools.is_none() || have.tools.is_some())
            && (needed.context.is_none() || have.context.is_some())
    });
    (declared, what, ClientCapabilities::default().with_sampling(needed))
}

/// A random id for URL elicitations (2025-11-25).
pub(super) fn random_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // Uniqueness within the server is all the spec asks; fall back to the clock.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        return format!("{nanos:x}");
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
