//! Resources: data a client reads by URI, from a fixed URI or an RFC 6570 template.
//!
//! Resources have only the protocol path for failure: a read returns contents or a JSON-RPC
//! error. [`ResourceError::not_found`] is -32602 with the URI in `data` (2026-07-28's rule for
//! a missing resource); any other error is -32603 with the URI in `data`; an [`McpError`] is
//! sent verbatim.

use std::fmt;
use std::sync::Arc;

use modelcontext_types::uri_template::UriTemplate;
use modelcontext_types::{
    Annotations, BlobResourceContents, ClientRequest, INTERNAL_ERROR, INVALID_PARAMS, Icon,
    McpError, Meta, ReadResourceRequestParams, ReadResourceResult, Resource, ResourceContents,
    ResourceTemplate, TextResourceContents, method,
};
use serde_json::{Map, Value, json};

use super::ServerInner;
use super::context::Context;
use super::handler::{
    Arguments, ErasedHandler, Handler, Invocation, Kind, KindOutput, Located, RequestParts, Route,
    erase,
};
use super::middleware::{Middleware, Stack};
use super::mrtr::Binding;
use super::output::ToolFailure;
use crate::engine::BoxFuture;

/// A resource failure, mapped onto the JSON-RPC error the spec assigns.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceError {
    not_found: bool,
    message: String,
}

impl ResourceError {
    /// The resource does not exist: -32602 with `data: {"uri": ..}`.
    pub fn not_found(message: impl Into<String>) -> ResourceError {
        ResourceError { not_found: true, message: message.into() }
    }

    /// Reading failed: -32603 with `data: {"uri": ..}`.
    pub fn new(message: impl Into<String>) -> ResourceError {
        ResourceError { not_found: false, message: message.into() }
    }
}

impl fmt::Display for ResourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ResourceError {}

/// A value a resource handler can return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a resource",
    label = "not resource contents",
    note = "return String (text), Vec<u8> (binary), ResourceContents or Vec<ResourceContents>, or a Result of one of those"
)]
pub trait IntoResourceContents: Send + 'static {
    /// Converts into contents for `uri`; `mime_type` is the resource's declared type.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents>;
}

impl IntoResourceContents for String {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        let contents = TextResourceContents::new(uri, self);
        vec![ResourceContents::Text(contents.with_mime_type(mime_type.unwrap_or("text/plain")))]
    }
}

impl IntoResourceContents for &'static str {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        self.to_owned().into_contents(uri, mime_type)
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        let contents = BlobResourceContents::new(uri, crate::base64::encode(&self));
        let mime_type = mime_type.unwrap_or("application/octet-stream");
        vec![ResourceContents::Blob(contents.with_mime_type(mime_type))]
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_contents(self, _uri: &str, _mime_type: Option<&str>) -> Vec<ResourceContents> {
        vec![self]
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(self, _uri: &str, _mime_type: Option<&str>) -> Vec<ResourceContents> {
        self
    }
}

/// What a resource handler's future yields.
pub trait IntoResourceResult: Send + 'static {
    /// The contents, or the classified error.
    fn into_resource_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolFailure>;
}

impl<T: IntoResourceContents> IntoResourceResult for T {
    fn into_resource_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolFailure> {
        Ok(self.into_contents(uri, mime_type))
    }
}

impl<T: IntoResourceContents, E: fmt::Display + Send + 'static> IntoResourceResult
    for Result<T, E>
{
    fn into_resource_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolFailure> {
        match self {
            Ok(value) => Ok(value.into_contents(uri, mime_type)),
            Err(err) => Err(classify_resource_error(err, uri)),
        }
    }
}

fn classify_resource_error<E: fmt::Display + Send + 'static>(err: E, uri: &str) -> ToolFailure {
    let any: &dyn std::any::Any = &err;
    match any.downcast_ref::<ResourceError>() {
        Some(e) if e.not_found => ToolFailure::Protocol(
            McpError::new(INVALID_PARAMS, e.message.clone()).with_data(json!({ "uri": uri })),
        ),
        Some(e) => ToolFailure::Model(e.message.clone()),
        None => ToolFailure::classify(err),
    }
}

