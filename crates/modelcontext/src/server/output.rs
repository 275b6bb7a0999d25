//! How a tool's return value becomes a `CallToolResult`, and how its error is classified.
//!
//! | returned | result |
//! |---|---|
//! | `String`, `&'static str` | one text block |
//! | integers, floats, `bool` | text plus `structuredContent: {"result": v}`, with an output schema |
//! | `Json<T>` (`T: Serialize + JsonSchema`) | `structuredContent: T`, its schema, and the JSON as text |
//! | from a `#[tool]`, any other `T: Serialize + JsonSchema` | the same as `Json<T>` (the macro wraps it) |
//! | `()` | no content |
//! | `ContentBlock`, `Vec<ContentBlock>` | passed through |
//! | `CallToolResult` | taken as is |
//! | `Err(McpError)` | the whole `tools/call` fails with that JSON-RPC error, verbatim |
//! | `Err(ToolError)` | `isError: true`, `Error executing tool <name>: <message>`, always shown |
//! | `Err(e)`, any other `e: Display` | the same, unless the server withholds ordinary messages |
//! | a panic | `isError: true`, `Error executing tool <name>`, message logged, not sent |
//!
//! A non-object schema (a list, say) is wrapped as `{"result": ..}`, since the handshake era
//! allows only objects in `structuredContent`. A tool with an `outputSchema` (derived, or set
//! with [`ToolDef::output_schema`](super::ToolDef::output_schema)) has every successful result
//! checked against it; one that breaks it reaches the model as `isError: true`, `Error
//! executing tool <name>`, with the details logged.

use std::any::Any;
use std::fmt;

use modelcontext_types::{CallToolResult, ContentBlock, McpError};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// A failure meant for the model: its message is always sent, even when the server withholds
/// the messages of ordinary errors. Return it as `Err(ToolError::new("..."))`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
}

impl ToolError {
    /// A tool error with a message for the model.
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError { message: message.into() }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

/// Wraps a `Serialize + JsonSchema` value as structured output: the tool advertises `T`'s
/// schema as its `outputSchema`, and the result carries the value as `structuredContent`
/// plus its JSON text for clients that only read `content`.
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);

/// Why a handler did not produce a value. Built by the SDK from the handler's error; only
/// public because it appears in the conversion traits' signatures.
#[doc(hidden)]
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolFailure {
    /// `ToolError`: shown to the model whatever the server options.
    Model(String),
    /// Any other error: shown unless the server withholds ordinary messages.
    Ordinary(String),
    /// `McpError`: fails the request itself.
    Protocol(McpError),
    /// A panic, or output that broke the tool's own schema: message withheld.
    Crash(String),
}

impl ToolFailure {
    /// Sorts an error by its concrete type. `E` is only known to be `Display`, so the
    /// distinguished types are found by downcasting, including inside a boxed error.
    pub(crate) fn classify<E: fmt::Display + Send + 'static>(err: E) -> ToolFailure {
        let any: &dyn Any = &err;
        if let Some(e) = any.downcast_ref::<McpError>() {
            return ToolFailure::Protocol(e.clone());
        }
        if let Some(e) = any.downcast_ref::<ToolError>() {
            return ToolFailure::Model(e.message.clone());
        }
        if let Some(boxed) = any.downcast_ref::<Box<dyn std::error::Error + Send + Sync>>() {
            if let Some(e) = boxed.downcast_ref::<McpError>() {
                return ToolFailure::Protocol(e.clone());
            }
            if let Some(e) = boxed.downcast_ref::<ToolError>() {
                return ToolFailure::Model(e.message.clone());
            }
        }
        if let Some(e) = any.downcast_ref::<crate::Error>() {
            // Its `Display` is one layer ("I/O error"); the model needs the causes too.
            return ToolFailure::Ordinary(format!("{e:#}"));
        }
        ToolFailure::Ordinary(err.to_string())
    }
}

/// A value a tool can return. See the table in this module's docs.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "not a tool output",
    note = "return String, a number, bool, (), Json<T> (T: Serialize + JsonSchema), ContentBlock, Vec<ContentBlock> or CallToolResult, or a Result of one of those"
)]
pub trait IntoToolOutput: Send + 'static {
    /// The `outputSchema` this output type implies, if it has one.
    fn output_schema() -> Option<Map<String, Value>> {
        None
    }

    /// Converts the value into the result sent to the client.
    fn into_call_result(self) -> Result<CallToolResult, ToolFailure>;
}

