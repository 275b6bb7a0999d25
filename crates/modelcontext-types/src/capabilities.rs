//! What each side can do: [`ClientCapabilities`] and [`ServerCapabilities`].
//!
//! Sub-objects whose content is open (`logging: {}`, `experimental`, `extensions`, ...) stay
//! JSON maps, and every capability struct keeps unknown members in `extra`, so a capability
//! object survives a round trip whatever revision or extension wrote it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Meta;

/// An open JSON object, as capability sub-objects like `logging: {}` are.
pub type JsonObject = serde_json::Map<String, Value>;

/// What a client supports. Handshake era: sent once in `initialize`; modern era: sent on every
/// request in `_meta["io.modelcontextprotocol/clientCapabilities"]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// Non-standard capabilities, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Extensions the client supports, by extension id (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// The client can list roots (deprecated in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// The client can sample from an LLM (deprecated in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// The client can elicit input from the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// 2025-11-25 experimental tasks support, kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Value>,
    /// Unknown members, kept verbatim.
    #[serde(flatten)]
    pub extra: Meta,
}

setters!(ClientCapabilities {
    with_experimental => experimental: JsonObject,
    with_extensions => extensions: JsonObject,
    with_roots => roots: RootsCapability,
    with_sampling => sampling: SamplingCapability,
    with_elicitation => elicitation: ElicitationCapability,
    with_tasks => tasks: Value,
});

/// `roots` client capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RootsCapability {
    /// Handshake era: the client sends `notifications/roots/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Unknown members, kept verbatim.
    #[serde(flatten)]
    pub extra: Meta,
}

setters!(RootsCapability { with_list_changed => list_changed: bool });

/// `sampling` client capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SamplingCapability {
    /// Present: the client honours `includeContext` `thisServer` / `allServers` (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// Present: the client supports `tools` and `toolChoice` in `sampling/createMessage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
    /// Unknown members, kept verbatim.
    #[serde(flatten)]
    pub extra: Meta,
}

setters!(SamplingCapability {
    with_context => context: JsonObject,
    with_tools => tools: JsonObject,
});

/// `elicitation` client capability. An empty object means form mode only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationCapability {
    /// Present: the client supports form-mode elicitation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// Present: the client supports URL-mode elicitation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
    /// Unknown members, kept verbatim.
    #[serde(flatten)]
    pub extra: Meta,
}

impl ElicitationCapability {
    /// Whether form mode is supported: declared, or implied by an object naming no mode
    /// (spec `client/elicitation.mdx`: `{}` is equivalent to `{"form": {}}`).
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// Whether URL mode is supported.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

setters!(ElicitationCapability {
    with_form => form: JsonObject,
    with_url => url: JsonObject,
});

/// What a server supports, from `initialize` (handshake era) or `server/discover` (modern).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ServerCapabilities {
    /// Non-standard capabilities, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Extensions the server supports, by extension id (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// The server emits `notifications/message` (deprecated in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// The server answers `completion/complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// The server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// The server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// The server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// 2025-11-25 experimental tasks support, kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Value>,
    /// Unknown members, kept verbatim.
    #[serde(flatten)]
    pub extra: Meta,
}

setters!(ServerCapabilities {
    with_experimental => experimental: JsonObject,
    with_extensions => extensions: JsonObject,
    with_logging => logging: JsonObject,
    with_completions => completions: JsonObject,
    with_prompts => prompts: PromptsCapability,
    with_resources => resources: ResourcesCapability,
    with_tools => tools: ToolsCapability,
    with_tasks => tasks: Value,
});

/// `prompts` server capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptsCapability {
    /// The server notifies when the prompt list changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Unknown members, kept verbatim.
    #[serde(flatten)]
    pub extra: Meta,
}

setters!(PromptsCapability { with_list_changed => list_changed: bool });

/// `resources` server capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourcesCapability {
    /// The server supports subscribing to updates of single resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// The server notifies when the resource list changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Unknown members, kept verbatim.
    #[serde(flatten)]
    pub extra: Meta,
}

setters!(ResourcesCapability {
    with_subscribe => subscribe: bool,
    with_list_changed => list_changed: bool,
});

/// `tools` server capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolsCapability {
    /// The server notifies when the tool list changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Unknown members, kept verbatim.
    #[serde(flatten)]
    pub extra: Meta,
}

setters!(ToolsCapability { with_list_changed => list_changed: bool });
