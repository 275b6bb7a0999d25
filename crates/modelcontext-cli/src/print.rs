//! Writing to stdout and stderr when their reader may have gone: `mcp ... 2>&1 | head -1`.
//!
//! `println!` and `eprintln!` panic when a write fails, and a pipe whose reader exited fails
//! every write with `BrokenPipe` (Rust ignores SIGPIPE, so the process is not killed the way
//! a C program would be). A person who piped into `head` has seen what they wanted: the
//! command ends quietly instead of with a panic and exit code 101.

use std::io::{ErrorKind, Write};

/// `eprintln!` that never panics: a line on stderr, dropped when nobody reads stderr.
macro_rules! say {
    ($($arg:tt)*) => { $crate::print::stderr(format_args!($($arg)*)) };
}

/// One line on stderr; a failed write is ignored (diagnostics are not worth stopping for).
pub fn stderr(line: std::fmt::Arguments<'_>) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{line}");
}

/// Text on stdout. When stdout's reader has gone, the output is what the command is for,
/// so nothing more is worth doing: the process exits, successfully (the reader chose to
/// stop). A child server sees its stdin close and exits too.
pub fn stdout(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if let Err(err) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        if err.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
}
