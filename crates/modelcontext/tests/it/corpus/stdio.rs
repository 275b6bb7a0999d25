//! Group 1, stdio framing (spec `basic/transports`: one UTF-8 JSON-RPC message per line, no
//! embedded newlines): blank lines, line endings, bytes that are not UTF-8 or not JSON, several
//! messages on a line, and the line limit at limit-1, limit and limit+1.

use expect_test::expect;

use super::{Case, LINE_LIMIT, Lines, Start, case, line, run_group, run_wire};

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

/// A `ping` padded (inside its params) to exactly `len` bytes.
fn ping_of_len(len: usize) -> Vec<u8> {
    let head = r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#;
    let tail = r#""}}"#;
    format!("{head}{}{tail}", "x".repeat(len - head.len() - tail.len())).into_bytes()
}

/// `ping` whose params nest `depth` arrays.
fn nested_ping(depth: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"deep":{}{}}}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

/// A `ping` whose params hold a string of these raw bytes.
fn in_string(bytes: &[u8]) -> Vec<u8> {
    let head = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":""#;
    [&head[..], bytes, br#""}}"#].concat()
}

fn with(bytes: &[u8], suffix: &[u8]) -> Vec<u8> {
    [bytes, suffix].concat()
}

pub(crate) fn cases() -> Vec<Case<Lines>> {
    use Start::Handshake as H;
    vec![
        case("empty line", line(H, ""), expect!["(no answer)"]),
        case("blank line of spaces and tabs", line(H, " \t  "), expect!["(no answer)"]),
        case("lone carriage return", line(H, "\r"), expect!["(no answer)"]),
        case(
            "crlf line ending",
            line(H, with(PING.as_bytes(), b"\r")),
            expect![[r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]],
        ),
        case(
            "whitespace around the message",
            line(H, format!("  \t{PING}  ")),
            expect![[r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]],
        ),
        case(
            "two messages on one line",
            line(H, format!("{PING}{PING}")),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: trailing characters at line 1 column 41"}}"#
            ]],
        ),
        case(
            "a carriage return between two messages",
            line(H, format!("{PING}\r{PING}")),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: trailing characters at line 1 column 42"}}"#
            ]],
        ),
        case(
            "bytes that are not utf-8",
            line(H, &b"\xff\xfe\xfd"[..]),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: invalid UTF-8: invalid utf-8 sequence of 1 bytes from index 0"}}"#
            ]],
        ),
        case(
            "invalid utf-8 inside a string",
            line(H, in_string(b"\xc3\x28")),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: invalid UTF-8: invalid utf-8 sequence of 1 bytes from index 55"}}"#
            ]],
        ),
        case(
            "overlong utf-8 encoding of '/'",
            line(H, in_string(b"\xc0\xaf")),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: invalid UTF-8: invalid utf-8 sequence of 1 bytes from index 55"}}"#
            ]],
        ),
        case(
            "utf-8 byte order mark",
            line(H, with(b"\xef\xbb\xbf", PING.as_bytes())),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: expected value at line 1 column 1"}}"#
            ]],
        ),
        case(
            "a nul byte",
            line(H, &b"\0"[..]),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: expected value at line 1 column 1"}}"#
            ]],
        ),
        case(
            "raw control character in a string",
            line(
                H,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"a\tb\"}}",
            ),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: control character (\\u0000-\\u001F) found while parsing a string at line 1 column 56"}}"#
            ]],
        ),
        case(
            "escaped newline in a string is fine",
            line(H, r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"a\nb"}}"#),
            expect![[r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]],
        ),
        case(
            "lone surrogate escape",
            line(H, r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\ud800"}}"#),
            expect![[r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]],
        ),
        case(
            "half a message",
            line(H, r#"{"jsonrpc":"2.0","id":1,"#),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: EOF while parsing a value at line 1 column 24"}}"#
            ]],
        ),
        case(
            "an opening brace",
            line(H, "{"),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: EOF while parsing an object at line 1 column 1"}}"#
            ]],
        ),
        case(
            "nesting of 120 in params",
            line(H, nested_ping(120)),
            expect![[r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]],
        ),
        case(
            "nesting of 200 in params, past the depth limit",
            line(H, nested_ping(200)),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: arrays and objects nested more than 128 deep"}}"#
            ]],
        ),
        case(
            "line of limit-1 bytes",
            line(H, ping_of_len(LINE_LIMIT - 1)),
            expect![[r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]],
        ),
        case(
            "line of exactly the limit",
            line(H, ping_of_len(LINE_LIMIT)),
            expect![[r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]],
        ),
        case(
            "line of limit+1 bytes",
            line(H, ping_of_len(LINE_LIMIT + 1)),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: message of more than 4097 bytes exceeds the limit of 4096"}}"#
            ]],
        ),
        case(
            "line of exactly the limit, crlf ended",
            line(H, with(&ping_of_len(LINE_LIMIT), b"\r")),
            expect![[r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]],
        ),
        case(
            "ten times the limit, then a request on the next line",
            Lines { start: H, lines: vec![ping_of_len(10 * LINE_LIMIT), PING.into()] },
            expect![[r#"
                {"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: message of more than 40960 bytes exceeds the limit of 4096"}}
                {"jsonrpc":"2.0","id":1,"result":{}}"#]],
        ),
        case(
            "not json before initialize",
            line(Start::Fresh, "hello"),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: expected value at line 1 column 1"}}"#
            ]],
        ),
    ]
}

#[test]
fn stdio_framing() {
    run_group("stdio framing", 20, cases(), run_wire);
}
