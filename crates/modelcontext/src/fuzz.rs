//! Hidden entry points for the fuzz targets in `fuzz/` and for their corpus replay
//! (`tests/it/fuzz_corpus.rs`). Feature `fuzzing` only; not covered by semver.
//!
//! Each `check_*` function takes one fuzz input, runs it through the real code and panics when
//! a property does not hold. The fuzz targets and the replay test call the same functions, so a
//! crash found by the fuzzer and committed to the corpus fails `cargo test` on stable.
//!
//! Input layouts (first bytes are parameters, the rest is the payload):
//! - `stdio_framing`, `sse_decode`: `[limit, chunk seed, max chunk, stream...]`.
//! - `uri_template_match`: `template \n uri`.
//! - `http_headers`: lines `h:<allowed host>`, `o:<allowed origin>`, `H:<Host>`, `O:<Origin>`,
//!   `off` (checks disabled).
//! - `schema_validate`: `schema JSON \n instance JSON`.
//! - `engine_dispatch`: the bytes a client writes (newline-delimited frames).
//! - `message_roundtrip`: `[revision, definition]`, then `Unstructured` bytes.
//! - `http_request`: raw HTTP/1.1 bytes, as a client writes them.
//! - `sse_roundtrip`: `[limit, chunk seed, max chunk]`, then `Unstructured` bytes.
//! - `bearer_token`: `[mode]`, then a header value, a token, or `Unstructured` bytes.

#![allow(missing_docs, clippy::unwrap_used)]

use std::collections::HashMap;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use modelcontext_types::uri_template::{UriTemplate, Value as TemplateValue};
use modelcontext_types::{DecodeError, Message, RequestId, method};
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader, ReadBuf};

use crate::transport::{Stdio, Transport};

#[path = "fuzz/bearer_token.rs"]
mod bearer_token;
#[path = "fuzz/http_request.rs"]
mod http_request;
#[path = "fuzz/message_roundtrip.rs"]
mod message_roundtrip;
#[path = "fuzz/sse_roundtrip.rs"]
mod sse_roundtrip;

pub use bearer_token::check_bearer_token;
pub use http_request::check_http_request;
pub use message_roundtrip::check_message_roundtrip;
pub use sse_roundtrip::check_sse_roundtrip;

/// Deterministic chunk sizes in `1..=max` from a one-byte seed (xorshift).
struct Chunks {
    state: u32,
    max: usize,
}

impl Chunks {
    fn new(seed: u8, max: u8) -> Chunks {
        Chunks { state: 0x9E37_79B9 ^ u32::from(seed), max: usize::from(max).max(1) }
    }

    fn next_len(&mut self) -> usize {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 17;
        self.state ^= self.state << 5;
        1 + self.state as usize % self.max
    }

    fn split(mut self, mut bytes: &[u8]) -> Vec<&[u8]> {
        let mut out = Vec::new();
        while !bytes.is_empty() {
            let (head, tail) = bytes.split_at(self.next_len().min(bytes.len()));
            out.push(head);
            bytes = tail;
        }
        out
    }
}

// ---------------------------------------------------------------------------------------------
// jsonrpc_decode
// ---------------------------------------------------------------------------------------------

/// `Message::decode` never panics; what decodes re-encodes to bytes that decode to the same
/// message (compared through its encoding, `Message` has no `PartialEq`).
pub fn check_jsonrpc_decode(data: &[u8]) {
    let Ok(message) = Message::decode(data) else { return };
    let encoded = message.encode();
    assert!(!encoded.contains('\n'), "an encoded message is one line: {encoded}");
    let again = match Message::decode(encoded.as_bytes()) {
        Ok(again) => again,
        Err(err) => panic!("re-encoded message does not decode: {err}\n{encoded}"),
    };
    assert_eq!(kind(&message), kind(&again), "{encoded}");
    assert_eq!(again.encode(), encoded, "decode(encode(m)) != m");
}

fn kind(message: &Message) -> (&'static str, Option<RequestId>, Option<&str>) {
    match message {
        Message::Request(r) => ("request", Some(r.id.clone()), Some(r.method.as_str())),
        Message::Notification(n) => ("notification", None, Some(n.method.as_str())),
        Message::Response(r) => ("response", r.id.clone(), None),
        Message::BatchResponse(_) => ("batch response", None, None),
    }
}

