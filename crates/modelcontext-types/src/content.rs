//! Content blocks: what tools return, prompts contain and resources embed.
//!
//! Each block struct writes its own `"type"` member (`#[serde(tag = "type")]` on the struct),
//! so a block round-trips alone as well as inside [`ContentBlock`]. Deserializing a block
//! struct alone does not check `"type"`; [`ContentBlock`] dispatches on it, and an unknown
//! `"type"` is an error there.

use serde::{Deserialize, Serialize};

use crate::{Icon, Meta, Resource, ResourceContents};

/// Who a message or a piece of content is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

/// Hints on how a client should use a piece of content.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Annotations {
    /// Who the content is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (optional) to 1 (required).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::num::opt_f64"
    )]
    pub priority: Option<f64>,
    /// When the content last changed, as an ISO 8601 timestamp (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

setters!(Annotations {
    with_audience => audience: Vec<Role>,
    with_priority => priority: f64,
    with_last_modified => last_modified: String,
});

/// Text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "text", rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Usage hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextContent {
    /// A text block.
    pub fn new(text: impl Into<String>) -> TextContent {
        TextContent { text: text.into(), annotations: None, meta: None }
    }
}

/// An image, base64-encoded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "image", rename_all = "camelCase")]
#[non_exhaustive]
pub struct ImageContent {
    /// The base64-encoded image.
    pub data: String,
    /// The image's MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// Usage hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ImageContent {
    /// An image block from base64 data and a MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> ImageContent {
        ImageContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// Audio, base64-encoded (2025-03-26+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "audio", rename_all = "camelCase")]
#[non_exhaustive]
pub struct AudioContent {
    /// The base64-encoded audio.
    pub data: String,
    /// The audio's MIME type, e.g. `audio/wav`.
    pub mime_type: String,
    /// Usage hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl AudioContent {
    /// An audio block from base64 data and a MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> AudioContent {
        AudioContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// A link to a resource the client may read (2025-06-18+): a [`Resource`] with a `type`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "resource_link", rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
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
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Usage hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ResourceLink {
    /// A link to the resource `uri`, called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> ResourceLink {
        ResourceLink { uri: uri.into(), name: name.into(), ..ResourceLink::default() }
    }
}

impl From<Resource> for ResourceLink {
    fn from(r: Resource) -> Self {
        ResourceLink {
            uri: r.uri,
            name: r.name,
            title: r.title,
            description: r.description,
            mime_type: r.mime_type,
            size: r.size,
            icons: r.icons,
            annotations: r.annotations,
            meta: r.meta,
        }
    }
}

/// A resource's contents, embedded in a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "resource", rename_all = "camelCase")]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Usage hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl EmbeddedResource {
    /// Embeds resource contents.
    pub fn new(resource: impl Into<ResourceContents>) -> EmbeddedResource {
        EmbeddedResource { resource: resource.into(), annotations: None, meta: None }
    }
}

// Every content block takes usage hints and metadata.
setters!(TextContent, ImageContent, AudioContent, EmbeddedResource {
    with_annotations => annotations: Annotations,
    with_meta => meta: Meta,
});

/// Any content block of a tool result or a prompt message, told apart by `"type"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum ContentBlock {
    /// `"text"`.
    #[serde(rename = "text")]
    Text(TextContent),
    /// `"image"`.
    #[serde(rename = "image")]
    Image(ImageContent),
    /// `"audio"`.
    #[serde(rename = "audio")]
    Audio(AudioContent),
    /// `"resource_link"`.
    #[serde(rename = "resource_link")]
    ResourceLink(ResourceLink),
    /// `"resource"`.
    #[serde(rename = "resource")]
    Resource(EmbeddedResource),
}

// The blocks write their own `"type"`; a derived, tagged `Serialize` would write it twice.
impl Serialize for ContentBlock {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentBlock::Text(c) => c.serialize(s),
            ContentBlock::Image(c) => c.serialize(s),
            ContentBlock::Audio(c) => c.serialize(s),
            ContentBlock::ResourceLink(c) => c.serialize(s),
            ContentBlock::Resource(c) => c.serialize(s),
        }
    }
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> ContentBlock {
        ContentBlock::Text(TextContent::new(text))
    }

    /// An image block from base64 data and a MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> ContentBlock {
        ContentBlock::Image(ImageContent::new(data, mime_type))
    }

    /// An audio block from base64 data and a MIME type.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> ContentBlock {
        ContentBlock::Audio(AudioContent::new(data, mime_type))
    }

    /// A link to a resource.
    pub fn resource_link(resource: impl Into<ResourceLink>) -> ContentBlock {
        ContentBlock::ResourceLink(resource.into())
    }

    /// An embedded resource.
    pub fn resource(contents: impl Into<ResourceContents>) -> ContentBlock {
        ContentBlock::Resource(EmbeddedResource::new(contents))
    }

    /// The text, when this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl From<TextContent> for ContentBlock {
    fn from(c: TextContent) -> Self {
        ContentBlock::Text(c)
    }
}

impl From<ImageContent> for ContentBlock {
    fn from(c: ImageContent) -> Self {
        ContentBlock::Image(c)
    }
}

impl From<AudioContent> for ContentBlock {
    fn from(c: AudioContent) -> Self {
        ContentBlock::Audio(c)
    }
}

impl From<ResourceLink> for ContentBlock {
    fn from(c: ResourceLink) -> Self {
        ContentBlock::ResourceLink(c)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(c: EmbeddedResource) -> Self {
        ContentBlock::Resource(c)
    }
}
