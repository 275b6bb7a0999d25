//! Tools: functions the model can call through the server.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    CacheScope, ContentBlock, Icon, InputResponses, JsonObject, Meta, RequestMeta, ResultType,
};

/// A tool the server offers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Tool {
    /// Unique name; SHOULD be 1-128 characters of `[A-Za-z0-9_.-]`.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments: an object schema with `"type": "object"`, never null.
    /// Unknown keywords are kept verbatim (spec 2025-11-25 `server/tools.mdx`).
    pub input_schema: JsonObject,
    /// JSON Schema of `structuredContent` (2025-06-18+; any schema since 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints; untrusted unless the server is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// 2025-11-25 tasks: `{"taskSupport": ...}`, kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<Value>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Tool {
    /// A tool with a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Tool {
        Tool { name: name.into(), input_schema, ..Tool::default() }
    }
}

setters!(Tool {
    with_title => title: String,
    with_description => description: String,
    with_output_schema => output_schema: Value,
    with_annotations => annotations: ToolAnnotations,
    with_icons => icons: Vec<Icon>,
    with_execution => execution: Value,
    with_meta => meta: Meta,
});

/// Hints about a tool's behaviour. All default as the spec says when absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy data (default true; meaningful only when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it twice with the same arguments has no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

setters!(ToolAnnotations {
    with_title => title: String,
    with_read_only_hint => read_only_hint: bool,
    with_destructive_hint => destructive_hint: bool,
    with_idempotent_hint => idempotent_hint: bool,
    with_open_world_hint => open_world_hint: bool,
});

/// The answer to `tools/list`. Cacheable, paginated.
///
/// The tools are [`Tool`]s; a server that keeps each tool's JSON from registration sends a
/// `ListToolsResult<&RawValue>` instead (`serde_json::value::RawValue`), the same wire shape
/// without serializing every tool again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListToolsResult<T = Tool> {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// This page of tools, in a deterministic order.
    pub tools: Vec<T>,
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

// By hand: a derived `Default` would ask `T: Default`, which `&RawValue` is not.
impl<T> Default for ListToolsResult<T> {
    fn default() -> Self {
        ListToolsResult {
            meta: None,
            result_type: None,
            tools: Vec::new(),
            next_cursor: None,
            ttl_ms: None,
            cache_scope: None,
        }
    }
}

impl<T> ListToolsResult<T> {
    /// A page of tools.
    #[inline]
    pub fn new(tools: Vec<T>) -> ListToolsResult<T> {
        ListToolsResult { tools, ..ListToolsResult::default() }
    }
}

/// Params of `tools/call`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The tool to call.
    pub name: String,
    /// The arguments, checked against the tool's `inputSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
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
    /// 2025-11-25 tasks: run as a task (`{"ttl": ...}`), kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Value>,
}

impl CallToolRequestParams {
    /// A call of `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Option<JsonObject>) -> CallToolRequestParams {
        CallToolRequestParams { name: name.into(), arguments, ..CallToolRequestParams::default() }
    }
}

setters!(CallToolRequestParams {
    with_meta => meta: RequestMeta,
    with_arguments => arguments: JsonObject,
    with_input_responses => input_responses: InputResponses,
    with_request_state => request_state: String,
    with_task => task: Value,
});

/// The answer to `tools/call`.
///
/// A failure the model should see (bad arguments, a failed API call) is a result with
/// `isError: true`, not a JSON-RPC error (spec 2025-11-25 `server/tools.mdx`, "Error Handling").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Unstructured result, for the model.
    pub content: Vec<ContentBlock>,
    /// Structured result, conforming to the tool's `outputSchema` (2025-06-18+; an object
    /// until 2025-11-25, any JSON value since 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed. An `Option` so that an explicit `"isError": false` survives a
    /// round trip; absent means false (use [`CallToolResult::is_error`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

impl CallToolResult {
    /// A result with this content (`isError` absent: a success).
    #[inline]
    pub fn new(content: Vec<ContentBlock>) -> CallToolResult {
        CallToolResult { content, ..CallToolResult::default() }
    }

    /// A successful result; the same as [`CallToolResult::new`], named for the reader.
    #[inline]
    pub fn success(content: Vec<ContentBlock>) -> CallToolResult {
        CallToolResult::new(content)
    }

    /// A failed result (`isError: true`) the model can read and react to.
    #[inline]
    pub fn error(content: Vec<ContentBlock>) -> CallToolResult {
        CallToolResult::new(content).with_is_error(true)
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(text)])
    }

    /// Whether the call failed (`isError` absent counts as false).
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }
}

setters!(CallToolResult {
    with_meta => meta: Meta,
    with_structured_content => structured_content: Value,
    with_is_error => is_error: bool,
});
