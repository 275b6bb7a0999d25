//! The request-metadata headers of 2026-07-28 Streamable HTTP, checked against the body.
//!
//! Spec (2026-07-28 `basic/transports`, standard headers): every POST carries
//! `MCP-Protocol-Version` equal to the body's `_meta` version and `Mcp-Method` equal to the
//! method; `tools/call`, `resources/read` and `prompts/get` also carry `Mcp-Name`; tool
//! arguments annotated `x-mcp-header` are mirrored in `Mcp-Param-<Name>`. Names are
//! case-insensitive, values are compared after trimming optional whitespace, and values that
//! are not header-safe arrive as `=?base64?<base64 of UTF-8>?=`. Any disagreement, or a
//! required header that is missing, is -32020 (HTTP 400), so an intermediary that routes on
//! headers can never see something other than what the server executes.

use std::borrow::Cow;

use http::{HeaderMap, HeaderName};
use modelcontext_types::{HEADER_MISMATCH, McpError, MirroredArgument};
use serde_json::{Map, Value};

/// `MCP-Protocol-Version`. The standard names are typed once: a lookup by `&str` parses the
/// name again on every request.
pub(crate) const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const METHOD: HeaderName = HeaderName::from_static("mcp-method");
const NAME: HeaderName = HeaderName::from_static("mcp-name");

/// What the headers must agree with: facts read from the body.
pub(crate) struct BodyFacts<'a> {
    pub version: &'a str,
    pub method: &'a str,
    /// `params.name` or `params.uri`, for the methods that need `Mcp-Name`.
    pub name: Option<&'a str>,
    /// The called tool's mirrored arguments and the call's arguments, for `Mcp-Param-*`.
    pub tool_call: Option<(&'a [MirroredArgument], &'a Map<String, Value>)>,
}

fn mismatch(message: String) -> McpError {
    McpError::new(HEADER_MISMATCH, message)
}

/// Checks the standard and custom headers, in the order the conformance suite expects.
pub(crate) fn check(headers: &HeaderMap, body: &BodyFacts<'_>) -> Result<(), McpError> {
    expect_header(headers, &PROTOCOL_VERSION, body.version)?;
    expect_header(headers, &METHOD, body.method)?;
    if let Some(name) = body.name {
        expect_header(headers, &NAME, name)?;
    }
    if let Some((mirrored, arguments)) = body.tool_call {
        check_params(headers, mirrored, arguments)?;
    }
    Ok(())
}

fn expect_header(headers: &HeaderMap, name: &HeaderName, expected: &str) -> Result<(), McpError> {
    match header_value(headers, name)? {
        Some(value) if value == expected => Ok(()),
        Some(value) => {
            Err(mismatch(format!("Header {name} is '{value}' but the body says '{expected}'")))
        }
        None => Err(mismatch(format!("Missing required header {name}"))),
    }
}

/// A header's value, trimmed and base64-decoded when sent in the `=?base64?..?=` form.
fn header_value<'h>(
    headers: &'h HeaderMap,
    name: &HeaderName,
) -> Result<Option<Cow<'h, str>>, McpError> {
    let mut values = headers.get_all(name).iter();
    let Some(raw) = values.next() else { return Ok(None) };
    if values.next().is_some() {
        return Err(mismatch(format!("Header {name} appears more than once")));
    }
    let text = raw
        .to_str()
        .map_err(|_| mismatch(format!("Header {name} has characters outside visible ASCII")))?;
    decode_value(text.trim_matches([' ', '\t']))
        .map(Some)
        .ok_or_else(|| mismatch(format!("Header {name} has an invalid base64 encoding")))
}

/// Decodes `=?base64?...?=` (markers exact and lowercase); other values pass through.
pub(crate) fn decode_value(text: &str) -> Option<Cow<'_, str>> {
    match text.strip_prefix("=?base64?").and_then(|rest| rest.strip_suffix("?=")) {
        Some(encoded) => String::from_utf8(crate::base64::decode(encoded)?).ok().map(Cow::Owned),
        None => Some(Cow::Borrowed(text)),
    }
}

