//! `#[tool]` on a free function.
//!
//! ```text
//! /// Look up the author of a book.
//! #[tool]
//! fn get_author(title: String) -> Result<String, String> { .. }
//! ```
//! keeps the function and adds (paths shortened):
//! ```text
//! #[doc(hidden)]
//! pub struct get_author {}
//!
//! impl get_author {
//!     pub fn tool() -> ::modelcontext::ToolDef {
//!         ::modelcontext::__private::assert_tool_argument::<String>();
//!         #[derive(Deserialize, JsonSchema)]
//!         struct Args { title: String }
//!         ::modelcontext::ToolDef::new("get_author", |args: Args| async move {
//!             let output = get_author(args.title);
//!             // as is for a tool output; wrapped in `Json` for a `Serialize + JsonSchema` type
//!             (&&&::modelcontext::__private::Pick::of(&output)).pick()(output)
//!         })
//!             .description("Look up the author of a book.")
//!     }
//! }
//! ```

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, ItemFn, LitStr, Path, Type};

use crate::args_struct::{assertions, struct_for};
use crate::errors::{both, parse_item_fn, with_error};
use crate::handler::{Callee, closure, companion, description, setter};
use crate::kind::Kind;
use crate::options::Options;
use crate::signature::{Param, Signature};

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
            let companion = companion(&func, constructor(&func, &sig, &options));
            quote!(#func #companion)
        }
        Err(error) => with_error(quote!(#func), error),
    }
}

fn constructor(func: &ItemFn, sig: &Signature, options: &Options) -> TokenStream {
    let fn_name = &sig.ident;
    let callee = Callee { path: quote!(#fn_name), shares_self: false };
    let def = tool_def(sig, options, &func.attrs, &callee);
    let doc = format!(" The `{}` tool, to pass to `McpServer::tool`.", tool_name(sig, options));
    let krate = options.crate_path();
    quote! {
        #[doc = #doc]
        pub fn tool() -> #krate::ToolDef {
            #def
        }
    }
}

/// The type assertions, the `Args` struct if needed, then `ToolDef::new(name, handler)` with
/// its builder calls. Shared with `#[tools]`.
pub fn tool_def(
    sig: &Signature,
    options: &Options,
    attrs: &[Attribute],
    callee: &Callee,
) -> TokenStream {
    let krate = options.crate_path();
    let params: Vec<&Param> = sig.args().collect();
    let (args_ty, args_struct) = struct_for(sig, "Args", &krate).unzip();
    let arg_checks = assertions(&params, "assert_tool_argument", &krate);
    let name = tool_name(sig, options);
    let convert = sig.output.as_ref().map(|ty| structured(ty, &krate));
    let handler =
        closure(sig, callee, args_ty.as_ref(), &format_ident!("args"), &krate, convert.as_ref());
    let description = description(options.description.as_ref(), attrs);
    let title = setter("title", options.title.as_ref());
    let annotations = options.annotations.as_ref().map(|a| a.to_expr(&krate));
    let annotations = setter("annotations", annotations.as_ref());
    let metadata = options.metadata_setters();
    let task = options.task.as_ref().map(|task| task.to_setter(&krate));
    let ui = setter("ui", options.ui.as_ref());
    let app_only = options.app_only.map(|()| quote!(.app_only()));
    // The assertions go first: rustc reports errors in source order, and theirs say what the
    // type must implement, while the derives' errors that follow only name a missing bound.
    quote! {
        #arg_checks
        #args_struct
        #krate::ToolDef::new(#name, #handler) #description #title #annotations #metadata #task #ui
            #app_only
    }
}

/// The function's value as a tool result: as is when its type is one, and wrapped in `Json`
/// when it is a plain `Serialize + JsonSchema` type (or a `Result` of one); see
/// `modelcontext::__private::Pick`. Spanned on the return type, so a type that fits neither
/// is reported there.
fn structured(ty: &Type, krate: &Path) -> TokenStream {
    quote_spanned! {ty.span()=>
        #[allow(unused_imports)]
        use #krate::__private::{PickResult as _, PickStructuredResult as _};
        (&&&#krate::__private::Pick::of(&output)).pick()(output)
    }
}

fn tool_name(sig: &Signature, options: &Options) -> String {
    options.name.as_ref().map(LitStr::value).unwrap_or_else(|| sig.ident.unraw().to_string())
}
