//! Logging: `notifications/message` and its levels.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Meta, RequestMeta};

/// A log level (RFC 5424 severities), ordered from least to most severe.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debug-level messages.
    #[default]
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant conditions.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// The wire name, e.g. `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }
}

/// Params of `logging/setLevel` (handshake era only; 2026-07-28 uses
/// [`crate::LOG_LEVEL_META_KEY`] per request instead).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SetLevelRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The lowest level the client wants.
    pub level: LoggingLevel,
}

impl SetLevelRequestParams {
    /// Asks for messages at `level` and above.
    pub fn new(level: LoggingLevel) -> SetLevelRequestParams {
        SetLevelRequestParams { meta: None, level }
    }
}

setters!(SetLevelRequestParams { with_meta => meta: RequestMeta });

/// Params of `notifications/message`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LoggingMessageNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Severity.
    pub level: LoggingLevel,
    /// Which logger wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The message: any JSON value.
    pub data: Value,
}

impl LoggingMessageNotificationParams {
    /// A message of severity `level`.
    pub fn new(level: LoggingLevel, data: impl Into<Value>) -> Self {
        LoggingMessageNotificationParams { meta: None, level, logger: None, data: data.into() }
    }
}

setters!(LoggingMessageNotificationParams {
    with_meta => meta: Meta,
    with_logger => logger: String,
});
