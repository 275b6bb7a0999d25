//! Prompts: message templates the user can pick.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{CacheScope, ContentBlock, Icon, InputResponses, Meta, RequestMeta, ResultType, Role};

/// A prompt the server offers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Prompt {
    /// Unique name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Prompt {
    /// A prompt with a name.
    pub fn new(name: impl Into<String>) -> Prompt {
        Prompt { name: name.into(), ..Prompt::default() }
    }
}

setters!(Prompt {
    with_title => title: String,
    with_description => description: String,
    with_arguments => arguments: Vec<PromptArgument>,
    with_icons => icons: Vec<Icon>,
    with_meta => meta: Meta,
});

/// An argument a prompt takes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptArgument {
    /// Name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given; a missing required argument is -32602.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

impl PromptArgument {
    /// An optional argument called `name`.
    pub fn new(name: impl Into<String>) -> PromptArgument {
        PromptArgument { name: name.into(), ..PromptArgument::default() }
    }
}

setters!(PromptArgument {
    with_title => title: String,
    with_description => description: String,
    with_required => required: bool,
});

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

impl PromptMessage {
    /// A message.
    pub fn new(role: Role, content: impl Into<ContentBlock>) -> PromptMessage {
        PromptMessage { role, content: content.into() }
    }

    /// A user message with one text block.
    pub fn user_text(text: impl Into<String>) -> PromptMessage {
        PromptMessage { role: Role::User, content: ContentBlock::text(text) }
    }

    /// An assistant message with one text block.
    pub fn assistant_text(text: impl Into<String>) -> PromptMessage {
        PromptMessage { role: Role::Assistant, content: ContentBlock::text(text) }
    }
}

/// The answer to `prompts/list`. Cacheable, paginated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListPromptsResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// This page of prompts.
    pub prompts: Vec<Prompt>,
    /// The cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long the result may be cached, in milliseconds (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the result; the same on every page (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

impl ListPromptsResult {
    /// A page of prompts.
    #[inline]
    pub fn new(prompts: Vec<Prompt>) -> ListPromptsResult {
        ListPromptsResult { prompts, ..ListPromptsResult::default() }
    }
}

/// Params of `prompts/get`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetPromptRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The prompt to render.
    pub name: String,
    /// Argument values, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// MRTR retry: the answers to the previous `inputRequests`, by key (2026-07-28+). An
    /// entry that is no answer of any kind is dropped when parsing, not refused: servers
    /// ignore what they do not recognize (SEP-2322).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::mrtr::recognized_input_responses"
    )]
    pub input_responses: Option<InputResponses>,
    /// MRTR retry: the previous `requestState`, echoed byte for byte (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl GetPromptRequestParams {
    /// Renders the prompt `name`, with no arguments.
    pub fn new(name: impl Into<String>) -> GetPromptRequestParams {
        GetPromptRequestParams { name: name.into(), ..GetPromptRequestParams::default() }
    }
}

setters!(GetPromptRequestParams {
    with_meta => meta: RequestMeta,
    with_arguments => arguments: BTreeMap<String, String>,
    with_input_responses => input_responses: InputResponses,
    with_request_state => request_state: String,
});

/// The answer to `prompts/get`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetPromptResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// What the rendered prompt is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The rendered messages.
    pub messages: Vec<PromptMessage>,
}

impl GetPromptResult {
    /// The rendered messages.
    #[inline]
    pub fn new(messages: Vec<PromptMessage>) -> GetPromptResult {
        GetPromptResult { messages, ..GetPromptResult::default() }
    }
}

setters!(GetPromptResult {
    with_meta => meta: Meta,
    with_description => description: String,
});
