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
//! keeps the block (minus the `#[tool]` and `#[arg]` attributes) and adds (paths shortened,
//! assertions left out):
//! ```text
//! impl Bookshop {
//!     pub fn tool_defs(self: Arc<Self>) -> Vec<ToolDef> {
//!         vec![{
//!             #[derive(Deserialize, JsonSchema)]
//!             struct Args { query: String }
//!             let this = Arc::clone(&self);
//!             ToolDef::new("search", move |args: Args| {
//!                 let this = Arc::clone(&this);
//!                 async move { Self::search(&this, args.query).await }
//!             })
//!             .description("Search the catalog.")
//!         }]
//!     }
//! }
//! ```

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::{Attribute, ImplItem, ItemImpl, Meta};

use crate::errors::{both, combine, with_error};
use crate::handler::Callee;
use crate::options::Options;
use crate::signature::{Kind, Signature};
use crate::tool::tool_def;

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
    check_impl(imp)?;
    let methods = take_methods(imp)?;
    if methods.is_empty() {
        let message = "this `#[tools]` block has no `#[tool]` methods";
        return Err(syn::Error::new_spanned(&imp.self_ty, message));
    }
    let defs = methods.iter().map(method_def);
    let self_ty = &imp.self_ty;
    Ok(quote! {
        impl #self_ty {
            /// The `#[tool]` methods of this type as tool definitions sharing `self`; pass
            /// them to `McpServer::tools`.
            pub fn tool_defs(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<::modelcontext::ToolDef> {
                ::std::vec![#(#defs),*]
            }
        }
    })
}

/// The block must be inherent and not generic.
fn check_impl(imp: &ItemImpl) -> syn::Result<()> {
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
    Ok(())
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

/// `{ struct Args { .. } let this = Arc::clone(&self); ToolDef::new(..) }` for one method.
fn method_def(method: &Method) -> TokenStream {
    let Method { sig, options, attrs } = method;
    let name = &sig.ident;
    let callee = Callee { path: quote!(Self::#name), shares_self: sig.has_receiver };
    let this = callee.shares_self.then(|| quote!(let this = ::std::sync::Arc::clone(&self);));
    let def = tool_def(sig, options, attrs, &callee);
    quote!({ #this #def })
}
