//! The signature of a tool, resource or prompt function: its context parameter, its arguments
//! and its return type, checked for what the macros can turn into an arguments struct.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{Attribute, FnArg, Ident, Pat, PatIdent, PatType, ReturnType, Type, parse_quote};

use crate::arg::ArgOptions;
use crate::errors::combine;
use crate::kind::Kind;

/// One argument of the function: a field of the generated struct.
pub struct Param {
    /// The parameter's name, which is also the field's.
    pub ident: Ident,
    /// The parameter's type, which is also the field's.
    pub ty: Type,
    /// From `#[arg(...)]`.
    pub options: ArgOptions,
    /// `#[serde(...)]` and `#[schemars(...)]` attributes, moved from the parameter to the field.
    pub field_attrs: Vec<Attribute>,
}

impl Param {
    /// The argument's name on the wire: `rename`, else the parameter's name without `r#`.
    pub fn wire_name(&self) -> String {
        match &self.options.rename {
            Some(rename) => rename.value(),
            None => self.ident.unraw().to_string(),
        }
    }
}

/// A parameter of the function, in declaration order.
#[allow(clippy::large_enum_variant)] // A few per function, built once at compile time.
pub enum Input {
    /// The request context, passed through by the handler.
    Context,
    /// An argument, read from the arguments struct.
    Arg(Param),
}

/// What the expansions need to know about a function.
pub struct Signature {
    /// The function's name.
    pub ident: Ident,
    /// Whether it is an `async fn` (its call is then awaited).
    pub is_async: bool,
    /// Whether it takes `&self` (only inside `#[tools]`).
    pub has_receiver: bool,
    /// The parameters other than `self`, in order.
    pub inputs: Vec<Input>,
    /// The return type, or `None` when it cannot be named (`impl Trait`).
    pub output: Option<Type>,
}

impl Signature {
    /// Reads `sig`, first taking the `#[arg]`, `#[serde]` and `#[schemars]` attributes off its
    /// parameters (so the function compiles as written even when an error is reported).
    /// `in_impl` is true inside `#[tools]`, where `&self` is allowed.
    pub fn parse(sig: &mut syn::Signature, kind: Kind, in_impl: bool) -> syn::Result<Signature> {
        let mut errors = Vec::new();
        let mut inputs = Vec::new();
        let mut has_receiver = false;
        for input in &mut sig.inputs {
            match parse_input(input, kind, in_impl) {
                Ok(Some(input)) => inputs.push(input),
                Ok(None) => has_receiver = true,
                Err(error) => errors.push(error),
            }
        }
        errors.extend(check_fn(sig, kind).err());
        errors.extend(check_one_context(sig, kind).err());
        combine(errors)?;
        let output = output_type(&sig.output);
        let ident = sig.ident.clone();
        Ok(Signature { ident, is_async: sig.asyncness.is_some(), has_receiver, inputs, output })
    }

    /// The arguments, without the context.
    pub fn args(&self) -> impl Iterator<Item = &Param> {
        self.inputs.iter().filter_map(|input| match input {
            Input::Arg(param) => Some(param),
            Input::Context => None,
        })
    }

    /// Whether a parameter takes the request context.
    pub fn has_context(&self) -> bool {
        self.inputs.iter().any(|input| matches!(input, Input::Context))
    }
}

fn check_fn(sig: &syn::Signature, kind: Kind) -> syn::Result<()> {
    let kind = kind.name();
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        let message = format!(
            "a {kind} function cannot be generic: its schema is derived from concrete parameter types"
        );
        return Err(syn::Error::new_spanned(&sig.generics, message));
    }
    if let syn::Safety::Unsafe(unsafety) = &sig.safety {
        return Err(syn::Error::new_spanned(
            unsafety,
            format!("a {kind} function cannot be `unsafe`"),
        ));
    }
    Ok(())
}

fn check_one_context(sig: &syn::Signature, kind: Kind) -> syn::Result<()> {
    let mut contexts = sig.inputs.iter().filter_map(|input| match input {
        FnArg::Typed(typed) if is_context(&typed.ty) => Some(typed),
        _ => None,
    });
    match (contexts.next(), contexts.next()) {
        (Some(_), Some(second)) => Err(syn::Error::new_spanned(
            second,
            format!("a {} function takes at most one `Context` parameter", kind.name()),
        )),
        _ => Ok(()),
    }
}

/// `None` for the receiver.
fn parse_input(input: &mut FnArg, kind: Kind, in_impl: bool) -> syn::Result<Option<Input>> {
    match input {
        FnArg::Receiver(receiver) => check_receiver(receiver, kind, in_impl).map(|()| None),
        FnArg::Typed(typed) => parse_typed(typed, kind).map(Some),
    }
}

