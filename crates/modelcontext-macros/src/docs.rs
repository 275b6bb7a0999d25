//! Doc comments as descriptions.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The text of an item's doc comments: lines joined with newlines, common indentation removed,
/// blank lines (paragraph breaks) kept, surrounding whitespace trimmed. `None` if there is none.
pub fn doc_string(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter_map(doc_text)
        // `split`, not `lines`: an empty `///` line is a paragraph break and must count.
        .flat_map(|text| text.split('\n').map(str::to_owned).collect::<Vec<_>>())
        .collect();
    let indent = lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    let dedented: Vec<&str> =
        lines.iter().map(|line| line.get(indent..).unwrap_or("").trim_end()).collect();
    let text = dedented.join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The string of one `#[doc = "..."]` attribute (what `///` desugars to).
fn doc_text(attr: &Attribute) -> Option<String> {
    let Meta::NameValue(meta) = &attr.meta else { return None };
    if !meta.path.is_ident("doc") {
        return None;
    }
    let Expr::Lit(ExprLit { lit: Lit::Str(text), .. }) = &meta.value else { return None };
    Some(text.value())
}