/// A function that can serve a resource: an async fn or closure of the form `Fn() -> Fut`,
/// `Fn(P) -> Fut` or `Fn(Context, P) -> Fut`, where `P: Deserialize + JsonSchema` has one field
/// per template variable (string values are converted for integer, number and boolean fields)
/// and the future's output implements [`IntoResourceResult`]. Implemented for every such
/// function, and for nothing else.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource handler",
    label = "expected an async fn or closure taking (), (Params) or (Context, Params)",
    note = "`Params: serde::Deserialize + schemars::JsonSchema` has one field per template variable"
)]
pub trait ResourceHandler<P, M>: Handler<P, M, Output: IntoResourceResult> {}

impl<H, P, M> ResourceHandler<P, M> for H where H: Handler<P, M, Output: IntoResourceResult> {}

/// A resource or resource template and the handler that reads it.
#[derive(Clone)]
pub struct ResourceDef {
    pub(crate) uri: String,
    pub(crate) name: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    icons: Option<Vec<Icon>>,
    annotations: Option<Annotations>,
    size: Option<u64>,
    pub(crate) meta: Option<Meta>,
    /// The caching hint of its reads ([`ResourceDef::cache_hint`]).
    cache_hint: Option<super::CacheHint>,
    /// Per-variable completers of a template, by variable name.
    pub(crate) completers: super::completion::Completers,
    params_schema: Map<String, Value>,
    handler: Arc<dyn ErasedHandler<ResourceKind>>,
    /// What runs around this resource's reads only ([`ResourceDef::middleware`]).
    middleware: Stack,
}

impl fmt::Debug for ResourceDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceDef").field("uri", &self.uri).finish_non_exhaustive()
    }
}

impl ResourceDef {
    /// A resource at `uri`, or a template when `uri` holds `{variables}`.
    pub fn new<P: 'static, M: 'static>(
        uri: impl Into<String>,
        handler: impl ResourceHandler<P, M>,
    ) -> ResourceDef {
        ResourceDef {
            uri: uri.into(),
            name: None,
            title: None,
            description: None,
            mime_type: None,
            icons: None,
            annotations: None,
            size: None,
            meta: None,
            completers: Default::default(),
            cache_hint: None,
            params_schema: handler.args_schema().unwrap_or_default(),
            handler: erase(handler),
            middleware: Stack::default(),
        }
    }

    /// A resource advertised as `resource` whose reads another server answers; `handler`
    /// gets the URI read.
    pub(super) fn forwarding_resource(
        resource: Resource,
        handler: Arc<dyn ErasedHandler<ResourceKind>>,
    ) -> ResourceDef {
        ResourceDef {
            uri: resource.uri,
            name: Some(resource.name),
            title: resource.title,
            description: resource.description,
            mime_type: resource.mime_type,
            icons: resource.icons,
            annotations: resource.annotations,
            size: resource.size,
            meta: resource.meta,
            completers: Default::default(),
            cache_hint: None,
            params_schema: Map::new(),
            handler,
            middleware: Stack::default(),
        }
    }

    /// A template advertised as `template` whose reads another server answers; `handler`
    /// gets the URI read. Its variables are strings, as the URI carries them.
    pub(super) fn forwarding_template(
        template: ResourceTemplate,
        variables: &[&str],
        handler: Arc<dyn ErasedHandler<ResourceKind>>,
    ) -> ResourceDef {
        let properties: Map<String, Value> =
            variables.iter().map(|name| ((*name).to_owned(), json!({"type": "string"}))).collect();
        ResourceDef {
            uri: template.uri_template,
            name: Some(template.name),
            title: template.title,
            description: template.description,
            mime_type: template.mime_type,
            icons: template.icons,
            annotations: template.annotations,
            size: None,
            meta: template.meta,
            completers: Default::default(),
            cache_hint: None,
            params_schema: Map::from_iter([
                ("type".to_owned(), json!("object")),
                ("properties".to_owned(), Value::Object(properties)),
            ]),
            handler,
            middleware: Stack::default(),
        }
    }

    /// Sets the name shown in lists (defaults to the URI).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets a human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type of the contents (`text/plain` for text when unset).
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the icons clients may show beside the resource or template (2025-11-25+; only
    /// `https:` and `data:` sources are safe for clients to render).
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }

    /// Sets the annotations: audience, priority, last modification.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Sets the size of the raw contents in bytes, for a fixed resource (templates have none).
    pub fn size(mut self, bytes: u64) -> Self {
        self.size = Some(bytes);
        self
    }

