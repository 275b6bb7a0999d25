//! `_meta` objects and the parameter shapes every request and notification shares.
//!
//! Since 2026-07-28 every client request carries its protocol version, capabilities and
//! identity in `params._meta` (spec `basic/index.mdx`, "Request metadata"); [`RequestMeta`]
//! types those keys and keeps every other key verbatim.

use serde::{Deserialize, Serialize};

use crate::{ClientCapabilities, Implementation, LoggingLevel};

/// An open `_meta` object: unknown keys survive a round trip.
pub type Meta = serde_json::Map<String, serde_json::Value>;

/// `_meta` key of the protocol revision a modern request speaks (required since 2026-07-28).
pub const PROTOCOL_VERSION_META_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client's capabilities on a modern request (required since 2026-07-28).
pub const CLIENT_CAPABILITIES_META_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client's self-reported identity (SHOULD since 2026-07-28).
pub const CLIENT_INFO_META_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the log level a request asks for (2026-07-28; replaces `logging/setLevel`).
pub const LOG_LEVEL_META_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the server's identity on results (SHOULD since 2026-07-28).
pub const SERVER_INFO_META_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key tagging listen-stream notifications with the `subscriptions/listen` request id.
pub const SUBSCRIPTION_ID_META_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key of a request's progress token.
pub const PROGRESS_TOKEN_META_KEY: &str = "progressToken";

/// A progress token: a string or an integer, unique among the sender's active requests.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ProgressToken {
    /// An integer token.
    Number(i64),
    /// A string token.
    String(String),
}

impl From<i64> for ProgressToken {
    fn from(n: i64) -> Self {
        ProgressToken::Number(n)
    }
}

impl From<String> for ProgressToken {
    fn from(s: String) -> Self {
        ProgressToken::String(s)
    }
}

impl From<&str> for ProgressToken {
    fn from(s: &str) -> Self {
        ProgressToken::String(s.to_owned())
    }
}

/// The `_meta` of a request's params: the typed per-request fields plus every other key.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RequestMeta {
    /// Asks for `notifications/progress` tagged with this token.
    #[serde(rename = "progressToken", default, skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<ProgressToken>,
    /// The revision this request speaks; its presence marks a modern (2026-07-28+) request.
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub protocol_version: Option<String>,
    /// The client's capabilities for this request (modern era; required there).
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_capabilities: Option<Box<ClientCapabilities>>,
    /// The client's self-reported identity; a server MUST NOT require it.
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Box<Implementation>>,
    /// The lowest level of `notifications/message` the client wants for this request; without
    /// it a modern server MUST NOT log to this request (spec 2026-07-28 `utilities/logging`).
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
    /// Every other key, kept verbatim (`traceparent`, extension keys, ...).
    #[serde(flatten)]
    pub other: Meta,
}

impl RequestMeta {
    /// Metadata for a modern request: version, capabilities and client identity.
    pub fn modern(
        protocol_version: impl Into<String>,
        client_capabilities: ClientCapabilities,
        client_info: Option<Implementation>,
    ) -> RequestMeta {
        RequestMeta {
            protocol_version: Some(protocol_version.into()),
            client_capabilities: Some(Box::new(client_capabilities)),
            client_info: client_info.map(Box::new),
            ..RequestMeta::default()
        }
    }
}

/// Read by hand rather than derived: `#[serde(flatten)]` on `other` made serde buffer the
/// whole object and read every typed field a second time from the buffer, a tenth of a modern
/// call's instructions (every 2026-07-28 request has this `_meta`). The same shape: the typed
/// keys, each at most once, and every other key kept in `other`.
impl<'de> Deserialize<'de> for RequestMeta {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(RequestMetaVisitor)
    }
}

struct RequestMetaVisitor;

impl<'de> serde::de::Visitor<'de> for RequestMetaVisitor {
    type Value = RequestMeta;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The derived reader's words, which error messages have always carried.
        f.write_str("struct RequestMeta")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<RequestMeta, A::Error> {
        let mut meta = RequestMeta::default();
        let mut seen = [false; MetaKey::TYPED];
        while let Some(key) = map.next_key::<MetaKey>()? {
            if let Some(slot) = key.typed_index() {
                if std::mem::replace(&mut seen[slot], true) {
                    return Err(serde::de::Error::duplicate_field(key.name()));
                }
            }
            match key {
                MetaKey::ProgressToken => meta.progress_token = map.next_value()?,
                MetaKey::ProtocolVersion => meta.protocol_version = map.next_value()?,
                MetaKey::ClientCapabilities => meta.client_capabilities = map.next_value()?,
                MetaKey::ClientInfo => meta.client_info = map.next_value()?,
                MetaKey::LogLevel => meta.log_level = map.next_value()?,
                MetaKey::Other(name) => {
                    let value = map.next_value()?;
                    meta.other.insert(name, value);
                }
            }
        }
        Ok(meta)
    }
}

