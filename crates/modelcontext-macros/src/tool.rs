//! `#[tool]` on a free function.
//!
//! ```text
//! /// Look up the author of a book.
//! #[tool]
//! fn get_author(title: String) -> Result<String, String> { .. }
//! ```
//! keeps the function and adds:
//! ```text
//! #[doc(hidden)]
//! mod get_author {
//!     use super::*;
//!     #[derive(Deserialize, JsonSchema)]
//!     pub struct Args { pub title: String }
//!     pub fn tool() -> ::modelcontext::ToolDef {
//!         ::modelcontext::__private::assert_tool_argument::<String>();
//!         ::modelcontext::__private::assert_tool_result::<Result<String, String>>();
//!         ::modelcontext::ToolDef::new("get_author", |args: Args| async move { super::get_author(args.title) })
//!             .description("Look up the author of a book.")
//!     }
//! }
//! ```

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, ItemFn, LitStr};

use crate::args_struct::{args_struct, assertions};
use crate::handler::{Callee, closure, description, fn_module, needs_struct, setter};
use crate::options::{Annotations, Options};
use crate::signature::{Kind, Param, Signature, both, parse_item_fn};

/// Expands `#[tool(attr)] item`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut func = match parse_item_fn(item, Kind::Tool) {
        Ok(func) => func,
        Err((error, item)) => return with_error(item, error),
    };
    let options = Options::parse(attr, Kind::Tool);
    let sig = Signature::parse(&mut func.sig, Kind::Tool, false);
    match both(options, sig) {
        Ok((options, sig)) => {
            let module = module(&func, &sig, &options);
            quote!(#func #module)
        }
        Err(error) => with_error(quote!(#func), error),
    }
}

/// The item as written (minus the attributes we consumed) and the error: keeping the item
/// avoids a second wave of "cannot find function" errors.
pub fn with_error(item: TokenStream, error: syn::Error) -> TokenStream {
    let error = error.to_compile_error();
    quote!(#item #error)
}

fn module(func: &ItemFn, sig: &Signature, options: &Options) -> TokenStream {
    let fn_name = &sig.ident;
    let params: Vec<&Param> = sig.args().collect();
    let args_ty = needs_struct(sig).then(|| quote!(Args));
    let args_struct = args_ty.as_ref().map(|_| args_struct(&format_ident!("Args"), &params));
    let callee = Callee { path: quote!(super::#fn_name), shares_self: false };
    let def = tool_def(sig, options, &func.attrs, &callee, args_ty.as_ref());
    let doc = format!(" The `{}` tool, to pass to `McpServer::tool`.", tool_name(sig, options));
    let constructor = quote! {
        #[doc = #doc]
        pub fn tool() -> ::modelcontext::ToolDef {
            #def
        }
    };
    fn_module(func, args_struct, constructor)
}

/// The type assertions, then `ToolDef::new(name, handler)` with its builder calls.
/// Shared with `#[tools]`.
pub fn tool_def(
    sig: &Signature,
    options: &Options,
    attrs: &[Attribute],
    callee: &Callee,
    args_ty: Option<&TokenStream>,
) -> TokenStream {
    let params: Vec<&Param> = sig.args().collect();
    let arg_checks = assertions(&params, "assert_tool_argument");
    let result_check = sig.output.as_ref().map(
        |ty| quote_spanned!(ty.span()=> ::modelcontext::__private::assert_tool_result::<#ty>();),
    );
    let name = tool_name(sig, options);
    let handler = closure(sig, callee, args_ty, &format_ident!("args"));
    let description = description(options.description.as_ref(), attrs);
    let title = setter("title", options.title.as_ref());
    let annotations = options.annotations.as_ref().map(Annotations::to_expr);
    let annotations = setter("annotations", annotations.as_ref());
    quote! {
        #arg_checks
        #result_check
        ::modelcontext::ToolDef::new(#name, #handler) #description #title #annotations
    }
}

fn tool_name(sig: &Signature, options: &Options) -> String {
    options.name.as_ref().map(LitStr::value).unwrap_or_else(|| sig.ident.unraw().to_string())
}
