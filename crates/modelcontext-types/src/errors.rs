//! The `data` of the errors 2026-07-28 defines, and constructors for them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{ClientCapabilities, McpError};

/// `data` of -32022 `UnsupportedProtocolVersion`: what the server speaks, and what it got.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UnsupportedProtocolVersionData {
    /// Every revision the server supports; the client SHOULD retry with one of them.
    pub supported: Vec<String>,
    /// The revision the client asked for, echoed.
    pub requested: String,
}

impl UnsupportedProtocolVersionData {
    /// The server speaks `supported`; the client asked for `requested`.
    pub fn new(supported: Vec<String>, requested: impl Into<String>) -> Self {
        UnsupportedProtocolVersionData { supported, requested: requested.into() }
    }
}

/// `data` of -32042 `URLElicitationRequired`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct UrlElicitationRequiredData {
    elicitations: Vec<crate::ElicitRequestURLParams>,
}

/// `data` of -32021 `MissingRequiredClientCapability`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the request needs, as a capabilities object (e.g. `{"sampling": {}}`).
    pub required_capabilities: ClientCapabilities,
}

impl MissingRequiredClientCapabilityData {
    /// The request needs `required_capabilities`.
    pub fn new(required_capabilities: ClientCapabilities) -> Self {
        MissingRequiredClientCapabilityData { required_capabilities }
    }
}

fn data(value: &impl Serialize) -> Option<Value> {
    serde_json::to_value(value).ok()
}

impl McpError {
    /// -32022: the requested revision is not supported (answered with HTTP 400).
    pub fn unsupported_protocol_version(
        supported: Vec<String>,
        requested: impl Into<String>,
    ) -> McpError {
        let payload = UnsupportedProtocolVersionData::new(supported, requested);
        McpError {
            data: data(&payload),
            ..McpError::new(crate::UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
        }
    }

    /// -32042 `URLElicitationRequired` (2025-11-25 only; 2026-07-28 forbids the code): the
    /// request cannot proceed until the user has been through each of `elicitations`.
    pub fn url_elicitation_required(elicitations: Vec<crate::ElicitRequestURLParams>) -> McpError {
        let payload = UrlElicitationRequiredData { elicitations };
        McpError {
            data: data(&payload),
            ..McpError::new(crate::URL_ELICITATION_REQUIRED, "URL elicitation required")
        }
    }

    /// The elicitations of a -32042 `URLElicitationRequired` error; `None` for any other.
    pub fn url_elicitations(&self) -> Option<Vec<crate::ElicitRequestURLParams>> {
        if self.code != crate::URL_ELICITATION_REQUIRED {
            return None;
        }
        let data: UrlElicitationRequiredData = serde_json::from_value(self.data.clone()?).ok()?;
        Some(data.elicitations)
    }

    /// -32021: the request needs client capabilities the client did not declare.
    pub fn missing_required_client_capability(
        message: impl Into<String>,
        required_capabilities: ClientCapabilities,
    ) -> McpError {
        let payload = MissingRequiredClientCapabilityData::new(required_capabilities);
        McpError {
            data: data(&payload),
            ..McpError::new(crate::MISSING_REQUIRED_CLIENT_CAPABILITY, message)
        }
    }

    /// -32020: an HTTP header disagrees with the body, or a required one is missing.
    pub fn header_mismatch(message: impl Into<String>) -> McpError {
        McpError::new(crate::HEADER_MISMATCH, message)
    }

    /// -32602 for a resource that does not exist, with its `uri` in `data`
    /// (2026-07-28 `server/resources.mdx`; handshake-era servers used -32002).
    pub fn resource_not_found(uri: &str) -> McpError {
        McpError::invalid_params(format!("Resource not found: {uri}"))
            .with_data(serde_json::json!({ "uri": uri }))
    }

    /// Parses `data` as `T` (e.g. [`UnsupportedProtocolVersionData`]).
    pub fn data_as<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        self.data.as_ref().and_then(|d| T::deserialize(d).ok())
    }
}