/// A key of a request's `_meta`: one of the typed ones, or another.
enum MetaKey {
    ProgressToken,
    ProtocolVersion,
    ClientCapabilities,
    ClientInfo,
    LogLevel,
    Other(String),
}

impl MetaKey {
    const TYPED: usize = 5;

    fn typed_index(&self) -> Option<usize> {
        match self {
            MetaKey::ProgressToken => Some(0),
            MetaKey::ProtocolVersion => Some(1),
            MetaKey::ClientCapabilities => Some(2),
            MetaKey::ClientInfo => Some(3),
            MetaKey::LogLevel => Some(4),
            MetaKey::Other(_) => None,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            MetaKey::ProgressToken => PROGRESS_TOKEN_META_KEY,
            MetaKey::ProtocolVersion => PROTOCOL_VERSION_META_KEY,
            MetaKey::ClientCapabilities => CLIENT_CAPABILITIES_META_KEY,
            MetaKey::ClientInfo => CLIENT_INFO_META_KEY,
            MetaKey::LogLevel => LOG_LEVEL_META_KEY,
            MetaKey::Other(_) => "",
        }
    }
}

impl<'de> Deserialize<'de> for MetaKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(MetaKeyVisitor)
    }
}

struct MetaKeyVisitor;

impl serde::de::Visitor<'_> for MetaKeyVisitor {
    type Value = MetaKey;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a _meta key")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<MetaKey, E> {
        Ok(match key {
            PROGRESS_TOKEN_META_KEY => MetaKey::ProgressToken,
            PROTOCOL_VERSION_META_KEY => MetaKey::ProtocolVersion,
            CLIENT_CAPABILITIES_META_KEY => MetaKey::ClientCapabilities,
            CLIENT_INFO_META_KEY => MetaKey::ClientInfo,
            LOG_LEVEL_META_KEY => MetaKey::LogLevel,
            other => MetaKey::Other(other.to_owned()),
        })
    }
}

setters!(RequestMeta {
    with_progress_token => progress_token: ProgressToken,
    with_protocol_version => protocol_version: String,
    with_client_capabilities => client_capabilities: Box<ClientCapabilities>,
    with_client_info => client_info: Box<Implementation>,
    with_log_level => log_level: LoggingLevel,
});

/// Params of a request that carries only `_meta` (`ping`, `server/discover`, `roots/list`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

setters!(RequestParams { with_meta => meta: RequestMeta });

/// Params of a notification that carries only `_meta` (the `list_changed` family).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NotificationParams {
    /// Notification metadata; on a listen stream it carries [`SUBSCRIPTION_ID_META_KEY`].
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

setters!(NotificationParams { with_meta => meta: Meta });

/// Params of the paginated list requests (`tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PaginatedRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The opaque cursor from the previous page's `nextCursor`; `""` is a valid cursor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

setters!(PaginatedRequestParams {
    with_meta => meta: RequestMeta,
    with_cursor => cursor: String,
});

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{LoggingLevel, ProgressToken, RequestMeta};

    /// The hand-written reader takes what the derived one with `flatten` took: the typed keys,
    /// nulls as absent, and every other key verbatim.
    #[test]
    fn a_request_meta_reads_its_typed_keys_and_keeps_the_others() {
        let text = r#"{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{"roots":{},"x-new":1},
            "io.modelcontextprotocol/clientInfo":null,"io.modelcontextprotocol/logLevel":"info",
            "traceparent":"00-a","ext/key":{"n":[1]}}"#;
        let meta: RequestMeta = serde_json::from_str(text).expect("parses");
        assert_eq!(meta.progress_token, Some(ProgressToken::Number(7)));
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
        let capabilities = meta.client_capabilities.as_deref().expect("capabilities");
        assert!(capabilities.roots.is_some());
        assert_eq!(capabilities.extra["x-new"], 1);
        assert_eq!(meta.client_info, None);
        assert_eq!(meta.log_level, Some(LoggingLevel::Info));
        assert_eq!(meta.other.len(), 2);
        assert_eq!(meta.other["ext/key"], json!({"n": [1]}));
        let again: RequestMeta =
            serde_json::from_value(serde_json::to_value(&meta).expect("json")).expect("parses");
        assert_eq!(again, meta);
    }

    #[test]
    fn a_request_meta_refuses_a_typed_key_twice_and_a_wrong_type() {
        let twice = r#"{"progressToken":1,"progressToken":2}"#;
        assert!(serde_json::from_str::<RequestMeta>(twice).is_err());
        let wrong = r#"{"io.modelcontextprotocol/protocolVersion":5}"#;
        assert!(serde_json::from_str::<RequestMeta>(wrong).is_err());
        assert!(serde_json::from_str::<RequestMeta>("[]").is_err());
    }
}
