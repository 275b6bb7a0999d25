//! The options inside `#[tool(...)]`, `#[prompt(...)]` and `#[resource("uri", ...)]`, and the
//! `crate = "path"` option all four macros take.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{Expr, Ident, LitBool, LitInt, LitStr, Path, parse_quote};

use crate::kind::Kind;

/// Options shared by the three item macros; each kind accepts a subset (see [`keys`]).
#[derive(Default)]
pub struct Options {
    /// `name = "..."`: overrides the function's name.
    pub name: Option<LitStr>,
    /// `title = "..."`: a human-readable title.
    pub title: Option<LitStr>,
    /// `description = "..."`: overrides the doc comment.
    pub description: Option<LitStr>,
    /// `mime_type = "..."` (resources).
    pub mime_type: Option<LitStr>,
    /// `annotations(...)` (tools).
    pub annotations: Option<Annotations>,
    /// `icon = "https://.."`, any number of times: icons from their sources.
    pub icon: Vec<LitStr>,
    /// `icons = expr`: a `Vec<Icon>` built by hand (sizes, theme, MIME type).
    pub icons: Option<Expr>,
    /// `meta = expr`: the definition's `_meta`, a `serde_json::Map`.
    pub meta: Option<Expr>,
    /// `size = n` (resources): the contents' size in bytes.
    pub size: Option<LitInt>,
    /// `annotations = expr` (resources): their `Annotations`.
    pub resource_annotations: Option<Expr>,
    /// `task = "optional" | "required"` (tools): may run as a task (tasks extension).
    pub task: Option<TaskSupport>,
    /// `ui = "ui://..."` (tools): the MCP Apps view that renders the tool's results.
    pub ui: Option<LitStr>,
    /// `app_only` (tools): only the app's view may call the tool, not the model.
    pub app_only: Option<()>,
    /// `crate = "path"`: see [`crate_path`].
    pub krate: Option<Path>,
}

/// The value of `task = "..."`.
pub enum TaskSupport {
    /// `"optional"`.
    Optional,
    /// `"required"`.
    Required,
}

impl TaskSupport {
    fn parse(meta: &ParseNestedMeta) -> syn::Result<TaskSupport> {
        let value: LitStr = meta.value()?.parse()?;
        match value.value().as_str() {
            "optional" => Ok(TaskSupport::Optional),
            "required" => Ok(TaskSupport::Required),
            other => Err(syn::Error::new(
                value.span(),
                format!("unknown task support `{other}`; expected \"optional\" or \"required\""),
            )),
        }
    }

    /// `.task(TaskSupport::..)` on the `ToolDef`.
    pub fn to_setter(&self, krate: &Path) -> TokenStream {
        let variant = match self {
            TaskSupport::Optional => format_ident!("Optional"),
            TaskSupport::Required => format_ident!("Required"),
        };
        quote!(.task(#krate::server::TaskSupport::#variant))
    }
}

/// `annotations(title = "...", read_only = true, ...)`: the fields of `ToolAnnotations` to set.
#[derive(Default)]
pub struct Annotations {
    fields: Vec<(Ident, TokenStream)>,
}

/// The option keys `kind` accepts.
fn keys(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Tool => &[
            "name",
            "title",
            "description",
            "annotations",
            "icon",
            "icons",
            "meta",
            "task",
            "ui",
            "app_only",
            "crate",
        ],
        Kind::Resource => &[
            "name",
            "title",
            "description",
            "mime_type",
            "icon",
            "icons",
            "meta",
            "size",
            "annotations",
            "crate",
        ],
        Kind::Prompt => &["name", "title", "description", "icon", "icons", "meta", "crate"],
    }
}

impl Options {
    /// Parses a comma-separated option list such as `name = "x", title = "X"`.
    pub fn parse(tokens: TokenStream, kind: Kind) -> syn::Result<Options> {
        let mut options = Options::default();
        let parser = syn::meta::parser(|meta| options.parse_one(&meta, kind));
        parser.parse2(tokens)?;
        if let (Some(icons), false) = (&options.icons, options.icon.is_empty()) {
            let message = "give `icon = \"..\"` or `icons = ..`, not both";
            return Err(syn::Error::new_spanned(icons, message));
        }
        Ok(options)
    }

