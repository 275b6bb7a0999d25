//! The generated arguments struct: one field per parameter, deriving `Deserialize` and
//! `JsonSchema`, so the input schema and the decoding come from the same place.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, Path, Type};

use crate::options::crate_path_string;
use crate::signature::{Param, Signature};

/// The struct named `name` for the function's arguments, if it needs one: its name, and the
/// items to emit where the handler closure can see them. A function needs one if it has
/// arguments or takes the context (the `Fn(Context, A)` form needs an `A`, even an empty one).
pub fn struct_for(sig: &Signature, name: &str, krate: &Path) -> Option<(Ident, TokenStream)> {
    if sig.args().next().is_none() && !sig.has_context() {
        return None;
    }
    let name = format_ident!("{name}");
    let params: Vec<&Param> = sig.args().collect();
    let items = args_struct(&name, &params, krate);
    Some((name, items))
}

/// `struct #name { .. }` and the `__default_*` functions its `#[serde(default)]`s name. Both
/// derives go through `modelcontext` (`krate`), so users need not depend on serde or schemars.
fn args_struct(name: &Ident, params: &[&Param], krate: &Path) -> TokenStream {
    let fields = params.iter().map(|param| field(param));
    let defaults = params.iter().filter_map(|param| default_fn(param));
    let serde = crate_path_string(krate, "__private::serde");
    let schemars = crate_path_string(krate, "schemars");
    quote! {
        #[derive(
            #krate::__private::serde::Deserialize,
            #krate::schemars::JsonSchema,
        )]
        #[serde(crate = #serde)]
        #[schemars(crate = #schemars)]
        struct #name {
            #(#fields,)*
        }

        #(#defaults)*
    }
}

/// `assert_fn::<T>();` for each parameter type, spanned on the type so that an unsuitable type
/// is reported where the user wrote it, with the message of the assertion's trait.
pub fn assertions(params: &[&Param], assert_fn: &str, krate: &Path) -> TokenStream {
    params.iter().map(|param| assertion(&param.ty, assert_fn, krate)).collect()
}

/// `<krate>::__private::<assert_fn>::<T>();`, spanned on `ty`.
pub fn assertion(ty: &Type, assert_fn: &str, krate: &Path) -> TokenStream {
    let assert_fn = format_ident!("{assert_fn}");
    quote_spanned!(ty.span()=> #krate::__private::#assert_fn::<#ty>();)
}

fn field(param: &Param) -> TokenStream {
    let Param { ident, ty, options, field_attrs } = param;
    let doc = options.description.iter().map(|text| quote!(#[doc = #text]));
    let rename = options.rename.iter().map(|name| quote!(#[serde(rename = #name)]));
    let default = options.default.as_ref().map(|_| {
        let path = default_fn_name(ident).to_string();
        quote!(#[serde(default = #path)])
    });
    let range = bounds("range", &options.minimum, &options.maximum);
    let length = bounds("length", &options.min_length, &options.max_length);
    let pattern = options.pattern.iter().map(|regex| quote!(#[schemars(pattern(#regex))]));
    quote! {
        #(#doc)* #(#rename)* #default #range #length #(#pattern)* #(#field_attrs)*
        #ident: #ty
    }
}

/// `#[schemars(range(min = .., max = ..))]` (or `length`), if either bound is given.
fn bounds(key: &str, min: &Option<Expr>, max: &Option<Expr>) -> Option<TokenStream> {
    let key = format_ident!("{key}");
    let min = min.iter().map(|min| quote!(min = #min));
    let max = max.iter().map(|max| quote!(max = #max));
    let parts: Vec<TokenStream> = min.chain(max).collect();
    (!parts.is_empty()).then(|| quote!(#[schemars(#key(#(#parts),*))]))
}

/// `fn __default_x() -> T { expr }`. A string literal goes through `Into`, so that
/// `default = "text"` works for a `String` parameter.
fn default_fn(param: &Param) -> Option<TokenStream> {
    let expr = param.options.default.as_ref()?;
    let name = default_fn_name(&param.ident);
    let ty = &param.ty;
    let value = match expr {
        Expr::Lit(ExprLit { lit: Lit::Str(_), .. }) => quote!(::std::convert::Into::into(#expr)),
        _ => quote!(#expr),
    };
    Some(quote! {
        fn #name() -> #ty {
            #value
        }
    })
}

fn default_fn_name(ident: &Ident) -> Ident {
    format_ident!("__default_{}", ident.unraw())
}