/// What a tool function returns: an output, or a `Result` of one.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid tool return type",
    label = "tool functions must return a tool output or Result<output, E>",
    note = "outputs: String, numbers, bool, (), Json<T>, ContentBlock, Vec<ContentBlock>, CallToolResult; E: any std::fmt::Display + Send + 'static (McpError fails the request, ToolError always reaches the model)"
)]
pub trait IntoToolResult: Send + 'static {
    /// The output type's schema.
    fn output_schema() -> Option<Map<String, Value>>;
    /// Converts the value or classifies the error.
    fn into_tool_result(self) -> Result<CallToolResult, ToolFailure>;
}

impl<T: IntoToolOutput> IntoToolResult for T {
    fn output_schema() -> Option<Map<String, Value>> {
        T::output_schema()
    }

    fn into_tool_result(self) -> Result<CallToolResult, ToolFailure> {
        self.into_call_result()
    }
}

impl<T: IntoToolOutput, E: fmt::Display + Send + 'static> IntoToolResult for Result<T, E> {
    fn output_schema() -> Option<Map<String, Value>> {
        T::output_schema()
    }

    fn into_tool_result(self) -> Result<CallToolResult, ToolFailure> {
        self.map_err(ToolFailure::classify)?.into_call_result()
    }
}

impl IntoToolOutput for String {
    fn into_call_result(self) -> Result<CallToolResult, ToolFailure> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolOutput for &'static str {
    fn into_call_result(self) -> Result<CallToolResult, ToolFailure> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolOutput for () {
    fn into_call_result(self) -> Result<CallToolResult, ToolFailure> {
        Ok(CallToolResult::default())
    }
}

impl IntoToolOutput for ContentBlock {
    fn into_call_result(self) -> Result<CallToolResult, ToolFailure> {
        Ok(CallToolResult::new(vec![self]))
    }
}

impl IntoToolOutput for Vec<ContentBlock> {
    fn into_call_result(self) -> Result<CallToolResult, ToolFailure> {
        Ok(CallToolResult::new(self))
    }
}

impl IntoToolOutput for CallToolResult {
    fn into_call_result(self) -> Result<CallToolResult, ToolFailure> {
        Ok(self)
    }
}

/// Scalars are wrapped as `{"result": v}`: `structuredContent` of the handshake era must be
/// an object, and one shape for both eras keeps clients simple.
macro_rules! scalar_output {
    ($json_type:literal: $($ty:ty),*) => {$(
        impl IntoToolOutput for $ty {
            fn output_schema() -> Option<Map<String, Value>> {
                wrapped_schema(json!({ "type": $json_type }))
            }

            fn into_call_result(self) -> Result<CallToolResult, ToolFailure> {
                Ok(CallToolResult::text(self.to_string())
                    .with_structured_content(json!({ "result": self })))
            }
        }
    )*};
}

scalar_output!("integer": i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);
scalar_output!("number": f32, f64);
scalar_output!("boolean": bool);

fn wrapped_schema(inner: Value) -> Option<Map<String, Value>> {
    let schema = json!({
        "type": "object",
        "properties": { "result": inner },
        "required": ["result"],
    });
    schema.as_object().cloned()
}

impl<T: Serialize + JsonSchema + Send + 'static> IntoToolOutput for Json<T> {
    fn output_schema() -> Option<Map<String, Value>> {
        let schema = crate::server::schema::schema_for::<T>();
        // A non-object schema (a list, say) is wrapped like a scalar, so the handshake era's
        // object-only `structuredContent` holds too.
        if schema.get("type") == Some(&Value::from("object")) {
            Some(schema)
        } else {
            wrapped_schema(Value::Object(schema))
        }
    }

    fn into_call_result(self) -> Result<CallToolResult, ToolFailure> {
        let value = serde_json::to_value(&self.0)
            .map_err(|e| ToolFailure::Crash(format!("output did not serialize: {e}")))?;
        let structured = match <Self as IntoToolOutput>::output_schema() {
            Some(schema)
                if schema.get("required") == Some(&json!(["result"])) && !value.is_object() =>
            {
                json!({ "result": value })
            }
            _ => value.clone(),
        };
        let text = serde_json::to_string_pretty(&value).unwrap_or_default();
        Ok(CallToolResult::text(text).with_structured_content(structured))
    }
}