    /// Completes the template variable `name` with `completer` (`completion/complete` with a
    /// `ref/resource` naming this template); declares the `completions` capability.
    pub fn complete(
        mut self,
        name: impl Into<String>,
        completer: impl super::completion::ArgumentCompleter,
    ) -> Self {
        self.completers.insert(name.into(), Arc::new(completer));
        self
    }

    /// Sets the caching hint of this resource's modern `resources/read` results, instead of
    /// the server's (see [`McpServer::cache_hint`](super::McpServer::cache_hint)).
    pub fn cache_hint(mut self, hint: super::CacheHint) -> Self {
        self.cache_hint = Some(hint);
        self
    }

    /// Sets the resource's or template's `_meta`.
    pub fn meta(mut self, meta: Meta) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Runs `middleware` around every read of this resource (of every URI of a template) only, inside the server's
    /// middleware (see [`middleware`](super::middleware) for the order); the first added is
    /// outermost.
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware = self.middleware.with(middleware);
        self
    }

    fn display_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| self.uri.clone())
    }

    pub(crate) fn to_resource(&self) -> Resource {
        let mut resource = Resource::new(self.uri.clone(), self.display_name());
        resource.title = self.title.clone();
        resource.description = self.description.clone();
        resource.mime_type = self.mime_type.clone();
        resource.size = self.size;
        resource.icons = self.icons.clone();
        resource.annotations = self.annotations.clone();
        resource.meta = self.meta.clone();
        resource
    }

    pub(crate) fn to_template(&self) -> ResourceTemplate {
        let mut template = ResourceTemplate::new(self.uri.clone(), self.display_name());
        template.title = self.title.clone();
        template.description = self.description.clone();
        template.mime_type = self.mime_type.clone();
        template.icons = self.icons.clone();
        template.annotations = self.annotations.clone();
        template.meta = self.meta.clone();
        template
    }
}

/// A registered template with its parsed form.
pub(crate) struct TemplateEntry {
    pub def: Arc<ResourceDef>,
    template: UriTemplate,
}

impl TemplateEntry {
    /// Parses the template and checks that its variables are exactly the handler's parameters.
    pub(crate) fn compile(def: ResourceDef) -> Result<TemplateEntry, String> {
        let template = UriTemplate::parse(&def.uri)
            .map_err(|e| format!("resource template '{}': {e}", def.uri))?;
        let params: Vec<&str> = match def.params_schema.get("properties") {
            Some(Value::Object(props)) => props.keys().map(String::as_str).collect(),
            _ => Vec::new(),
        };
        template
            .check_variables(&params)
            .map_err(|e| format!("resource template '{}': {e}", def.uri))?;
        Ok(TemplateEntry { def: Arc::new(def), template })
    }

    /// The handler's arguments when `uri` matches, with values typed as the schema says.
    pub(crate) fn match_uri(&self, uri: &str) -> Option<Map<String, Value>> {
        let values = self.template.matches(uri)?;
        let props = self.def.params_schema.get("properties").and_then(Value::as_object);
        Some(
            values
                .into_iter()
                .map(|(name, value)| {
                    let typed = typed_value(props.and_then(|p| p.get(&name)), value);
                    (name, typed)
                })
                .collect(),
        )
    }
}

/// Template values are strings; a parameter declared as integer, number or boolean gets the
/// parsed value (left as a string if it does not parse, so deserialization reports it).
fn typed_value(schema: Option<&Value>, value: String) -> Value {
    let declared = schema.and_then(|s| s.get("type")).and_then(Value::as_str);
    match declared {
        Some("integer" | "number" | "boolean") => {
            serde_json::from_str(&value).unwrap_or(Value::String(value))
        }
        _ => Value::String(value),
    }
}

/// Resources read on a handler's behalf: here, with the reads they share, so that the context
/// (which every handler form takes) needs nothing of resources.
impl Context {
    /// Reads a resource through this server's own registry (fixed resources, then templates),
    /// as `resources/read` would, on behalf of this request. The resource's own middleware
    /// does not run: it wraps requests from the client.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<ResourceContents>, McpError> {
        let server = self.server();
        let Some((def, params)) = server.resolve_resource(uri) else {
            return Err(super::unknown_resource(uri));
        };
        let withhold = server.withhold_error_messages;
        read(def, self.clone(), uri, params, withhold).await
    }
}

