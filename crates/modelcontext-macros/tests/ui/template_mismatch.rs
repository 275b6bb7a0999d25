use modelcontext::{ResourceError, resource};

/// A book's text.
#[resource("books://{title}/chapters/{chapter}")]
fn chapter(title: String, number: u32) -> Result<String, ResourceError> {
    Ok(format!("{title} {number}"))
}

fn main() {}
