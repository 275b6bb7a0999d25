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
use syn::parse::Parser;
use syn::{Attribute, ImplItem, ItemImpl, Meta, Path};

use crate::errors::{both, combine, with_error};
use crate::handler::Callee;
use crate::kind::Kind;
use crate::options::{Options, crate_path};
use crate::signature::Signature;
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
    let block = Options { krate: parse_block_options(attr)?, ..Options::default() };
    check_impl(imp)?;
    let methods = take_methods(imp, &block)?;
    if methods.is_empty() {
        let message = "this `#[tools]` block has no `#[tool]` methods";
        return Err(syn::Error::new_spanned(&imp.self_ty, message));
    }
    let defs = methods.iter().map(method_def);
    let self_ty = &imp.self_ty;
    let krate = block.crate_path();
    Ok(quote! {
        impl #self_ty {
            /// The `#[tool]` methods of this type as tool definitions sharing `self`; pass
            /// them to `McpServer::tools`.
            pub fn tool_defs(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<#krate::ToolDef> {
                ::std::vec![#(#defs),*]
            }
        }
    })
}

/// `#[tools]` takes only `crate = "path"`, which holds for every method of the block; the other
/// options describe one tool and go on its `#[tool(...)]`.
fn parse_block_options(attr: TokenStream) -> syn::Result<Option<Path>> {
    let mut krate = None;
    let parser = syn::meta::parser(|meta| {
        if !meta.path.is_ident("crate") {
            return Err(meta.error(
                "`#[tools]` takes only `crate = \"...\"`; give other options to each `#[tool(...)]`",
            ));
        }
        if krate.is_some() {
            return Err(meta.error("this option is given twice"));
        }
        krate = Some(crate_path(&meta)?);
        Ok(())
    });
    parser.parse2(attr)?;
    Ok(krate)
}

/// The block must be inherent and not generic.
fn check_impl(imp: &ItemImpl) -> syn::Result<()> {
    if let Some((path, _)) = &imp.trait_ {
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
fn take_methods(imp: &mut ItemImpl, block: &Options) -> syn::Result<Vec<Method>> {
    let mut methods = Vec::new();
    let mut errors = Vec::new();
    for item in &mut imp.items {
        let ImplItem::Fn(func) = item else { continue };
        let Some(attr) = take_tool_attr(&mut func.attrs) else { continue };
        let options = tool_options(&attr).and_then(|options| inherit(options, block));
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

/// A method's options with the block's `crate` path: one path for the whole block, since
/// `tool_defs` names it too.
fn inherit(options: Options, block: &Options) -> syn::Result<Options> {
    if let Some(path) = &options.krate {
        let message =
            "inside `#[tools]`, give `crate = \"...\"` to `#[tools(...)]`, once for the block";
        return Err(syn::Error::new_spanned(path, message));
    }
    Ok(Options { krate: block.krate.clone(), ..options })
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
