//! Real processes over real pipes: the `bookshop` example as a child, in both eras.

use std::path::PathBuf;

use modelcontext::types::Era;
use modelcontext::{ChildProcess, Client, EraMode};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// `cargo test` builds the examples next to the test binary's `deps/` folder.
pub(crate) fn bookshop_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().and_then(|deps| deps.parent()).expect("target dir");
    dir.join("examples").join(format!("bookshop{}", std::env::consts::EXE_SUFFIX))
}

#[tokio::test]
async fn the_client_drives_a_child_server_in_both_eras() {
    for (mode, era, version) in [
        (EraMode::Auto, Era::Modern, "2026-07-28"),
        (EraMode::Handshake, Era::Handshake, "2025-11-25"),
    ] {
        let child =
            ChildProcess::new(bookshop_binary()).spawn().expect("bookshop example is built");
        let client = Client::builder().era(mode).connect(child).await.expect("connects");
        assert_eq!((client.era(), client.protocol_version()), (era, version));
        let result =
            client.call_tool("get_author", json!({"title": "Nothing"})).await.expect("result");
        assert_eq!(
            serde_json::to_value(&result).expect("json")["content"],
            json!([{"type": "text", "text": "Error executing tool get_author: No book titled 'Nothing' in the catalog."}])
        );
        // Closing shuts the child down: stdin closes, the server exits on EOF.
        tokio::time::timeout(std::time::Duration::from_secs(10), client.close())
            .await
            .expect("child exits");
    }
}

#[tokio::test]
async fn stdout_carries_only_protocol_lines_and_eof_ends_the_server() {
    let mut child = tokio::process::Command::new(bookshop_binary())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{oops\n")
        .await
        .expect("write");
    drop(stdin);
    let mut lines = BufReader::new(stdout).lines();
    let mut seen = Vec::new();
    while let Some(line) = lines.next_line().await.expect("read") {
        seen.push(line);
    }
    assert_eq!(
        seen,
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: key must be a string at line 1 column 2"}}"#,
        ]
    );
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait())
        .await
        .expect("exits")
        .expect("status");
    assert!(status.success(), "{status}");
}

/// What the stdio transport reads from `stream` with a line limit of `limit`: each message
/// re-encoded, or its decode error's text.
async fn frames_read(stream: &'static [u8], limit: usize) -> Vec<String> {
    use modelcontext::{Stdio, Transport};
    let mut connection = Stdio::new(stream, tokio::io::sink()).max_line_bytes(limit).open();
    let mut frames = Vec::new();
    while let Some(incoming) = connection.receiver.recv().await {
        frames.push(incoming.map_or_else(|e| e.to_string(), |m| m.encode()));
    }
    frames
}

// Found by the `stdio_framing` fuzz target: the limit counts the message, so a CRLF line end
// does not count against it, but a last line with no line end at all has no CR to forgive.
#[tokio::test]
async fn the_line_limit_counts_the_message_not_its_line_end() {
    const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let limit = PING.len();
    let read = frames_read(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n", limit).await;
    assert_eq!(read, [PING]);
    let read = frames_read(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", limit).await;
    assert_eq!(read, [PING]);
    let too_long =
        format!("invalid message: message of more than 41 bytes exceeds the limit of {limit}");
    let read = frames_read(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} ", limit).await;
    assert_eq!(read, [too_long.as_str()]);
    let read = frames_read(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r", limit).await;
    assert_eq!(read, [too_long.as_str()]);
}