fn check_receiver(receiver: &syn::Receiver, kind: Kind, in_impl: bool) -> syn::Result<()> {
    // `&self` as written: not `&mut self`, `mut self`, `self` or `self: &Self`.
    let shared_ref = matches!(receiver.kind, syn::ReceiverKind::Reference(_, _, None));
    let message = match (kind, in_impl) {
        (_, true) if shared_ref && receiver.mutability.is_none() => return Ok(()),
        (_, true) => {
            "tool methods take `&self`: one value serves concurrent calls through an `Arc` (keep mutable state in a `Mutex` or atomics)"
        }
        (Kind::Tool, false) => "`#[tool]` on a method needs `#[tools]` on its `impl` block",
        (Kind::Resource, false) => "`#[resource]` goes on a free function, not a method",
        (Kind::Prompt, false) => "`#[prompt]` goes on a free function, not a method",
    };
    Err(syn::Error::new_spanned(receiver, message))
}

fn parse_typed(typed: &mut PatType, kind: Kind) -> syn::Result<Input> {
    let (arg_attrs, field_attrs) = take_attrs(&mut typed.attrs);
    if is_context(&typed.ty) {
        return match arg_attrs.first() {
            Some(attr) => {
                Err(syn::Error::new_spanned(attr, "`#[arg]` does not apply to the `Context`"))
            }
            None => Ok(Input::Context),
        };
    }
    let ident = param_ident(&typed.pat, kind)?;
    check_type(&typed.ty, kind)?;
    let mut options = ArgOptions::default();
    let parsed = arg_attrs.iter().map(|attr| options.parse_attr(attr, kind));
    combine(parsed.filter_map(Result::err).collect::<Vec<_>>())?;
    Ok(Input::Arg(Param { ident, ty: (*typed.ty).clone(), options, field_attrs }))
}

/// Splits off `#[arg]` attributes and the ones that belong on the field; the rest (`cfg`,
/// lints) stay on the parameter.
fn take_attrs(attrs: &mut Vec<Attribute>) -> (Vec<Attribute>, Vec<Attribute>) {
    let (mut args, mut fields, mut kept) = (Vec::new(), Vec::new(), Vec::new());
    for attr in attrs.drain(..) {
        let path = attr.path();
        if path.is_ident("arg") {
            args.push(attr);
        } else if path.is_ident("serde") || path.is_ident("schemars") {
            fields.push(attr);
        } else {
            kept.push(attr);
        }
    }
    *attrs = kept;
    (args, fields)
}

fn param_ident(pat: &Pat, kind: Kind) -> syn::Result<Ident> {
    match pat {
        Pat::Ident(PatIdent { by_ref: None, subpat: None, ident, .. }) => Ok(ident.clone()),
        _ => Err(syn::Error::new_spanned(
            pat,
            format!(
                "{} parameters must be plain names, like `title: String`: each name becomes an argument name",
                kind.name()
            ),
        )),
    }
}

fn check_type(ty: &Type, kind: Kind) -> syn::Result<()> {
    let message = if has_token(ty.to_token_stream(), &|tt| is_ident(tt, "impl")) {
        "`impl Trait` parameters make the function generic; name a concrete type".to_owned()
    } else if has_token(
        ty.to_token_stream(),
        &|tt| matches!(tt, TokenTree::Punct(p) if p.as_char() == '&'),
    ) {
        format!(
            "{} arguments are deserialized into owned values: use an owned type (`String`, not `&str`)",
            kind.name()
        )
    } else if kind == Kind::Prompt && !is_string_or_option(ty) {
        "prompt arguments are strings on the wire: use `String` (required) or `Option<String>` (optional)".to_owned()
    } else if has_token(ty.to_token_stream(), &|tt| is_ident(tt, kind.struct_name())) {
        let name = kind.struct_name();
        format!(
            "a type named `{name}` clashes with the generated `{name}` struct; import it under another name"
        )
    } else {
        return Ok(());
    };
    Err(syn::Error::new_spanned(ty, message))
}

/// Whether the type is spelled `Context` (any path ending in it).
pub fn is_context(ty: &Type) -> bool {
    last_segment(ty)
        .is_some_and(|segment| segment.ident == "Context" && segment.arguments.is_none())
}

fn is_string_or_option(ty: &Type) -> bool {
    let Some(segment) = last_segment(ty) else { return false };
    if segment.ident == "String" {
        return segment.arguments.is_none();
    }
    let syn::PathArguments::AngleBracketed(args) = &segment.arguments else { return false };
    let inner = match args.args.first() {
        Some(syn::GenericArgument::Type(inner)) if args.args.len() == 1 => inner,
        _ => return false,
    };
    segment.ident == "Option" && last_segment(inner).is_some_and(|s| s.ident == "String")
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        _ => None,
    }
}

fn output_type(output: &ReturnType) -> Option<Type> {
    match output {
        ReturnType::Default => Some(parse_quote!(())),
        ReturnType::Type(_, ty) if has_token(ty.to_token_stream(), &|tt| is_ident(tt, "impl")) => {
            None
        }
        ReturnType::Type(_, ty) => Some((**ty).clone()),
    }
}

fn has_token(tokens: TokenStream, predicate: &impl Fn(&TokenTree) -> bool) -> bool {
    tokens.into_iter().any(|tt| match &tt {
        TokenTree::Group(group) => has_token(group.stream(), predicate),
        _ => predicate(&tt),
    })
}

fn is_ident(tt: &TokenTree, name: &str) -> bool {
    matches!(tt, TokenTree::Ident(ident) if ident == name)
}
