//! The hosts `mcp install` writes server entries for: where each keeps its configuration,
//! under which key, and how an entry for a command or a URL looks there.
//!
//! | host | default file | servers under | entries |
//! |---|---|---|---|
//! | `claude-desktop` | macOS `~/Library/Application Support/Claude/claude_desktop_config.json`, Windows `%APPDATA%\Claude\claude_desktop_config.json`, else `$XDG_CONFIG_HOME/Claude/claude_desktop_config.json` (`~/.config/...`) | `mcpServers` | `command`, `args`, `env`; commands only |
//! | `claude-code` | `~/.claude.json` (user scope) | `mcpServers` | `type` (`stdio`, `http`), `command`, `args`, `env`; `url`, `headers` |
//! | `cursor` | `~/.cursor/mcp.json` (global) | `mcpServers` | `command`, `args`, `env`; `url`, `headers` |
//! | `vscode` | the user profile's `mcp.json`: macOS `~/Library/Application Support/Code/User/mcp.json`, Windows `%APPDATA%\Code\User\mcp.json`, else `$XDG_CONFIG_HOME/Code/User/mcp.json`; a workspace's is `.vscode/mcp.json` (`--config-file`) | `servers` | `type`, `command`, `args`, `env`, `cwd`; `url`, `headers`; JSONC (comments) |
//! | `file` | none: `--config-file FILE` | `mcpServers` | `command`, `args`, `env`, `cwd`; `type: http`, `url`, `headers` (what `mcp --config` reads) |

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// A host whose configuration `mcp install` edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Host {
    /// Claude Desktop's claude_desktop_config.json.
    ClaudeDesktop,
    /// Claude Code's ~/.claude.json (user scope).
    ClaudeCode,
    /// Cursor's ~/.cursor/mcp.json.
    Cursor,
    /// VS Code's mcp.json (user profile; a workspace's with --config-file .vscode/mcp.json).
    Vscode,
    /// A plain `mcpServers` JSON file named with --config-file.
    File,
}

/// The server an entry starts or reaches.
#[derive(Debug, Clone, PartialEq)]
pub enum Server {
    /// A program, its arguments, environment and directory.
    Stdio { words: Vec<String>, env: Vec<(String, String)>, cwd: Option<PathBuf> },
    /// A Streamable HTTP endpoint and the headers to send it.
    Http { url: String, headers: Vec<(String, String)> },
}

impl Host {
    /// The host's name, for messages.
    pub fn title(self) -> &'static str {
        match self {
            Host::ClaudeDesktop => "Claude Desktop",
            Host::ClaudeCode => "Claude Code",
            Host::Cursor => "Cursor",
            Host::Vscode => "VS Code",
            Host::File => "the file",
        }
    }

    /// The key of the object that holds the servers by name.
    pub fn servers_key(self) -> &'static str {
        if self == Host::Vscode { "servers" } else { "mcpServers" }
    }

    /// Whether the host reads its file as JSON with comments (and trailing commas).
    pub fn reads_comments(self) -> bool {
        self == Host::Vscode
    }

    /// Where the host keeps its configuration when `--config-file` does not say.
    pub fn default_file(self) -> Result<PathBuf, String> {
        let home = home()?;
        Ok(match self {
            Host::ClaudeDesktop => {
                app_config_dir(&home)?.join("Claude").join("claude_desktop_config.json")
            }
            Host::ClaudeCode => home.join(".claude.json"),
            Host::Cursor => home.join(".cursor").join("mcp.json"),
            Host::Vscode => app_config_dir(&home)?.join("Code").join("User").join("mcp.json"),
            Host::File => return Err("`mcp install file` needs --config-file FILE".into()),
        })
    }

    /// The entry for `server` as this host reads it.
    pub fn entry(self, server: &Server) -> Result<Value, String> {
        match server {
            Server::Stdio { words, env, cwd } => self.stdio_entry(words, env, cwd.as_deref()),
            Server::Http { url, headers } => self.http_entry(url, headers),
        }
    }

    /// Whether the host's entries say their transport in `type` (a plain file's and
    /// Cursor's tell a command from a URL by the key they hold).
    fn typed(self) -> bool {
        matches!(self, Host::ClaudeCode | Host::Vscode)
    }

    /// `command`, `args`, `env` where given, and `cwd` where the host has one.
    fn stdio_entry(
        self,
        words: &[String],
        env: &[(String, String)],
        cwd: Option<&Path>,
    ) -> Result<Value, String> {
        let Some((program, args)) = words.split_first() else {
            return Err("--stdio needs a command to run".into());
        };
        let mut entry = Map::new();
        if self.typed() {
            entry.insert("type".into(), json!("stdio"));
        }
        entry.insert("command".into(), json!(absolute_program(program)?));
        entry.insert("args".into(), json!(args));
        if !env.is_empty() {
            entry.insert("env".into(), pairs_object(env));
        }
        if let Some(cwd) = cwd {
            entry.insert("cwd".into(), json!(self.working_directory(cwd)?));
        }
        Ok(Value::Object(entry))
    }

    /// `--cwd` made absolute, for the hosts whose entries have a directory.
    fn working_directory(self, cwd: &Path) -> Result<String, String> {
        if !matches!(self, Host::Vscode | Host::File) {
            return Err(format!(
                "{}'s entries have no working directory: give the command absolute paths \
                 instead of --cwd",
                self.title()
            ));
        }
        let cwd = std::path::absolute(cwd).map_err(|e| format!("--cwd: {e}"))?;
        Ok(cwd.display().to_string())
    }

    /// `url` and `headers` where given; `type: http` where the host reads a type (and in
    /// a plain file, which `mcp --config` reads as VS Code's).
    fn http_entry(self, url: &str, headers: &[(String, String)]) -> Result<Value, String> {
        if self == Host::ClaudeDesktop {
            return Err("Claude Desktop's config file only starts commands: add a remote \
                        server in its settings (Connectors), or give --stdio"
                .into());
        }
        let mut entry = Map::new();
        if self.typed() || self == Host::File {
            entry.insert("type".into(), json!("http"));
        }
        entry.insert("url".into(), json!(url));
        if !headers.is_empty() {
            entry.insert("headers".into(), pairs_object(headers));
        }
        Ok(Value::Object(entry))
    }
}

