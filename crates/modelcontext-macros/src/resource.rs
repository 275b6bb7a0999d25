//! `#[resource("uri or template", ...)]` on a free function.
//!
//! ```text
//! /// A book's text.
//! #[resource("books://{title}")]
//! async fn book(title: String) -> Result<String, ResourceError> { .. }
//! ```
//! keeps the function and adds (paths shortened, assertions left out):
//! ```text
//! #[doc(hidden)]
//! pub struct book {}
//!
//! impl book {
//!     pub fn resource() -> ::modelcontext::ResourceDef {
//!         #[derive(Deserialize, JsonSchema)]
//!         struct Params { title: String }
//!         ::modelcontext::ResourceDef::new("books://{title}", |params: Params| async move { book(params.title).await })
//!             .name("book")
//!             .description("A book's text.")
//!     }
//! }
//! ```

use std::collections::BTreeSet;

use modelcontext_types::uri_template::UriTemplate;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{ItemFn, LitStr, Token};

use crate::args_struct::{assertion, assertions, struct_for};
use crate::errors::{both, parse_item_fn, with_error};
use crate::handler::{Callee, closure, companion, description, setter};
use crate::kind::Kind;
use crate::options::Options;
use crate::signature::{Param, Signature};

/// Expands `#[resource(attr)] item`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut func = match parse_item_fn(item, Kind::Resource) {
        Ok(func) => func,
        Err((error, item)) => return with_error(item, error),
    };
    let attr = parse_attr(attr);
    let sig = Signature::parse(&mut func.sig, Kind::Resource, false);
    let expanded = both(attr, sig).and_then(|((uri, options), sig)| {
        check_params(&uri, &sig)?;
        Ok(companion(&func, constructor(&func, &sig, &uri, &options)))
    });
    match expanded {
        Ok(companion) => quote!(#func #companion),
        Err(error) => with_error(quote!(#func), error),
    }
}

/// `"uri", option = value, ...`
fn parse_attr(attr: TokenStream) -> syn::Result<(LitStr, Options)> {
    if attr.is_empty() {
        let message =
            "`#[resource]` needs a URI or URI template, like `#[resource(\"books://{title}\")]`";
        return Err(syn::Error::new(Span::call_site(), message));
    }
    let parser = |input: ParseStream| {
        let uri: LitStr = input.parse()?;
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
        Ok((uri, Options::parse(input.parse()?, Kind::Resource)?))
    };
    parser.parse2(attr)
}

/// The parameters (other than a `Context`) must be exactly the template's variables.
fn check_params(uri: &LitStr, sig: &Signature) -> syn::Result<()> {
    let variables = template_variables(uri)?;
    let params: BTreeSet<String> = sig.args().map(Param::wire_name).collect();
    if variables == params {
        return Ok(());
    }
    let message = format!(
        "the parameters of `{}` must be the variables of its URI template\n  template variables:  {}\n  function parameters: {}",
        sig.ident.unraw(),
        list(&variables),
        list(&params),
    );
    Err(syn::Error::new(uri.span(), message))
}

fn list(names: &BTreeSet<String>) -> String {
    match names.is_empty() {
        true => "(none)".to_owned(),
        false => names.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", "),
    }
}

/// The variable names the server will bind for `uri`: none for a fixed URI, else those of the
/// template as the runtime's parser reads it, so a template the server would refuse at
/// registration is refused here, with its message.
fn template_variables(uri: &LitStr) -> syn::Result<BTreeSet<String>> {
    let text = uri.value();
    // `ResourceDef::new`'s rule: a URI holding `{` is a template, anything else a fixed URI.
    if !text.contains('{') {
        return Ok(BTreeSet::new());
    }
    let template = UriTemplate::parse(&text)
        .map_err(|error| syn::Error::new(uri.span(), format!("invalid URI template: {error}")))?;
    Ok(template.variables().map(str::to_owned).collect())
}

fn constructor(func: &ItemFn, sig: &Signature, uri: &LitStr, options: &Options) -> TokenStream {
    let fn_name = &sig.ident;
    let krate = options.crate_path();
    let params: Vec<&Param> = sig.args().collect();
    let param_checks = assertions(&params, "assert_resource_param", &krate);
    let result_check =
        sig.output.as_ref().map(|ty| assertion(ty, "assert_resource_result", &krate));
    let (params_ty, params_struct) = struct_for(sig, "Params", &krate).unzip();
    let callee = Callee { path: quote!(#fn_name), shares_self: false };
    let handler = closure(sig, &callee, params_ty.as_ref(), &format_ident!("params"), &krate, None);
    let name = options.name.as_ref().map_or_else(|| fn_name.unraw().to_string(), LitStr::value);
    let description = description(options.description.as_ref(), &func.attrs);
    let mime_type = setter("mime_type", options.mime_type.as_ref());
    let title = setter("title", options.title.as_ref());
    let metadata = options.metadata_setters();
    let completers = crate::handler::completers(sig);
    let doc = format!(" The `{name}` resource, to pass to `McpServer::resource`.");
    quote! {
        #[doc = #doc]
        pub fn resource() -> #krate::ResourceDef {
            #param_checks
            #result_check
            #params_struct
            #krate::ResourceDef::new(#uri, #handler)
                .name(#name) #description #mime_type #title #metadata #completers
        }
    }
}