// ---------------------------------------------------------------------------------------------
// stdio_framing
// ---------------------------------------------------------------------------------------------

/// What one frame became, comparable: the re-encoded message, or the decode error.
type Frame = Result<String, DecodeError>;

fn frame(incoming: Result<Message, DecodeError>) -> Frame {
    incoming.map(|m| m.encode())
}

/// The stdio framing, written out the simple way: split on `\n`, drop one `\r` before it,
/// skip blank lines, report messages over `limit` (with the length of their line, `\r`
/// included), decode the rest. The limit is on the message, so the `\r` of a CRLF does not
/// count against it.
pub fn stdio_reference(stream: &[u8], limit: usize) -> Vec<Frame> {
    let mut out = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        let (line, terminated) = match rest.iter().position(|b| *b == b'\n') {
            Some(i) => {
                let line = &rest[..i];
                rest = &rest[i + 1..];
                (line, true)
            }
            None => (std::mem::take(&mut rest), false),
        };
        let message = match line {
            [head @ .., b'\r'] if terminated => head,
            line => line,
        };
        if message.len() > limit {
            out.push(Err(DecodeError::Invalid {
                id: None,
                reason: format!(
                    "message of more than {} bytes exceeds the limit of {limit}",
                    line.len()
                ),
            }));
            continue;
        }
        if message.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        out.push(frame(Message::decode(message)));
    }
    out
}

/// A reader that hands out its bytes in fixed chunks, one per `poll_read`.
struct ChunkedReader {
    chunks: Vec<Vec<u8>>,
    next: usize,
    offset: usize,
}

impl AsyncRead for ChunkedReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if let Some(chunk) = this.chunks.get(this.next) {
            let n = (chunk.len() - this.offset).min(buf.remaining());
            buf.put_slice(&chunk[this.offset..this.offset + n]);
            this.offset += n;
            if this.offset == chunk.len() {
                this.next += 1;
                this.offset = 0;
            }
        }
        Poll::Ready(Ok(()))
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// The frames the stdio transport reads from `chunks`, in order.
fn stdio_frames(chunks: Vec<Vec<u8>>, limit: usize, buffer: usize) -> Vec<Frame> {
    runtime().block_on(async {
        let reader = BufReader::with_capacity(buffer, ChunkedReader { chunks, next: 0, offset: 0 });
        let mut connection = Stdio::new(reader, tokio::io::sink()).max_line_bytes(limit).open();
        let mut out = Vec::new();
        while let Some(incoming) = connection.receiver.recv().await {
            out.push(frame(incoming));
        }
        out
    })
}

/// Through the stdio transport, the same frames come out whether the stream arrives whole or
/// in fuzz-chosen chunks, and they are those of [`stdio_reference`] (so an oversized line is
/// reported once and the next line is read normally).
pub fn check_stdio_framing(data: &[u8]) {
    let [limit, seed, max, stream @ ..] = data else { return };
    let limit = 1 + usize::from(*limit) * 4;
    let expected = stdio_reference(stream, limit);
    let whole = stdio_frames(vec![stream.to_vec()], limit, 8 * 1024);
    assert_eq!(whole, expected, "whole stream differs from the reference framing");
    let chunks: Vec<Vec<u8>> =
        Chunks::new(*seed, *max).split(stream).into_iter().map(<[u8]>::to_vec).collect();
    let buffer = 1 + usize::from(*max % 64);
    let chunked = stdio_frames(chunks, limit, buffer);
    assert_eq!(chunked, expected, "chunked stream (buffer {buffer}) differs");
}

// ---------------------------------------------------------------------------------------------
// sse_decode
// ---------------------------------------------------------------------------------------------

#[cfg(feature = "http")]
fn sse_events(limit: usize, chunks: &[&[u8]]) -> (Vec<String>, Option<String>) {
    use crate::transport::sse::SseDecoder;
    let mut decoder = SseDecoder::new(limit);
    let mut out = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk, &mut out);
    }
    let events = out
        .into_iter()
        .map(|event| match event {
            Ok(e) => {
                assert!(e.id.as_deref().is_none_or(|id| !id.contains('\0')), "NUL in id");
                assert!(e.data.len() <= limit, "event data over the limit of {limit}");
                format!("id={:?} event={:?} data={:?} retry={:?}", e.id, e.event, e.data, e.retry)
            }
            Err(e) => e.to_string(),
        })
        .collect();
    (events, decoder.last_event_id().map(str::to_owned))
}