/// `KEY=VALUE` pairs as a JSON object of strings, in the order given.
fn pairs_object(pairs: &[(String, String)]) -> Value {
    Value::Object(pairs.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect())
}

/// A program named by a relative path made absolute: the host starts it from a directory of
/// its own. A bare name (`npx`) is looked up on the host's PATH and stays as it is.
fn absolute_program(program: &str) -> Result<String, String> {
    let path = Path::new(program);
    if path.is_absolute() || path.components().count() < 2 {
        return Ok(program.to_owned());
    }
    let absolute = std::path::absolute(path).map_err(|e| format!("{program}: {e}"))?;
    Ok(absolute.display().to_string())
}

/// The user's home directory: `HOME`, else `USERPROFILE` (Windows).
fn home() -> Result<PathBuf, String> {
    let non_empty =
        |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    non_empty("HOME")
        .or_else(|| non_empty("USERPROFILE"))
        .ok_or_else(|| "no home directory (HOME is not set): give --config-file FILE".into())
}

/// Where desktop applications keep their settings: `~/Library/Application Support` on
/// macOS, `%APPDATA%` on Windows, else `$XDG_CONFIG_HOME` or `~/.config`.
fn app_config_dir(home: &Path) -> Result<PathBuf, String> {
    let non_empty =
        |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if cfg!(target_os = "macos") {
        Ok(home.join("Library").join("Application Support"))
    } else if cfg!(windows) {
        non_empty("APPDATA").ok_or_else(|| "APPDATA is not set: give --config-file FILE".into())
    } else {
        Ok(non_empty("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(words: &[&str]) -> Server {
        let words = words.iter().map(|w| w.to_string()).collect();
        Server::Stdio { words, env: vec![("KEY".into(), "v".into())], cwd: None }
    }

    #[test]
    fn each_host_writes_its_own_shape() {
        let server = stdio(&["npx", "-y", "srv"]);
        let plain = json!({"command": "npx", "args": ["-y", "srv"], "env": {"KEY": "v"}});
        for host in [Host::ClaudeDesktop, Host::Cursor, Host::File] {
            assert_eq!(host.entry(&server), Ok(plain.clone()), "{host:?}");
        }
        let typed =
            json!({"type": "stdio", "command": "npx", "args": ["-y", "srv"], "env": {"KEY": "v"}});
        for host in [Host::ClaudeCode, Host::Vscode] {
            assert_eq!(host.entry(&server), Ok(typed.clone()), "{host:?}");
        }
        let remote = Server::Http {
            url: "https://h/mcp".into(),
            headers: vec![("X-Key".into(), "k".into())],
        };
        let cursor = json!({"url": "https://h/mcp", "headers": {"X-Key": "k"}});
        assert_eq!(Host::Cursor.entry(&remote), Ok(cursor));
        let vscode = json!({"type": "http", "url": "https://h/mcp", "headers": {"X-Key": "k"}});
        assert_eq!(Host::Vscode.entry(&remote), Ok(vscode));
        assert!(
            Host::ClaudeDesktop
                .entry(&remote)
                .expect_err("no URLs")
                .contains("only starts commands")
        );
        assert_eq!(
            (Host::Vscode.servers_key(), Host::Cursor.servers_key()),
            ("servers", "mcpServers")
        );
    }

    #[test]
    fn paths_and_directories_are_made_absolute_where_the_host_needs_them() {
        let local = Host::File.entry(&stdio(&["target/debug/srv"])).expect("entry");
        let command = local["command"].as_str().expect("command");
        assert!(Path::new(command).is_absolute() && command.ends_with("srv"), "{command}");
        let with_cwd =
            Server::Stdio { words: vec!["srv".into()], env: vec![], cwd: Some("work".into()) };
        let entry = Host::Vscode.entry(&with_cwd).expect("VS Code has cwd");
        assert!(Path::new(entry["cwd"].as_str().expect("cwd")).is_absolute());
        let err = Host::Cursor.entry(&with_cwd).expect_err("Cursor has no cwd");
        assert!(err.contains("Cursor's entries have no working directory"), "{err}");
        assert!(Host::File.default_file().expect_err("no default").contains("--config-file"));
    }
}