/// Reads `def` for `uri` ([`Context::read_resource`]).
fn read(
    def: Arc<ResourceDef>,
    cx: Context,
    uri: &str,
    params: Map<String, Value>,
    withhold: bool,
) -> BoxFuture<Result<Vec<ResourceContents>, McpError>> {
    let handler = Arc::clone(&def.handler);
    let target = ResourceTarget { def, uri: uri.to_owned() };
    handler.run_to_value(Invocation { cx, arguments: Arguments::new(params), target, withhold })
}

/// `resources/read`.
pub(super) enum ResourceKind {}

/// The resource a read found, and the URI read (a template's resources share one definition).
pub(super) struct ResourceTarget {
    def: Arc<ResourceDef>,
    uri: String,
}

impl ResourceTarget {
    /// The URI read.
    pub(super) fn uri(&self) -> &str {
        &self.uri
    }
}

impl Kind for ResourceKind {
    type Params = ReadResourceRequestParams;
    type Target = ResourceTarget;
    type Value = Vec<ResourceContents>;
    type Wire = ReadResourceResult;

    /// The arguments are the template's variables, as the URI binds them.
    fn locate(
        server: &ServerInner,
        params: ReadResourceRequestParams,
        item_middleware: bool,
    ) -> Result<Route<Self>, McpError> {
        let Some((def, variables)) = server.resolve_resource(&params.uri) else {
            return Err(super::unknown_resource(&params.uri));
        };
        if let Some(stack) = def.middleware.to_run(item_middleware) {
            return Ok(Route::Middleware(stack, ClientRequest::ReadResource(params)));
        }
        Ok(Route::Handler(Located {
            handler: Arc::clone(&def.handler),
            target: ResourceTarget { def, uri: params.uri },
            arguments: Arguments::new(variables),
            parts: RequestParts {
                responses: params.input_responses,
                state: params.request_state,
                meta: params.meta,
            },
        }))
    }

    /// Bound to the URI, which holds the arguments.
    fn binding(target: &ResourceTarget, _: &mut Arguments) -> Binding {
        Binding::new(method::RESOURCES_READ, &target.uri, Arc::new(Value::Object(Map::new())))
    }

    fn refuse(_: &ResourceTarget, _: &Arguments) -> Option<Result<ReadResourceResult, McpError>> {
        None
    }

    fn invalid_arguments(target: &ResourceTarget, error: serde_json::Error) -> ToolFailure {
        let message = format!("Invalid resource URI {}: {error}", target.uri);
        ToolFailure::Protocol(McpError::invalid_params(message))
    }

    fn settle(
        target: &ResourceTarget,
        outcome: Result<Vec<ResourceContents>, ToolFailure>,
        withhold: bool,
    ) -> Result<Vec<ResourceContents>, McpError> {
        outcome.map_err(|failure| resource_error(failure, &target.uri, withhold))
    }

    fn into_wire(contents: Vec<ResourceContents>) -> ReadResourceResult {
        ReadResourceResult::new(contents)
    }

    fn cache_hint(
        target: &ResourceTarget,
        hints: &super::cache::CacheHints,
    ) -> Option<super::CacheHint> {
        Some(target.def.cache_hint.unwrap_or_else(|| hints.get(super::Cacheable::Reads)))
    }
}

impl<R: IntoResourceResult> KindOutput<ResourceKind> for R {
    fn into_value(self, target: &ResourceTarget) -> Result<Vec<ResourceContents>, ToolFailure> {
        self.into_resource_result(&target.uri, target.def.mime_type.as_deref())
    }
}

fn resource_error(failure: ToolFailure, uri: &str, withhold_messages: bool) -> McpError {
    let data = json!({ "uri": uri });
    match failure {
        ToolFailure::Protocol(error) => error,
        ToolFailure::Model(message) => McpError::new(INTERNAL_ERROR, message).with_data(data),
        ToolFailure::Ordinary(message) if !withhold_messages => {
            McpError::new(INTERNAL_ERROR, message).with_data(data)
        }
        ToolFailure::Ordinary(message) | ToolFailure::Crash(message) => {
            tracing::error!(uri, error = %message, "resource read failed");
            McpError::new(INTERNAL_ERROR, format!("Error reading resource {uri}")).with_data(data)
        }
    }
}
