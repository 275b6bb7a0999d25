//! Skills read from disk: one skill's directory, or a tree of them.

use std::path::{Path, PathBuf};

use modelcontext_types::SKILL_MD;

use super::Skill;
use crate::Error;

/// The skill in `dir`: its `SKILL.md`, then every other file below it, in path order.
pub(super) fn skill_from_dir(dir: &Path) -> Result<Skill, Error> {
    let skill_md = std::fs::read_to_string(dir.join(SKILL_MD)).map_err(|e| read_error(dir, e))?;
    let mut skill =
        Skill::new(skill_md).map_err(|e| Error::registration(format!("{}: {e}", dir.display())))?;
    let named = dir.file_name().and_then(|n| n.to_str());
    if named != Some(skill.name()) {
        return Err(Error::registration(format!(
            "{}: the directory of skill '{}' must have the skill's name",
            dir.display(),
            skill.name()
        )));
    }
    let mut files = Vec::new();
    walk(dir, &mut files)?;
    files.sort();
    for path in files {
        let Ok(relative) = path.strip_prefix(dir) else { continue };
        let relative = relative_uri_path(relative)?;
        if relative == SKILL_MD {
            continue;
        }
        let bytes = std::fs::read(&path).map_err(|e| read_error(&path, e))?;
        skill = skill.file(&relative, bytes)?;
    }
    Ok(skill)
}

/// Every skill below `root`: each directory with a `SKILL.md`, prefixed by the directories
/// between `root` and it. A skill nested in another is published too, and its files are
/// also files of the enclosing skill (as the extension says).
pub(super) fn skills_under(root: &Path) -> Result<Vec<Skill>, Error> {
    let mut files = Vec::new();
    walk(root, &mut files)?;
    files.sort();
    let mut skills = Vec::new();
    for path in files.iter().filter(|p| p.file_name().is_some_and(|n| n == SKILL_MD)) {
        let Some(dir) = path.parent() else { continue };
        let skill = skill_from_dir(dir)?;
        let prefix = dir
            .parent()
            .and_then(|p| p.strip_prefix(root).ok())
            .map(relative_uri_path)
            .transpose()?
            .unwrap_or_default();
        skills.push(skill.prefix(&prefix)?);
    }
    if skills.is_empty() {
        return Err(Error::registration(format!("{}: no SKILL.md below it", root.display())));
    }
    Ok(skills)
}

/// Every regular file below `dir`, hidden ones (`.git`, `.DS_Store`) left out; symbolic
/// links are not followed, so a skill cannot reach outside its directory.
fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), Error> {
    let entries = std::fs::read_dir(dir).map_err(|e| read_error(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| read_error(dir, e))?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let kind = entry.file_type().map_err(|e| read_error(&entry.path(), e))?;
        if kind.is_dir() {
            walk(&entry.path(), files)?;
        } else if kind.is_file() {
            files.push(entry.path());
        }
    }
    Ok(())
}

/// `a/b/c` from a relative path, refusing names a URI cannot carry as they are.
fn relative_uri_path(path: &Path) -> Result<String, Error> {
    let mut segments = Vec::new();
    for part in path.components() {
        let text = part.as_os_str().to_str().ok_or_else(|| {
            Error::registration(format!("{}: a file name that is not UTF-8", path.display()))
        })?;
        segments.push(text);
    }
    Ok(segments.join("/"))
}

fn read_error(path: &Path, error: std::io::Error) -> Error {
    Error::registration(format!("{}: {error}", path.display()))
}
