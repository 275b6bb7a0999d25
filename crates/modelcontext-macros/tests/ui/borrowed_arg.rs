use modelcontext::tool;

/// Greet someone.
#[tool]
fn greet(name: &str) -> String {
    format!("Hello, {name}!")
}

fn main() {}
