use modelcontext::tool;

struct Shelf {
    number: u32,
}

/// Count the books on a shelf.
#[tool]
fn count_books(shelf: Shelf) -> String {
    shelf.number.to_string()
}

fn main() {}
