//! Sampling: the server asks the client's LLM for a completion (`sampling/createMessage`).
//!
//! Deprecated in 2026-07-28, where it travels inside an `InputRequiredResult` instead of as a
//! server-to-client request.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    AudioContent, ContentBlock, ImageContent, JsonObject, Meta, RequestMeta, ResultType, Role,
    TextContent, Tool,
};

/// The model asks to call a tool (2025-11-25+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "tool_use", rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolUseContent {
    /// Id the matching `tool_result` refers to.
    pub id: String,
    /// The tool.
    pub name: String,
    /// The arguments.
    pub input: JsonObject,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ToolUseContent {
    /// The model calls the tool `name` with `input`; `id` names the call.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: JsonObject) -> Self {
        ToolUseContent { id: id.into(), name: name.into(), input, meta: None }
    }
}

setters!(ToolUseContent { with_meta => meta: Meta });

/// The result of a `tool_use`, sent back to the model (2025-11-25+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "tool_result", rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolResultContent {
    /// The `id` of the `tool_use` this answers.
    pub tool_use_id: String,
    /// Unstructured result.
    pub content: Vec<ContentBlock>,
    /// Structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ToolResultContent {
    /// The result of the call `tool_use_id`.
    pub fn new(tool_use_id: impl Into<String>, content: Vec<ContentBlock>) -> Self {
        ToolResultContent {
            tool_use_id: tool_use_id.into(),
            content,
            ..ToolResultContent::default()
        }
    }
}

setters!(ToolResultContent {
    with_structured_content => structured_content: Value,
    with_is_error => is_error: bool,
    with_meta => meta: Meta,
});

/// A content block of a sampling message, told apart by `"type"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum SamplingMessageContentBlock {
    /// `"text"`.
    #[serde(rename = "text")]
    Text(TextContent),
    /// `"image"`.
    #[serde(rename = "image")]
    Image(ImageContent),
    /// `"audio"`.
    #[serde(rename = "audio")]
    Audio(AudioContent),
    /// `"tool_use"`.
    #[serde(rename = "tool_use")]
    ToolUse(ToolUseContent),
    /// `"tool_result"`.
    #[serde(rename = "tool_result")]
    ToolResult(ToolResultContent),
}

// The blocks write their own `"type"`; a derived, tagged `Serialize` would write it twice.
impl Serialize for SamplingMessageContentBlock {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SamplingMessageContentBlock::Text(c) => c.serialize(s),
            SamplingMessageContentBlock::Image(c) => c.serialize(s),
            SamplingMessageContentBlock::Audio(c) => c.serialize(s),
            SamplingMessageContentBlock::ToolUse(c) => c.serialize(s),
            SamplingMessageContentBlock::ToolResult(c) => c.serialize(s),
        }
    }
}

impl SamplingMessageContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingMessageContentBlock::Text(TextContent::new(text))
    }
}

/// The content of a sampling message: one block, or (2025-11-25+) a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SamplingContent {
    /// A single block, as every revision allows.
    Single(SamplingMessageContentBlock),
    /// Several blocks (2025-11-25+).
    Multiple(Vec<SamplingMessageContentBlock>),
}

impl SamplingContent {
    /// The blocks, whichever way they were sent.
    pub fn blocks(&self) -> &[SamplingMessageContentBlock] {
        match self {
            SamplingContent::Single(block) => std::slice::from_ref(block),
            SamplingContent::Multiple(blocks) => blocks,
        }
    }
}

impl From<SamplingMessageContentBlock> for SamplingContent {
    fn from(block: SamplingMessageContentBlock) -> Self {
        SamplingContent::Single(block)
    }
}

/// One message of a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said. A user message with a `tool_result` MUST hold only tool results.
    pub content: SamplingContent,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SamplingMessage {
    /// A message.
    pub fn new(role: Role, content: impl Into<SamplingContent>) -> SamplingMessage {
        SamplingMessage { role, content: content.into(), meta: None }
    }

    /// A user message with one text block.
    pub fn user_text(text: impl Into<String>) -> SamplingMessage {
        SamplingMessage::new(Role::User, SamplingMessageContentBlock::text(text))
    }
}

setters!(SamplingMessage { with_meta => meta: Meta });

/// A hint naming a model (a substring match, e.g. `"claude-3-sonnet"`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelHint {
    /// A model name or part of one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

setters!(ModelHint { with_name => name: String });

/// What the server cares about when the client picks a model; priorities are 0 to 1.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelPreferences {
    /// Model hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::num::opt_f64"
    )]
    pub cost_priority: Option<f64>,
    /// How much speed matters.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::num::opt_f64"
    )]
    pub speed_priority: Option<f64>,
    /// How much capability matters.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::num::opt_f64"
    )]
    pub intelligence_priority: Option<f64>,
}

setters!(ModelPreferences {
    with_hints => hints: Vec<ModelHint>,
    with_cost_priority => cost_priority: f64,
    with_speed_priority => speed_priority: f64,
    with_intelligence_priority => intelligence_priority: f64,
});

/// Which servers' context to include (`thisServer` / `allServers` are deprecated and need
/// the `sampling.context` capability).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum IncludeContext {
    /// No context.
    None,
    /// Context from this server.
    ThisServer,
    /// Context from every connected server.
    AllServers,
}

/// How the model may use the offered tools (2025-11-25+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolChoice {
    /// The mode; absent means `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

setters!(ToolChoice { with_mode => mode: ToolChoiceMode });

/// [`ToolChoice`] modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ToolChoiceMode {
    /// The model decides.
    Auto,
    /// The model must call a tool.
    Required,
    /// The model must not call a tool.
    None,
}

/// Params of `sampling/createMessage`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageRequestParams {
    /// Request metadata (handshake era; absent inside an `InputRequiredResult`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model selection preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt the client may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Context to include.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::num::opt_f64"
    )]
    pub temperature: Option<f64>,
    /// The most tokens to sample; the client MUST respect it.
    pub max_tokens: u64,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Tools the model may call; only with the `sampling.tools` capability (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use them (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// 2025-11-25 tasks: run as a task, kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Value>,
}

impl CreateMessageRequestParams {
    /// Samples at most `max_tokens` tokens to continue `messages`.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> CreateMessageRequestParams {
        CreateMessageRequestParams { messages, max_tokens, ..CreateMessageRequestParams::default() }
    }
}

setters!(CreateMessageRequestParams {
    with_meta => meta: RequestMeta,
    with_model_preferences => model_preferences: ModelPreferences,
    with_system_prompt => system_prompt: String,
    with_include_context => include_context: IncludeContext,
    with_temperature => temperature: f64,
    with_stop_sequences => stop_sequences: Vec<String>,
    with_metadata => metadata: Value,
    with_tools => tools: Vec<Tool>,
    with_tool_choice => tool_choice: ToolChoice,
    with_task => task: Value,
});

/// The answer to `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Who speaks (the assistant).
    pub role: Role,
    /// What the model said.
    pub content: SamplingContent,
    /// The model that answered.
    pub model: String,
    /// Why sampling stopped: `endTurn`, `stopSequence`, `maxTokens`, `toolUse` or other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl CreateMessageResult {
    /// `role` (the assistant) said `content`, through `model`.
    pub fn new(role: Role, content: impl Into<SamplingContent>, model: impl Into<String>) -> Self {
        CreateMessageResult {
            meta: None,
            result_type: None,
            role,
            content: content.into(),
            model: model.into(),
            stop_reason: None,
        }
    }
}

setters!(CreateMessageResult {
    with_meta => meta: Meta,
    with_stop_reason => stop_reason: String,
});