    fn parse_one(&mut self, meta: &ParseNestedMeta, kind: Kind) -> syn::Result<()> {
        let key = meta.path.to_token_stream().to_string();
        match key.as_str() {
            _ if !keys(kind).contains(&key.as_str()) => Err(meta.error(format!(
                "unknown `#[{}]` option `{key}`; expected one of: {}",
                kind.name(),
                keys(kind).join(", ")
            ))),
            "name" => set(&mut self.name, meta, meta.value()?.parse()?),
            "title" => set(&mut self.title, meta, meta.value()?.parse()?),
            "description" => set(&mut self.description, meta, meta.value()?.parse()?),
            "mime_type" => set(&mut self.mime_type, meta, meta.value()?.parse()?),
            "annotations" if kind == Kind::Resource => {
                set(&mut self.resource_annotations, meta, meta.value()?.parse()?)
            }
            "annotations" => set(&mut self.annotations, meta, Annotations::parse(meta)?),
            "icon" => {
                self.icon.push(meta.value()?.parse()?);
                Ok(())
            }
            "icons" => set(&mut self.icons, meta, meta.value()?.parse()?),
            "meta" => set(&mut self.meta, meta, meta.value()?.parse()?),
            "size" => set(&mut self.size, meta, meta.value()?.parse()?),
            "task" => set(&mut self.task, meta, TaskSupport::parse(meta)?),
            "ui" => {
                let uri: LitStr = meta.value()?.parse()?;
                if !uri.value().starts_with("ui://") {
                    return Err(syn::Error::new(
                        uri.span(),
                        "an MCP Apps view URI starts with ui://",
                    ));
                }
                set(&mut self.ui, meta, uri)
            }
            "app_only" => set(&mut self.app_only, meta, ()),
            "crate" => set(&mut self.krate, meta, crate_path(meta)?),
            _ => unreachable!("`{key}` is in keys() but has no parser"),
        }
    }

    /// The builder calls of the options every kind shares beyond name, title and description:
    /// `.icons(..)` and `.meta(..)`, plus `.size(..)` and `.annotations(..)` for resources.
    pub fn metadata_setters(&self) -> TokenStream {
        let krate = self.crate_path();
        let sources = &self.icon;
        let icons = match &self.icons {
            Some(expr) => Some(quote!(#expr)),
            None if sources.is_empty() => None,
            None => Some(quote!(::std::vec![#(#krate::types::Icon::new(#sources)),*])),
        };
        let setters = [
            ("icons", icons),
            ("meta", self.meta.as_ref().map(|e| quote!(#e))),
            ("size", self.size.as_ref().map(|n| quote!(#n))),
            ("annotations", self.resource_annotations.as_ref().map(|e| quote!(#e))),
        ];
        setters
            .iter()
            .map(|(method, value)| crate::handler::setter(method, value.as_ref()))
            .collect()
    }

    /// The path the expansion names `modelcontext` by: `crate = "..."`, else `::modelcontext`.
    pub fn crate_path(&self) -> Path {
        self.krate.clone().unwrap_or_else(|| parse_quote!(::modelcontext))
    }
}

/// The value of `crate = "some::path"`: where the expansion finds `modelcontext` when the
/// dependency is renamed or re-exported (as serde's `#[serde(crate = "...")]`). The path keeps
/// the string's span, so a path that does not resolve is reported on the string.
pub fn crate_path(meta: &ParseNestedMeta) -> syn::Result<Path> {
    let text: LitStr = meta.value()?.parse()?;
    text.parse_with(Path::parse_mod_style)
}

/// `path` as the string a `#[serde(crate = "...")]`-style attribute takes, suffixed: for
/// `::modelcontext` and `"schemars"`, `"::modelcontext::schemars"`.
pub fn crate_path_string(path: &Path, suffix: &str) -> LitStr {
    // Token streams print with spaces between tokens (`:: modelcontext`); a path has none.
    let path = path.to_token_stream().to_string().replace(' ', "");
    LitStr::new(&format!("{path}::{suffix}"), proc_macro2::Span::call_site())
}

impl Annotations {
    fn parse(meta: &ParseNestedMeta) -> syn::Result<Annotations> {
        let mut annotations = Annotations::default();
        meta.parse_nested_meta(|inner| {
            let key = inner.path.to_token_stream().to_string();
            let value = match key.as_str() {
                "title" => {
                    let title: LitStr = inner.value()?.parse()?;
                    quote!(::std::option::Option::Some(::std::string::String::from(#title)))
                }
                "read_only" | "destructive" | "idempotent" | "open_world" => {
                    let hint: LitBool = inner.value()?.parse()?;
                    quote!(::std::option::Option::Some(#hint))
                }
                _ => return Err(inner.error(format!(
                    "unknown annotation `{key}`; expected one of: title, read_only, destructive, idempotent, open_world"
                ))),
            };
            let field = if key == "title" { format_ident!("title") } else { format_ident!("{key}_hint") };
            annotations.fields.push((field, value));
            Ok(())
        })?;
        Ok(annotations)
    }

    /// A `ToolAnnotations` with the given fields set and the rest defaulted. Assigned one by
    /// one: the type is `#[non_exhaustive]`, so a struct literal would not compile in the
    /// user's crate.
    pub fn to_expr(&self, krate: &Path) -> TokenStream {
        let fields = self.fields.iter().map(|(field, value)| quote!(annotations.#field = #value;));
        quote! {{
            let mut annotations: #krate::types::ToolAnnotations =
                ::std::default::Default::default();
            #(#fields)*
            annotations
        }}
    }
}

fn set<T>(slot: &mut Option<T>, meta: &ParseNestedMeta, value: T) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error("this option is given twice"));
    }
    *slot = Some(value);
    Ok(())
}
