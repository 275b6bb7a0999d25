//! The handler closure passed to `ToolDef::new`, `ResourceDef::new` or `PromptDef::new`, and
//! the builder calls after it.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::ext::IdentExt;
use syn::{Attribute, Ident, ItemFn, LitStr, Path};

use crate::docs::doc_string;
use crate::signature::{Input, Signature};

/// How the closure reaches the user's function.
pub struct Callee {
    /// The function's path, such as `get_author` or `Self::search`.
    pub path: TokenStream,
    /// Whether the closure captures `this: Arc<Self>`, clones it into each call's future and
    /// passes `&this` as the receiver.
    pub shares_self: bool,
}

/// The handler in the smallest form the function needs: `|| ..`, `|args: Args| ..` or
/// `|cx: Context, args: Args| ..`. `args_ty` is `None` when no struct was generated;
/// `convert`, when given, is an expression that turns the function's value (bound to
/// `output`) into what the handler returns.
///
/// ```text
/// |args: Args| async move { get_author(args.title) }
/// ```
pub fn closure(
    sig: &Signature,
    callee: &Callee,
    args_ty: Option<&Ident>,
    binding: &Ident,
    krate: &Path,
    convert: Option<&TokenStream>,
) -> TokenStream {
    let receiver = callee.shares_self.then(|| quote!(&this));
    let inputs = sig.inputs.iter().map(|input| match input {
        Input::Context => quote!(cx),
        Input::Arg(param) => {
            let field = &param.ident;
            quote!(#binding.#field)
        }
    });
    let path = &callee.path;
    let await_call = sig.is_async.then(|| quote!(.await));
    let call_args = receiver.into_iter().chain(inputs);
    let call = quote!(#path(#(#call_args),*) #await_call);
    let future = match convert {
        Some(convert) => quote!(async move {
            let output = #call;
            #convert
        }),
        None => quote!(async move { #call }),
    };
    let unused = sig.args().next().is_none();
    let params = match (sig.has_context(), args_ty) {
        (true, Some(ty)) if unused => quote!(cx: #krate::Context, _: #ty),
        (true, Some(ty)) => quote!(cx: #krate::Context, #binding: #ty),
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

/// `.description("..")`, from the option or else the doc comment; nothing if neither exists.
pub fn description(option: Option<&LitStr>, attrs: &[Attribute]) -> TokenStream {
    match (option, doc_string(attrs)) {
        (Some(text), _) => quote!(.description(#text)),
        (None, Some(text)) => quote!(.description(#text)),
        (None, None) => quote!(),
    }
}

/// `.complete("name", f)` for each parameter with `#[arg(complete = f)]`.
pub fn completers(sig: &Signature) -> TokenStream {
    sig.args()
        .filter_map(|param| {
            let completer = param.options.complete.as_ref()?;
            let name = param.wire_name();
            Some(quote!(.complete(#name, #completer)))
        })
        .collect()
}

/// `.method(value)` if the value is set.
pub fn setter(method: &str, value: Option<&impl ToTokens>) -> TokenStream {
    let method = Ident::new(method, proc_macro2::Span::call_site());
    match value {
        Some(value) => quote!(.#method(#value)),
        None => quote!(),
    }
}

/// The companion of a free function: an empty braced struct of the same name, whose
/// associated function (the constructor) builds the definition. A braced struct lives only in
/// the type namespace, so it coexists with the function, and `get_author::tool()` reads like a
/// module path. Unlike a module, the constructor sees everything the function sees, including
/// items declared in the same function body (tests, doctests) and `self::`/`super::` paths.
pub fn companion(func: &ItemFn, constructor: TokenStream) -> TokenStream {
    let vis = &func.vis;
    let name = &func.sig.ident;
    let doc = format!(" Holds the constructor of the `{}` definition.", name.unraw());
    quote! {
        #[doc(hidden)]
        #[doc = #doc]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #name {}

        impl #name {
            #constructor
        }
    }
}
