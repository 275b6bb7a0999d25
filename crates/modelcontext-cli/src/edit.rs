//! Editing a host's JSON configuration in place without losing anything else in it.
//!
//! The file is read into a concrete syntax tree (jsonc-parser's CST), which keeps every byte
//! of it: keys the command knows nothing about stay where they were and in their order,
//! comments (VS Code's `mcp.json` is JSONC), blank lines and indentation too. Only the one
//! server entry is added, replaced or removed. A file that does not parse is refused and left
//! as it is. Writing replaces the file atomically (a temporary file in the same directory,
//! flushed to disk, then renamed over it, with the old file's permissions, or its owner's
//! alone for a new file) after keeping the previous contents in `FILE.bak`.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value;

/// A configuration file read for editing.
pub struct ConfigFile {
    /// The file written: the target of a symbolic link, so the link stays one.
    path: PathBuf,
    /// The file as it was, when there was one.
    before: Option<String>,
    root: CstRootNode,
}

/// What [`ConfigFile::add`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Added {
    /// The name was new.
    New,
    /// An entry of that name was replaced (`--force`).
    Replaced,
}

impl ConfigFile {
    /// Reads `path`: JSON, or JSON with comments and trailing commas where `comments` allows
    /// them. A missing (or empty) file is an empty object when `create`, else an error.
    pub fn open(path: &Path, comments: bool, create: bool) -> Result<ConfigFile, String> {
        let shown = path.display();
        let path = fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        let before = match fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound && create => None,
            Err(err) => return Err(format!("{shown}: {err}")),
        };
        let text = before.as_deref().filter(|t| !t.trim().is_empty()).unwrap_or("{}\n");
        if !comments {
            // The host reads plain JSON: what it would refuse is not ours to rewrite.
            serde_json::from_str::<Value>(text).map_err(|err| {
                format!("{shown} is not valid JSON ({err}); it was left as it is")
            })?;
        }
        let options = ParseOptions {
            allow_comments: comments,
            allow_trailing_commas: comments,
            allow_loose_object_property_names: false,
        };
        let root = CstRootNode::parse(text, &options)
            .map_err(|err| format!("{shown} does not parse ({err}); it was left as it is"))?;
        if root.value().is_some() && root.object_value().is_none() {
            return Err(format!("{shown} holds no JSON object at its top; it was left as it is"));
        }
        Ok(ConfigFile { path, before, root })
    }

    /// The object of servers under `key`, made when `make` and missing.
    fn servers(&self, key: &str, make: bool) -> Result<Option<CstObject>, String> {
        let root = self.root.object_value_or_set();
        let servers = match root.get(key) {
            Some(property) => Some(property.object_value().ok_or_else(|| {
                format!("{}: \"{key}\" is not an object; it was left as it is", self.path.display())
            })?),
            None if make => Some(root.object_value_or_set(key)),
            None => None,
        };
        Ok(servers)
    }

    /// Adds `entry` as server `name` under `key`; an entry of that name is replaced only
    /// when `force`.
    pub fn add(&self, key: &str, name: &str, entry: &Value, force: bool) -> Result<Added, String> {
        let Some(servers) = self.servers(key, true)? else { return Ok(Added::New) };
        match servers.get(name) {
            Some(_) if !force => Err(format!(
                "{} already has a server named {name:?}; --force replaces it",
                self.path.display()
            )),
            Some(existing) => {
                existing.set_value(input_value(entry));
                Ok(Added::Replaced)
            }
            None => {
                servers.append(name, input_value(entry));
                Ok(Added::New)
            }
        }
    }

    /// Removes server `name` from under `key`.
    pub fn remove(&self, key: &str, name: &str) -> Result<(), String> {
        let servers = self.servers(key, false)?;
        let names = || {
            let names: Vec<String> = (servers.iter().flat_map(CstObject::properties))
                .filter_map(|p| p.name()?.decoded_value().ok())
                .collect();
            if names.is_empty() { "none".to_owned() } else { names.join(", ") }
        };
        match servers.as_ref().and_then(|s| s.get(name)) {
            Some(entry) => {
                entry.remove();
                Ok(())
            }
            None => Err(format!(
                "{} has no server named {name:?} (it has: {})",
                self.path.display(),
                names()
            )),
        }
    }

    /// The file's text as edited, ending in a newline unless the file it was read from did
    /// not (so that an uninstall gives back the very bytes an install started from).
    pub fn text(&self) -> String {
        let mut text = self.root.to_string();
        let ends_in_newline =
            self.before.as_deref().is_none_or(|b| b.trim().is_empty() || b.ends_with('\n'));
        if ends_in_newline && !text.ends_with('\n') {
            text.push('\n');
        }
        text
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the edited file: the previous one kept as `FILE.bak` (returned), then the new
    /// one put in its place atomically.
    pub fn save(&self) -> Result<Option<PathBuf>, String> {
        let shown = self.path.display();
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|err| format!("{}: {err}", dir.display()))?;
        }
        let backup = match &self.before {
            Some(before) => {
                let backup = backup_path(&self.path);
                replace(&backup, before, Some(&self.path))
                    .map_err(|err| format!("{}: {err}", backup.display()))?;
                Some(backup)
            }
            None => None,
        };
        replace(&self.path, &self.text(), Some(&self.path))
            .map_err(|err| format!("{shown}: {err}; the file was left as it was"))?;
        Ok(backup)
    }
}

/// `FILE.bak` beside `FILE`.
fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".bak");
    path.with_file_name(name)
}

/// Puts `text` at `path` in one step: written to a temporary file in the same directory
/// (so the rename stays on one file system), flushed to disk, given the permissions of
/// `like` when it exists (a config may hold secrets and be private), and renamed over
/// `path`. A reader sees the old file or the new one, never a part.
fn replace(path: &Path, text: &str, like: Option<&Path>) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = private(OpenOptions::new().write(true).create_new(true)).open(&temporary)?;
        if let Some(permissions) =
            like.and_then(|like| fs::metadata(like).ok()).map(|m| m.permissions())
        {
            file.set_permissions(permissions)?;
        }
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written?;
    // The rename itself is on disk once the directory is (where a directory can be opened).
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Opens files readable by their owner only (on Unix): a new config file gets no wider
/// permissions, since its entries carry API keys in `env` and tokens in `headers`.
fn private(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(options, 0o600);
    options
}

/// A JSON value as the CST inserts it.
fn input_value(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input_value).collect()),
        Value::Object(object) => {
            CstInputValue::Object(object.iter().map(|(k, v)| (k.clone(), input_value(v))).collect())
        }
    }
}
