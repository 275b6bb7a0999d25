//! MCP Apps (`io.modelcontextprotocol/ui`) for hosts: the view linked to a tool, and the tools
//! the model may see.

use modelcontext_types::{
    APP_MIME_TYPE, ResourceContents, Tool, ToolUiMeta, UiResourceMeta, Visibility,
    apps_capabilities, visible_to_model,
};

use super::{Client, ClientBuilder};
use crate::Error;

/// An app's view, as a host renders it: the HTML and the settings its server asked for.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AppView {
    /// The `ui://` resource.
    pub uri: String,
    /// The HTML document.
    pub html: String,
    /// The CSP origins, permissions and rendering preferences (`_meta.ui`), if given. A host
    /// must apply the extension's restrictive CSP when there are none.
    pub ui: Option<UiResourceMeta>,
    /// Who may call the tool that linked it (`None`: the model and the view).
    pub visibility: Option<Vec<Visibility>>,
}

impl ClientBuilder {
    /// Declares MCP Apps support (`text/html;profile=mcp-app`), for a host that renders views.
    pub fn apps(mut self) -> Self {
        let declared = apps_capabilities().extensions.unwrap_or_default();
        let extensions = self.capabilities.extensions.get_or_insert_with(Default::default);
        extensions.extend(declared);
        self
    }
}

impl Client {
    /// Every tool the model may see: app-only tools (`visibility: ["app"]`) are left out, as
    /// the extension requires of hosts.
    pub async fn list_model_tools(&self) -> Result<Vec<Tool>, Error> {
        let mut tools = self.list_all_tools().await?;
        tools.retain(visible_to_model);
        Ok(tools)
    }

    /// The view linked to `tool` (`_meta.ui.resourceUri`), read with `resources/read`; `None`
    /// for a tool without one. Contents that are not the extension's HTML are an error.
    pub async fn app_for_tool(&self, tool: &Tool) -> Result<Option<AppView>, Error> {
        let Some(ui) = ToolUiMeta::of(tool) else { return Ok(None) };
        let Some(uri) = ui.resource_uri else { return Ok(None) };
        let read = self.read_resource(&uri).await?;
        let html = read.contents.into_iter().find_map(app_document);
        let Some((html, meta)) = html else {
            let message = format!("'{uri}' has no {APP_MIME_TYPE} contents");
            return Err(modelcontext_types::McpError::invalid_params(message).into());
        };
        let ui_meta = UiResourceMeta::from_meta(meta.as_ref());
        Ok(Some(AppView { uri, html, ui: ui_meta, visibility: ui.visibility }))
    }
}

/// The HTML of contents of the app MIME type (text, or a base64 blob of UTF-8), and `_meta`.
fn app_document(contents: ResourceContents) -> Option<(String, Option<modelcontext_types::Meta>)> {
    match contents {
        ResourceContents::Text(text) if text.mime_type.as_deref() == Some(APP_MIME_TYPE) => {
            Some((text.text, text.meta))
        }
        ResourceContents::Blob(blob) if blob.mime_type.as_deref() == Some(APP_MIME_TYPE) => {
            let bytes = crate::base64::decode(&blob.blob)?;
            Some((String::from_utf8(bytes).ok()?, blob.meta))
        }
        _ => None,
    }
}
