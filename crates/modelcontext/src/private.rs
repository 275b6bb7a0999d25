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
//! - [`Pick`], which lets `#[tool]` return a plain `Serialize + JsonSchema` struct: the
//!   generated handler passes the function's value through `(&&&Pick::of(&v)).pick()`, which
//!   resolves (autoref specialization, on the concrete return type) to the identity when the
//!   type is already a tool output, and to [`Json`] otherwise.

use std::fmt::Display;
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::server::{IntoPromptResult, IntoResourceResult, IntoToolResult, Json};

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

/// A type a `#[tool]` function may return as structured output without a wrapper.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "not a tool output",
    note = "return String, a number, bool, (), ContentBlock, Vec<ContentBlock>, CallToolResult, or a type with `#[derive(serde::Serialize, schemars::JsonSchema)]` (structured output), or a Result of one of those"
)]
pub trait StructuredOutput: Serialize + schemars::JsonSchema + Send + 'static {}

impl<T: Serialize + schemars::JsonSchema + Send + 'static> StructuredOutput for T {}

/// Chooses how a `#[tool]` function's return value of type `R` becomes a tool result; see the
/// module docs. Three levels, highest priority first: `R` is a tool result already (the
/// identity); `R` is `Result<T, E>` with a structured `T` (`Ok` wrapped in [`Json`]); `R`
/// itself is structured (wrapped in [`Json`], or a compile error naming what `R` must be).
pub struct Pick<R>(PhantomData<R>);

impl<R> Pick<R> {
    /// The picker for the type of `value`, so the macro need not name the type.
    pub fn of(_: &R) -> Pick<R> {
        Pick(PhantomData)
    }

    /// The lowest level: a structured value, wrapped in [`Json`]. The bound sits on the
    /// method, not the impl, so a type that fits nothing reports `StructuredOutput`'s message.
    pub fn pick(&self) -> fn(R) -> Json<R>
    where
        R: StructuredOutput,
    {
        Json
    }
}

/// The first level: already a tool result.
pub trait PickResult {
    /// The return type.
    type Value;
    /// The identity.
    fn pick(&self) -> fn(Self::Value) -> Self::Value;
}

impl<R: IntoToolResult> PickResult for &&Pick<R> {
    type Value = R;
    fn pick(&self) -> fn(R) -> R {
        |value| value
    }
}

/// `Result<T, E>` to `Result<Json<T>, E>`.
pub type WrapOk<T, E> = fn(Result<T, E>) -> Result<Json<T>, E>;

/// The second level: a `Result` whose `Ok` value is structured.
pub trait PickStructuredResult {
    /// The `Ok` type.
    type Ok;
    /// The error type.
    type Err;
    /// `Ok` wrapped in [`Json`].
    fn pick(&self) -> WrapOk<Self::Ok, Self::Err>;
}

impl<T, E> PickStructuredResult for &Pick<Result<T, E>>
where
    T: StructuredOutput,
    E: Display + Send + 'static,
{
    type Ok = T;
    type Err = E;
    fn pick(&self) -> WrapOk<T, E> {
        |result| result.map(Json)
    }
}

/// Compiles only if `T` can be a resource template parameter.
pub fn assert_resource_param<T: ResourceParam>() {}

/// Compiles only if `R` can be returned from a resource.
pub fn assert_resource_result<R: ResourceResult>() {}

/// Compiles only if `R` can be returned from a prompt.
pub fn assert_prompt_result<R: PromptResult>() {}
