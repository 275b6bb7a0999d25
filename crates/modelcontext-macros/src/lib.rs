//! Attribute macros for [modelcontext](https://docs.rs/modelcontext): `#[tool]`, `#[tools]`,
//! `#[resource]` and `#[prompt]`.
//!
//! They are sugar and nothing else. Each one keeps the function as written and adds, next to
//! it, code you could have written by hand with the public API: an arguments struct deriving
//! `Deserialize` and `JsonSchema`, and a constructor calling [`ToolDef::new`],
//! [`ResourceDef::new`] or [`PromptDef::new`] (`get_author::tool()`). The doc comment becomes
//! the description. Types that do not fit (an argument that is not `Deserialize + JsonSchema`,
//! a return type that is not a tool output) are reported where they are written, with a
//! message saying what they must implement.
//!
//! Use them through the `modelcontext` crate (feature `macros`, on by default), whose
//! `modelcontext::tool` and friends re-export these. The expansions name `::modelcontext`, and
//! reach serde and schemars through it, so those need not be dependencies of yours. Renamed the
//! dependency (`mc = { package = "modelcontext", .. }`) or re-export it from another crate? Say
//! where it is with `crate = "path"`, as with serde's `#[serde(crate = "...")]`:
//!
//! ```
//! use ::modelcontext as mc;
//!
//! /// Say hello.
//! #[mc::tool(crate = "mc")]
//! fn hello() -> String {
//!     "hello".into()
//! }
//!
//! let server = mc::McpServer::new("Greeter").tool(hello::tool())?;
//! # Ok::<(), mc::Error>(())
//! ```
//!
//! [`ToolDef::new`]: https://docs.rs/modelcontext/latest/modelcontext/struct.ToolDef.html
//! [`ResourceDef::new`]: https://docs.rs/modelcontext/latest/modelcontext/struct.ResourceDef.html
//! [`PromptDef::new`]: https://docs.rs/modelcontext/latest/modelcontext/struct.PromptDef.html

use proc_macro::TokenStream;

mod arg;
mod args_struct;
mod docs;
mod errors;
mod handler;
mod kind;
mod options;
mod prompt;
mod resource;
mod signature;
mod tool;
mod tools;

/// Turns a function into an MCP tool.
///
/// ```
/// use modelcontext::{McpServer, tool};
///
/// /// Search the catalog.
/// #[tool(title = "Search", annotations(read_only = true))]
/// async fn search_books(
///     #[arg(description = "Title or author to search for.")] query: String,
///     #[arg(description = "Maximum number of results.", default = 10, minimum = 1, maximum = 50)]
///     limit: i64,
/// ) -> Result<String, String> {
///     Ok(format!("up to {limit} books matching {query}"))
/// }
///
/// let server = McpServer::new("Bookshop").tool(search_books::tool())?;
/// # Ok::<(), modelcontext::Error>(())
/// ```
///
/// The function stays callable as written. Beside it comes a hidden, empty struct of the same
/// name (types and functions live in different namespaces) whose `tool() -> ToolDef` holds the
/// `Args` struct (one field per parameter, deriving `Deserialize` and `JsonSchema`) and the
/// `ToolDef::new` call. Functions declared inside a function body work too.
///
/// - The tool's name is the function's name; its description is the doc comment.
/// - Options: `name = "..."`, `title = "..."`, `description = "..."`,
///   `annotations(title = "...", read_only = bool, destructive = bool, idempotent = bool,
///   open_world = bool)`, `icon = "https://.."` (any number of times) or `icons = expr` (a
///   `Vec<Icon>`), `meta = expr` (a `serde_json::Map`, the tool's `_meta`),
///   `task = "optional" | "required"` (the tool may run as a task of the tasks extension:
///   `ToolDef::task`), `ui = "ui://..."` (the MCP Apps view that renders its results:
///   `ToolDef::ui`), `app_only` (only that view may call it: `ToolDef::app_only`), and
///   `crate = "path"` for a renamed `modelcontext` (see the crate docs).
/// - The return type: any tool output, or any `Serialize + JsonSchema` type (or a `Result` of
///   one), which becomes `structuredContent` with its `outputSchema` as `Json<T>` does.
/// - A parameter whose type is named `Context` receives the request context and stays out of
///   the input schema. `Option<T>` parameters are optional.
/// - `#[arg(...)]` on a parameter: `description = "..."`, `default = expr` (makes it optional),
///   `minimum`/`maximum`, `min_length`/`max_length`, `pattern = "regex"`, `rename = "..."`.
///   `#[serde(...)]` and `#[schemars(...)]` attributes on a parameter move to its field.
/// - Parameter types must be `Deserialize + JsonSchema` and owned; the return type must
///   implement `IntoToolResult`. A type that does not fit is reported where it is written.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