/// The SSE decoder never panics, keeps events within its limit, and gives the same events and
/// last event id whole, byte by byte, and in fuzz-chosen chunks.
#[cfg(feature = "http")]
pub fn check_sse_decode(data: &[u8]) {
    let [limit, seed, max, stream @ ..] = data else { return };
    let limit = 1 + usize::from(*limit) * 4;
    let whole = sse_events(limit, &[stream]);
    let chunked = sse_events(limit, &Chunks::new(*seed, *max).split(stream));
    assert_eq!(chunked, whole, "chunked decode differs");
    let bytes: Vec<&[u8]> = stream.chunks(1).collect();
    assert_eq!(sse_events(limit, &bytes), whole, "byte-by-byte decode differs");
}

// ---------------------------------------------------------------------------------------------
// uri_template_parse, uri_template_match
// ---------------------------------------------------------------------------------------------

/// Parsing never panics; a parsed template keeps its text, re-parses to itself, and expands
/// without panicking.
pub fn check_uri_template_parse(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(template) = UriTemplate::parse(text) else { return };
    assert_eq!(template.as_str(), text);
    assert_eq!(UriTemplate::parse(template.as_str()).as_ref(), Ok(&template));
    let _ = template.variables().count();
    let _ = template.expand(&|name| Some(TemplateValue::String(name.repeat(2))));
    let _ = template.try_expand(&|name| Some(TemplateValue::List(vec![name.into(), "/..".into()])));
    let _ = template.expand(&|name| Some(TemplateValue::Map(vec![(name.into(), "a b%".into())])));
}

/// Matching never panics; with path safety on, no value holds a NUL, a `..` component or an
/// absolute path; a checked match is also an unchecked one with the same values.
pub fn check_uri_template_match(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (template, uri) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(template) = UriTemplate::parse(template) else { return };
    let unchecked = template.matches_unchecked(uri);
    let Some(values) = template.matches(uri) else { return };
    for (name, value) in &values {
        assert!(!value.contains('\0'), "{name} = {value:?}: NUL");
        assert!(!value.split(['/', '\\']).any(|c| c == ".."), "{name} = {value:?}: `..`");
        let absolute = value.starts_with(['/', '\\'])
            || matches!(value.as_bytes(), [d, b':', b'/' | b'\\', ..] if d.is_ascii_alphabetic());
        assert!(!absolute, "{name} = {value:?}: absolute path");
    }
    assert_eq!(unchecked.as_ref(), Some(&values), "checked and unchecked matches differ");
}

// ---------------------------------------------------------------------------------------------
// http_headers
// ---------------------------------------------------------------------------------------------

/// The reference model of the Host/Origin allow-list, written from its documentation: an
/// authority is `name` or `name:port` (port: digits, possibly none), or `[v6]` / `[v6]:port`;
/// anything else is malformed and has no name.
fn model_name(authority: &str) -> Option<&str> {
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if authority.starts_with('[') {
        let end = authority.find(']')?;
        let rest = &authority[end + 1..];
        let port_ok = rest.is_empty() || rest.strip_prefix(':').is_some_and(digits);
        return port_ok.then_some(&authority[..=end]);
    }
    Some(match authority.rsplit_once(':') {
        Some((name, port)) if digits(port) => name,
        _ => authority,
    })
}

const MODEL_LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

fn model_host_ok(enabled: bool, hosts: &[String], host: Option<&str>) -> bool {
    if !enabled {
        return true;
    }
    let Some(host) = host.map(str::to_ascii_lowercase) else { return false };
    let name = model_name(&host);
    let listed = |s: &str| hosts.iter().any(|h| h.to_ascii_lowercase() == s);
    name.is_some_and(|n| MODEL_LOOPBACK.contains(&n) || listed(n)) || listed(&host)
}

fn model_origin_ok(enabled: bool, origins: &[String], origin: Option<&str>) -> bool {
    if !enabled {
        return true;
    }
    let Some(origin) = origin.map(str::to_ascii_lowercase) else { return true };
    if origins.iter().any(|o| o.to_ascii_lowercase() == origin) {
        return true;
    }
    let authority = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"));
    authority.and_then(model_name).is_some_and(|n| MODEL_LOOPBACK.contains(&n))
}

