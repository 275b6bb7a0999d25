use modelcontext::tools;

#[derive(Default)]
struct Bookshop {
    visits: u32,
}

#[tools]
impl Bookshop {
    /// Record a visit.
    #[tool]
    fn visit(&mut self) -> String {
        self.visits += 1;
        self.visits.to_string()
    }
}

fn main() {}
