//! Multi round-trip requests (MRTR, 2026-07-28, SEP-2322).
//!
//! A modern server never sends requests. When `tools/call`, `prompts/get` or `resources/read`
//! needs client input it answers an [`InputRequiredResult`] holding [`InputRequests`]; the
//! client fulfils them and retries the call (new JSON-RPC id) with [`InputResponses`] under
//! the same keys and the exact `requestState`.

use std::collections::BTreeMap;

use serde::de::{DeserializeOwned, Error as _};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::method;
use crate::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ListRootsResult, Meta, RequestParams, ResultType,
};

/// Input requests, by key (unique within one result).
pub type InputRequests = BTreeMap<String, InputRequest>;

/// Input responses, by the key of the request each answers.
pub type InputResponses = BTreeMap<String, InputResponse>;

/// `inputResponses` as a server reads it: the entries that are answers (elicitation,
/// sampling, roots); any other entry is left out, so an unknown key carrying something else
/// does not fail the request, and an answer of the wrong shape to a question is as if
/// unanswered (the question is asked again). The object itself must be an object.
pub(crate) fn recognized_input_responses<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<InputResponses>, D::Error> {
    let Some(entries) = Option::<serde_json::Map<String, Value>>::deserialize(d)? else {
        return Ok(None);
    };
    let answers = entries
        .into_iter()
        .filter_map(|(key, value)| Some((key, serde_json::from_value(value).ok()?)))
        .collect();
    Ok(Some(answers))
}

/// A request for client input embedded in an [`InputRequiredResult`]: `{method, params}`,
/// not a JSON-RPC message (no `jsonrpc`, no `id`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputRequest {
    /// `elicitation/create`.
    Elicit(ElicitRequestParams),
    /// `sampling/createMessage`.
    CreateMessage(CreateMessageRequestParams),
    /// `roots/list`.
    ListRoots(RequestParams),
}

impl InputRequest {
    /// The method this request names.
    pub fn method(&self) -> &'static str {
        match self {
            InputRequest::Elicit(_) => method::ELICITATION_CREATE,
            InputRequest::CreateMessage(_) => method::SAMPLING_CREATE_MESSAGE,
            InputRequest::ListRoots(_) => method::ROOTS_LIST,
        }
    }
}

impl Serialize for InputRequest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let params = match self {
            InputRequest::Elicit(p) => serde_json::to_value(p),
            InputRequest::CreateMessage(p) => serde_json::to_value(p),
            InputRequest::ListRoots(p) => serde_json::to_value(p),
        }
        .map_err(serde::ser::Error::custom)?;
        // `roots/list` params are optional: leave out an empty object rather than invent one.
        let empty = params.as_object().is_some_and(|o| o.is_empty());
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("method", self.method())?;
        if !empty {
            map.serialize_entry("params", &params)?;
        }
        map.end()
    }
}

#[derive(Deserialize)]
struct RawInputRequest {
    method: String,
    #[serde(default)]
    params: Option<Value>,
}

fn params<T: DeserializeOwned, E: serde::de::Error>(params: Option<Value>) -> Result<T, E> {
    let params = params.unwrap_or_else(|| Value::Object(Meta::new()));
    serde_json::from_value(params).map_err(E::custom)
}

// Dispatch on `method` first, then parse params straight into that method's type.
impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawInputRequest::deserialize(d)?;
        match raw.method.as_str() {
            method::ELICITATION_CREATE => params(raw.params).map(InputRequest::Elicit),
            method::SAMPLING_CREATE_MESSAGE => params(raw.params).map(InputRequest::CreateMessage),
            method::ROOTS_LIST => params(raw.params).map(InputRequest::ListRoots),
            other => Err(D::Error::custom(format!("unknown input request method `{other}`"))),
        }
    }
}

/// The client's answer to one [`InputRequest`]. The wire has no tag, so the shape decides:
/// `model` means sampling, `roots` means roots, `action` means elicitation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum InputResponse {
    /// Answers `sampling/createMessage`.
    CreateMessage(CreateMessageResult),
    /// Answers `roots/list`.
    ListRoots(ListRootsResult),
    /// Answers `elicitation/create`.
    Elicit(ElicitResult),
}

impl From<CreateMessageResult> for InputResponse {
    fn from(r: CreateMessageResult) -> Self {
        InputResponse::CreateMessage(r)
    }
}

impl From<ListRootsResult> for InputResponse {
    fn from(r: ListRootsResult) -> Self {
        InputResponse::ListRoots(r)
    }
}

impl From<ElicitResult> for InputResponse {
    fn from(r: ElicitResult) -> Self {
        InputResponse::Elicit(r)
    }
}

/// "I need input first": the answer of `tools/call`, `prompts/get` or `resources/read` when
/// the server needs client input (`resultType: "input_required"`). Never cached.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputRequiredResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// [`ResultType::InputRequired`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// What the client must fulfil before retrying; at least one of this and `requestState`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state the client MUST echo byte for byte on the retry. Attacker-controlled on
    /// return: integrity-protect it if it drives authorization or logic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl InputRequiredResult {
    /// An input-required result with these requests.
    pub fn new(input_requests: InputRequests, request_state: Option<String>) -> Self {
        InputRequiredResult {
            meta: None,
            result_type: Some(ResultType::InputRequired),
            input_requests: Some(input_requests),
            request_state,
        }
    }
}

setters!(InputRequiredResult {
    with_meta => meta: Meta,
    with_input_requests => input_requests: InputRequests,
    with_request_state => request_state: String,
});

/// The answer to a request that may need input first: the complete result `T`, or an
/// [`InputRequiredResult`]. Decided by `resultType`, never by trial parsing.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MrtrResult<T> {
    /// The request is answered.
    Complete(T),
    /// The server needs input; fulfil it and retry.
    InputRequired(InputRequiredResult),
}

impl<T: Serialize> Serialize for MrtrResult<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            MrtrResult::Complete(result) => result.serialize(s),
            MrtrResult::InputRequired(result) => result.serialize(s),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for MrtrResult<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        let input_required = value.get("resultType").and_then(Value::as_str)
            == Some(ResultType::InputRequired.as_str());
        let parsed = if input_required {
            serde_json::from_value(value).map(MrtrResult::InputRequired)
        } else {
            serde_json::from_value(value).map(MrtrResult::Complete)
        };
        parsed.map_err(D::Error::custom)
    }
}
