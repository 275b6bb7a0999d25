//! Attribute macros for [modelcontext](https://docs.rs/modelcontext): `#[tool]`, `#[tools]`,
//! `#[resource]` and `#[prompt]`.
//!
//! They are sugar and nothing else. Each one keeps the function as written and adds, next to
//! it, code you could have written by hand with the public API: an arguments struct deriving
//! `Deserialize` and `JsonSchema`, and a constructor calling [`ToolDef::new`],
//! [`ResourceDef::new`] or [`PromptDef::new`]. The doc comment becomes the description.
//!
//! Use them through the `modelcontext` crate (feature `macros`, on by default), whose
//! `modelcontext::tool` and friends re-export these. The expansions name `::modelcontext`, so
//! the dependency must keep that name.
//!
//! [`ToolDef::new`]: https://docs.rs/modelcontext/latest/modelcontext/struct.ToolDef.html
//! [`ResourceDef::new`]: https://docs.rs/modelcontext/latest/modelcontext/struct.ResourceDef.html
//! [`PromptDef::new`]: https://docs.rs/modelcontext/latest/modelcontext/struct.PromptDef.html

use proc_macro::TokenStream;

mod arg;
mod args_struct;
mod docs;
mod handler;
mod options;
mod prompt;
mod resource;
mod signature;
mod tool;
mod tools;

/// Turns a function into an MCP tool.
///
/// ```ignore
/// /// Search the catalog.
/// #[tool(title = "Search", annotations(read_only = true))]
/// async fn search_books(
///     #[arg(description = "Title or author to search for.")] query: String,
///     #[arg(description = "Maximum number of results.", default = 10, minimum = 1, maximum = 50)]
///     limit: i64,
/// ) -> Result<String, String> {
///     # todo!()
/// }
///
/// let server = McpServer::new("Bookshop").tool(search_books::tool())?;
/// ```
///
/// The function stays callable as written. Next to it comes a hidden module of the same name
/// holding `Args` (one field per parameter) and `tool() -> ToolDef`.
///
/// - The tool's name is the function's name; its description is the doc comment.
/// - Options: `name = "..."`, `title = "..."`, `description = "..."`, and
///   `annotations(title = "...", read_only = bool, destructive = bool, idempotent = bool,
///   open_world = bool)`.
/// - A parameter whose type is named `Context` receives the request context and stays out of
///   the input schema. `Option<T>` parameters are optional.
/// - `#[arg(...)]` on a parameter: `description = "..."`, `default = expr` (makes it optional),
///   `minimum`/`maximum`, `min_length`/`max_length`, `pattern = "regex"`, `rename = "..."`.
///   `#[serde(...)]` and `#[schemars(...)]` attributes on a parameter move to its field.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

/// Turns the `#[tool]` methods of an inherent `impl` block into tools sharing one value.
///
/// ```ignore
/// #[tools]
/// impl Bookshop {
///     /// Count the books in the catalog.
///     #[tool]
///     async fn count_books(&self) -> usize { self.books.len() }
/// }
///
/// let shop = Arc::new(Bookshop::default());
/// let server = McpServer::new("Bookshop").tools(shop.tool_defs())?;
/// ```
///
/// Adds `pub fn tool_defs(self: Arc<Self>) -> Vec<ToolDef>`; every tool holds a clone of the
/// `Arc`. Tool methods take `&self` (or no receiver); `#[tool]` and `#[arg]` work as on free
/// functions. Use one `#[tools]` block per type.
#[proc_macro_attribute]
pub fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    tools::expand(attr.into(), item.into()).into()
}

/// Turns a function into an MCP resource, or a resource template when the URI has variables.
///
/// ```ignore
/// /// A book's text.
/// #[resource("books://{title}", mime_type = "text/plain")]
/// async fn book(title: String) -> Result<String, ResourceError> {
///     # todo!()
/// }
///
/// let server = McpServer::new("Bookshop").resource(book::resource())?;
/// ```
///
/// The parameters must be exactly the template's variables (checked at compile time); a
/// `Context` parameter is allowed besides them. Adds a hidden module with `Params` and
/// `resource() -> ResourceDef`, named after the function unless `name = "..."` is given.
/// Other options: `title`, `description` (default: the doc comment), `mime_type`.
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    resource::expand(attr.into(), item.into()).into()
}

/// Turns a function into an MCP prompt.
///
/// ```ignore
/// /// Ask for a review of a book.
/// #[prompt]
/// fn review(
///     #[arg(description = "The book to review.")] title: String,
///     style: Option<String>,
/// ) -> String {
///     # todo!()
/// }
///
/// let server = McpServer::new("Bookshop").prompt(review::prompt())?;
/// ```
///
/// Prompt arguments are strings on the wire, so parameters are `String` (required) or
/// `Option<String>` (optional), plus an optional `Context`. Adds a hidden module with `Args`
/// and `prompt() -> PromptDef`. Options: `name`, `title`, `description`; `#[arg(...)]` takes
/// `description`, `rename` and `default`.
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    prompt::expand(attr.into(), item.into()).into()
}
