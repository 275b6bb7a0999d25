//! Hidden API used by the expansions of `#[tool]`, `#[tools]`, `#[resource]` and `#[prompt]`.
//! Not covered by semver: nothing here is meant to be named by hand.
//!
//! Two things live here:
//!
//! - Re-exports of `serde` and `serde_json`, so the generated arguments structs derive through
//!   `modelcontext` (`#[serde(crate = "::modelcontext::__private::serde")]`) and users need not
//!   depend on those crates themselves. (`schemars` is public: [`crate::schemars`].)
//! - Assertions. The macros call `assert_tool_argument::<T>()` and friends with the span of
//!   each parameter and return type, so a type that does not fit is reported where the user
//!   wrote it, with a message saying what it must implement, instead of as an unsatisfied
//!   bound deep inside `ToolDef::new`. Each assertion is an empty function whose bound is a
//!   trait carrying `#[diagnostic::on_unimplemented]`.

use serde::de::DeserializeOwned;

use crate::server::{IntoPromptResult, IntoResourceResult, IntoToolResult};

pub use serde;
pub use serde_json;

/// A type a tool parameter may have.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument",
    label = "must implement `serde::Deserialize` and `schemars::JsonSchema`",
    note = "tool arguments are decoded from JSON and advertised as a JSON Schema: add `#[derive(serde::Deserialize, schemars::JsonSchema)]` to your type",
    note = "argument types must also be owned (`String`, not `&str`) and `Send`"
)]
pub trait ToolArgument {}

impl<T: DeserializeOwned + schemars::JsonSchema + Send + 'static> ToolArgument for T {}

/// A type a resource template parameter may have.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a resource template parameter",
    label = "must implement `serde::Deserialize` and `schemars::JsonSchema`",
    note = "template variables are strings; use `String`, or a number or `bool` type to have them converted"
)]
pub trait ResourceParam {}

impl<T: DeserializeOwned + schemars::JsonSchema + Send + 'static> ResourceParam for T {}

/// A type a resource function may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid resource return type",
    label = "resource functions must return contents or `Result<contents, E>`",
    note = "contents: String (text), Vec<u8> (binary), ResourceContents or Vec<ResourceContents>; E: any std::fmt::Display + Send + 'static (`ResourceError::not_found` for a missing resource)"
)]
pub trait ResourceResult {}

impl<T: IntoResourceResult> ResourceResult for T {}

/// A type a prompt function may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid prompt return type",
    label = "prompt functions must return messages or `Result<messages, E>`",
    note = "messages: String (one user message), Vec<PromptMessage> or GetPromptResult; E: any std::fmt::Display + Send + 'static"
)]
pub trait PromptResult {}

impl<T: IntoPromptResult> PromptResult for T {}

/// Compiles only if `T` can be a tool argument.
pub fn assert_tool_argument<T: ToolArgument>() {}

/// Compiles only if `R` can be returned from a tool (`IntoToolResult` has its own message).
pub fn assert_tool_result<R: IntoToolResult>() {}

/// Compiles only if `T` can be a resource template parameter.
pub fn assert_resource_param<T: ResourceParam>() {}

/// Compiles only if `R` can be returned from a resource.
pub fn assert_resource_result<R: ResourceResult>() {}

/// Compiles only if `R` can be returned from a prompt.
pub fn assert_prompt_result<R: PromptResult>() {}
