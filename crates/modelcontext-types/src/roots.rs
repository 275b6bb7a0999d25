//! Roots: the directories a client lets a server work in (deprecated in 2026-07-28).

use serde::{Deserialize, Serialize};

use crate::{Meta, ResultType};

/// A root directory or file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Root {
    /// The root's URI; MUST be a `file://` URI.
    pub uri: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Root {
    /// A root with a URI.
    pub fn new(uri: impl Into<String>) -> Root {
        Root { uri: uri.into(), ..Root::default() }
    }
}

setters!(Root {
    with_name => name: String,
    with_meta => meta: Meta,
});

/// The answer to `roots/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListRootsResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The roots.
    pub roots: Vec<Root>,
}

impl ListRootsResult {
    /// The client's roots.
    pub fn new(roots: Vec<Root>) -> ListRootsResult {
        ListRootsResult { meta: None, result_type: None, roots }
    }
}

setters!(ListRootsResult { with_meta => meta: Meta });
