//! How an upstream's tools, prompts and resources are shown through a composed server, and
//! how a call to what is shown maps back to the upstream.

use std::collections::HashMap;
use std::sync::Arc;

use modelcontext_types::{Prompt, Resource, ResourceTemplate, Tool};
use serde_json::{Map, Value};

/// Rules for showing one upstream; empty shows it as it is.
///
/// The rules, applied in this order to each tool:
///
/// 1. **Filter** by the upstream's name: with an allow list, only names it matches; never a
///    name the deny list matches. A pattern is a name, or a name with `*` standing for any
///    run of characters (`get_*`).
/// 2. **Rename**, then **namespace**: the name shown is `<prefix>_<name>`.
/// 3. **Describe**: a replacement description.
/// 4. **Arguments**: hidden behind a fixed value (gone from the schema; the value is always
///    sent), given a default (optional in the schema; the value is sent when the caller
///    leaves it out), or renamed (the schema shows the new name; the upstream gets the old).
/// 5. **Code**: [`Transform::map_tools`] sees the tool as shown and may change or drop it.
///
/// Prompts are filtered, renamed, namespaced and described by the same rules. Resource and
/// template URIs get the prefix as their first segment, after the scheme: `file:///a.txt`
/// under `docs` is `file://docs//a.txt`, `ui://books/view` is `ui://docs/books/view`, and a
/// URI without `//` (`urn:x`) becomes `urn:docs/x`. A tool's app (`_meta.ui.resourceUri`)
/// follows its resource. What a client lists is exactly what it may call: a filtered tool is
/// unknown (-32602) like any name the server does not have.
#[derive(Clone, Default)]
pub struct Transform {
    prefix: Option<String>,
    renames: HashMap<String, String>,
    allow: Option<Vec<String>>,
    deny: Vec<String>,
    descriptions: HashMap<String, String>,
    arguments: HashMap<String, Vec<ArgumentRule>>,
    scopes: HashMap<String, Vec<String>>,
    map_tools: Option<Arc<dyn Fn(Tool) -> Option<Tool> + Send + Sync>>,
}

impl std::fmt::Debug for Transform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transform")
            .field("prefix", &self.prefix)
            .field("renames", &self.renames)
            .field("allow", &self.allow)
            .field("deny", &self.deny)
            .finish_non_exhaustive()
    }
}

/// What happens to one argument of one tool.
#[derive(Clone, Debug)]
pub(super) enum ArgumentRule {
    Fixed { name: String, value: Value },
    Default { name: String, value: Value },
    Renamed { upstream: String, shown: String },
}

/// How a call to a shown tool reaches the upstream.
#[derive(Clone, Debug)]
pub(super) struct ToolRoute {
    pub upstream_name: String,
    rules: Vec<ArgumentRule>,
}

impl Transform {
    /// No rules: everything as the upstream serves it.
    pub fn new() -> Transform {
        Transform::default()
    }

