//! `--config FILE --server NAME`: a server as Claude Desktop, Cursor or VS Code configure it.
//!
//! Claude Desktop and Cursor keep `{"mcpServers": {NAME: ENTRY}}`; VS Code's `mcp.json` keeps
//! `{"servers": {NAME: ENTRY}}` (and its `settings.json` the same under `"mcp"`). An entry is
//! a command (`command`, `args`, `env`, `cwd`; VS Code adds `envFile`, read as
//! [`crate::env_file`] describes, its path relative to the config file's folder, its
//! variables under `env`'s) or a remote server (`url`, `headers`; VS Code adds
//! `"type": "http"` or `"sse"`). Those values may hold VS Code's variables (`${env:..}`,
//! `${input:..}` from the file's `inputs`, `${workspaceFolder}`, ...), expanded in any of the
//! hosts' files as [`crate::config_vars`] describes. Comments and trailing commas (VS Code's
//! files are JSON with comments) are allowed.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::config_vars::{Source, Variables};
use crate::terminal::Process;

/// One configured server.
#[derive(Debug, PartialEq)]
pub enum Entry {
    /// A program to run, talked to over its stdin and stdout.
    Stdio { words: Vec<String>, env: Vec<(String, String)>, cwd: Option<PathBuf> },
    /// A Streamable HTTP endpoint and the headers to send it.
    Http { url: String, headers: Vec<(String, String)> },
}

/// The entry `name` of the file at `path`; without a name, the file's only server.
pub fn load(path: &Path, name: Option<&str>) -> Result<Entry, String> {
    load_from(path, name, &Process)
}

/// [`load`], with the environment and the terminal of `source`.
fn load_from(path: &Path, name: Option<&str>, source: &dyn Source) -> Result<Entry, String> {
    let shown = path.display();
    let json = read(path)?;
    let (name, entry) =
        pick(servers_in(path, &json)?, name).map_err(|e| format!("--config {shown}: {e}"))?;
    let mut variables = Variables::new(path, &json, source);
    parse_entry(entry, folder_of(path), &mut variables)
        .map_err(|e| format!("--config {shown}, server {name:?}: {e}"))
}

/// Every entry of the file at `path`, by name, in the file's order.
pub fn load_all(path: &Path) -> Result<Vec<(String, Entry)>, String> {
    let shown = path.display();
    let json = read(path)?;
    let mut variables = Variables::new(path, &json, &Process);
    servers_in(path, &json)?
        .iter()
        .map(|(name, entry)| {
            let entry = parse_entry(entry, folder_of(path), &mut variables)
                .map_err(|e| format!("--config {shown}, server {name:?}: {e}"))?;
            Ok((name.clone(), entry))
        })
        .collect()
}

/// The folder of the config file at `path`, which relative paths in it start from.
fn folder_of(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new("."))
}

/// The JSON of the file at `path`.
fn read(path: &Path) -> Result<Value, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("--config {shown}: {e}"))?;
    parse(&text).map_err(|e| format!("--config {shown}: not JSON: {e}"))
}

/// The table of servers of `json`, the file at `path`.
fn servers_in<'a>(path: &Path, json: &'a Value) -> Result<&'a Map<String, Value>, String> {
    servers(json).ok_or_else(|| {
        format!(
            "--config {}: no \"mcpServers\" (Claude Desktop, Cursor) or \"servers\" (VS Code) object",
            path.display()
        )
    })
}

/// The file's JSON. VS Code's `mcp.json` is JSONC, so comments and trailing commas are
/// allowed; for the other hosts' plain JSON that changes nothing.
fn parse(text: &str) -> Result<Value, String> {
    let options = jsonc_parser::ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
    };
    match jsonc_parser::parse_to_serde_value(text, &options) {
        Ok(Some(json)) => Ok(json),
        Ok(None) => Err("the file is empty".into()),
        Err(err) => Err(err.to_string()),
    }
}

/// The table of servers, wherever the file's kind keeps it.
fn servers(json: &Value) -> Option<&Map<String, Value>> {
    fn at<'a>(value: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
        value.get(key).and_then(Value::as_object)
    }
    (at(json, "mcpServers"))
        .or_else(|| at(json, "servers"))
        .or_else(|| json.get("mcp").and_then(|mcp| at(mcp, "servers")))
}

/// The named entry, or the only one when no name is given.
fn pick<'a>(
    servers: &'a Map<String, Value>,
    name: Option<&'a str>,
) -> Result<(&'a str, &'a Value), String> {
    let names = || servers.keys().map(String::as_str).collect::<Vec<_>>().join(", ");
    match name {
        Some(name) => match servers.get(name) {
            Some(entry) => Ok((name, entry)),
            None => Err(format!("no server named {name:?} (it has: {})", names())),
        },
        None if servers.len() == 1 => {
            let (name, entry) = servers.iter().next().expect("one entry");
            Ok((name, entry))
        }
        None => Err(format!("say which server with --server NAME (it has: {})", names())),
    }
}