/// The allow-list's Host and Origin verdicts equal the reference model's.
#[cfg(feature = "http")]
pub fn check_http_headers(data: &[u8]) {
    use crate::server::http::AllowList;
    let text = String::from_utf8_lossy(data);
    let (mut hosts, mut origins, mut host, mut origin, mut enabled) =
        (Vec::new(), Vec::new(), None, None, true);
    for line in text.split('\n') {
        match line.split_at_checked(2) {
            Some(("h:", v)) => hosts.push(v.to_owned()),
            Some(("o:", v)) => origins.push(v.to_owned()),
            Some(("H:", v)) => host = Some(v.to_owned()),
            Some(("O:", v)) => origin = Some(v.to_owned()),
            _ if line == "off" => enabled = false,
            _ => {}
        }
    }
    let mut list = if enabled { AllowList::default() } else { AllowList::disabled() };
    for h in &hosts {
        list = list.allow_host(h.clone());
    }
    for o in &origins {
        list = list.allow_origin(o.clone());
    }
    assert_eq!(
        list.host_ok(host.as_deref()),
        model_host_ok(enabled, &hosts, host.as_deref()),
        "Host {host:?} with allowed hosts {hosts:?}"
    );
    assert_eq!(
        list.origin_ok(origin.as_deref()),
        model_origin_ok(enabled, &origins, origin.as_deref()),
        "Origin {origin:?} with allowed origins {origins:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// schema_validate
// ---------------------------------------------------------------------------------------------

/// A tool input schema from the input compiles or fails with an error, never panics, never
/// fetches (our validator follows `$ref` only within the schema: a remote one fails to
/// compile), and validates an instance in bounded time (libFuzzer's `-timeout`). Where the
/// `jsonschema` crate (the reference, offline too) also compiles it, both give the same
/// verdict, except on `multipleOf`, which we compute on the decimals as written and it on the
/// binary floats they round to.
pub fn check_schema_validate(data: &[u8]) {
    use crate::server::schema::Validator;
    let (schema, instance) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b"{}"[..]),
    };
    let Ok(schema) = serde_json::from_slice::<Map<String, Value>>(schema) else { return };
    let Ok(validator) = Validator::compile(&schema) else { return };
    let instance = serde_json::from_slice::<Value>(instance).unwrap_or(Value::Null);
    let verdict = validator.check(&instance);
    let too_deep = verdict.as_ref().is_err_and(|e| e.contains("nests too deeply"));
    if too_deep || Value::Object(schema.clone()).to_string().contains("\"multipleOf\"") {
        return;
    }
    let reference = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .offline()
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(&Value::Object(schema.clone()));
    if let Ok(reference) = reference {
        assert_eq!(
            verdict.is_ok(),
            reference.is_valid(&instance),
            "schema {} on {instance}: ours {verdict:?}",
            Value::Object(schema)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// engine_dispatch
// ---------------------------------------------------------------------------------------------

const ENGINE_LINE_LIMIT: usize = 512;
const PING_ID: &str = "fuzz-ping\u{1}";

fn engine_server() -> crate::McpServer {
    use crate::server::{NoArgs, ToolDef};
    crate::McpServer::new("fuzz")
        .max_in_flight(8)
        .tool(ToolDef::new("now", || async { "now" }))
        .and_then(|s| {
            s.tool(ToolDef::new("later", |_: NoArgs| async {
                tokio::time::sleep(Duration::from_millis(1)).await;
                "later"
            }))
        })
        .expect("tools register")
}

/// How many responses each id must get: exactly `exact`, or, for requests that may be
/// cancelled or are streams, at most `exact`.
#[derive(Default, Debug)]
struct Expected {
    exact: HashMap<Option<RequestId>, usize>,
    at_most: std::collections::HashSet<RequestId>,
    /// The script has a batch: whether it is answered depends on the revision the script
    /// negotiated, so only the ping and the absence of hangs are checked.
    batches: bool,
}

fn engine_expected(script: &[u8]) -> Expected {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cancelled {
        request_id: RequestId,
    }
    let mut expected = Expected::default();
    for frame in stdio_reference(script, ENGINE_LINE_LIMIT) {
        let id = match frame {
            Err(DecodeError::Parse(_)) => None,
            Err(DecodeError::Invalid { id, .. }) => id,
            Err(DecodeError::Batch(_)) => {
                expected.batches = true;
                continue;
            }
            Ok(line) => match Message::decode(line.as_bytes()) {
                Ok(Message::Request(request)) => {
                    if request.method == method::SUBSCRIPTIONS_LISTEN {
                        expected.at_most.insert(request.id.clone());
                    }
                    Some(request.id)
                }
                Ok(Message::Notification(n)) => {
                    if n.method == method::CANCELLED {
                        let cancelled = n.params.as_deref().and_then(|p| {
                            serde_json::from_str::<Cancelled>(p.get()).ok().map(|c| c.request_id)
                        });
                        expected.at_most.extend(cancelled);
                    }
                    continue;
                }
                _ => continue,
            },
        };
        *expected.exact.entry(id).or_default() += 1;
    }
    expected
}

/// A script of frames into an in-memory server: exactly one response per request id (at most
/// one for cancelled requests and streams), one per undecodable frame, none for notifications
/// or responses; a `ping` sent after the script is answered; all of it within 10 seconds.
pub fn check_engine_dispatch(data: &[u8]) {
    let ping = format!(r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#, "fuzz-ping\\u0001");
    let mut script = data.to_vec();
    if !script.is_empty() && !script.ends_with(b"\n") {
        script.push(b'\n');
    }
    let mut expected = engine_expected(&script);
    *expected.exact.entry(Some(RequestId::from(PING_ID))).or_default() += 1;
    let got = runtime().block_on(async {
        let (client_write, server_read) = tokio::io::duplex(64 * 1024);
        let (server_write, client_read) = tokio::io::duplex(64 * 1024);
        let server = engine_server();
        let serving = tokio::spawn(async move {
            // `McpServer::max_line_bytes` applies to `run_stdio`; a transport brings its own.
            let stdio = Stdio::new(BufReader::new(server_read), server_write)
                .max_line_bytes(ENGINE_LINE_LIMIT);
            server.serve(stdio).await;
        });
        let run = async move {
            let mut got: HashMap<Option<RequestId>, usize> = HashMap::new();
            let mut lines = BufReader::new(client_read).lines();
            let mut writer = client_write;
            let write = async move {
                let _ = writer.write_all(&script).await;
                let _ = writer.write_all(ping.as_bytes()).await;
                let _ = writer.write_all(b"\n").await;
                writer
            };
            let (writer, ()) = tokio::join!(write, async {
                // Read until the ping is answered.
                while let Ok(Some(line)) = lines.next_line().await {
                    if count_response(&line, &mut got) == Some(RequestId::from(PING_ID)) {
                        return;
                    }
                }
                panic!("the server stopped before answering the ping");
            });
            // End of input: the server answers what is still running, then closes.
            drop(writer);
            while let Ok(Some(line)) = lines.next_line().await {
                count_response(&line, &mut got);
            }
            got
        };
        let got = tokio::time::timeout(Duration::from_secs(10), run)
            .await
            .expect("the server hangs: no end of output within 10 s");
        let _ = serving.await;
        got
    });
    if expected.batches {
        return;
    }
    for (id, count) in &got {
        let want = expected.exact.get(id).copied().unwrap_or(0);
        let may_drop = id.as_ref().is_some_and(|id| expected.at_most.contains(id));
        assert!(
            *count == want || (may_drop && *count < want),
            "id {id:?}: {count} responses, expected {want}"
        );
    }
    for (id, want) in &expected.exact {
        let count = got.get(id).copied().unwrap_or(0);
        let may_drop = id.as_ref().is_some_and(|id| expected.at_most.contains(id));
        assert!(count == *want || may_drop, "id {id:?}: {count} responses, expected {want}");
    }
}

/// Counts one line the server wrote if it is a response; returns its id.
fn count_response(line: &str, got: &mut HashMap<Option<RequestId>, usize>) -> Option<RequestId> {
    match Message::decode(line.as_bytes()) {
        Ok(Message::Response(response)) => {
            *got.entry(response.id.clone()).or_default() += 1;
            response.id
        }
        Ok(_) => None,
        // The answer to a batch, on a 2025-03-26 session.
        Err(DecodeError::Batch(items)) => {
            for response in items.into_iter().filter_map(|item| match item {
                Ok(Message::Response(response)) => Some(response),
                _ => None,
            }) {
                *got.entry(response.id).or_default() += 1;
            }
            None
        }
        Err(err) => panic!("the server wrote an undecodable line: {err}: {line}"),
    }
}
