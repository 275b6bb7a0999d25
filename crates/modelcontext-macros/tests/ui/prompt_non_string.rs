use modelcontext::prompt;

/// Summarize a book in a number of words.
#[prompt]
fn summarize(title: String, words: u32) -> String {
    format!("Summarize {title} in {words} words.")
}

fn main() {}
