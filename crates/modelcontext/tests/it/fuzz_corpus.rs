//! Replays every committed fuzz corpus file (`fuzz/corpus/<target>/`) through the same checks
//! the cargo-fuzz targets run (`modelcontext::__fuzz`), so `cargo test` on stable guards
//! against regressions of anything the fuzzers found. Needs the `fuzzing` feature:
//! `cargo test -p modelcontext --features fuzzing --test it fuzz_corpus`.

use std::path::PathBuf;

use modelcontext::__fuzz;

/// Runs `check` on every file of `fuzz/corpus/<target>/`; there must be some.
fn replay(target: &str, check: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: empty corpus", dir.display());
    for file in files {
        let data = std::fs::read(&file).expect("read");
        if std::panic::catch_unwind(|| check(&data)).is_err() {
            panic!("{target}: {} fails its check", file.display());
        }
    }
}

#[test]
fn jsonrpc_decode() {
    replay("jsonrpc_decode", __fuzz::check_jsonrpc_decode);
}

#[test]
fn stdio_framing() {
    replay("stdio_framing", __fuzz::check_stdio_framing);
}

#[test]
fn engine_dispatch() {
    replay("engine_dispatch", __fuzz::check_engine_dispatch);
}

#[test]
fn sse_decode() {
    replay("sse_decode", __fuzz::check_sse_decode);
}

#[test]
fn uri_template_parse() {
    replay("uri_template_parse", __fuzz::check_uri_template_parse);
}

#[test]
fn uri_template_match() {
    replay("uri_template_match", __fuzz::check_uri_template_match);
}

#[test]
fn http_headers() {
    replay("http_headers", __fuzz::check_http_headers);
}

#[test]
fn schema_validate() {
    replay("schema_validate", __fuzz::check_schema_validate);
}

#[test]
fn message_roundtrip() {
    replay("message_roundtrip", __fuzz::check_message_roundtrip);
}

#[test]
fn http_request() {
    replay("http_request", __fuzz::check_http_request);
}

#[test]
fn sse_roundtrip() {
    replay("sse_roundtrip", __fuzz::check_sse_roundtrip);
}

#[test]
fn bearer_token() {
    replay("bearer_token", __fuzz::check_bearer_token);
}