/// Turns the `#[tool]` methods of an inherent `impl` block into tools sharing one value.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// use modelcontext::{McpServer, tools};
///
/// #[derive(Default)]
/// struct Bookshop {
///     visits: AtomicUsize,
/// }
///
/// #[tools]
/// impl Bookshop {
///     /// Record a visit and return how many there were.
///     #[tool]
///     async fn visit(&self) -> String {
///         (self.visits.fetch_add(1, Ordering::SeqCst) + 1).to_string()
///     }
/// }
///
/// let shop = Arc::new(Bookshop::default());
/// let server = McpServer::new("Bookshop").tools(shop.tool_defs())?;
/// # Ok::<(), modelcontext::Error>(())
/// ```
///
/// Adds `pub fn tool_defs(self: Arc<Self>) -> Vec<ToolDef>`; every tool holds a clone of the
/// `Arc`. Tool methods take `&self` (or no receiver); `#[tool(...)]` and `#[arg(...)]` work as
/// on free functions. Each `#[tools]` block adds its own `tool_defs`, so use one per type. The
/// only option of `#[tools]` itself is `crate = "path"`, for a renamed `modelcontext`; it holds
/// for every method of the block.
#[proc_macro_attribute]
pub fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    tools::expand(attr.into(), item.into()).into()
}

/// Turns a function into an MCP resource, or a resource template when the URI has variables.
///
/// ```
/// use modelcontext::{McpServer, ResourceError, resource};
///
/// /// A book's text.
/// #[resource("books://{title}", mime_type = "text/plain")]
/// async fn book(title: String) -> Result<String, ResourceError> {
///     Err(ResourceError::not_found(format!("No book titled '{title}'")))
/// }
///
/// let server = McpServer::new("Bookshop").resource(book::resource())?;
/// # Ok::<(), modelcontext::Error>(())
/// ```
///
/// The template is parsed at compile time by the parser the server uses, so a template the
/// server would refuse (RFC 6570 level 4 grammar) is a compile error on the string. The
/// parameters must be exactly the template's variables (also checked at compile time); a
/// `Context` parameter is allowed besides them. Adds a hidden struct of the same name with
/// `resource() -> ResourceDef`, which holds the `Params` struct of a template. The resource's name
/// is the function's unless `name = "..."` is given; other options are `title`,
/// `description` (default: the doc comment), `mime_type`, `icon = "https://.."` (repeatable)
/// or `icons = expr`, `meta = expr`, `size = n` (bytes), `annotations = expr` (an
/// `Annotations`) and `crate = "path"` (a renamed `modelcontext`). `#[arg(...)]` on a
/// parameter takes `description`, `rename` and `complete = f` (completes the template
/// variable, as on a prompt argument).
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    resource::expand(attr.into(), item.into()).into()
}

/// Turns a function into an MCP prompt.
///
/// ```
/// use modelcontext::{McpServer, prompt};
///
/// /// Ask for a review of a book.
/// #[prompt]
/// fn review(
///     #[arg(description = "The book to review.")] title: String,
///     style: Option<String>,
/// ) -> String {
///     format!("Review {title} in a {} style.", style.as_deref().unwrap_or("neutral"))
/// }
///
/// let server = McpServer::new("Bookshop").prompt(review::prompt())?;
/// # Ok::<(), modelcontext::Error>(())
/// ```
///
/// Prompt arguments are strings on the wire, so parameters are `String` (required) or
/// `Option<String>` (optional), plus an optional `Context`. Adds a hidden struct of the same
/// name with `prompt() -> PromptDef`, which holds the `Args` struct. Options: `name`, `title`,
/// `description`, `icon = "https://.."` (repeatable) or `icons = expr`, `meta = expr`,
/// `crate = "path"` (a renamed `modelcontext`); `#[arg(...)]` takes
/// `description`, `rename`, `default` and `complete = f` (an async fn taking a
/// `CompletionRequest` and returning the suggestions: it answers `completion/complete` for
/// this argument).
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    prompt::expand(attr.into(), item.into()).into()
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;
    use quote::quote;

    /// One item per macro, each with `crate = #krate` when given.
    fn expansions(krate: Option<&str>) -> Vec<String> {
        let option = krate.map(|path| quote!(crate = #path));
        let comma = krate.map(|_| quote!(,));
        let tool = crate::tool::expand(
            quote!(#option),
            quote!(
                fn add(cx: Context, a: i64) -> i64 {
                    a
                }
            ),
        );
        let tools = crate::tools::expand(
            quote!(#option),
            quote!(impl Clock { #[tool(annotations(read_only = true))] fn hour(&self) -> u32 { 12 } }),
        );
        let resource = crate::resource::expand(
            quote!("chapters://{number}" #comma #option),
            quote!(
                fn chapter(number: u32) -> String {
                    number.to_string()
                }
            ),
        );
        let prompt = crate::prompt::expand(
            quote!(#option),
            quote!(
                fn summary(title: String) -> String {
                    title
                }
            ),
        );
        [tool, tools, resource, prompt].iter().map(TokenStream::to_string).collect()
    }

    #[test]
    fn expansions_name_the_crate_path_they_are_given_and_no_other() {
        for expansion in expansions(Some("mc")) {
            assert!(!expansion.contains("compile_error"), "{expansion}");
            assert!(!expansion.contains("modelcontext"), "{expansion}");
            assert!(expansion.contains("mc :: "), "{expansion}");
        }
    }

    #[test]
    fn expansions_name_modelcontext_by_default() {
        for expansion in expansions(None) {
            assert!(!expansion.contains("compile_error"), "{expansion}");
            assert!(expansion.contains(":: modelcontext :: "), "{expansion}");
        }
    }
}
