//! Protocol version negotiation against scripted peers: a modern server that rejects the
//! client's revision (-32022) and names the ones it speaks gets one retry with a revision both
//! sides speak.

use std::time::Duration;

use modelcontext::types::{Era, UNSUPPORTED_PROTOCOL_VERSION};
use modelcontext::{Client, EraMode, Stdio};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

/// The server end of a client's stdio pipe, answered line by line by the test.
struct Script {
    lines: Lines<BufReader<DuplexStream>>,
    writer: DuplexStream,
}

impl Script {
    /// A client transport and the scripted server on its other end.
    fn start() -> (Stdio<BufReader<DuplexStream>, DuplexStream>, Script) {
        let (client_write, server_read) = tokio::io::duplex(1 << 16);
        let (server_write, client_read) = tokio::io::duplex(1 << 16);
        let transport = Stdio::new(BufReader::new(client_read), client_write);
        (transport, Script { lines: BufReader::new(server_read).lines(), writer: server_write })
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.lines.next_line())
            .await
            .expect("the client sent within 5 s")
            .expect("read")
            .expect("the client kept the pipe open");
        serde_json::from_str(&line).expect("the client sent JSON")
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.expect("write");
    }
}

fn version_of(request: &Value) -> &str {
    request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str().unwrap_or("")
}

fn rejection(request: &Value, supported: &[&str]) -> Value {
    json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": supported, "requested": version_of(request)}}})
}

fn discovered(request: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": request["id"], "result": {"resultType": "complete",
        "supportedVersions": ["2026-07-28"], "capabilities": {}, "ttlMs": 0,
        "cacheScope": "private"}})
}

#[tokio::test]
async fn a_rejected_version_is_retried_once_with_one_the_server_names() {
    for mode in [EraMode::Modern, EraMode::Auto] {
        let (transport, mut server) = Script::start();
        let script = tokio::spawn(async move {
            let first = server.recv().await;
            assert_eq!(first["method"], "server/discover");
            server.send(rejection(&first, &["2099-01-01", "2026-07-28"])).await;
            let retry = server.recv().await;
            assert_eq!(retry["method"], "server/discover");
            assert_ne!(retry["id"], first["id"], "a retry is a new request");
            assert_eq!(version_of(&retry), "2026-07-28");
            server.send(discovered(&retry)).await;
            server
        });
        let client = Client::builder().era(mode).connect(transport).await.expect("negotiates");
        assert_eq!((client.era(), client.protocol_version()), (Era::Modern, "2026-07-28"));
        drop(script.await.expect("the script ran"));
    }
}

#[tokio::test]
async fn a_second_rejection_or_no_common_version_fails_without_looping() {
    // The server rejects the revision it named: one retry, then the error.
    let (transport, mut server) = Script::start();
    let script = tokio::spawn(async move {
        for _ in 0..2 {
            let request = server.recv().await;
            server.send(rejection(&request, &["2026-07-28"])).await;
        }
        server
    });
    let err = Client::builder()
        .era(EraMode::Modern)
        .connect(transport)
        .await
        .expect_err("the server never accepts");
    assert_eq!(err.code(), Some(UNSUPPORTED_PROTOCOL_VERSION));
    drop(script.await.expect("the script ran"));

    // The server names only revisions this SDK does not speak: no retry at all.
    let (transport, mut server) = Script::start();
    let script = tokio::spawn(async move {
        let request = server.recv().await;
        server.send(rejection(&request, &["2099-01-01"])).await;
        server
    });
    let err = Client::builder()
        .era(EraMode::Modern)
        .connect(transport)
        .await
        .expect_err("no common revision");
    assert_eq!(err.code(), Some(UNSUPPORTED_PROTOCOL_VERSION));
    drop(script.await.expect("the script ran"));
}
