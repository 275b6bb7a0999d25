//! Agent Skills over MCP (`io.modelcontextprotocol/skills`, SEP-2640).
//!
//! A skill is a directory of files, at least a `SKILL.md` whose YAML front matter names and
//! describes it. Each file is a resource (`skill://<skill-path>/<file>`), read with
//! `resources/read`. A server declaring the extension answers `skills/list` (every skill it
//! chooses to enumerate, paginated) and `skills/get` (one skill by the URI of its `SKILL.md`);
//! each answer is a [`SkillEntry`]: the front matter as JSON, and the skill's files with their
//! SHA-256 digest and size, which a host verifies every file against when it reads it. With
//! `directoryRead: true` in its declaration, the server also answers `resources/directory/read`
//! (the direct children of a directory resource, [`DIRECTORY_MIME_TYPE`]).

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::{CacheScope, Meta, RequestMeta, Resource, ResultType};

/// The extension's identifier.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The URI scheme skills are conventionally served under.
pub const SKILL_SCHEME: &str = "skill://";

/// The file every skill has at its root.
pub const SKILL_MD: &str = "SKILL.md";

/// The MIME type of a directory resource (`resources/directory/read`).
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// Most files one skill should have, `SKILL.md` included (hosts must accept this many).
pub const MAX_SKILL_FILES: usize = 512;

/// Most bytes one skill's files should add up to: 16 MiB (hosts must accept this much).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// The extension's settings in `capabilities.extensions["io.modelcontextprotocol/skills"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SkillsSettings {
    /// The server answers `resources/directory/read`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub directory_read: bool,
}

/// One skill as `skills/list` and `skills/get` describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillEntry {
    /// The URI of the skill's `SKILL.md`; its last path segment before `/SKILL.md` is the
    /// skill's name.
    pub uri: String,
    /// The `SKILL.md` front matter, every field as written, as JSON.
    pub frontmatter: Map<String, Value>,
    /// The skill's files, or [`SkillFiles::Dynamic`].
    pub resources: SkillFiles,
}

impl SkillEntry {
    /// An entry for the skill at `uri`.
    pub fn new(
        uri: impl Into<String>,
        frontmatter: Map<String, Value>,
        resources: SkillFiles,
    ) -> Self {
        SkillEntry { uri: uri.into(), frontmatter, resources }
    }

    /// `frontmatter.name`, when it is a string.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(Value::as_str)
    }

    /// `frontmatter.description`, when it is a string.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(Value::as_str)
    }

    /// The skill's root directory: `uri` without `/SKILL.md`.
    pub fn root(&self) -> Option<&str> {
        self.uri.strip_suffix(SKILL_MD)?.strip_suffix('/')
    }

    /// The listed file at `uri`; `None` for a dynamic skill or an unlisted file.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        match &self.resources {
            SkillFiles::Listed(files) => files.iter().find(|f| f.uri == uri),
            SkillFiles::Dynamic => None,
        }
    }
}

/// A skill's files: every one with its digest and size, or `"dynamic"` (generated content
/// that has no stable digest; such a skill cannot be verified).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillFiles {
    /// Every file of the skill, `SKILL.md` included, each once.
    Listed(Vec<SkillFile>),
    /// `"dynamic"`.
    Dynamic,
}

const DYNAMIC: &str = "dynamic";

impl Serialize for SkillFiles {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillFiles::Listed(files) => files.serialize(s),
            SkillFiles::Dynamic => s.serialize_str(DYNAMIC),
        }
    }
}

impl<'de> Deserialize<'de> for SkillFiles {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if s == DYNAMIC => Ok(SkillFiles::Dynamic),
            files @ Value::Array(_) => {
                serde_json::from_value(files).map(SkillFiles::Listed).map_err(D::Error::custom)
            }
            other => Err(D::Error::custom(format!(
                "skill resources must be an array or \"dynamic\", not {other}"
            ))),
        }
    }
}

/// One file of a skill: where it is, the SHA-256 of its raw bytes (`sha256:` and 64
/// lowercase hex digits) and their number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillFile {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:{hex}` of the raw bytes.
    pub digest: String,
    /// Length of the raw bytes.
    pub size: u64,
}

impl SkillFile {
    /// A listed file.
    pub fn new(uri: impl Into<String>, digest: impl Into<String>, size: u64) -> SkillFile {
        SkillFile { uri: uri.into(), digest: digest.into(), size }
    }
}

/// The answer to `skills/list`. Cacheable (2026-07-28+), paginated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListSkillsResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// This page of skills.
    pub skills: Vec<SkillEntry>,
    /// The cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long the result may be cached, in milliseconds (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the result (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

impl ListSkillsResult {
    /// A page of skills.
    pub fn new(skills: Vec<SkillEntry>) -> ListSkillsResult {
        ListSkillsResult { skills, ..ListSkillsResult::default() }
    }
}

/// Params of `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GetSkillRequestParams {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl GetSkillRequestParams {
    /// Asks for the skill whose `SKILL.md` is at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        GetSkillRequestParams { uri: uri.into(), meta: None }
    }
}

/// The answer to `skills/get`: one entry, no cursor. Cacheable (2026-07-28+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetSkillResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The skill.
    pub skill: SkillEntry,
    /// How long the result may be cached, in milliseconds (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the result (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

impl GetSkillResult {
    /// The answer carrying `skill`.
    pub fn new(skill: SkillEntry) -> GetSkillResult {
        GetSkillResult { meta: None, result_type: None, skill, ttl_ms: None, cache_scope: None }
    }
}

/// Params of `resources/directory/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReadDirectoryRequestParams {
    /// The directory's URI (no trailing slash).
    pub uri: String,
    /// Where the previous page ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl ReadDirectoryRequestParams {
    /// The first page of the directory at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        ReadDirectoryRequestParams { uri: uri.into(), cursor: None, meta: None }
    }
}

/// The answer to `resources/directory/read`: the directory's direct children, subdirectories
/// with the MIME type [`DIRECTORY_MIME_TYPE`]. Paginated like `resources/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadDirectoryResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// This page of children.
    pub resources: Vec<Resource>,
    /// The cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

impl ReadDirectoryResult {
    /// A page of children.
    pub fn new(resources: Vec<Resource>) -> ReadDirectoryResult {
        ReadDirectoryResult { resources, ..ReadDirectoryResult::default() }
    }
}

/// The skills settings a server declared, if it declared the extension.
pub fn skills_settings(extensions: Option<&Map<String, Value>>) -> Option<SkillsSettings> {
    let value = extensions?.get(SKILLS_EXTENSION)?;
    Some(serde_json::from_value(value.clone()).unwrap_or_default())
}
