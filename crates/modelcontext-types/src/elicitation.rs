//! Elicitation: the server asks the user for input through the client (`elicitation/create`).
//!
//! Form mode sends a flat object schema of primitives ([`PrimitiveSchemaDefinition`]); URL
//! mode (2025-11-25+) sends the user to a web page for sensitive input.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{JsonObject, Meta, PrimitiveSchemaDefinition, RequestMeta, ResultType};

/// Params of `elicitation/create`: a form, or a URL to open (told apart by `mode`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitRequestParams {
    /// Form mode (`mode` `"form"` or absent).
    Form(ElicitRequestFormParams),
    /// URL mode (`mode: "url"`, 2025-11-25+).
    Url(ElicitRequestURLParams),
}

impl ElicitRequestParams {
    /// Request metadata.
    pub fn meta(&self) -> Option<&RequestMeta> {
        match self {
            ElicitRequestParams::Form(p) => p.meta.as_ref(),
            ElicitRequestParams::Url(p) => p.meta.as_ref(),
        }
    }

    /// The message shown to the user.
    pub fn message(&self) -> &str {
        match self {
            ElicitRequestParams::Form(p) => &p.message,
            ElicitRequestParams::Url(p) => &p.message,
        }
    }
}

impl Serialize for ElicitRequestParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ElicitRequestParams::Form(p) => p.serialize(s),
            ElicitRequestParams::Url(p) => p.serialize(s),
        }
    }
}

// Dispatch on `mode` rather than trying each shape in turn: an absent mode means form.
impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        let url = value.get("mode").and_then(Value::as_str) == Some("url");
        let parsed = if url {
            ElicitRequestURLParams::deserialize(value).map(ElicitRequestParams::Url)
        } else {
            ElicitRequestFormParams::deserialize(value).map(ElicitRequestParams::Form)
        };
        parsed.map_err(D::Error::custom)
    }
}

impl From<ElicitRequestFormParams> for ElicitRequestParams {
    fn from(p: ElicitRequestFormParams) -> Self {
        ElicitRequestParams::Form(p)
    }
}

impl From<ElicitRequestURLParams> for ElicitRequestParams {
    fn from(p: ElicitRequestURLParams) -> Self {
        ElicitRequestParams::Url(p)
    }
}

/// The `mode` member of form-mode params.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitMode {
    /// Form mode.
    Form,
}

/// Params of a form-mode elicitation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitRequestFormParams {
    /// Request metadata (handshake era; absent inside an `InputRequiredResult`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// `"form"`, or absent (2025-11-25 added the member; absent still means form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ElicitMode>,
    /// What to ask the user. Form mode MUST NOT ask for secrets.
    pub message: String,
    /// The fields to fill in.
    pub requested_schema: ElicitationSchema,
    /// 2025-11-25 tasks: run as a task, kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Value>,
}

impl ElicitRequestFormParams {
    /// Asks the user `message` through the form `requested_schema` (`mode` left absent).
    pub fn new(message: impl Into<String>, requested_schema: ElicitationSchema) -> Self {
        ElicitRequestFormParams {
            message: message.into(),
            requested_schema,
            ..ElicitRequestFormParams::default()
        }
    }
}

setters!(ElicitRequestFormParams {
    with_meta => meta: RequestMeta,
    with_mode => mode: ElicitMode,
    with_task => task: Value,
});

/// The form of a form-mode elicitation: a flat object schema of primitive fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "object", rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationSchema {
    /// The JSON Schema dialect, if not the default 2020-12.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// The fields, by name.
    pub properties: BTreeMap<String, PrimitiveSchemaDefinition>,
    /// Names of the fields the user must fill in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
}

impl ElicitationSchema {
    /// A form with these fields, none of them required.
    pub fn new(properties: BTreeMap<String, PrimitiveSchemaDefinition>) -> ElicitationSchema {
        ElicitationSchema { schema: None, properties, required: None }
    }
}

setters!(ElicitationSchema {
    with_schema => schema: String,
    with_required => required: Vec<String>,
});

/// Params of a URL-mode elicitation (2025-11-25+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename = "url", rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitRequestURLParams {
    /// Request metadata (handshake era; absent inside an `InputRequiredResult`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// Why the user should open the URL.
    pub message: String,
    /// The URL; clients MUST show it in full and ask before opening it.
    pub url: String,
    /// 2025-11-25 only: id echoed by `notifications/elicitation/complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// 2025-11-25 tasks: run as a task, kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Value>,
}

impl ElicitRequestURLParams {
    /// Asks the user to open `url`, saying why in `message`.
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> ElicitRequestURLParams {
        ElicitRequestURLParams {
            message: message.into(),
            url: url.into(),
            ..ElicitRequestURLParams::default()
        }
    }
}

setters!(ElicitRequestURLParams {
    with_meta => meta: RequestMeta,
    with_elicitation_id => elicitation_id: String,
    with_task => task: Value,
});

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ElicitAction {
    /// Submitted (form mode: with `content`; URL mode: consented to open the URL).
    Accept,
    /// Explicitly refused.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// The answer to `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// What the user did.
    pub action: ElicitAction,
    /// Form mode, on accept: the values, by field name (strings, numbers, booleans, or
    /// string arrays for multi-select fields; kept as JSON values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
}

impl ElicitResult {
    /// An answer with an action and no content.
    pub fn new(action: ElicitAction) -> ElicitResult {
        ElicitResult { meta: None, result_type: None, action, content: None }
    }

    /// An accepted form with its values.
    pub fn accept(content: JsonObject) -> ElicitResult {
        ElicitResult { content: Some(content), ..ElicitResult::new(ElicitAction::Accept) }
    }
}

setters!(ElicitResult {
    with_meta => meta: Meta,
    with_content => content: JsonObject,
});

/// Params of `notifications/elicitation/complete` (2025-11-25 only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationCompleteNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The `elicitationId` of the finished URL elicitation.
    pub elicitation_id: String,
}

impl ElicitationCompleteNotificationParams {
    /// The URL elicitation `elicitation_id` finished.
    pub fn new(elicitation_id: impl Into<String>) -> Self {
        ElicitationCompleteNotificationParams { meta: None, elicitation_id: elicitation_id.into() }
    }
}

setters!(ElicitationCompleteNotificationParams { with_meta => meta: Meta });
