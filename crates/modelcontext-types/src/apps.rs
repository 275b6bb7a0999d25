//! MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865, stable 2026-01-26): interactive views a
//! host renders in a sandboxed iframe.
//!
//! A server declares an app as a resource with a `ui://` URI and the MIME type
//! [`APP_MIME_TYPE`], whose `_meta.ui` ([`UiResourceMeta`]) names the origins the view may
//! reach (its CSP) and the browser permissions it asks for. A tool links to its view with
//! `_meta.ui.resourceUri` ([`ToolUiMeta`]), and may be kept from the model
//! (`visibility: ["app"]`): the host must leave such a tool out of the model's tool list,
//! while the view may still call it. A host declares support under
//! `capabilities.extensions["io.modelcontextprotocol/ui"]` with the MIME types it renders.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{ClientCapabilities, Tool};

/// The extension's identifier.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an app's HTML (`resources/read` contents and the listed resource).
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The URI scheme every app resource uses.
pub const UI_SCHEME: &str = "ui://";

/// The origins a view may reach, mapped by the host onto its Content Security Policy. Every
/// list empty (the default) is the extension's restrictive policy: no external origins.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AppCsp {
    /// Origins for fetch, XHR and WebSocket (`connect-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect_domains: Vec<String>,
    /// Origins for scripts, styles, images, fonts and media.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_domains: Vec<String>,
    /// Origins for nested iframes (`frame-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame_domains: Vec<String>,
    /// Allowed base URIs (`base-uri`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_uri_domains: Vec<String>,
}

/// Browser permissions a view asks for; the host may grant them (iframe `allow`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AppPermissions {
    /// The camera.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<Map<String, Value>>,
    /// The microphone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microphone: Option<Map<String, Value>>,
    /// Geolocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<Map<String, Value>>,
    /// Writing to the clipboard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clipboard_write: Option<Map<String, Value>>,
}

/// `_meta.ui` of an app resource (listed and read): its security and rendering settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UiResourceMeta {
    /// The origins the view may reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<AppCsp>,
    /// The permissions the view asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<AppPermissions>,
    /// A dedicated sandbox origin, in the host's own format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the host should draw a border and background around the view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
}

impl UiResourceMeta {
    /// The `ui` settings in a resource's or contents' `_meta`, if any (and well formed).
    pub fn from_meta(meta: Option<&Map<String, Value>>) -> Option<UiResourceMeta> {
        serde_json::from_value(meta?.get("ui")?.clone()).ok()
    }
}

/// Who may call a tool linked to an app.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Visibility {
    /// The model: the tool is in the agent's tool list.
    Model,
    /// The app's view, from the same server.
    App,
}

/// `_meta.ui` of a tool: the view that renders its results, and who may call it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolUiMeta {
    /// The `ui://` resource that renders the tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call the tool; absent means both the model and the app.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<Visibility>>,
}

impl ToolUiMeta {
    /// The tool's `_meta.ui` (or the deprecated flat `_meta["ui/resourceUri"]`), if any.
    pub fn of(tool: &Tool) -> Option<ToolUiMeta> {
        let meta = tool.meta.as_ref()?;
        if let Some(ui) = meta.get("ui") {
            return serde_json::from_value(ui.clone()).ok();
        }
        let uri = meta.get("ui/resourceUri")?.as_str()?;
        Some(ToolUiMeta { resource_uri: Some(uri.to_owned()), visibility: None })
    }

    /// Whether `who` may call the tool (everyone when `visibility` is absent).
    pub fn allows(&self, who: Visibility) -> bool {
        self.visibility.as_ref().is_none_or(|v| v.contains(&who))
    }
}

/// Whether the model may see `tool`: hosts must leave app-only tools out of the model's list.
pub fn visible_to_model(tool: &Tool) -> bool {
    ToolUiMeta::of(tool).is_none_or(|ui| ui.allows(Visibility::Model))
}

/// Client capabilities declaring MCP Apps, rendering [`APP_MIME_TYPE`].
pub fn apps_capabilities() -> ClientCapabilities {
    let mut settings = Map::new();
    settings.insert("mimeTypes".into(), Value::from(vec![APP_MIME_TYPE]));
    let mut extensions = Map::new();
    extensions.insert(UI_EXTENSION.into(), Value::Object(settings));
    ClientCapabilities::default().with_extensions(extensions)
}

/// Whether `capabilities` declare MCP Apps with [`APP_MIME_TYPE`] among the rendered types.
pub fn declares_apps(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .extensions
        .as_ref()
        .and_then(|e| e.get(UI_EXTENSION))
        .and_then(|ui| ui.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(APP_MIME_TYPE)))
}
