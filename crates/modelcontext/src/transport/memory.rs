//! In-memory transport: two peers in one process, speaking the real wire format.
//!
//! Each side runs the stdio framing over an in-memory pipe, so every message is serialized and
//! parsed exactly as it would be over a process boundary: a test through here cannot pass on a
//! shortcut that the real wire would reject.

use tokio::io::BufReader;

use super::{Connection, Stdio, Transport};

/// Bytes buffered in each direction of the pipe before the writer waits.
const PIPE_BYTES: usize = 256 * 1024;

/// Two connected ends, e.g. one for a server and one for a client.
pub fn memory_pair() -> (Connection, Connection) {
    let (a_to_b_write, a_to_b_read) = tokio::io::duplex(PIPE_BYTES);
    let (b_to_a_write, b_to_a_read) = tokio::io::duplex(PIPE_BYTES);
    let a = Stdio::new(BufReader::new(b_to_a_read), a_to_b_write).open();
    let b = Stdio::new(BufReader::new(a_to_b_read), b_to_a_write).open();
    (a, b)
}
