//! The handler closure passed to `ToolDef::new`, `ResourceDef::new` or `PromptDef::new`, and
//! the builder calls after it.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{Attribute, Ident, ItemFn, LitStr};

use crate::docs::doc_string;
use crate::signature::{Input, Signature};

/// How the closure reaches the user's function.
pub struct Callee {
    /// The path or method call, such as `super::get_author` or `this.search`.
    pub path: TokenStream,
    /// Whether the closure captures `this: Arc<Self>` and clones it into each call's future.
    pub shares_self: bool,
}

/// The handler in the smallest form the function needs: `|| ..`, `|args: Args| ..` or
/// `|cx: Context, args: Args| ..`. `args_ty` is `None` when no struct was generated.
///
/// ```text
/// |args: Args| async move { super::get_author(args.title) }
/// ```
pub fn closure(
    sig: &Signature,
    callee: &Callee,
    args_ty: Option<&TokenStream>,
    binding: &Ident,
) -> TokenStream {
    let call_args = sig.inputs.iter().map(|input| match input {
        Input::Context => quote!(cx),
        Input::Arg(param) => {
            let field = &param.ident;
            quote!(#binding.#field)
        }
    });
    let path = &callee.path;
    let await_call = sig.is_async.then(|| quote!(.await));
    let future = quote!(async move { #path(#(#call_args),*) #await_call });
    let unused = sig.args().next().is_none();
    let params = match (sig.has_context(), args_ty) {
        (true, Some(ty)) if unused => quote!(cx: ::modelcontext::Context, _: #ty),
        (true, Some(ty)) => quote!(cx: ::modelcontext::Context, #binding: #ty),
        (_, Some(ty)) => quote!(#binding: #ty),
        (_, None) => quote!(),
    };
    if callee.shares_self {
        quote!(move |#params| {
            let this = ::std::sync::Arc::clone(&this);
            #future
        })
    } else {
        quote!(|#params| #future)
    }
}

/// Whether the function needs a generated struct: it has arguments, or it takes the context
/// (the `Fn(Context, A)` form needs an `A`, even an empty one).
pub fn needs_struct(sig: &Signature) -> bool {
    sig.args().next().is_some() || sig.has_context()
}

/// `.description("..")`, from the option or else the doc comment; nothing if neither exists.
pub fn description(option: Option<&LitStr>, attrs: &[Attribute]) -> TokenStream {
    match (option, doc_string(attrs)) {
        (Some(text), _) => quote!(.description(#text)),
        (None, Some(text)) => quote!(.description(#text)),
        (None, None) => quote!(),
    }
}

/// `.method(value)` if the value is set.
pub fn setter(method: &str, value: Option<&impl ToTokens>) -> TokenStream {
    let method = Ident::new(method, proc_macro2::Span::call_site());
    match value {
        Some(value) => quote!(.#method(#value)),
        None => quote!(),
    }
}

/// The hidden module beside a free function, named like it (modules and functions live in
/// different namespaces): a glob import of the parent, so parameter types resolve as they do
/// at the function, the arguments struct, and the constructor.
pub fn fn_module(
    func: &ItemFn,
    args_struct: Option<TokenStream>,
    constructor: TokenStream,
) -> TokenStream {
    let vis = &func.vis;
    let name = &func.sig.ident;
    quote! {
        #[doc(hidden)]
        #[allow(unused_imports, missing_docs)]
        #vis mod #name {
            use super::*;

            #args_struct

            #constructor
        }
    }
}
