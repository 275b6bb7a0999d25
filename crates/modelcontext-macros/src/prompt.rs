//! `#[prompt]` on a free function.
//!
//! ```text
//! /// Ask for a review of a book.
//! #[prompt]
//! fn review(title: String, style: Option<String>) -> String { .. }
//! ```
//! keeps the function and adds (paths shortened, assertions left out):
//! ```text
//! #[doc(hidden)]
//! pub struct review {}
//!
//! impl review {
//!     pub fn prompt() -> ::modelcontext::PromptDef {
//!         #[derive(Deserialize, JsonSchema)]
//!         struct Args { title: String, style: Option<String> }
//!         ::modelcontext::PromptDef::new("review", |args: Args| async move { review(args.title, args.style) })
//!             .description("Ask for a review of a book.")
//!     }
//! }
//! ```

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::{ItemFn, LitStr};

use crate::args_struct::{assertion, struct_for};
use crate::errors::{both, parse_item_fn, with_error};
use crate::handler::{Callee, closure, companion, description, setter};
use crate::kind::Kind;
use crate::options::Options;
use crate::signature::Signature;

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
            let companion = companion(&func, constructor(&func, &sig, &options));
            quote!(#func #companion)
        }
        Err(error) => with_error(quote!(#func), error),
    }
}

/// Parameter types need no assertion: the signature check already required `String` or
/// `Option<String>`.
fn constructor(func: &ItemFn, sig: &Signature, options: &Options) -> TokenStream {
    let fn_name = &sig.ident;
    let krate = options.crate_path();
    let result_check = sig.output.as_ref().map(|ty| assertion(ty, "assert_prompt_result", &krate));
    let (args_ty, args_struct) = struct_for(sig, "Args", &krate).unzip();
    let callee = Callee { path: quote!(#fn_name), shares_self: false };
    let handler = closure(sig, &callee, args_ty.as_ref(), &format_ident!("args"), &krate, None);
    let name = options.name.as_ref().map_or_else(|| fn_name.unraw().to_string(), LitStr::value);
    let description = description(options.description.as_ref(), &func.attrs);
    let title = setter("title", options.title.as_ref());
    let metadata = options.metadata_setters();
    let completers = crate::handler::completers(sig);
    let doc = format!(" The `{name}` prompt, to pass to `McpServer::prompt`.");
    quote! {
        #[doc = #doc]
        pub fn prompt() -> #krate::PromptDef {
            #result_check
            #args_struct
            #krate::PromptDef::new(#name, #handler) #description #title #metadata #completers
        }
    }
}