/// A command entry or a URL entry, its variables expanded; `folder` holds the config file.
fn parse_entry(entry: &Value, folder: &Path, variables: &mut Variables) -> Result<Entry, String> {
    let kind = entry.get("type").and_then(Value::as_str);
    if let Some(url) = entry.get("url").and_then(Value::as_str) {
        if kind.is_some_and(|k| k == "stdio") {
            return Err("\"type\": \"stdio\" with a \"url\"".into());
        }
        let url = variables.expand(url)?;
        let headers = string_map(entry, "headers", variables)?;
        return Ok(Entry::Http { url, headers });
    }
    let Some(command) = entry.get("command").and_then(Value::as_str) else {
        return Err("neither a \"command\" nor a \"url\"".into());
    };
    let mut words = vec![variables.expand(command)?];
    for arg in entry.get("args").and_then(Value::as_array).into_iter().flatten() {
        match arg {
            Value::String(arg) => words.push(variables.expand(arg)?),
            other => return Err(format!("\"args\" holds {other}, not a string")),
        }
    }
    let mut env = env_file(entry, folder, variables)?;
    for (name, value) in string_map(entry, "env", variables)? {
        env.retain(|(from_file, _)| *from_file != name);
        env.push((name, value));
    }
    let cwd = match entry.get("cwd").and_then(Value::as_str) {
        Some(cwd) => Some(PathBuf::from(variables.expand(cwd)?)),
        None => None,
    };
    Ok(Entry::Stdio { words, env, cwd })
}

/// The variables of the entry's `envFile`, if it names one.
fn env_file(
    entry: &Value,
    folder: &Path,
    variables: &mut Variables,
) -> Result<Vec<(String, String)>, String> {
    let Some(named) = entry.get("envFile") else { return Ok(Vec::new()) };
    let Some(named) = named.as_str() else { return Err("\"envFile\" is not a string".into()) };
    let path = folder.join(variables.expand(named)?);
    let shown = path.display();
    let text = std::fs::read_to_string(&path).map_err(|e| format!("envFile {shown}: {e}"))?;
    Ok(crate::env_file::parse(&text))
}

