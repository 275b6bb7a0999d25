//! `#[prompt]` on a free function.
//!
//! ```text
//! /// Ask for a review of a book.
//! #[prompt]
//! fn review(title: String, style: Option<String>) -> String { .. }
//! ```
//! keeps the function and adds:
//! ```text
//! #[doc(hidden)]
//! mod review {
//!     use super::*;
//!     #[derive(Deserialize, JsonSchema)]
//!     pub struct Args { pub title: String, pub style: Option<String> }
//!     pub fn prompt() -> ::modelcontext::PromptDef {
//!         ::modelcontext::PromptDef::new("review", |args: Args| async move { super::review(args.title, args.style) })
//!             .description("Ask for a review of a book.")
//!     }
//! }
//! ```

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{ItemFn, LitStr};

use crate::args_struct::args_struct;
use crate::handler::{Callee, closure, description, fn_module, needs_struct, setter};
use crate::options::Options;
use crate::signature::{Kind, Param, Signature, both, parse_item_fn};
use crate::tool::with_error;

/// Expands `#[prompt(attr)] item`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut func = match parse_item_fn(item, Kind::Prompt) {
        Ok(func) => func,
        Err((error, item)) => return with_error(item, error),
    };
    let options = Options::parse(attr, Kind::Prompt);
    let sig = Signature::parse(&mut func.sig, Kind::Prompt, false);
    match both(options, sig) {
        Ok((options, sig)) => {
            let module = module(&func, &sig, &options);
            quote!(#func #module)
        }
        Err(error) => with_error(quote!(#func), error),
    }
}

/// Parameter types need no assertion: the signature check already required `String` or
/// `Option<String>`.
fn module(func: &ItemFn, sig: &Signature, options: &Options) -> TokenStream {
    let fn_name = &sig.ident;
    let params: Vec<&Param> = sig.args().collect();
    let args_ty = needs_struct(sig).then(|| quote!(Args));
    let args_struct = args_ty.as_ref().map(|_| args_struct(&format_ident!("Args"), &params));
    let result_check = sig.output.as_ref().map(
        |ty| quote_spanned!(ty.span()=> ::modelcontext::__private::assert_prompt_result::<#ty>();),
    );
    let callee = Callee { path: quote!(super::#fn_name), shares_self: false };
    let handler = closure(sig, &callee, args_ty.as_ref(), &format_ident!("args"));
    let name =
        options.name.as_ref().map(LitStr::value).unwrap_or_else(|| fn_name.unraw().to_string());
    let description = description(options.description.as_ref(), &func.attrs);
    let title = setter("title", options.title.as_ref());
    let doc = format!(" The `{name}` prompt, to pass to `McpServer::prompt`.");
    let constructor = quote! {
        #[doc = #doc]
        pub fn prompt() -> ::modelcontext::PromptDef {
            #result_check
            ::modelcontext::PromptDef::new(#name, #handler) #description #title
        }
    };
    fn_module(func, args_struct, constructor)
}
