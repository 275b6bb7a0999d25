//! Skills (`io.modelcontextprotocol/skills`, SEP-2640) for hosts: find a server's skills,
//! then load one and read its files, each verified against the entry it was listed with.
//!
//! Nothing is read ahead of need: listing and `skills/get` fetch entries only; a skill's
//! `SKILL.md` is read by [`Client::load_skill`], a supporting file by
//! [`LoadedSkill::read_file`]. Every read is checked, and content that fails a check is never
//! returned: its size, its SHA-256 digest, that the file is listed in the entry at all, and,
//! for `SKILL.md`, that its front matter is the entry's `frontmatter` field for field.

use modelcontext_types::{
    GetSkillResult, ListSkillsResult, ReadDirectoryRequestParams, ReadDirectoryResult,
    ResourceContents, SkillEntry, SkillFiles, SkillsSettings, method, skills_settings,
};
use serde_json::{Map, Value};

use super::Client;
use crate::Error;
use crate::skills::{digest, parse_frontmatter};

/// Why a skill, or one of its files, was not used. Every variant but [`SkillError::Request`]
/// is a verification failure: the content is not what the entry promised (tampered with,
/// corrupted, or changed since the entry was fetched: [`Client::get_skill`] refreshes it).
#[derive(Debug)]
#[non_exhaustive]
pub enum SkillError {
    /// Reading failed (the request, the connection).
    Request(Error),
    /// The entry cannot be loaded as it is: its URI does not end in `/SKILL.md` under the
    /// skill's name, or its `resources` is neither a list nor `"dynamic"`.
    InvalidEntry {
        /// The skill's URI.
        uri: String,
        /// What is wrong.
        reason: String,
    },
    /// The skill's content is generated (`"resources": "dynamic"`): it has no digests to
    /// verify, and this host does not load unverifiable skills.
    Unverifiable {
        /// The skill's URI.
        uri: String,
    },
    /// The file is not in the entry's `resources`: a file the skill did not have when listed.
    Unlisted {
        /// The file's URI.
        uri: String,
    },
    /// The read returned no contents.
    NoContent {
        /// The file's URI.
        uri: String,
    },
    /// The content's length is not the entry's `size`.
    SizeMismatch {
        /// The file's URI.
        uri: String,
        /// The entry's `size`.
        expected: u64,
        /// The bytes read.
        actual: u64,
    },
    /// The content's SHA-256 is not the entry's `digest`.
    DigestMismatch {
        /// The file's URI.
        uri: String,
        /// The entry's `digest`.
        expected: String,
        /// The digest of what was read.
        actual: String,
    },
    /// The `SKILL.md` front matter cannot be read, or differs from the entry's `frontmatter`.
    FrontmatterMismatch {
        /// The `SKILL.md` URI.
        uri: String,
        /// The unreadable part, or the fields that differ.
        reason: String,
    },
}

impl std::fmt::Display for SkillError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkillError::Request(_) => f.write_str("reading the skill failed"),
            SkillError::InvalidEntry { uri, reason } => {
                write!(f, "skill {uri}: invalid entry: {reason}")
            }
            SkillError::Unverifiable { uri } => {
                write!(f, "skill {uri} has dynamic resources, which cannot be verified")
            }
            SkillError::Unlisted { uri } => {
                write!(f, "{uri} is not listed in the skill's resources (refresh the skill)")
            }
            SkillError::NoContent { uri } => write!(f, "{uri}: the read returned no contents"),
            SkillError::SizeMismatch { uri, expected, actual } => {
                write!(f, "{uri}: {actual} bytes read, the skill's entry says {expected}")
            }
            SkillError::DigestMismatch { uri, expected, actual } => {
                write!(f, "{uri}: digest {actual}, the skill's entry says {expected}")
            }
            SkillError::FrontmatterMismatch { uri, reason } => {
                write!(f, "{uri}: front matter does not match the skill's entry: {reason}")
            }
        }
    }
}

impl std::error::Error for SkillError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SkillError::Request(e) => Some(e),
            _ => None,
        }
    }
}

impl From<Error> for SkillError {
    fn from(e: Error) -> SkillError {
        SkillError::Request(e)
    }
}

/// A skill loaded by [`Client::load_skill`]: its verified `SKILL.md`, and the entry every
/// further read of its files is verified against.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LoadedSkill {
    /// The entry the skill was loaded from.
    pub entry: SkillEntry,
    /// The `SKILL.md`, verified.
    pub skill_md: String,
}

impl LoadedSkill {
    /// Reads one of the skill's files, `path` relative to its root (`references/FORMS.md`) or
    /// a full URI, and verifies it. A file the entry does not list is refused unread.
    pub async fn read_file(&self, client: &Client, path: &str) -> Result<Vec<u8>, SkillError> {
        let uri = match self.entry.root() {
            Some(root) if !path.contains("://") => format!("{root}/{path}"),
            _ => path.to_owned(),
        };
        read_verified(client, &self.entry, &uri).await
    }

    /// The `SKILL.md` without its front matter: the instructions.
    pub fn body(&self) -> &str {
        let text = self.skill_md.strip_prefix('\u{feff}').unwrap_or(&self.skill_md);
        let Some(rest) = text.strip_prefix("---") else { return text };
        match rest.find("\n---") {
            Some(end) => {
                let after = &rest[end + 4..];
                after.split_once('\n').map_or("", |(_, body)| body)
            }
            None => text,
        }
    }
}

impl Client {
    /// The skills extension's settings, if the server declared the extension.
    pub fn skills_settings(&self) -> Option<SkillsSettings> {
        skills_settings(self.server_capabilities().extensions.as_ref())
    }

