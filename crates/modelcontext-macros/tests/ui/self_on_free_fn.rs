use modelcontext::tool;

struct Bookshop;

impl Bookshop {
    /// Count the books.
    #[tool]
    fn count(&self) -> String {
        "0".to_owned()
    }
}

fn main() {}