    /// Shows tools and prompts as `<prefix>_<name>` and puts `prefix` in resource URIs.
    pub fn namespace(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Shows the tool or prompt the upstream calls `upstream` as `shown` (before the prefix).
    pub fn rename(mut self, upstream: impl Into<String>, shown: impl Into<String>) -> Self {
        self.renames.insert(upstream.into(), shown.into());
        self
    }

    /// Shows only the tools and prompts whose upstream names match one of `patterns`.
    pub fn allow<S: Into<String>>(mut self, patterns: impl IntoIterator<Item = S>) -> Self {
        self.allow.get_or_insert_with(Vec::new).extend(patterns.into_iter().map(Into::into));
        self
    }

    /// Hides the tools and prompts whose upstream names match one of `patterns`.
    pub fn deny<S: Into<String>>(mut self, patterns: impl IntoIterator<Item = S>) -> Self {
        self.deny.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// Replaces the description of the tool or prompt the upstream calls `upstream`.
    pub fn describe(mut self, upstream: impl Into<String>, description: impl Into<String>) -> Self {
        self.descriptions.insert(upstream.into(), description.into());
        self
    }

    /// Hides `argument` of `tool` (upstream names): the caller does not see it, and the
    /// upstream always gets `value`.
    pub fn hide_argument(
        self,
        tool: impl Into<String>,
        argument: impl Into<String>,
        value: impl Into<Value>,
    ) -> Self {
        let rule = ArgumentRule::Fixed { name: argument.into(), value: value.into() };
        self.argument_rule(tool.into(), rule)
    }

    /// Makes `argument` of `tool` optional: the upstream gets `value` when the caller leaves
    /// it out. The schema shows `value` as its `default`.
    pub fn default_argument(
        self,
        tool: impl Into<String>,
        argument: impl Into<String>,
        value: impl Into<Value>,
    ) -> Self {
        let rule = ArgumentRule::Default { name: argument.into(), value: value.into() };
        self.argument_rule(tool.into(), rule)
    }

    /// Shows `argument` of `tool` (upstream names) as `shown`.
    pub fn rename_argument(
        self,
        tool: impl Into<String>,
        argument: impl Into<String>,
        shown: impl Into<String>,
    ) -> Self {
        let rule = ArgumentRule::Renamed { upstream: argument.into(), shown: shown.into() };
        self.argument_rule(tool.into(), rule)
    }

    /// OAuth scopes a caller needs for `tool` (upstream name), on top of the endpoint's
    /// (see [`ToolDef::required_scopes`](crate::ToolDef::required_scopes)): a caller without
    /// them is refused its calls (HTTP 403 `insufficient_scope`) and does not see the tool
    /// in `tools/list` (with the `auth-server` feature and a resource server in front).
    pub fn require_scopes<S: Into<String>>(
        mut self,
        tool: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes.insert(tool.into(), scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Runs `map` on each tool as the other rules show it: return it changed, or `None` to
    /// hide it. The upstream still gets the calls under its own names.
    pub fn map_tools(mut self, map: impl Fn(Tool) -> Option<Tool> + Send + Sync + 'static) -> Self {
        self.map_tools = Some(Arc::new(map));
        self
    }

    fn argument_rule(mut self, tool: String, rule: ArgumentRule) -> Self {
        self.arguments.entry(tool).or_default().push(rule);
        self
    }

    fn shows(&self, upstream_name: &str) -> bool {
        let allowed = match &self.allow {
            Some(patterns) => patterns.iter().any(|p| matches_pattern(p, upstream_name)),
            None => true,
        };
        allowed && !self.deny.iter().any(|p| matches_pattern(p, upstream_name))
    }

    fn shown_name(&self, upstream_name: &str) -> String {
        let name = self.renames.get(upstream_name).map_or(upstream_name, String::as_str);
        match &self.prefix {
            Some(prefix) => format!("{prefix}_{name}"),
            None => name.to_owned(),
        }
    }

    /// The tool as shown and how its calls reach the upstream; `None` when it is hidden.
    pub(super) fn tool(&self, mut tool: Tool) -> Option<(Tool, ToolRoute, Vec<String>)> {
        let upstream_name = tool.name.clone();
        if !self.shows(&upstream_name) {
            return None;
        }
        tool.name = self.shown_name(&upstream_name);
        if let Some(description) = self.descriptions.get(&upstream_name) {
            tool.description = Some(description.clone());
        }
        let rules = self.arguments.get(&upstream_name).cloned().unwrap_or_default();
        for rule in &rules {
            rule.show_in(&mut tool.input_schema);
        }
        if let Some(prefix) = &self.prefix {
            prefix_app_uri(prefix, &mut tool);
        }
        let tool = match &self.map_tools {
            Some(map) => map(tool)?,
            None => tool,
        };
        let scopes = self.scopes.get(&upstream_name).cloned().unwrap_or_default();
        Some((tool, ToolRoute { upstream_name, rules }, scopes))
    }

    /// The prompt as shown, with its upstream name; `None` when it is hidden.
    pub(super) fn prompt(&self, mut prompt: Prompt) -> Option<(Prompt, String)> {
        let upstream_name = prompt.name.clone();
        if !self.shows(&upstream_name) {
            return None;
        }
        prompt.name = self.shown_name(&upstream_name);
        if let Some(description) = self.descriptions.get(&upstream_name) {
            prompt.description = Some(description.clone());
        }
        Some((prompt, upstream_name))
    }

    /// The resource as shown.
    pub(super) fn resource(&self, mut resource: Resource) -> Resource {
        resource.uri = self.shown_uri(&resource.uri);
        resource
    }

    /// The template as shown.
    pub(super) fn template(&self, mut template: ResourceTemplate) -> ResourceTemplate {
        template.uri_template = self.shown_uri(&template.uri_template);
        template
    }

    /// A URI as shown (the rule is in [`Transform`]'s docs).
    pub(super) fn shown_uri(&self, upstream_uri: &str) -> String {
        match &self.prefix {
            Some(prefix) => prefixed_uri(prefix, upstream_uri),
            None => upstream_uri.to_owned(),
        }
    }

    /// The upstream's URI for a URI as shown; `None` when it is not one this transform shows.
    pub(super) fn upstream_uri(&self, shown_uri: &str) -> Option<String> {
        match &self.prefix {
            Some(prefix) => unprefixed_uri(prefix, shown_uri),
            None => Some(shown_uri.to_owned()),
        }
    }
}

impl ArgumentRule {
    /// Changes the input schema to show this rule.
    fn show_in(&self, schema: &mut Map<String, Value>) {
        match self {
            ArgumentRule::Fixed { name, .. } => {
                properties(schema).map(|p| p.remove(name));
                set_required(schema, name, None);
            }
            ArgumentRule::Default { name, value } => {
                if let Some(Value::Object(property)) =
                    properties(schema).and_then(|p| p.get_mut(name))
                {
                    property.insert("default".into(), value.clone());
                }
                set_required(schema, name, None);
            }
            ArgumentRule::Renamed { upstream, shown } => {
                if let Some(properties) = properties(schema) {
                    if let Some(property) = properties.remove(upstream) {
                        properties.insert(shown.clone(), property);
                    }
                }
                set_required(schema, upstream, Some(shown));
            }
        }
    }

    /// Changes the caller's arguments into the upstream's.
    fn apply(&self, arguments: &mut Map<String, Value>) {
        match self {
            ArgumentRule::Fixed { name, value } => {
                arguments.insert(name.clone(), value.clone());
            }
            ArgumentRule::Default { name, value } => {
                arguments.entry(name.clone()).or_insert_with(|| value.clone());
            }
            ArgumentRule::Renamed { upstream, shown } => {
                if let Some(value) = arguments.remove(shown) {
                    arguments.insert(upstream.clone(), value);
                }
            }
        }
    }
}

impl ToolRoute {
    /// The arguments the upstream gets for the caller's.
    pub(super) fn upstream_arguments(
        &self,
        mut arguments: Map<String, Value>,
    ) -> Map<String, Value> {
        for rule in &self.rules {
            rule.apply(&mut arguments);
        }
        arguments
    }
}

fn properties(schema: &mut Map<String, Value>) -> Option<&mut Map<String, Value>> {
    schema.get_mut("properties").and_then(Value::as_object_mut)
}

/// Removes `name` from `required`, putting `replacement` in its place when given.
fn set_required(schema: &mut Map<String, Value>, name: &str, replacement: Option<&String>) {
    let Some(Value::Array(required)) = schema.get_mut("required") else { return };
    let Some(at) = required.iter().position(|r| r.as_str() == Some(name)) else { return };
    match replacement {
        Some(shown) => required[at] = Value::String(shown.clone()),
        None => {
            required.remove(at);
        }
    }
}

/// A tool's app view URI (`_meta.ui.resourceUri`) follows its resource's prefix.
fn prefix_app_uri(prefix: &str, tool: &mut Tool) {
    let uri = tool
        .meta
        .as_mut()
        .and_then(|meta| meta.get_mut("ui"))
        .and_then(|ui| ui.get_mut("resourceUri"));
    if let Some(Value::String(uri)) = uri {
        *uri = prefixed_uri(prefix, uri);
    }
}

fn prefixed_uri(prefix: &str, uri: &str) -> String {
    if let Some((scheme, rest)) = uri.split_once("://") {
        format!("{scheme}://{prefix}/{rest}")
    } else if let Some((scheme, rest)) = uri.split_once(':') {
        format!("{scheme}:{prefix}/{rest}")
    } else {
        format!("{prefix}/{uri}")
    }
}

fn unprefixed_uri(prefix: &str, uri: &str) -> Option<String> {
    let strip = |rest: &str| rest.strip_prefix(prefix)?.strip_prefix('/').map(str::to_owned);
    if let Some((scheme, rest)) = uri.split_once("://") {
        Some(format!("{scheme}://{}", strip(rest)?))
    } else if let Some((scheme, rest)) = uri.split_once(':') {
        Some(format!("{scheme}:{}", strip(rest)?))
    } else {
        strip(uri)
    }
}

/// `pattern` with `*` standing for any run of characters.
fn matches_pattern(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests;
