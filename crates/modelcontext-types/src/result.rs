//! What every result shares: `resultType`, and the caching hints of cacheable results.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, Meta,
};

/// The kind of a result (2026-07-28: every result MUST carry one).
///
/// Open on purpose: extensions add values (the tasks extension sends `"task"`), and an unknown
/// value is kept verbatim. A client treats an absent `resultType` (a legacy server) as
/// [`ResultType::Complete`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResultType {
    /// `"complete"`: the request is answered.
    Complete,
    /// `"input_required"`: the server needs client input first (MRTR, see `InputRequiredResult`).
    InputRequired,
    /// Any other value, kept verbatim.
    Other(String),
}

impl ResultType {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Other(s) => s,
        }
    }
}

impl From<&str> for ResultType {
    fn from(s: &str) -> Self {
        match s {
            "complete" => ResultType::Complete,
            "input_required" => ResultType::InputRequired,
            other => ResultType::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for ResultType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ResultType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(ResultType::from(s.as_str()))
    }
}

/// Who may cache a cacheable result (2026-07-28, SEP-2549).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum CacheScope {
    /// Any client or intermediary may reuse it.
    Public,
    /// Only the requesting principal may reuse it.
    Private,
}

/// A result with nothing in it (`ping`'s answer, and the answer to `resources/subscribe`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EmptyResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
}

setters!(EmptyResult { with_meta => meta: Meta });

// The paginated, cacheable list results share these members.
setters!(ListToolsResult, ListPromptsResult, ListResourcesResult, ListResourceTemplatesResult {
    with_meta => meta: Meta,
    with_next_cursor => next_cursor: String,
    with_ttl_ms => ttl_ms: u64,
    with_cache_scope => cache_scope: CacheScope,
});
