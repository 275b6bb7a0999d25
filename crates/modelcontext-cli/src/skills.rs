//! `mcp skills`: the skills a server publishes (the skills extension, SEP-2640) listed, one
//! skill's entry shown, or one skill fetched into a folder, every file verified first.

use std::fmt::Write;
use std::path::Path;

use modelcontext::Client;
use modelcontext::client::SkillError;
use modelcontext::types::percent::decode;
use modelcontext::types::{SKILLS_EXTENSION, SkillEntry, SkillFiles};
use serde_json::{Value, json};

use crate::cli::SkillsAction;
use crate::failure::Failure;

/// What `mcp skills` prints: JSON for `--json`, else text for people.
pub struct Printed {
    pub json: Value,
    pub human: String,
}

/// Runs one `mcp skills` action on a connected client.
pub async fn run(client: &Client, action: Option<&SkillsAction>) -> Result<Printed, Failure> {
    if client.skills_settings().is_none() {
        return Err(Failure::Other(format!(
            "the server offers no skills: its capabilities do not declare the {SKILLS_EXTENSION} \
             extension"
        )));
    }
    match action {
        None | Some(SkillsAction::List(_)) => list(client).await,
        Some(SkillsAction::Show { name, .. }) => {
            let entry = find(client, name).await?;
            Ok(Printed { human: show(&entry), json: json!({ "skill": entry }) })
        }
        Some(SkillsAction::Fetch { name, dir, .. }) => fetch(client, name, dir).await,
    }
}

/// Every skill the server lists: name, URI and description.
async fn list(client: &Client) -> Result<Printed, Failure> {
    let skills = client.list_all_skills().await.map_err(Failure::from_sdk)?;
    let mut human = String::new();
    for skill in &skills {
        let _ = writeln!(human, "{}  {}", skill.name().unwrap_or("(no name)"), skill.uri);
        if let Some(description) = skill.description() {
            let _ = writeln!(human, "    {description}");
        }
    }
    Ok(Printed { json: json!({ "skills": skills }), human })
}

/// The skill `name` names: a `SKILL.md` URI is asked for with `skills/get`; a bare name must
/// match exactly one listed skill.
async fn find(client: &Client, name: &str) -> Result<SkillEntry, Failure> {
    if name.contains("://") {
        return client.get_skill(name).await.map_err(Failure::from_sdk);
    }
    let skills = client.list_all_skills().await.map_err(Failure::from_sdk)?;
    let mut named: Vec<SkillEntry> =
        skills.into_iter().filter(|skill| skill.name() == Some(name)).collect();
    match named.len() {
        0 => Err(Failure::Other(format!(
            "the server lists no skill named {name:?} (`mcp skills` lists them)"
        ))),
        1 => Ok(named.remove(0)),
        _ => {
            let uris: Vec<&str> = named.iter().map(|skill| skill.uri.as_str()).collect();
            Err(Failure::Usage(format!(
                "{} skills are named {name:?}; give one's URI instead: {}",
                named.len(),
                uris.join(", ")
            )))
        }
    }
}

/// The entry for people: name and URI, description, the other front matter fields, and the
/// files with their sizes and digests.
fn show(entry: &SkillEntry) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "{}  {}", entry.name().unwrap_or("(no name)"), entry.uri);
    if let Some(description) = entry.description() {
        let _ = writeln!(text, "    {description}");
    }
    let others: Vec<_> = entry
        .frontmatter
        .iter()
        .filter(|(key, _)| !matches!(key.as_str(), "name" | "description"))
        .collect();
    if !others.is_empty() {
        let _ = writeln!(text, "front matter:");
    }
    for (key, value) in others {
        let _ = match value {
            Value::String(plain) => writeln!(text, "    {key}: {plain}"),
            other => writeln!(text, "    {key}: {other}"),
        };
    }
    match &entry.resources {
        SkillFiles::Listed(files) => {
            let _ = writeln!(text, "files:");
            for file in files {
                let path = relative_path(entry, &file.uri).unwrap_or_else(|_| file.uri.clone());
                let _ = writeln!(text, "    {path}  {} bytes  {}", file.size, file.digest);
            }
        }
        _ => {
            let _ = writeln!(text, "files: dynamic (generated; cannot be verified)");
        }
    }
    text
}

/// `fetch`: loads the skill (its `SKILL.md` verified), reads and verifies every other file,
/// and only then writes them all under `dir/NAME/`: a check that fails writes nothing.
async fn fetch(client: &Client, name: &str, dir: &Path) -> Result<Printed, Failure> {
    let entry = find(client, name).await?;
    let skill = client.load_skill(&entry).await.map_err(refused)?;
    let skill_name = entry.name().unwrap_or_default();
    if !is_safe_segment(skill_name) {
        return Err(Failure::Other(format!(
            "refused: the skill's name {skill_name:?} is not a folder name"
        )));
    }
    let SkillFiles::Listed(files) = &entry.resources else {
        return Err(refused(SkillError::Unverifiable { uri: entry.uri.clone() }));
    };
    let mut verified = Vec::with_capacity(files.len());
    for file in files {
        let path = relative_path(&entry, &file.uri).map_err(Failure::Other)?;
        let bytes = if file.uri == entry.uri {
            skill.skill_md.clone().into_bytes()
        } else {
            skill.read_file(client, &file.uri).await.map_err(refused)?
        };
        verified.push((path, bytes));
    }
    let root = dir.join(skill_name);
    let written = write_skill(dir, &root, &verified)?;
    let human = format!("{} files of {} written to {}\n", written.len(), entry.uri, root.display());
    let json = json!({ "skill": entry.uri, "dir": root.display().to_string(), "files": written });
    Ok(Printed { json, human })
}

