//! `#[tools]` on an inherent `impl` block whose methods are marked `#[tool]`.
//!
//! ```text
//! #[tools]
//! impl Bookshop {
//!     /// Search the catalog.
//!     #[tool]
//!     async fn search(&self, query: String) -> String { .. }
//! }
//! ```
//! keeps the block (minus the `#[tool]` and `#[arg]` attributes) and adds:
//! ```text
//! #[doc(hidden)]
//! mod __bookshop_tools {
//!     pub mod search {
//!         use super::super::*;
//!         #[derive(Deserialize, JsonSchema)]
//!         pub struct Args { pub query: String }
//!     }
//! }
//! impl Bookshop {
//!     pub fn tool_defs(self: Arc<Self>) -> Vec<ToolDef> {
//!         vec![{
//!             let this = Arc::clone(&self);
//!             ToolDef::new("search", move |args: __bookshop_tools::search::Args| {
//!                 let this = Arc::clone(&this);
//!                 async move { this.search(args.query).await }
//!             })
//!             .description("Search the catalog.")
//!         }]
//!     }
//! }
//! ```

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote};
use syn::{Attribute, Ident, ImplItem, ItemImpl, Meta, Type};

use crate::args_struct::args_struct;
use crate::handler::{Callee, needs_struct};
use crate::options::Options;
use crate::signature::{Kind, Param, Signature, both, combine};
use crate::tool::{tool_def, with_error};

/// Expands `#[tools(attr)] item`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut imp: ItemImpl = match syn::parse2(item.clone()) {
        Ok(imp) => imp,
        Err(_) => {
            let message =
                "`#[tools]` goes on an inherent `impl` block; on a function, use `#[tool]`";
            return with_error(item, syn::Error::new(Span::call_site(), message));
        }
    };
    match expand_impl(attr, &mut imp) {
        Ok(generated) => quote!(#imp #generated),
        Err(error) => with_error(imp.into_token_stream(), error),
    }
}

/// One `#[tool]` method.
struct Method {
    sig: Signature,
    options: Options,
    attrs: Vec<Attribute>,
}

fn expand_impl(attr: TokenStream, imp: &mut ItemImpl) -> syn::Result<TokenStream> {
    if !attr.is_empty() {
        let message = "`#[tools]` takes no options; give them to each `#[tool(...)]`";
        return Err(syn::Error::new_spanned(attr, message));
    }
    let type_name = check_impl(imp)?;
    let methods = take_methods(imp)?;
    if methods.is_empty() {
        let message = "this `#[tools]` block has no `#[tool]` methods";
        return Err(syn::Error::new_spanned(&imp.self_ty, message));
    }
    let module = format_ident!("__{}_tools", snake_case(&type_name.to_string()));
    let structs = methods.iter().filter_map(args_module);
    let defs = methods.iter().map(|method| method_def(method, &module));
    let self_ty = &imp.self_ty;
    Ok(quote! {
        #[doc(hidden)]
        #[allow(non_snake_case, unused_imports, missing_docs)]
        mod #module {
            #(#structs)*
        }

        impl #self_ty {
            /// The `#[tool]` methods of this type as tool definitions sharing `self`; pass
            /// them to `McpServer::tools`.
            pub fn tool_defs(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<::modelcontext::ToolDef> {
                ::std::vec![#(#defs),*]
            }
        }
    })
}

/// The type's name, for the hidden module; the block must be inherent and not generic.
fn check_impl(imp: &ItemImpl) -> syn::Result<Ident> {
    if let Some((_, path, _)) = &imp.trait_ {
        return Err(syn::Error::new_spanned(
            path,
            "`#[tools]` goes on an inherent `impl` block, not a trait impl",
        ));
    }
    if !imp.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &imp.generics,
            "`#[tools]` does not support generic `impl` blocks",
        ));
    }
    match &*imp.self_ty {
        Type::Path(path) if path.qself.is_none() => match path.path.segments.last() {
            Some(segment) if segment.arguments.is_none() => Ok(segment.ident.clone()),
            _ => Err(syn::Error::new_spanned(
                path,
                "`#[tools]` needs a type without generic arguments",
            )),
        },
        other => Err(syn::Error::new_spanned(other, "`#[tools]` needs a named type")),
    }
}

/// Reads every `#[tool]` method, taking off the attributes the expansion consumes. All methods
/// are read before any error is returned, so the block compiles as written either way.
fn take_methods(imp: &mut ItemImpl) -> syn::Result<Vec<Method>> {
    let mut methods = Vec::new();
    let mut errors = Vec::new();
    for item in &mut imp.items {
        let ImplItem::Fn(func) = item else { continue };
        let Some(attr) = take_tool_attr(&mut func.attrs) else { continue };
        let options = tool_options(&attr);
        let sig = Signature::parse(&mut func.sig, Kind::Tool, true);
        match both(options, sig) {
            Ok((options, sig)) => methods.push(Method { sig, options, attrs: func.attrs.clone() }),
            Err(error) => errors.push(error),
        }
    }
    combine(errors)?;
    Ok(methods)
}

fn take_tool_attr(attrs: &mut Vec<Attribute>) -> Option<Attribute> {
    let position = attrs.iter().position(|attr| {
        attr.path().segments.last().is_some_and(|segment| segment.ident == "tool")
    })?;
    Some(attrs.remove(position))
}

fn tool_options(attr: &Attribute) -> syn::Result<Options> {
    match &attr.meta {
        Meta::Path(_) => Ok(Options::default()),
        Meta::List(list) => Options::parse(list.tokens.clone(), Kind::Tool),
        Meta::NameValue(meta) => {
            Err(syn::Error::new_spanned(meta, "expected `#[tool]` or `#[tool(...)]`"))
        }
    }
}

/// `pub mod <method> { use super::super::*; pub struct Args { .. } }`, if the method needs one.
fn args_module(method: &Method) -> Option<TokenStream> {
    if !needs_struct(&method.sig) {
        return None;
    }
    let name = &method.sig.ident;
    let params: Vec<&Param> = method.sig.args().collect();
    let args_struct = args_struct(&format_ident!("Args"), &params);
    Some(quote! {
        pub mod #name {
            use super::super::*;
            #args_struct
        }
    })
}

/// `{ let this = Arc::clone(&self); ToolDef::new(..) }` for one method.
fn method_def(method: &Method, module: &Ident) -> TokenStream {
    let Method { sig, options, attrs } = method;
    let name = &sig.ident;
    let args_ty = needs_struct(sig).then(|| quote!(#module::#name::Args));
    let callee = match sig.has_receiver {
        true => Callee { path: quote!(this.#name), shares_self: true },
        false => Callee { path: quote!(Self::#name), shares_self: false },
    };
    let this = callee.shares_self.then(|| quote!(let this = ::std::sync::Arc::clone(&self);));
    let def = tool_def(sig, options, attrs, &callee, args_ty.as_ref());
    quote!({ #this #def })
}

/// `BookShop` -> `book_shop`.
fn snake_case(name: &str) -> String {
    let mut snake = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            snake.push('_');
        }
        snake.extend(c.to_lowercase());
    }
    snake
}
