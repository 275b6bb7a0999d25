//! Skills on the server (`io.modelcontextprotocol/skills`, SEP-2640): a [`Skill`] is a
//! `SKILL.md` and its files, built in code or read from a directory. Registering one serves
//! each file as a `skill://` resource (read with `resources/read`), lists the skill in
//! `skills/list`, answers `skills/get` and `resources/directory/read` for it, and declares the
//! extension (with `directoryRead: true`) in the server's capabilities.

use std::sync::Arc;

use modelcontext_types::{
    MAX_SKILL_BYTES, MAX_SKILL_FILES, ResourceContents, SKILL_MD, SKILL_SCHEME, SkillEntry,
    SkillFile, SkillFiles,
};
use serde_json::{Map, Value};

use super::{McpServer, ResourceDef};
use crate::Error;
use crate::skills::{digest, parse_frontmatter};

mod load;
pub(super) mod serve;

/// One skill: its `SKILL.md` and supporting files, served under
/// `skill://<prefix>/<name>/...`.
///
/// ```
/// use modelcontext::McpServer;
/// use modelcontext::server::Skill;
///
/// let skill = Skill::new("---\nname: git-workflow\ndescription: Our Git conventions\n---\nUse rebase.\n")?
///     .file("references/BRANCHES.md", "main, release/*, feature/*\n")?;
/// let server = McpServer::new("team").skill(skill)?;
/// # Ok::<(), modelcontext::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Skill {
    name: String,
    prefix: Vec<String>,
    frontmatter: Map<String, Value>,
    skill_md: String,
    /// Supporting files by path relative to the skill's root, in the order added.
    files: Vec<(String, Vec<u8>)>,
}

impl Skill {
    /// A skill from its `SKILL.md`: the front matter must name the skill (the Agent Skills
    /// naming rules: 1 to 64 lowercase letters, digits and single hyphens inside) and describe
    /// it.
    pub fn new(skill_md: impl Into<String>) -> Result<Skill, Error> {
        let skill_md = skill_md.into();
        let frontmatter =
            parse_frontmatter(&skill_md).map_err(|e| Error::registration(e.to_string()))?;
        let name = match frontmatter.get("name") {
            Some(Value::String(name)) if is_valid_name(name) => name.clone(),
            Some(Value::String(name)) => {
                return Err(Error::registration(format!(
                    "skill name '{name}': 1 to 64 lowercase letters, digits and hyphens, \
                     no hyphen first, last or twice in a row"
                )));
            }
            _ => return Err(Error::registration("SKILL.md front matter has no `name`")),
        };
        match frontmatter.get("description") {
            Some(Value::String(d)) if !d.trim().is_empty() => {}
            _ => {
                return Err(Error::registration(format!(
                    "skill '{name}': SKILL.md front matter has no `description`"
                )));
            }
        }
        Ok(Skill { name, prefix: Vec::new(), frontmatter, skill_md, files: Vec::new() })
    }

    /// A skill read from `dir`: its `SKILL.md` and every other file under it (hidden files
    /// and directories, whose names start with `.`, left out).
    pub fn from_dir(dir: impl AsRef<std::path::Path>) -> Result<Skill, Error> {
        load::skill_from_dir(dir.as_ref())
    }

    /// Serves the skill under an organizational prefix: `acme/billing` puts skill `refunds`
    /// at `skill://acme/billing/refunds/SKILL.md`.
    pub fn prefix(mut self, prefix: &str) -> Result<Skill, Error> {
        let segments: Vec<String> =
            prefix.split('/').filter(|s| !s.is_empty()).map(str::to_owned).collect();
        if let Some(bad) = segments.iter().find(|s| !is_valid_segment(s)) {
            return Err(Error::registration(format!(
                "skill prefix '{prefix}': bad segment '{bad}'"
            )));
        }
        self.prefix = segments;
        Ok(self)
    }

    /// Adds a supporting file at `path`, relative to the skill's root (`references/FORMS.md`).
    pub fn file(mut self, path: &str, contents: impl Into<Vec<u8>>) -> Result<Skill, Error> {
        let bad = path.split('/').any(|s| !is_valid_segment(s));
        if bad || path == SKILL_MD || self.files.iter().any(|(p, _)| p == path) {
            return Err(Error::registration(format!(
                "skill '{}': file path '{path}' is not a new relative path inside the skill",
                self.name
            )));
        }
        self.files.push((path.to_owned(), contents.into()));
        Ok(self)
    }

    /// The skill's name (its front matter's `name`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `skill://<prefix>/<name>`, the skill's root directory.
    fn root(&self) -> String {
        let mut root = SKILL_SCHEME.to_owned();
        for segment in &self.prefix {
            root.push_str(segment);
            root.push('/');
        }
        root.push_str(&self.name);
        root
    }

