//! `#[arg(...)]`: what a parameter adds to its field of the arguments struct.

use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Expr, LitStr};

use crate::kind::Kind;

/// The options of one parameter, from its `#[arg(...)]` attributes.
#[derive(Default)]
pub struct ArgOptions {
    /// `description = "..."`: the field's doc comment, so the schema has a `description`.
    pub description: Option<LitStr>,
    /// `default = expr`: the value used when the argument is absent.
    pub default: Option<Expr>,
    /// `minimum = n`: a numeric lower bound.
    pub minimum: Option<Expr>,
    /// `maximum = n`: a numeric upper bound.
    pub maximum: Option<Expr>,
    /// `min_length = n`: a string (or array) length lower bound.
    pub min_length: Option<Expr>,
    /// `max_length = n`: a string (or array) length upper bound.
    pub max_length: Option<Expr>,
    /// `pattern = "regex"`: a regular expression strings must match.
    pub pattern: Option<LitStr>,
    /// `rename = "..."`: the argument's name on the wire, if not the parameter's.
    pub rename: Option<LitStr>,
    /// `complete = path` (prompts and templates): the argument's completer, an async fn
    /// taking a `CompletionRequest`.
    pub complete: Option<Expr>,
}

impl ArgOptions {
    /// Adds the options of one `#[arg(...)]` attribute, rejecting keys `kind` does not accept.
    pub fn parse_attr(&mut self, attr: &Attribute, kind: Kind) -> syn::Result<()> {
        attr.parse_nested_meta(|meta| {
            let key = meta.path.to_token_stream().to_string();
            if !kind.arg_keys().contains(&key.as_str()) {
                return Err(meta.error(unknown_key(&key, kind)));
            }
            self.parse_value(&key, &meta)
        })
    }

    fn parse_value(&mut self, key: &str, meta: &ParseNestedMeta) -> syn::Result<()> {
        let value = meta.value()?;
        match key {
            "description" => set(&mut self.description, meta, value.parse()?),
            "default" => set(&mut self.default, meta, value.parse()?),
            "minimum" => set(&mut self.minimum, meta, value.parse()?),
            "maximum" => set(&mut self.maximum, meta, value.parse()?),
            "min_length" => set(&mut self.min_length, meta, value.parse()?),
            "max_length" => set(&mut self.max_length, meta, value.parse()?),
            "pattern" => set(&mut self.pattern, meta, value.parse()?),
            "rename" => set(&mut self.rename, meta, value.parse()?),
            "complete" => set(&mut self.complete, meta, value.parse()?),
            _ => unreachable!("`{key}` is in arg_keys but has no parser"),
        }
    }
}

fn set<T>(slot: &mut Option<T>, meta: &ParseNestedMeta, value: T) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error("this `#[arg]` option is given twice"));
    }
    *slot = Some(value);
    Ok(())
}

fn unknown_key(key: &str, kind: Kind) -> String {
    format!(
        "unknown `#[arg]` option `{key}` on a {} parameter; expected one of: {}",
        kind.name(),
        kind.arg_keys().join(", ")
    )
}
