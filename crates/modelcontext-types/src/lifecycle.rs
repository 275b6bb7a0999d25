//! Who a peer is ([`Implementation`], [`Icon`]) and how a conversation starts: the handshake
//! era's `initialize` and the modern era's `server/discover`.

use serde::{Deserialize, Serialize};

use crate::{CacheScope, ClientCapabilities, Meta, RequestMeta, ResultType, ServerCapabilities};

/// The name and version of an MCP implementation (`clientInfo`, `serverInfo`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Version string.
    pub version: String,
    /// What the implementation does (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Home page (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Icons to show for it (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
}

impl Implementation {
    /// An implementation with a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Implementation {
        Implementation { name: name.into(), version: version.into(), ..Implementation::default() }
    }
}

setters!(Implementation {
    with_title => title: String,
    with_description => description: String,
    with_website_url => website_url: String,
    with_icons => icons: Vec<Icon>,
});

/// An icon for an implementation, tool, prompt or resource (2025-11-25+).
///
/// Renderers treat icons as untrusted: only `https:` and `data:` sources (spec `basic/index.mdx`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Icon {
    /// An `https:` URL or a `data:` URI.
    pub src: String,
    /// MIME type, when the source does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes the icon suits, e.g. `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The background theme the icon is drawn for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon from a source URL.
    pub fn new(src: impl Into<String>) -> Icon {
        Icon { src: src.into(), ..Icon::default() }
    }
}

setters!(Icon {
    with_mime_type => mime_type: String,
    with_sizes => sizes: Vec<String>,
    with_theme => theme: IconTheme,
});

/// The theme an [`Icon`] is drawn for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum IconTheme {
    /// For light backgrounds.
    Light,
    /// For dark backgrounds.
    Dark,
}

/// Params of `initialize` (handshake era only; removed in 2026-07-28).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The newest revision the client supports.
    pub protocol_version: String,
    /// What the client supports.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
}

impl InitializeRequestParams {
    /// The client `client_info` offers `protocol_version` with `capabilities`.
    pub fn new(
        protocol_version: impl Into<String>,
        capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> InitializeRequestParams {
        InitializeRequestParams {
            meta: None,
            protocol_version: protocol_version.into(),
            capabilities,
            client_info,
        }
    }
}

setters!(InitializeRequestParams { with_meta => meta: RequestMeta });

/// The answer to `initialize`: the negotiated revision and what the server supports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (never sent by handshake-era servers; kept for symmetry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The client's revision when the server supports it, else the server's newest
    /// (spec `basic/lifecycle.mdx`, "Version Negotiation").
    pub protocol_version: String,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// How to use the server, for the model's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

impl InitializeResult {
    /// The server `server_info` agrees on `protocol_version` and offers `capabilities`.
    pub fn new(
        protocol_version: impl Into<String>,
        capabilities: ServerCapabilities,
        server_info: Implementation,
    ) -> InitializeResult {
        InitializeResult {
            protocol_version: protocol_version.into(),
            capabilities,
            server_info,
            ..InitializeResult::default()
        }
    }
}

setters!(InitializeResult {
    with_meta => meta: Meta,
    with_instructions => instructions: String,
});

/// The answer to `server/discover` (2026-07-28; servers MUST implement it). Cacheable.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DiscoverResult {
    /// Result metadata; SHOULD carry [`crate::SERVER_INFO_META_KEY`].
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Every revision the server speaks.
    pub supported_versions: Vec<String>,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// How to use the server, for the model's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long the result may be cached, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

impl DiscoverResult {
    /// The server speaks `supported_versions` and offers `capabilities`.
    pub fn new(supported_versions: Vec<String>, capabilities: ServerCapabilities) -> Self {
        DiscoverResult { supported_versions, capabilities, ..DiscoverResult::default() }
    }
}

setters!(DiscoverResult {
    with_meta => meta: Meta,
    with_instructions => instructions: String,
    with_ttl_ms => ttl_ms: u64,
    with_cache_scope => cache_scope: CacheScope,
});
