//! Registering what a server exposes (tools, resources, apps, prompts, completions), before
//! serving or while it serves, and telling connected clients that a list changed.

use std::sync::Arc;

use super::resource::TemplateEntry;
use super::tool::ToolEntry;
use super::{
    AppResource, ChangeEvent, CompletionHandler, McpServer, PromptDef, ResourceDef, ToolDef,
};
use crate::Error;

impl McpServer {
    /// Registers a tool. Fails on a duplicate or invalid name, or a schema that does not compile:
    /// one over [`max_schema_depth`](Self::max_schema_depth) or
    /// [`max_schema_bytes`](Self::max_schema_bytes), one that refers to an external document
    /// (`$ref` to `http:`, `https:` or `file:`; nothing is ever fetched), or one whose `pattern`
    /// needs backtracking (backreferences, look-around: patterns run in linear time).
    pub fn tool(self, def: ToolDef) -> Result<Self, Error> {
        self.add_tool(def)?;
        Ok(self)
    }

    /// Registers several tools.
    pub fn tools(self, defs: impl IntoIterator<Item = ToolDef>) -> Result<Self, Error> {
        for def in defs {
            self.add_tool(def)?;
        }
        Ok(self)
    }

    /// Registers a tool, also while serving: clones of this server share what they expose,
    /// and connected clients are told (`notifications/tools/list_changed`, or their listen
    /// stream).
    pub fn add_tool(&self, def: ToolDef) -> Result<(), Error> {
        let name = def.tool.name.clone();
        check_tool_name(&name)?;
        // Compiling first checks the schema limits before anything else walks the schema.
        let limits = self.inner.schema_limits;
        // Compiling also finds the `x-mcp-header` arguments once, refusing invalid annotations.
        let entry = Arc::new(ToolEntry::compile(def, limits).map_err(Error::registration)?);
        self.inner.change_catalog(|c| c.tools.insert("tool", &name, entry))?;
        self.notify_tools_changed();
        Ok(())
    }

    /// Removes a tool; `false` if there was none by that name. Connected clients are told.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self.inner.change_catalog(|c| Ok(c.tools.remove(name))).unwrap_or(false);
        if removed {
            self.notify_tools_changed();
        }
        removed
    }

    /// Registers a resource, or a resource template when its URI holds `{variables}`.
    pub fn resource(self, def: ResourceDef) -> Result<Self, Error> {
        self.add_resource(def)?;
        Ok(self)
    }

    /// Registers an app's view (MCP Apps): its HTML as a `ui://` resource (see
    /// [`AppResource`]).
    pub fn app(self, app: AppResource) -> Result<Self, Error> {
        self.resource(app.into_resource()?)
    }

    /// Registers a resource or template, also while serving (clients are told).
    pub fn add_resource(&self, def: ResourceDef) -> Result<(), Error> {
        let uri = def.uri.clone();
        if uri.contains('{') {
            let entry = Arc::new(TemplateEntry::compile(def).map_err(Error::registration)?);
            self.inner.change_catalog(|c| c.templates.insert("resource template", &uri, entry))?;
        } else {
            let def = Arc::new(def);
            self.inner.change_catalog(|c| c.resources.insert("resource", &uri, def))?;
        }
        self.notify_resources_changed();
        Ok(())
    }

    /// Removes the resource or template registered under `uri`; `false` if there was none.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self
            .inner
            .change_catalog(|c| Ok(c.resources.remove(uri) || c.templates.remove(uri)))
            .unwrap_or(false);
        if removed {
            self.notify_resources_changed();
        }
        removed
    }

    /// Registers a prompt.
    pub fn prompt(self, def: PromptDef) -> Result<Self, Error> {
        self.add_prompt(def)?;
        Ok(self)
    }

    /// Registers a prompt, also while serving (clients are told).
    pub fn add_prompt(&self, def: PromptDef) -> Result<(), Error> {
        let name = def.prompt.name.clone();
        let def = Arc::new(def);
        self.inner.change_catalog(|c| c.prompts.insert("prompt", &name, def))?;
        self.notify_prompts_changed();
        Ok(())
    }

    /// Removes a prompt; `false` if there was none by that name.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self.inner.change_catalog(|c| Ok(c.prompts.remove(name))).unwrap_or(false);
        if removed {
            self.notify_prompts_changed();
        }
        removed
    }

    /// Sets the handler of `completion/complete` (and declares the `completions` capability).
    pub fn completion(mut self, handler: impl CompletionHandler) -> Self {
        self.inner_mut().completion = Some(Arc::new(handler));
        self
    }

    /// Tells every client the tool list changed (`notifications/tools/list_changed`).
    pub fn notify_tools_changed(&self) {
        self.inner.bus.publish(ChangeEvent::ToolsListChanged);
    }

    /// Tells every client the prompt list changed.
    pub fn notify_prompts_changed(&self) {
        self.inner.bus.publish(ChangeEvent::PromptsListChanged);
    }

    /// Tells every client the resource list changed.
    pub fn notify_resources_changed(&self) {
        self.inner.bus.publish(ChangeEvent::ResourcesListChanged);
    }

    /// Tells the clients watching `uri` (handshake era: `resources/subscribe`; modern era: a
    /// listen stream naming it) that its contents changed.
    pub fn notify_resource_updated(&self, uri: impl Into<String>) {
        self.inner.bus.publish(ChangeEvent::ResourceUpdated(uri.into()));
    }
}

/// Tool names (spec 2025-11-25 `server/tools`): 1 to 128 characters of `A-Z a-z 0-9 _ - .`.
fn check_tool_name(name: &str) -> Result<(), Error> {
    let valid_chars =
        name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if name.is_empty() || name.len() > 128 || !valid_chars {
        return Err(Error::registration(format!(
            "invalid tool name '{name}': use 1 to 128 characters from A-Z, a-z, 0-9, '_', '-' and '.'"
        )));
    }
    Ok(())
}
