use modelcontext::tool;

/// List every title.
#[tool]
fn list_titles() -> Vec<String> {
    vec!["Dune".to_owned()]
}

fn main() {}
