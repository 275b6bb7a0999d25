use modelcontext::tool;

/// Neither a tool output nor serializable.
struct Shelf;

/// List every title.
#[tool]
fn list_titles() -> Shelf {
    Shelf
}

fn main() {}
