use modelcontext::tool;

/// Search the catalog.
#[tool]
fn search(#[arg(describe = "What to look for.")] query: String) -> String {
    query
}

fn main() {}