    /// The entry `skills/list` and `skills/get` answer with, and the resources that serve
    /// the files. Refuses a skill over the limits every host must accept.
    fn publish(self) -> Result<(SkillEntry, Vec<ResourceDef>), Error> {
        let root = self.root();
        let total: u64 = self.files.iter().map(|(_, b)| b.len() as u64).sum::<u64>()
            + self.skill_md.len() as u64;
        if self.files.len() + 1 > MAX_SKILL_FILES || total > MAX_SKILL_BYTES {
            return Err(Error::registration(format!(
                "skill '{}': {} files, {total} bytes; hosts need only accept {MAX_SKILL_FILES} \
                 files and {MAX_SKILL_BYTES} bytes",
                self.name,
                self.files.len() + 1
            )));
        }
        let skill_md_uri = format!("{root}/{SKILL_MD}");
        let mut listed = vec![SkillFile::new(
            &skill_md_uri,
            digest(self.skill_md.as_bytes()),
            self.skill_md.len() as u64,
        )];
        let description = self.frontmatter.get("description").and_then(Value::as_str);
        let mut defs = vec![
            static_resource(&skill_md_uri, self.skill_md.clone().into_bytes(), "text/markdown")
                .name(self.name.clone())
                .description(description.unwrap_or_default()),
        ];
        for (path, bytes) in self.files {
            let uri = format!("{root}/{path}");
            listed.push(SkillFile::new(&uri, digest(&bytes), bytes.len() as u64));
            let file_name = path.rsplit('/').next().unwrap_or(&path).to_owned();
            defs.push(static_resource(&uri, bytes, mime_type(&path)).name(file_name));
        }
        let entry = SkillEntry::new(skill_md_uri, self.frontmatter, SkillFiles::Listed(listed));
        Ok((entry, defs))
    }
}

/// A resource whose contents never change: text when the bytes are UTF-8, else a blob.
fn static_resource(uri: &str, bytes: Vec<u8>, mime: &str) -> ResourceDef {
    let size = bytes.len() as u64;
    let contents: Vec<ResourceContents> = match String::from_utf8(bytes) {
        Ok(text) => crate::server::IntoResourceContents::into_contents(text, uri, Some(mime)),
        Err(not_text) => crate::server::IntoResourceContents::into_contents(
            not_text.into_bytes(),
            uri,
            Some(mime),
        ),
    };
    let read = move || std::future::ready(contents.clone());
    ResourceDef::new(uri.to_owned(), read).mime_type(mime).size(size)
}

/// The MIME type of a skill file, by its extension (`application/octet-stream` when unknown).
fn mime_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("txt") => "text/plain",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("js" | "mjs") => "text/javascript",
        Some("ts") => "text/x-typescript",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("html" | "htm") => "text/html",
        Some("csv") => "text/csv",
        Some("xml") => "application/xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        _ => "application/octet-stream",
    }
}

/// The Agent Skills naming rules: 1-64 of `a-z0-9-`, no hyphen first, last or doubled.
pub(crate) fn is_valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// A path segment a URI can carry as is, and no way out of the skill (`.`, `..`).
fn is_valid_segment(segment: &str) -> bool {
    !segment.is_empty()
        && segment != "."
        && segment != ".."
        && segment.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

/// A published skill.
#[derive(Debug)]
pub(crate) struct SkillDef {
    pub entry: SkillEntry,
}

/// Whether a published skill already serves `uri` with these bytes.
fn serves_already(catalog: &super::Catalog, uri: &str, digest: &str) -> bool {
    catalog.skills.iter().any(|skill| skill.entry.file(uri).is_some_and(|f| f.digest == digest))
}

impl McpServer {
    /// Publishes a skill (skills extension): see [`Skill`].
    pub fn skill(self, skill: Skill) -> Result<Self, Error> {
        self.add_skill(skill)?;
        Ok(self)
    }

    /// Publishes every skill under `root`: each directory holding a `SKILL.md` is a skill,
    /// its path below `root` (less its own name) the skill's prefix.
    pub fn skills_dir(self, root: impl AsRef<std::path::Path>) -> Result<Self, Error> {
        for skill in load::skills_under(root.as_ref())? {
            self.add_skill(skill)?;
        }
        Ok(self)
    }

    /// Publishes a skill, also while serving (clients are told the resource list changed).
    pub fn add_skill(&self, skill: Skill) -> Result<(), Error> {
        let (entry, defs) = skill.publish()?;
        let uri = entry.uri.clone();
        self.inner.change_catalog(|catalog| {
            for def in defs {
                // A nested skill's files are also files of the skill around it: the same
                // URI with the same bytes is served once.
                if let Some(file) = entry.file(&def.uri) {
                    if serves_already(catalog, &file.uri, &file.digest) {
                        continue;
                    }
                }
                let at = def.uri.clone();
                catalog.resources.insert("resource", &at, Arc::new(def))?;
            }
            catalog.skills.insert("skill", &uri, Arc::new(SkillDef { entry }))
        })?;
        self.notify_resources_changed();
        Ok(())
    }
}