/// An object of strings (`env`, `headers`) as pairs, values expanded; absent is empty.
fn string_map(
    entry: &Value,
    key: &str,
    variables: &mut Variables,
) -> Result<Vec<(String, String)>, String> {
    let Some(value) = entry.get(key) else { return Ok(Vec::new()) };
    let Some(object) = value.as_object() else { return Err(format!("\"{key}\" is not an object")) };
    object
        .iter()
        .map(|(name, value)| match value {
            Value::String(text) => Ok((name.clone(), variables.expand(text)?)),
            other => Err(format!("\"{key}\".{name} is {other}, not a string")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::config_vars::Fake;

    fn entry(json: Value, name: Option<&str>) -> Result<Entry, String> {
        let servers = servers(&json).ok_or("no servers")?;
        let (_, entry) = pick(servers, name)?;
        let source = Fake::with(&[]);
        parse_entry(
            entry,
            Path::new("."),
            &mut Variables::new(Path::new("mcp.json"), &json, &source),
        )
    }

    #[test]
    fn claude_desktop_and_vs_code_entries() {
        let claude = json!({"mcpServers": {"fs": {
            "command": "npx", "args": ["-y", "server-fs", "/tmp"], "env": {"DEBUG": "1"}
        }}});
        let words = ["npx", "-y", "server-fs", "/tmp"].map(String::from).to_vec();
        let env = vec![("DEBUG".into(), "1".into())];
        assert_eq!(entry(claude, None), Ok(Entry::Stdio { words, env, cwd: None }));
        let vscode = json!({"servers": {
            "a": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"X-Key": "k"}},
            "b": {"type": "stdio", "command": "srv", "cwd": "/srv"}
        }});
        let headers = vec![("X-Key".into(), "k".into())];
        let url = "http://127.0.0.1:1/mcp".to_owned();
        assert_eq!(entry(vscode.clone(), Some("a")), Ok(Entry::Http { url, headers }));
        let cwd = Some(PathBuf::from("/srv"));
        let words = vec!["srv".to_owned()];
        assert_eq!(entry(vscode.clone(), Some("b")), Ok(Entry::Stdio { words, env: vec![], cwd }));
        let err = entry(vscode, None).expect_err("two servers");
        assert!(err.contains("--server NAME (it has: a, b)"), "{err}");
    }

    #[test]
    fn vs_code_s_comments_and_trailing_commas_are_read() {
        let text = "{\n  // mine\n  \"servers\": {\"a\": {\"command\": \"srv\",},},\n}\n";
        let json = parse(text).expect("JSONC");
        assert_eq!(json, json!({"servers": {"a": {"command": "srv"}}}));
        assert!(parse("{\"a\": ").is_err());
        assert_eq!(parse(" "), Err("the file is empty".into()));
    }

    #[test]
    fn mistakes_are_explained() {
        let bad = |json: Value| entry(json, None).expect_err("a mistake");
        assert!(bad(json!({"mcpServers": {"x": {}}})).contains("neither"));
        assert!(bad(json!({"mcpServers": {"x": {"command": "a", "args": [1]}}})).contains("args"));
        assert!(
            bad(json!({"mcpServers": {"x": {"command": "a", "env": {"K": 1}}}}))
                .contains("\"env\".K")
        );
        let missing = entry(json!({"mcpServers": {"x": {"command": "a"}}}), Some("y"));
        assert!(missing.expect_err("no y").contains("no server named \"y\""));
    }

    /// A file at `<dir>/.vscode/mcp.json` whose entries use variables everywhere they may.
    fn vs_code_file(dir: &Path) -> PathBuf {
        let config = json!({
            "inputs": [{"type": "promptString", "id": "key", "description": "Key", "password": true}],
            "servers": {
                "cmd": {
                    "command": "${workspaceFolder}/bin/${env:PROGRAM}",
                    "args": ["--key=${input:key}", "${env:MODE}"],
                    "env": {"KEY": "${input:key}"},
                    "cwd": "${workspaceFolder}"
                },
                "web": {
                    "type": "http",
                    "url": "https://${env:HOST}/mcp",
                    "headers": {"Authorization": "Bearer ${input:key}"}
                }
            }
        });
        std::fs::create_dir_all(dir.join(".vscode")).expect("dir");
        let file = dir.join(".vscode").join("mcp.json");
        std::fs::write(&file, config.to_string()).expect("written");
        file
    }

    #[test]
    fn variables_are_expanded_in_every_value() {
        let dir = std::env::temp_dir().join(format!("mcp-config-vars-{}", std::process::id()));
        let file = vs_code_file(&dir);
        let vars = [("PROGRAM", "srv"), ("MODE", "fast"), ("HOST", "h"), ("MCP_INPUT_KEY", "k")];
        let source = Fake::with(&vars);
        let words = [format!("{}/bin/srv", dir.display()), "--key=k".into(), "fast".into()];
        let env = vec![("KEY".into(), "k".into())];
        let cwd = Some(dir.clone());
        let stdio = Entry::Stdio { words: words.to_vec(), env, cwd };
        assert_eq!(load_from(&file, Some("cmd"), &source), Ok(stdio));
        let headers = vec![("Authorization".into(), "Bearer k".into())];
        let http = Entry::Http { url: "https://h/mcp".into(), headers };
        assert_eq!(load_from(&file, Some("web"), &source), Ok(http));
        let error = load_from(&file, Some("cmd"), &Fake::with(&vars[1..]));
        let shown = file.display();
        let expected = format!(
            "--config {shown}, server \"cmd\": ${{env:PROGRAM}}: the environment variable PROGRAM is not set"
        );
        assert_eq!(error, Err(expected));
        std::fs::remove_dir_all(&dir).expect("removed");
    }

    #[test]
    fn an_env_file_is_read_beside_the_config_and_env_wins_a_clash() {
        let dir = std::env::temp_dir().join(format!("mcp-config-env-file-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("secrets")).expect("dir");
        let env_file = "# keys\nAPI_KEY=abc$def\nMODE=slow\n";
        std::fs::write(dir.join("secrets").join("shop.env"), env_file).expect("written");
        let config = json!({"servers": {
            "shop": {"command": "srv", "envFile": "secrets/${env:WHICH}.env", "env": {"MODE": "fast"}},
            "missing": {"command": "srv", "envFile": "nowhere.env"},
            "odd": {"command": "srv", "envFile": 7}
        }});
        let file = dir.join("mcp.json");
        std::fs::write(&file, config.to_string()).expect("written");
        let source = Fake::with(&[("WHICH", "shop")]);
        let env = vec![("API_KEY".into(), "abc$def".into()), ("MODE".into(), "fast".into())];
        let shop = Entry::Stdio { words: vec!["srv".into()], env, cwd: None };
        assert_eq!(load_from(&file, Some("shop"), &source), Ok(shop));
        let (shown, folder) = (file.display(), dir.display());
        let missing = load_from(&file, Some("missing"), &source).expect_err("no such file");
        let prefix =
            format!("--config {shown}, server \"missing\": envFile {folder}/nowhere.env: ");
        assert!(missing.starts_with(&prefix), "{missing}");
        assert_eq!(
            load_from(&file, Some("odd"), &source),
            Err(format!("--config {shown}, server \"odd\": \"envFile\" is not a string"))
        );
        std::fs::remove_dir_all(&dir).expect("removed");
    }
}
