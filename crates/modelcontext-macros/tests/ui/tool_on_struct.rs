use modelcontext::tool;

#[tool]
struct Bookshop {
    books: Vec<String>,
}

fn main() {}
