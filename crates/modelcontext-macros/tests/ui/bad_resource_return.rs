use modelcontext::resource;

/// The catalog.
#[resource("books://catalog")]
fn catalog() -> Option<String> {
    None
}

fn main() {}
