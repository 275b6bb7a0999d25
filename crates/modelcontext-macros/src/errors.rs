//! Errors: reporting them without hiding the user's item, gathering several into one, and
//! rejecting items that are not functions.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::Ident;

use crate::kind::Kind;

/// The item as written (minus the attributes we consumed) and the error: keeping the item
/// avoids a second wave of "cannot find function" errors.
pub fn with_error(item: TokenStream, error: syn::Error) -> TokenStream {
    let error = error.to_compile_error();
    quote!(#item #error)
}

/// Turns several errors into one, so the user sees all of them at once.
pub fn combine(errors: impl IntoIterator<Item = syn::Error>) -> syn::Result<()> {
    let mut errors = errors.into_iter();
    let Some(mut first) = errors.next() else { return Ok(()) };
    errors.for_each(|error| first.combine(error));
    Err(first)
}

/// Both values, or every error.
pub fn both<A, B>(a: syn::Result<A>, b: syn::Result<B>) -> syn::Result<(A, B)> {
    match (a, b) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (Err(mut first), Err(second)) => {
            first.combine(second);
            Err(first)
        }
        (Err(error), _) | (_, Err(error)) => Err(error),
    }
}

/// The function an item macro is applied to; anything else is an error naming the macro.
/// On error, the item is returned unchanged as tokens, to be emitted beside the error.
pub fn parse_item_fn(
    item: TokenStream,
    kind: Kind,
) -> Result<syn::ItemFn, (syn::Error, TokenStream)> {
    let parsed = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(parsed) => parsed,
        Err(error) => return Err((error, item)),
    };
    let name = kind.name();
    let (head, hint) = match &parsed {
        syn::Item::Fn(func) => return Ok(func.clone()),
        syn::Item::Impl(imp) if kind == Kind::Tool => (
            imp.impl_token.to_token_stream(),
            "; on an `impl` block, use `#[tools]` and mark its methods `#[tool]`",
        ),
        syn::Item::Struct(item) => (pair(&item.struct_token, &item.ident), ""),
        syn::Item::Enum(item) => (pair(&item.enum_token, &item.ident), ""),
        other => (other.to_token_stream(), ""),
    };
    let message = format!("`#[{name}]` goes on a function{hint}");
    Err((syn::Error::new_spanned(head, message), item))
}

fn pair(keyword: &impl ToTokens, ident: &Ident) -> TokenStream {
    let mut tokens = keyword.to_token_stream();
    ident.to_tokens(&mut tokens);
    tokens
}
