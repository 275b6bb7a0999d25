//! Resources: data a server exposes by URI, listed, templated, read and watched.

use serde::{Deserialize, Serialize};

use crate::{
    Annotations, CacheScope, Icon, InputResponses, Meta, RequestMeta, ResourceLink, ResultType,
};

/// A resource the server can read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes, before any encoding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Usage hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

// A resource link is a resource with a `type`: the same members.
impl Resource {
    /// A resource with a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Resource {
        Resource { uri: uri.into(), name: name.into(), ..Resource::default() }
    }
}

setters!(Resource, ResourceLink {
    with_title => title: String,
    with_description => description: String,
    with_mime_type => mime_type: String,
    with_size => size: u64,
    with_icons => icons: Vec<Icon>,
    with_annotations => annotations: Annotations,
    with_meta => meta: Meta,
});

/// A family of resources named by an RFC 6570 URI template.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplate {
    /// The RFC 6570 URI template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type, when all matching resources share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Usage hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ResourceTemplate {
    /// A template with a URI template and a name.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> ResourceTemplate {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            ..ResourceTemplate::default()
        }
    }
}

setters!(ResourceTemplate {
    with_title => title: String,
    with_description => description: String,
    with_mime_type => mime_type: String,
    with_icons => icons: Vec<Icon>,
    with_annotations => annotations: Annotations,
    with_meta => meta: Meta,
});

/// Text contents of a resource.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextResourceContents {
    /// The text `text` of `uri`.
    pub fn new(uri: impl Into<String>, text: impl Into<String>) -> TextResourceContents {
        TextResourceContents { uri: uri.into(), mime_type: None, text: text.into(), meta: None }
    }
}

/// Binary contents of a resource, base64-encoded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BlobResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The base64-encoded bytes.
    pub blob: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl BlobResourceContents {
    /// The bytes of `uri`, already base64-encoded.
    pub fn new(uri: impl Into<String>, blob_b64: impl Into<String>) -> BlobResourceContents {
        BlobResourceContents { uri: uri.into(), mime_type: None, blob: blob_b64.into(), meta: None }
    }
}

setters!(TextResourceContents, BlobResourceContents {
    with_mime_type => mime_type: String,
    with_meta => meta: Meta,
});

/// The contents of a resource: text or a blob. The wire has no tag; `text` or `blob` decides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// Text contents of `uri`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> ResourceContents {
        ResourceContents::Text(TextResourceContents::new(uri, text))
    }

    /// Binary contents of `uri`, already base64-encoded.
    pub fn blob(uri: impl Into<String>, blob_b64: impl Into<String>) -> ResourceContents {
        ResourceContents::Blob(BlobResourceContents::new(uri, blob_b64))
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> ResourceContents {
        let slot = match &mut self {
            ResourceContents::Text(t) => &mut t.mime_type,
            ResourceContents::Blob(b) => &mut b.mime_type,
        };
        *slot = Some(mime_type.into());
        self
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }
}

impl From<TextResourceContents> for ResourceContents {
    fn from(c: TextResourceContents) -> Self {
        ResourceContents::Text(c)
    }
}

impl From<BlobResourceContents> for ResourceContents {
    fn from(c: BlobResourceContents) -> Self {
        ResourceContents::Blob(c)
    }
}

/// The answer to `resources/list`. Cacheable, paginated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListResourcesResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// This page of resources.
    pub resources: Vec<Resource>,
    /// The cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long the result may be cached, in milliseconds (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the result; the same on every page (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

impl ListResourcesResult {
    /// A page of resources.
    #[inline]
    pub fn new(resources: Vec<Resource>) -> ListResourcesResult {
        ListResourcesResult { resources, ..ListResourcesResult::default() }
    }
}

/// The answer to `resources/templates/list`. Cacheable, paginated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListResourceTemplatesResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// This page of templates.
    pub resource_templates: Vec<ResourceTemplate>,
    /// The cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long the result may be cached, in milliseconds (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the result; the same on every page (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

impl ListResourceTemplatesResult {
    /// A page of resource templates.
    #[inline]
    pub fn new(resource_templates: Vec<ResourceTemplate>) -> ListResourceTemplatesResult {
        ListResourceTemplatesResult { resource_templates, ..ListResourceTemplatesResult::default() }
    }
}

/// Params of `resources/read`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadResourceRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The URI to read.
    pub uri: String,
    /// MRTR retry: the answers to the previous `inputRequests`, by key (2026-07-28+). An
    /// entry that is no answer of any kind is dropped when parsing, not refused: servers
    /// ignore what they do not recognize (SEP-2322).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::mrtr::recognized_input_responses"
    )]
    pub input_responses: Option<InputResponses>,
    /// MRTR retry: the previous `requestState`, echoed byte for byte (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl ReadResourceRequestParams {
    /// Reads `uri`.
    pub fn new(uri: impl Into<String>) -> ReadResourceRequestParams {
        ReadResourceRequestParams { uri: uri.into(), ..ReadResourceRequestParams::default() }
    }
}

setters!(ReadResourceRequestParams {
    with_meta => meta: RequestMeta,
    with_input_responses => input_responses: InputResponses,
    with_request_state => request_state: String,
});

/// The answer to `resources/read`. Cacheable.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadResourceResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The contents; 2026-07-28 forbids an empty list for a missing resource (use -32602).
    pub contents: Vec<ResourceContents>,
    /// How long the result may be cached, in milliseconds (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the result (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

impl ReadResourceResult {
    /// The contents read.
    #[inline]
    pub fn new(contents: Vec<ResourceContents>) -> ReadResourceResult {
        ReadResourceResult { contents, ..ReadResourceResult::default() }
    }
}

setters!(ReadResourceResult {
    with_meta => meta: Meta,
    with_ttl_ms => ttl_ms: u64,
    with_cache_scope => cache_scope: CacheScope,
});

/// Params of `resources/subscribe` (handshake era only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscribeRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The URI to watch.
    pub uri: String,
}

impl SubscribeRequestParams {
    /// Watches `uri`.
    pub fn new(uri: impl Into<String>) -> SubscribeRequestParams {
        SubscribeRequestParams { meta: None, uri: uri.into() }
    }
}

/// Params of `resources/unsubscribe` (handshake era only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UnsubscribeRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The URI to stop watching.
    pub uri: String,
}

impl UnsubscribeRequestParams {
    /// Stops watching `uri`.
    pub fn new(uri: impl Into<String>) -> UnsubscribeRequestParams {
        UnsubscribeRequestParams { meta: None, uri: uri.into() }
    }
}

setters!(SubscribeRequestParams, UnsubscribeRequestParams { with_meta => meta: RequestMeta });

/// Params of `notifications/resources/updated`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceUpdatedNotificationParams {
    /// Notification metadata; on a listen stream it carries the subscription id.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The URI that changed (possibly a sub-resource of the one subscribed to).
    pub uri: String,
}

impl ResourceUpdatedNotificationParams {
    /// `uri` changed.
    pub fn new(uri: impl Into<String>) -> ResourceUpdatedNotificationParams {
        ResourceUpdatedNotificationParams { meta: None, uri: uri.into() }
    }
}

setters!(ResourceUpdatedNotificationParams { with_meta => meta: Meta });
