//! `subscriptions/listen` (2026-07-28): one long-lived request carries change notifications.

use serde::{Deserialize, Serialize};

use crate::{Meta, RequestMeta, ResultType};

/// Which notifications a listen stream wants (request) or gets (acknowledgement).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// `notifications/tasks` for these task ids (the tasks extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

setters!(SubscriptionFilter {
    with_tools_list_changed => tools_list_changed: bool,
    with_prompts_list_changed => prompts_list_changed: bool,
    with_resources_list_changed => resources_list_changed: bool,
    with_resource_subscriptions => resource_subscriptions: Vec<String>,
    with_task_ids => task_ids: Vec<String>,
});

/// Params of `subscriptions/listen`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionsListenRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// What the client wants to hear about.
    pub notifications: SubscriptionFilter,
}

impl SubscriptionsListenRequestParams {
    /// Listens for the notifications `notifications` selects.
    pub fn new(notifications: SubscriptionFilter) -> SubscriptionsListenRequestParams {
        SubscriptionsListenRequestParams { meta: None, notifications }
    }
}

setters!(SubscriptionsListenRequestParams { with_meta => meta: RequestMeta });

/// Params of `notifications/subscriptions/acknowledged`: the server MUST send it first on a
/// listen stream, with the subset it agreed to (unsupported kinds omitted).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// Notification metadata; carries [`crate::SUBSCRIPTION_ID_META_KEY`].
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// What the server will send.
    pub notifications: SubscriptionFilter,
}

impl SubscriptionsAcknowledgedNotificationParams {
    /// The server will send the notifications `notifications` selects.
    pub fn new(notifications: SubscriptionFilter) -> Self {
        SubscriptionsAcknowledgedNotificationParams { meta: None, notifications }
    }
}

/// The final answer to `subscriptions/listen`, when the server ends the stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionsListenResult {
    /// Result metadata; carries [`crate::SUBSCRIPTION_ID_META_KEY`].
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
}

setters!(SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenResult {
    with_meta => meta: Meta,
});
