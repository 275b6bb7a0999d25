use std::sync::Arc;

use modelcontext::tools;

struct Till;

/// The block's `tool_defs` names the crate too, so the path is given once, on `#[tools]`.
#[tools]
impl Till {
    /// Open the till.
    #[tool(crate = "modelcontext")]
    fn open(&self) -> String {
        String::new()
    }
}

fn main() {
    let _ = Arc::new(Till).open();
}