/// Writes the files into a new folder beside `root`, then renames it `root`: a folder that
/// is already there is left alone (nothing is written through what it holds, symbolic links
/// included), and a failed write leaves no half-written skill behind. The files' paths and
/// sizes, as `--json` reports them.
fn write_skill(
    dir: &Path,
    root: &Path,
    files: &[(String, Vec<u8>)],
) -> Result<Vec<Value>, Failure> {
    if root.symlink_metadata().is_ok() {
        return Err(Failure::Other(format!(
            "{} already exists: remove it, or fetch into another folder",
            root.display()
        )));
    }
    let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let staging = dir.join(format!(".{name}.fetching-{}", std::process::id()));
    let cannot = |what: &Path, e: std::io::Error| {
        Failure::Other(format!("cannot write {}: {e}", what.display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| cannot(dir, e))?;
    std::fs::create_dir(&staging).map_err(|e| cannot(&staging, e))?;
    let written = files
        .iter()
        .map(|(path, bytes)| {
            let target = path.split('/').fold(staging.clone(), |at, segment| at.join(segment));
            let parent = target.parent().unwrap_or(&staging);
            std::fs::create_dir_all(parent)
                .and_then(|()| std::fs::write(&target, bytes))
                .map_err(|e| cannot(&target, e))?;
            Ok(json!({ "path": path, "size": bytes.len() }))
        })
        .collect::<Result<Vec<_>, Failure>>()
        .and_then(|written| {
            std::fs::rename(&staging, root).map_err(|e| cannot(root, e)).map(|()| written)
        });
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    written
}

/// A verification failure, or the read that failed, as the command reports it: the failed
/// check named first.
fn refused(err: SkillError) -> Failure {
    let check = match &err {
        SkillError::Request(_) => "read",
        SkillError::InvalidEntry { .. } => "entry check",
        SkillError::Unverifiable { .. } => "verifiability check",
        SkillError::Unlisted { .. } => "listed-file check",
        SkillError::NoContent { .. } => "content check",
        SkillError::SizeMismatch { .. } => "size check",
        SkillError::DigestMismatch { .. } => "digest check",
        SkillError::FrontmatterMismatch { .. } => "front matter check",
        _ => "verification",
    };
    match err {
        SkillError::Request(inner) => Failure::from_sdk(inner),
        err => Failure::Other(format!("skill refused, {check} failed: {err}")),
    }
}

/// Where the file at `uri` goes below the skill's folder: its URI less the skill's root,
/// percent-decoded, every segment a plain name (no `..`, `.`, empty segment, backslash or
/// drive letter that could lead outside the folder).
fn relative_path(entry: &SkillEntry, uri: &str) -> Result<String, String> {
    let outside = || format!("refused: {uri} is outside the skill's folder");
    let root = entry.root().ok_or_else(outside)?;
    let rest =
        uri.strip_prefix(root).and_then(|rest| rest.strip_prefix('/')).ok_or_else(outside)?;
    let segments: Vec<String> = rest
        .split('/')
        .map(|segment| decode(segment.as_bytes()).ok())
        .collect::<Option<_>>()
        .ok_or_else(outside)?;
    if !segments.iter().all(|segment| is_safe_segment(segment)) {
        return Err(outside());
    }
    Ok(segments.join("/"))
}

/// A file or folder name that stays where it is put.
fn is_safe_segment(segment: &str) -> bool {
    !segment.is_empty()
        && segment != "."
        && segment != ".."
        && !segment.contains(['/', '\\', ':', '\0'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> SkillEntry {
        let frontmatter = json!({"name": "pdf", "description": "d"});
        let Value::Object(frontmatter) = frontmatter else { unreachable!() };
        SkillEntry::new("skill://acme/pdf/SKILL.md", frontmatter, SkillFiles::Listed(Vec::new()))
    }

    #[test]
    fn files_stay_inside_the_skills_folder() {
        let entry = entry();
        let path = |uri: &str| relative_path(&entry, uri);
        assert_eq!(path("skill://acme/pdf/SKILL.md"), Ok("SKILL.md".into()));
        assert_eq!(path("skill://acme/pdf/a/b%20c.md"), Ok("a/b c.md".into()));
        for escaping in [
            "skill://acme/pdf/../x",
            "skill://acme/pdf/a/%2e%2e/%2e%2e/x",
            "skill://acme/pdf/a/%2Fetc",
            "skill://acme/pdf//etc/passwd",
            "skill://acme/pdf/C:%5Cx",
            "skill://acme/pdfx/SKILL.md",
            "skill://other/SKILL.md",
            "skill://acme/pdf/a/%zz",
        ] {
            assert_eq!(
                path(escaping),
                Err(format!("refused: {escaping} is outside the skill's folder"))
            );
        }
    }
}