/// Every `x-mcp-header` argument must be mirrored exactly, and nothing else claimed.
fn check_params(
    headers: &HeaderMap,
    mirrored: &[MirroredArgument],
    arguments: &Map<String, Value>,
) -> Result<(), McpError> {
    for argument in mirrored {
        let header = &argument.header;
        let property = argument.path.join(".");
        let name = format!("mcp-param-{}", header.to_ascii_lowercase());
        // A name that is not a valid header name cannot have been sent.
        let sent = match HeaderName::from_bytes(name.as_bytes()) {
            Ok(name) => header_value(headers, &name)?,
            Err(_) => None,
        };
        match (argument.value_in(arguments).filter(|v| !v.is_null()), sent) {
            (None, None) => {}
            (Some(value), Some(sent)) if same_value(value, &sent) => {}
            (Some(_), None) => {
                return Err(mismatch(format!(
                    "Missing header Mcp-Param-{header} for argument '{property}'"
                )));
            }
            (None, Some(_)) => {
                return Err(mismatch(format!(
                    "Header Mcp-Param-{header} sent without argument '{property}'"
                )));
            }
            (Some(value), Some(sent)) => {
                return Err(mismatch(format!(
                    "Header Mcp-Param-{header} is '{sent}' but argument '{property}' is {value}"
                )));
            }
        }
    }
    Ok(())
}

/// Integers compare numerically (`007` is 7), booleans as `true`/`false`, strings exactly.
fn same_value(value: &Value, sent: &str) -> bool {
    match value {
        Value::String(s) => s == sent,
        Value::Bool(b) => sent == if *b { "true" } else { "false" },
        Value::Number(n) => match (n.as_i64(), sent.parse::<i64>()) {
            (Some(a), Ok(b)) => a == b,
            _ => n.to_string() == sent,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                http::HeaderName::from_bytes(k.as_bytes()).expect("name"),
                http::HeaderValue::from_str(v).expect("value"),
            );
        }
        map
    }

    fn facts<'a>(method: &'a str, name: Option<&'a str>) -> BodyFacts<'a> {
        BodyFacts { version: "2026-07-28", method, name, tool_call: None }
    }

    #[test]
    fn standard_headers_must_match_the_body() {
        let ok = headers(&[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", " tools/call "),
            ("mcp-name", "add"),
        ]);
        assert!(check(&ok, &facts("tools/call", Some("add"))).is_ok());
        let wrong_case =
            headers(&[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "TOOLS/LIST")]);
        assert_eq!(
            check(&wrong_case, &facts("tools/list", None)).map_err(|e| e.code),
            Err(HEADER_MISMATCH)
        );
        let missing_name =
            headers(&[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call")]);
        assert!(check(&missing_name, &facts("tools/call", Some("add"))).is_err());
        let wrong_version =
            headers(&[("mcp-protocol-version", "2025-11-25"), ("mcp-method", "tools/list")]);
        assert!(check(&wrong_version, &facts("tools/list", None)).is_err());
    }

    #[test]
    fn base64_values_are_decoded_before_comparing() {
        assert_eq!(decode_value("=?base64?w6lsw6g=?=").as_deref(), Some("élè"));
        assert_eq!(decode_value("plain").as_deref(), Some("plain"));
        assert_eq!(decode_value("=?base64?***?="), None);
        assert_eq!(decode_value("=?BASE64?eA==?=").as_deref(), Some("=?BASE64?eA==?="));
    }

    #[test]
    fn mirrored_arguments_must_match() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "level": {"type": "integer", "x-mcp-header": "Level"},
        }});
        let mirrored = modelcontext_types::mirrored_arguments(&schema).expect("valid");
        let args = serde_json::json!({"region": "eu west", "level": 7});
        let args = args.as_object().expect("object");
        let base = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "t"),
        ];
        let with = |extra: &[(&str, &str)]| {
            let mut all = base.to_vec();
            all.extend_from_slice(extra);
            let facts = BodyFacts {
                version: "2026-07-28",
                method: "tools/call",
                name: Some("t"),
                tool_call: Some((&mirrored, args)),
            };
            check(&headers(&all), &facts).is_ok()
        };
        assert!(with(&[("mcp-param-region", "eu west"), ("mcp-param-level", "007")]));
        assert!(!with(&[
            ("mcp-param-region", "eu west"),
            ("mcp-param-level", "7"),
            ("mcp-param-region", "x")
        ]));
        assert!(!with(&[("mcp-param-region", "eu west")]));
        assert!(!with(&[("mcp-param-region", "us"), ("mcp-param-level", "7")]));
    }
}
