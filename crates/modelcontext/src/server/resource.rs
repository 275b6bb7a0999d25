//! Resources: data a client reads by URI, from a fixed URI or an RFC 6570 template.
//!
//! Resources have only the protocol path for failure: a read returns contents or a JSON-RPC
//! error. [`ResourceError::not_found`] is -32602 with the URI in `data` (2026-07-28's rule for
//! a missing resource); any other error is -32603 with the URI in `data`; an [`McpError`] is
//! sent verbatim.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use modelcontext_types::uri_template::UriTemplate;
use modelcontext_types::{
    BlobResourceContents, INTERNAL_ERROR, INVALID_PARAMS, McpError, Resource, ResourceContents,
    ResourceTemplate, TextResourceContents,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::context::Context;
use super::output::ToolFailure;
use super::schema::schema_for;
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

/// A function that can serve a resource: `Fn() -> Fut`, `Fn(P) -> Fut` or
/// `Fn(Context, P) -> Fut`, where `P: Deserialize + JsonSchema` has one field per template
/// variable (string values are converted for integer, number and boolean fields).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource handler",
    label = "expected an async fn or closure taking (), (Params) or (Context, Params)",
    note = "`Params: serde::Deserialize + schemars::JsonSchema` has one field per template variable"
)]
pub trait ResourceHandler<P, M>: Clone + Send + Sync + 'static {
    /// The names and JSON types of the parameters, for checking them against the template.
    fn params_schema(&self) -> Map<String, Value>;
    /// Reads the resource.
    fn read(
        &self,
        cx: Context,
        uri: &str,
        params: Map<String, Value>,
        mime: Option<&str>,
    ) -> BoxFuture<Result<Vec<ResourceContents>, ToolFailure>>;
}

impl<F, Fut, R> ResourceHandler<(), fn() -> R> for F
where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoResourceResult,
{
    fn params_schema(&self) -> Map<String, Value> {
        Map::new()
    }

    fn read(
        &self,
        _cx: Context,
        uri: &str,
        _params: Map<String, Value>,
        mime: Option<&str>,
    ) -> BoxFuture<Result<Vec<ResourceContents>, ToolFailure>> {
        let future = self();
        let (uri, mime) = (uri.to_owned(), mime.map(str::to_owned));
        Box::pin(async move { future.await.into_resource_result(&uri, mime.as_deref()) })
    }
}

macro_rules! resource_handler {
    ($marker:ty, [$($cx:ident)?]) => {
        impl<F, Fut, P, R> ResourceHandler<P, $marker> for F
        where
            F: Fn($($cx,)? P) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            P: DeserializeOwned + JsonSchema + Send + 'static,
            R: IntoResourceResult,
        {
            fn params_schema(&self) -> Map<String, Value> {
                schema_for::<P>()
            }

            #[allow(unused_variables)]
            fn read(&self, cx: Context, uri: &str, params: Map<String, Value>, mime: Option<&str>) -> BoxFuture<Result<Vec<ResourceContents>, ToolFailure>> {
                let params = match P::deserialize(Value::Object(params)) {
                    Ok(params) => params,
                    Err(err) => {
                        let error = McpError::invalid_params(format!("Invalid resource URI {uri}: {err}"));
                        return Box::pin(async move { Err(ToolFailure::Protocol(error)) });
                    }
                };
                let future = self($(resource_handler!(@cx $cx cx),)? params);
                let (uri, mime) = (uri.to_owned(), mime.map(str::to_owned));
                Box::pin(async move { future.await.into_resource_result(&uri, mime.as_deref()) })
            }
        }
    };
    (@cx $cx:ident $value:ident) => { $value };
}

resource_handler!(fn(P) -> R, []);
resource_handler!(fn(Context, P) -> R, [Context]);

trait ErasedResource: Send + Sync {
    fn read(
        &self,
        cx: Context,
        uri: &str,
        params: Map<String, Value>,
        mime: Option<&str>,
    ) -> BoxFuture<Result<Vec<ResourceContents>, ToolFailure>>;
}

struct Erased<H, P, M>(H, std::marker::PhantomData<fn(P, M)>);

impl<H: ResourceHandler<P, M>, P: 'static, M: 'static> ErasedResource for Erased<H, P, M> {
    fn read(
        &self,
        cx: Context,
        uri: &str,
        params: Map<String, Value>,
        mime: Option<&str>,
    ) -> BoxFuture<Result<Vec<ResourceContents>, ToolFailure>> {
        self.0.read(cx, uri, params, mime)
    }
}

/// A resource or resource template and the handler that reads it.
#[derive(Clone)]
pub struct ResourceDef {
    pub(crate) uri: String,
    pub(crate) name: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    params_schema: Map<String, Value>,
    handler: Arc<dyn ErasedResource>,
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
            params_schema: handler.params_schema(),
            handler: Arc::new(Erased(handler, std::marker::PhantomData)),
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

    fn display_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| self.uri.clone())
    }

    pub(crate) fn to_resource(&self) -> Resource {
        let mut resource = Resource::new(self.uri.clone(), self.display_name());
        resource.title = self.title.clone();
        resource.description = self.description.clone();
        resource.mime_type = self.mime_type.clone();
        resource
    }

    pub(crate) fn to_template(&self) -> ResourceTemplate {
        let mut template = ResourceTemplate::new(self.uri.clone(), self.display_name());
        template.title = self.title.clone();
        template.description = self.description.clone();
        template.mime_type = self.mime_type.clone();
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

/// Reads `def` for `uri` and maps a failure onto its JSON-RPC error.
pub(crate) fn read(
    def: &ResourceDef,
    cx: Context,
    uri: &str,
    params: Map<String, Value>,
    withhold_messages: bool,
) -> BoxFuture<Result<Vec<ResourceContents>, McpError>> {
    let future = AssertUnwindSafe(def.handler.read(cx, uri, params, def.mime_type.as_deref()))
        .catch_unwind();
    let uri = uri.to_owned();
    Box::pin(async move {
        let failure = match future.await {
            Ok(Ok(contents)) => return Ok(contents),
            Ok(Err(failure)) => failure,
            Err(_) => ToolFailure::Crash("panicked".into()),
        };
        Err(resource_error(failure, &uri, withhold_messages))
    })
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
