//! Utility notifications both eras share: progress and cancellation.

use serde::{Deserialize, Serialize};

use crate::{Meta, ProgressToken, RequestId};

/// Params of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProgressNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The token from the request's `_meta.progressToken`; never sent without one.
    pub progress_token: ProgressToken,
    /// Progress so far; MUST increase with every notification (may be fractional).
    #[serde(serialize_with = "crate::num::f64")]
    pub progress: f64,
    /// The total, when known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::num::opt_f64"
    )]
    pub total: Option<f64>,
    /// A human-readable status (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ProgressNotificationParams {
    /// Progress for `token`.
    pub fn new(token: ProgressToken, progress: f64, total: Option<f64>) -> Self {
        ProgressNotificationParams {
            meta: None,
            progress_token: token,
            progress,
            total,
            message: None,
        }
    }
}

setters!(ProgressNotificationParams {
    with_meta => meta: Meta,
    with_total => total: f64,
    with_message => message: String,
});

/// Params of `notifications/cancelled`.
///
/// 2026-07-28 sends it only on stdio (on HTTP, closing the stream cancels) and, from the
/// server, only to tear down a `subscriptions/listen`. `initialize` cannot be cancelled.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CancelledNotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The request to cancel (optional only in 2025-11-25, where tasks cancel differently).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl CancelledNotificationParams {
    /// Cancels `request_id`.
    pub fn new(request_id: RequestId, reason: Option<String>) -> Self {
        CancelledNotificationParams { meta: None, request_id: Some(request_id), reason }
    }
}

setters!(CancelledNotificationParams {
    with_meta => meta: Meta,
    with_request_id => request_id: RequestId,
    with_reason => reason: String,
});
