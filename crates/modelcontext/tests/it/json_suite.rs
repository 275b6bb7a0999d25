//! JSONTestSuite (nst/JSONTestSuite, 318 documents) through the message decoder and through a
//! live stdio connection: `n_*` is a parse error (-32700), `y_*` parses (and, not being a
//! JSON-RPC message, is an invalid request, -32600), `i_*` never panics, and the connection
//! keeps serving after every line.

use std::path::PathBuf;

use modelcontext::types::{DecodeError, Message};
use serde_json::Value;

use crate::support::{Wire, bookshop};

fn cases() -> Vec<(String, Vec<u8>)> {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/JSONTestSuite/test_parsing");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("entry").path();
            let name = path.file_name().expect("name").to_string_lossy().into_owned();
            (name, std::fs::read(&path).expect("read"))
        })
        .collect();
    cases.sort();
    assert_eq!(cases.len(), 318, "the whole suite is there");
    cases
}

/// What the decoder must say about a document, by its file-name prefix.
#[track_caller]
fn check_decoded(name: &str, bytes: &[u8]) {
    let decoded = std::panic::catch_unwind(|| Message::decode(bytes))
        .unwrap_or_else(|_| panic!("{name} panicked"));
    match (&name[..2], decoded) {
        ("n_", Err(DecodeError::Parse(_))) => {}
        ("n_", other) => panic!("{name}: invalid JSON must be a parse error, got {other:?}"),
        // Valid JSON, but none of these documents is a JSON-RPC message (an array is a batch,
        // answered only on 2025-03-26 connections, of elements that are not messages either).
        ("y_", Err(DecodeError::Invalid { .. })) => {}
        ("y_", Err(DecodeError::Batch(items))) => {
            assert!(items.iter().all(Result::is_err), "{name}: {items:?}");
        }
        ("y_", other) => panic!("{name}: valid JSON must be an invalid request, got {other:?}"),
        _ => {}
    }
}

#[test]
fn every_document_through_the_decoder() {
    for (name, bytes) in cases() {
        check_decoded(&name, &bytes);
    }
}

#[tokio::test]
async fn every_single_line_document_on_a_live_connection() {
    let mut wire = Wire::start(bookshop(), "2025-11-25");
    wire.initialize().await;
    let mut sent = 0;
    for (name, bytes) in cases() {
        if bytes.contains(&b'\n') || bytes.contains(&b'\r') {
            continue; // one document per line is the framing; these span lines
        }
        let blank = bytes.iter().all(u8::is_ascii_whitespace);
        wire.send_bytes(&bytes).await;
        if !blank {
            let answer: Value = serde_json::from_str(&wire.recv().await).expect("JSON answer");
            let code = answer["error"]["code"].as_i64();
            match &name[..2] {
                "n_" => assert_eq!(code, Some(-32700), "{name}: {answer}"),
                "y_" => assert_eq!(code, Some(-32600), "{name}: {answer}"),
                _ => assert!(matches!(code, Some(-32700 | -32600)), "{name}: {answer}"),
            }
            // An id is echoed only when the document had a readable one at the top level.
            let document: Option<Value> = serde_json::from_slice(&bytes).ok();
            let readable = document
                .as_ref()
                .and_then(|d| d.get("id"))
                .filter(|id| id.is_string() || id.is_i64());
            assert_eq!(answer.get("id"), readable, "{name}: {answer}");
        }
        wire.assert_alive().await;
        sent += 1;
    }
    assert!(sent > 250, "most documents fit on one line ({sent})");
}
