//! The generated arguments struct: one field per parameter, deriving `Deserialize` and
//! `JsonSchema`, so the input schema and the decoding come from the same place.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, LitStr};

use crate::signature::Param;

/// `pub struct #name { .. }` and the `__default_*` functions its `#[serde(default)]`s name.
pub fn args_struct(name: &Ident, params: &[&Param]) -> TokenStream {
    let fields = params.iter().map(|param| field(param));
    let defaults = params.iter().filter_map(|param| default_fn(param));
    quote! {
        #[derive(
            ::modelcontext::__private::serde::Deserialize,
            ::modelcontext::__private::schemars::JsonSchema,
        )]
        #[serde(crate = "::modelcontext::__private::serde")]
        #[schemars(crate = "::modelcontext::__private::schemars")]
        pub struct #name {
            #(#fields,)*
        }

        #(#defaults)*
    }
}

/// `assert_fn::<T>();` for each parameter type, spanned on the type so that an unsuitable type
/// is reported where the user wrote it, with the message of the assertion's trait.
pub fn assertions(params: &[&Param], assert_fn: &str) -> TokenStream {
    let assert_fn = format_ident!("{assert_fn}");
    let calls = params.iter().map(|param| {
        let ty = &param.ty;
        quote_spanned!(ty.span()=> ::modelcontext::__private::#assert_fn::<#ty>();)
    });
    quote!(#(#calls)*)
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
    let bound = LitStr::new(
        &format!("{}: ::modelcontext::__private::ToolArgument", quote!(#ty)),
        ty.span(),
    );
    quote! {
        #[serde(bound = #bound)] #(#doc)* #(#rename)* #default #range #length #(#pattern)* #(#field_attrs)*
        pub #ident: #ty
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
