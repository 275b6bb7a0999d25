//! MCP Apps (`io.modelcontextprotocol/ui`) on the server: an app's HTML as a `ui://`
//! resource, and tools linked to it.
//!
//! ```
//! use modelcontext::server::{AppResource, NoArgs};
//! use modelcontext::{McpServer, ToolDef};
//!
//! let dashboard = AppResource::new("ui://weather/dashboard", "Weather", "<!DOCTYPE html>...")
//!     .connect_domains(["https://api.example.com"])
//!     .prefers_border(true);
//! let weather = ToolDef::new("weather", |_: NoArgs| async { "Sunny, 22 °C" })
//!     .ui("ui://weather/dashboard");
//! let refresh = ToolDef::new("refresh", |_: NoArgs| async { "refreshed" })
//!     .ui("ui://weather/dashboard")
//!     .app_only();
//! let server = McpServer::new("weather").app(dashboard)?.tool(weather)?.tool(refresh)?;
//! # Ok::<(), modelcontext::Error>(())
//! ```

use std::sync::Arc;

use modelcontext_types::{
    APP_MIME_TYPE, AppCsp, AppPermissions, ResourceContents, ToolUiMeta, UI_SCHEME, UiResourceMeta,
    Visibility,
};
use serde_json::{Map, Value};

use super::{ResourceDef, ToolDef};
use crate::Error;

/// An app's view: HTML served as a `ui://` resource with the extension's MIME type, and the
/// CSP origins and permissions the host should give it (in `_meta.ui`, both where the
/// resource is listed and where it is read). Register it with [`McpServer::app`](super::McpServer::app).
#[derive(Debug, Clone)]
pub struct AppResource {
    uri: String,
    name: String,
    description: Option<String>,
    html: Arc<str>,
    ui: UiResourceMeta,
}

impl AppResource {
    /// The view at `uri` (a `ui://` URI), listed as `name`, whose document is `html`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>, html: impl Into<String>) -> Self {
        AppResource {
            uri: uri.into(),
            name: name.into(),
            description: None,
            html: Arc::from(html.into()),
            ui: UiResourceMeta::default(),
        }
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Origins the view may fetch from or open sockets to (`connect-src`).
    pub fn connect_domains<S: Into<String>>(
        mut self,
        origins: impl IntoIterator<Item = S>,
    ) -> Self {
        self.csp().connect_domains.extend(origins.into_iter().map(Into::into));
        self
    }

    /// Origins of the scripts, styles, images, fonts and media the view loads.
    pub fn resource_domains<S: Into<String>>(
        mut self,
        origins: impl IntoIterator<Item = S>,
    ) -> Self {
        self.csp().resource_domains.extend(origins.into_iter().map(Into::into));
        self
    }

    /// Origins the view may embed in nested iframes (`frame-src`).
    pub fn frame_domains<S: Into<String>>(mut self, origins: impl IntoIterator<Item = S>) -> Self {
        self.csp().frame_domains.extend(origins.into_iter().map(Into::into));
        self
    }

    /// Base URIs the document may use (`base-uri`).
    pub fn base_uri_domains<S: Into<String>>(
        mut self,
        origins: impl IntoIterator<Item = S>,
    ) -> Self {
        self.csp().base_uri_domains.extend(origins.into_iter().map(Into::into));
        self
    }

    /// The browser permissions the view asks for (the host may grant them).
    pub fn permissions(mut self, permissions: AppPermissions) -> Self {
        self.ui.permissions = Some(permissions);
        self
    }

    /// A dedicated sandbox origin, in the format the host documents.
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.ui.domain = Some(domain.into());
        self
    }

    /// Whether the host should draw a border and background around the view.
    pub fn prefers_border(mut self, border: bool) -> Self {
        self.ui.prefers_border = Some(border);
        self
    }

    fn csp(&mut self) -> &mut AppCsp {
        self.ui.csp.get_or_insert_with(AppCsp::default)
    }

    /// The resource definition: the HTML with the MIME type and `_meta.ui`. A URI that is not
    /// `ui://` is refused (the extension requires the scheme).
    pub fn into_resource(self) -> Result<ResourceDef, Error> {
        if !self.uri.starts_with(UI_SCHEME) || self.uri.len() == UI_SCHEME.len() {
            return Err(Error::registration(format!(
                "app resource '{}': an app's URI must start with {UI_SCHEME}",
                self.uri
            )));
        }
        let meta = ui_meta(&self.ui);
        let mut contents = modelcontext_types::TextResourceContents::new(&*self.uri, &*self.html);
        contents.mime_type = Some(APP_MIME_TYPE.to_owned());
        contents.meta = Some(meta.clone());
        let contents = ResourceContents::Text(contents);
        let read = move || std::future::ready(contents.clone());
        let mut def = ResourceDef::new(self.uri, read).name(self.name).mime_type(APP_MIME_TYPE);
        if let Some(description) = self.description {
            def = def.description(description);
        }
        Ok(def.meta(meta))
    }
}

/// `{"ui": <settings>}`.
fn ui_meta(settings: &impl serde::Serialize) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert("ui".into(), serde_json::to_value(settings).unwrap_or_default());
    meta
}

impl ToolDef {
    /// Links the tool to the app view at `uri` (`_meta.ui.resourceUri`): a host that renders
    /// MCP Apps shows the tool's results in that view. Register the view with
    /// [`McpServer::app`](super::McpServer::app).
    pub fn ui(self, uri: impl Into<String>) -> Self {
        let uri = uri.into();
        self.change_ui(|ui| ui.resource_uri = Some(uri))
    }

    /// Who may call the tool (`_meta.ui.visibility`). A host leaves a tool without
    /// [`Visibility::Model`] out of the model's tool list.
    pub fn visibility(self, visibility: impl IntoIterator<Item = Visibility>) -> Self {
        let visibility: Vec<Visibility> = visibility.into_iter().collect();
        self.change_ui(|ui| ui.visibility = Some(visibility))
    }

    /// Only the app's view may call the tool, not the model (`visibility: ["app"]`): for
    /// buttons and forms of the view.
    pub fn app_only(self) -> Self {
        self.visibility([Visibility::App])
    }

    fn change_ui(mut self, change: impl FnOnce(&mut ToolUiMeta)) -> Self {
        let mut ui = ToolUiMeta::of(&self.tool).unwrap_or_default();
        change(&mut ui);
        let meta = self.tool.meta.get_or_insert_with(Map::new);
        // The deprecated flat key would disagree with the nested one: drop it.
        meta.remove("ui/resourceUri");
        meta.insert("ui".into(), serde_json::to_value(&ui).unwrap_or_default());
        self
    }
}