    /// One page of the server's skills (entries only: nothing is read).
    pub async fn list_skills(&self, cursor: Option<String>) -> Result<ListSkillsResult, Error> {
        self.list_page(method::SKILLS_LIST, cursor).await
    }

    /// Every skill the server lists, all pages. A server may list only some of its skills, or
    /// none: an empty list does not mean it has none.
    pub async fn list_all_skills(&self) -> Result<Vec<SkillEntry>, Error> {
        let mut skills = Vec::new();
        let mut cursor = None;
        loop {
            let page = self.list_skills(cursor).await?;
            skills.extend(page.skills);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(skills),
            }
        }
    }

    /// The current entry of the skill whose `SKILL.md` is at `uri` (`skills/get`), listed or
    /// not; also how to refresh an entry after a verification failure.
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry, Error> {
        let mut params = modelcontext_types::GetSkillRequestParams::new(uri);
        params.meta = self.meta();
        let result: GetSkillResult = self.request(method::SKILLS_GET, params).await?;
        Ok(result.skill)
    }

    /// One page of the children of the directory resource `uri` (`resources/directory/read`).
    /// Refused unsent when the server did not declare `directoryRead`, as the extension
    /// requires. A directory listing does not extend a loaded skill's entry.
    pub async fn read_directory(
        &self,
        uri: &str,
        cursor: Option<String>,
    ) -> Result<ReadDirectoryResult, Error> {
        if !self.skills_settings().is_some_and(|s| s.directory_read) {
            return Err(Error::negotiation(
                "the server did not declare directoryRead in the skills extension",
            ));
        }
        let mut params = ReadDirectoryRequestParams::new(uri);
        params.cursor = cursor;
        params.meta = self.meta();
        self.request(method::RESOURCES_DIRECTORY_READ, params).await
    }

    /// Loads a skill: reads its `SKILL.md` and verifies it against `entry` (listed, size,
    /// digest, front matter field by field). Its other files are read when needed, with
    /// [`LoadedSkill::read_file`].
    pub async fn load_skill(&self, entry: &SkillEntry) -> Result<LoadedSkill, SkillError> {
        check_entry(entry)?;
        let bytes = read_verified(self, entry, &entry.uri).await?;
        let invalid =
            |reason: String| SkillError::FrontmatterMismatch { uri: entry.uri.clone(), reason };
        let skill_md = String::from_utf8(bytes).map_err(|_| invalid("not UTF-8".into()))?;
        let frontmatter = parse_frontmatter(&skill_md).map_err(|e| invalid(e.to_string()))?;
        let differing = differing_fields(&frontmatter, &entry.frontmatter);
        if !differing.is_empty() {
            return Err(invalid(format!("fields {}", differing.join(", "))));
        }
        Ok(LoadedSkill { entry: entry.clone(), skill_md })
    }
}

/// An entry a host may load: `.../<name>/SKILL.md` with listed, verifiable resources.
fn check_entry(entry: &SkillEntry) -> Result<(), SkillError> {
    let invalid = |reason: &str| SkillError::InvalidEntry {
        uri: entry.uri.clone(),
        reason: reason.to_owned(),
    };
    let root = entry.root().ok_or_else(|| invalid("the URI does not end in /SKILL.md"))?;
    let last = root.rsplit('/').next().unwrap_or_default();
    if entry.name() != Some(last) {
        return Err(invalid("the URI's last segment is not frontmatter.name"));
    }
    match &entry.resources {
        SkillFiles::Listed(_) => Ok(()),
        SkillFiles::Dynamic => Err(SkillError::Unverifiable { uri: entry.uri.clone() }),
        #[allow(unreachable_patterns)]
        _ => Err(invalid("unknown resources form")),
    }
}

/// Reads `uri` and returns its bytes only if `entry` lists it and they match its size and
/// digest.
async fn read_verified(
    client: &Client,
    entry: &SkillEntry,
    uri: &str,
) -> Result<Vec<u8>, SkillError> {
    if matches!(entry.resources, SkillFiles::Dynamic) {
        return Err(SkillError::Unverifiable { uri: entry.uri.clone() });
    }
    let listed = entry.file(uri).ok_or_else(|| SkillError::Unlisted { uri: uri.to_owned() })?;
    let read = client.read_resource(uri).await?;
    let bytes = read
        .contents
        .into_iter()
        .find_map(raw_bytes)
        .ok_or_else(|| SkillError::NoContent { uri: uri.to_owned() })?;
    let actual = bytes.len() as u64;
    if actual != listed.size {
        return Err(SkillError::SizeMismatch {
            uri: uri.to_owned(),
            expected: listed.size,
            actual,
        });
    }
    let actual = digest(&bytes);
    if actual != listed.digest {
        let expected = listed.digest.clone();
        return Err(SkillError::DigestMismatch { uri: uri.to_owned(), expected, actual });
    }
    Ok(bytes)
}

/// The raw bytes of text or blob contents (`None` for a blob that is not base64).
fn raw_bytes(contents: ResourceContents) -> Option<Vec<u8>> {
    match contents {
        ResourceContents::Text(text) => Some(text.text.into_bytes()),
        ResourceContents::Blob(blob) => crate::base64::decode(&blob.blob),
        _ => None,
    }
}

/// The fields whose values differ between the file's front matter and the entry's (a field
/// absent on one side is null there).
fn differing_fields(file: &Map<String, Value>, entry: &Map<String, Value>) -> Vec<String> {
    let mut keys: Vec<&String> = file.keys().chain(entry.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| {
            !same(file.get(*k).unwrap_or(&Value::Null), entry.get(*k).unwrap_or(&Value::Null))
        })
        .cloned()
        .collect()
}

/// JSON equality where `1` and `1.0` are the same number (YAML and JSON writers differ).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}
