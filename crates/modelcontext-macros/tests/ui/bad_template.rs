use modelcontext::{ResourceError, resource};

/// A book's text: the template's `{` is never closed, which the server would refuse.
#[resource("books://{title/text")]
fn book(title: String) -> Result<String, ResourceError> {
    Ok(title)
}

/// Braces that close, around an operator RFC 6570 reserves (§2.2): refused all the same.
#[resource("books://{!title}")]
fn shelf(title: String) -> Result<String, ResourceError> {
    Ok(title)
}

fn main() {}
