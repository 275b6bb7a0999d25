//! `mcp install` and `mcp uninstall` against configuration files as the hosts leave them:
//! the exact file written, the rest of it kept (unknown keys, comments, layout), and an
//! install followed by an uninstall giving back the file as it was.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use expect_test::{Expect, expect};

use crate::{Run, bookshop, run_mcp, temp_dir};

/// `mcp ARGS` with `home` as the home directory (and its `.config` as XDG_CONFIG_HOME), so
/// the hosts' default files are looked for there and nowhere else.
fn mcp_at(home: &Path, args: &[&str]) -> Run {
    run_mcp(
        Command::new(env!("CARGO_BIN_EXE_mcp"))
            .args(args)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env_remove("APPDATA"),
    )
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A fresh directory for one test, standing in for the home directory.
fn home(name: &str) -> PathBuf {
    let dir = temp_dir(&format!("install-{name}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("home");
    dir
}

/// Installs with `args` into `file` (which holds `before`), checks the file written against
/// `expect` and the backup against `before`, then uninstalls `name` and checks that the file
/// is `before` again.
#[track_caller]
fn round_trip(host: &str, file: &Path, before: &str, args: &[&str], expect: Expect) {
    fs::write(file, before).expect("config written");
    let path = file.to_str().expect("utf-8");
    let line = [&["install", host, "--name", "books", "--config-file", path], args].concat();
    let run = mcp_at(file.parent().expect("dir"), &line).code(0);
    assert!(run.stdout.is_empty(), "{run:#?}");
    expect.assert_eq(&read(file));
    assert_eq!(read(&backup(file)), before, "the backup holds the file as it was");
    let line = ["uninstall", host, "--name", "books", "--config-file", path];
    mcp_at(file.parent().expect("dir"), &line).code(0).stderr_has("removed the server \"books\"");
    assert_eq!(read(file), before, "uninstall gives the file back as it was");
}

fn backup(file: &Path) -> PathBuf {
    let mut name = file.file_name().expect("name").to_owned();
    name.push(".bak");
    file.with_file_name(name)
}

/// Claude Desktop's file as the app writes it: its own settings beside the servers.
const CLAUDE_DESKTOP: &str = r#"{
  "globalShortcut": "Alt+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/Users/ada/Desktop"
      ]
    }
  },
  "preferences": {
    "quickEntryShortcut": "off",
    "menuBarEnabled": false
  }
}
"#;

#[test]
fn claude_desktop_gets_a_command_and_keeps_its_settings() {
    let dir = home("claude-desktop");
    round_trip(
        "claude-desktop",
        &dir.join("claude_desktop_config.json"),
        CLAUDE_DESKTOP,
        &[
            "-e",
            "SHELF=fiction",
            "-e",
            "LOG=debug",
            "--stdio",
            "--",
            "/opt/books/bin/books",
            "--ro",
        ],
        expect![[r#"
            {
              "globalShortcut": "Alt+Space",
              "mcpServers": {
                "filesystem": {
                  "command": "npx",
                  "args": [
                    "-y",
                    "@modelcontextprotocol/server-filesystem",
                    "/Users/ada/Desktop"
                  ]
                },
                "books": {
                  "command": "/opt/books/bin/books",
                  "args": ["--ro"],
                  "env": {
                    "SHELF": "fiction",
                    "LOG": "debug"
                  }
                }
              },
              "preferences": {
                "quickEntryShortcut": "off",
                "menuBarEnabled": false
              }
            }
        "#]],
    );
}

/// VS Code's workspace `mcp.json`: JSON with comments and trailing commas, and `inputs`.
const VSCODE: &str = r#"{
	// Servers for this workspace; see the MCP docs.
	"inputs": [
		{
			"type": "promptString",
			"id": "github-token",
			"description": "GitHub token",
			"password": true,
		},
	],
	"servers": {
		/* the GitHub server, with a token asked for once */
		"github": {
			"type": "http",
			"url": "https://api.githubcopilot.com/mcp/",
			"headers": { "Authorization": "Bearer ${input:github-token}" }, // kept as it is
		},
	},
}
"#;

#[test]
fn vscode_gets_a_typed_http_entry_and_keeps_comments_and_inputs() {
    let dir = home("vscode");
    fs::create_dir_all(dir.join(".vscode")).expect(".vscode");
    round_trip(
        "vscode",
        &dir.join(".vscode").join("mcp.json"),
        VSCODE,
        &["https://books.example/mcp", "-H", "X-Shelf: fiction"],
        expect![[r#"
            {
            	// Servers for this workspace; see the MCP docs.
            	"inputs": [
            		{
            			"type": "promptString",
            			"id": "github-token",
            			"description": "GitHub token",
            			"password": true,
            		},
            	],
            	"servers": {
            		/* the GitHub server, with a token asked for once */
            		"github": {
            			"type": "http",
            			"url": "https://api.githubcopilot.com/mcp/",
            			"headers": { "Authorization": "Bearer ${input:github-token}" }, // kept as it is
            		},
            		"books": {
            			"type": "http",
            			"url": "https://books.example/mcp",
            			"headers": {
            				"X-Shelf": "fiction",
            			},
            		},
            	},
            }
        "#]],
    );
}

#[test]
fn vscode_gets_a_typed_stdio_entry_with_its_directory() {
    let dir = home("vscode-stdio");
    round_trip(
        "vscode",
        &dir.join("mcp.json"),
        VSCODE,
        &["--cwd", "/srv/books", "--stdio", "--", "uvx", "books-mcp"],
        expect![[r#"
            {
            	// Servers for this workspace; see the MCP docs.
            	"inputs": [
            		{
            			"type": "promptString",
            			"id": "github-token",
            			"description": "GitHub token",
            			"password": true,
            		},
            	],
            	"servers": {
            		/* the GitHub server, with a token asked for once */
            		"github": {
            			"type": "http",
            			"url": "https://api.githubcopilot.com/mcp/",
            			"headers": { "Authorization": "Bearer ${input:github-token}" }, // kept as it is
            		},
            		"books": {
            			"type": "stdio",
            			"command": "uvx",
            			"args": ["books-mcp"],
            			"cwd": "/srv/books",
            		},
            	},
            }
        "#]],
    );
}

/// `~/.claude.json`: Claude Code's own state, with user-scope servers at the top.
const CLAUDE_CODE: &str = r#"{
  "numStartups": 42,
  "installMethod": "native",
  "autoUpdates": true,
  "projects": {
    "/home/ada/src/shop": {
      "allowedTools": [],
      "mcpServers": {},
      "hasTrustDialogAccepted": true
    }
  },
  "mcpServers": {
    "sentry": {
      "type": "http",
      "url": "https://mcp.sentry.dev/mcp"
    }
  },
  "userID": "0f3c"
}"#;

#[test]
fn claude_code_is_found_in_the_home_directory() {
    let dir = home("claude-code");
    let file = dir.join(".claude.json");
    fs::write(&file, CLAUDE_CODE).expect("written");
    let run =
        mcp_at(&dir, &["install", "claude-code", "--name", "books", "http://127.0.0.1:8000/mcp"]);
    run.code(0).stderr_has("added the server \"books\" for Claude Code in");
    expect![[r#"
        {
          "numStartups": 42,
          "installMethod": "native",
          "autoUpdates": true,
          "projects": {
            "/home/ada/src/shop": {
              "allowedTools": [],
              "mcpServers": {},
              "hasTrustDialogAccepted": true
            }
          },
          "mcpServers": {
            "sentry": {
              "type": "http",
              "url": "https://mcp.sentry.dev/mcp"
            },
            "books": {
              "type": "http",
              "url": "http://127.0.0.1:8000/mcp"
            }
          },
          "userID": "0f3c"
        }"#]]
    .assert_eq(&read(&file));
    let run =
        mcp_at(&dir, &["install", "claude-code", "--name", "local", "--stdio", "--", "books"]);
    run.code(0);
    expect![[r#"
        {
          "numStartups": 42,
          "installMethod": "native",
          "autoUpdates": true,
          "projects": {
            "/home/ada/src/shop": {
              "allowedTools": [],
              "mcpServers": {},
              "hasTrustDialogAccepted": true
            }
          },
          "mcpServers": {
            "sentry": {
              "type": "http",
              "url": "https://mcp.sentry.dev/mcp"
            },
            "books": {
              "type": "http",
              "url": "http://127.0.0.1:8000/mcp"
            },
            "local": {
              "type": "stdio",
              "command": "books",
              "args": []
            }
          },
          "userID": "0f3c"
        }"#]]
    .assert_eq(&read(&file));
    for name in ["local", "books"] {
        mcp_at(&dir, &["uninstall", "claude-code", "--name", name]).code(0);
    }
    assert_eq!(read(&file), CLAUDE_CODE, "no newline added at the end either");
}

#[test]
fn cursor_s_missing_file_is_made_with_its_directory() {
    let dir = home("cursor");
    let file = dir.join(".cursor").join("mcp.json");
    let line =
        ["install", "cursor", "--name", "books", "https://books.example/mcp", "-H", "X-Key: k"];
    mcp_at(&dir, &line).code(0);
    expect![[r#"
        {
          "mcpServers": {
            "books": {
              "url": "https://books.example/mcp",
              "headers": {
                "X-Key": "k"
              }
            }
          }
        }
    "#]]
    .assert_eq(&read(&file));
    assert!(!backup(&file).exists(), "nothing to back up");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&file).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "a new file holding keys is private");
    }
    let line =
        ["install", "cursor", "--name", "books", "--force", "--stdio", "--", "npx", "-y", "books"];
    mcp_at(&dir, &line).code(0).stderr_has("replaced the server \"books\" for Cursor");
    expect![[r#"
        {
          "mcpServers": {
            "books": {
              "command": "npx",
              "args": ["-y", "books"]
            }
          }
        }
    "#]]
    .assert_eq(&read(&file));
}

#[test]
fn a_plain_file_names_a_server_mcp_then_runs() {
    let dir = home("file");
    let file = dir.join("servers.json");
    let path = file.to_str().expect("utf-8");
    let program = bookshop().display().to_string();
    mcp_at(&dir, &["install", "file", "--name", "books", "--stdio", "--", "books"])
        .code(64)
        .stderr_has("`mcp install file` needs --config-file FILE");
    let line = ["install", "file", "--config-file", path, "--name", "books", "--cwd"];
    let line = [&line[..], &[dir.to_str().expect("utf-8"), "--stdio", "--", &program]].concat();
    mcp_at(&dir, &line).code(0);
    let written: serde_json::Value = serde_json::from_str(&read(&file)).expect("JSON");
    let expected = serde_json::json!({"mcpServers": {"books": {
        "command": program, "args": [], "cwd": dir.display().to_string()
    }}});
    assert_eq!(written, expected);
    let run =
        mcp_at(&dir, &["--config", path, "--server", "books", "call", "get_author", "title=Dune"]);
    assert_eq!(run.code(0).stdout, "Frank Herbert\n");
}

#[test]
fn dry_run_prints_the_file_and_changes_nothing() {
    let dir = home("dry-run");
    let file = dir.join("claude_desktop_config.json");
    fs::write(&file, CLAUDE_DESKTOP).expect("written");
    let path = file.to_str().expect("utf-8");
    let line = ["install", "claude-desktop", "--config-file", path, "--name", "books", "--dry-run"];
    let run = mcp_at(&dir, &[&line[..], &["--stdio", "--", "npx", "books"]].concat());
    let run = run.code(0).stderr_has("--dry-run");
    let printed: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON printed");
    assert_eq!(
        printed["mcpServers"]["books"],
        serde_json::json!({"command": "npx", "args": ["books"]})
    );
    let line =
        ["uninstall", "claude-desktop", "--config-file", path, "--name", "filesystem", "--dry-run"];
    let run = mcp_at(&dir, &line).code(0);
    assert!(
        !run.stdout.contains("filesystem") && run.stdout.contains("globalShortcut"),
        "{run:#?}"
    );
    assert_eq!(read(&file), CLAUDE_DESKTOP);
    assert!(!backup(&file).exists());
}

#[test]
fn what_cannot_be_done_leaves_the_file_as_it_was() {
    let dir = home("refusals");
    let file = dir.join("config.json");
    let path = file.to_str().expect("utf-8");
    let install = |host: &str, rest: &[&str]| {
        let line = ["install", host, "--config-file", path, "--name", "filesystem"];
        mcp_at(&dir, &[&line[..], rest].concat())
    };
    let untouched = |text: &str| {
        assert_eq!(read(&file), text);
        assert!(!backup(&file).exists(), "no backup of a file left alone");
    };
    fs::write(&file, CLAUDE_DESKTOP).expect("written");
    install("claude-desktop", &["--stdio", "--", "npx", "other"])
        .code(1)
        .stderr_has("already has a server named \"filesystem\"; --force replaces it");
    install("claude-desktop", &["https://books.example/mcp"])
        .code(64)
        .stderr_has("Claude Desktop's config file only starts commands");
    install("cursor", &["--cwd", "/srv", "--stdio", "--", "npx"])
        .code(64)
        .stderr_has("Cursor's entries have no working directory");
    install("cursor", &["ftp://books.example/mcp"])
        .code(64)
        .stderr_has("expected an http:// or https:// URL");
    install("cursor", &["-e", "A=b", "https://books.example/mcp"])
        .code(64)
        .stderr_has("-e and --cwd only apply to a --stdio server");
    install("cursor", &[]).code(64).stderr_has("say which server");
    untouched(CLAUDE_DESKTOP);
    let line = ["uninstall", "claude-desktop", "--config-file", path, "--name", "nope"];
    mcp_at(&dir, &line).code(1).stderr_has("has no server named \"nope\" (it has: filesystem)");
    untouched(CLAUDE_DESKTOP);
    // Comments are JSONC, which only VS Code reads; a broken file is nobody's to rewrite.
    let commented = "{\n  // mine\n  \"mcpServers\": {}\n}\n";
    fs::write(&file, commented).expect("written");
    install("claude-desktop", &["--stdio", "--", "npx"])
        .code(1)
        .stderr_has("is not valid JSON")
        .stderr_has("it was left as it is");
    untouched(commented);
    let broken = "{\"servers\": {\"a\": {\"type\": \"stdio\",}\n";
    fs::write(&file, broken).expect("written");
    install("vscode", &["--stdio", "--", "npx"]).code(1).stderr_has("it was left as it is");
    untouched(broken);
    let not_object = "{\"mcpServers\": [1, 2]}\n";
    fs::write(&file, not_object).expect("written");
    install("cursor", &["--stdio", "--", "npx"])
        .code(1)
        .stderr_has("\"mcpServers\" is not an object");
    untouched(not_object);
    let missing = dir.join("missing.json");
    let line =
        ["uninstall", "cursor", "--config-file", missing.to_str().expect("utf-8"), "--name", "x"];
    mcp_at(&dir, &line).code(1);
    assert!(!missing.exists());
}

#[test]
fn an_empty_list_gets_its_first_server_and_back() {
    let dir = home("empty");
    round_trip(
        "cursor",
        &dir.join("mcp.json"),
        "{\n    \"mcpServers\": {}\n}\n",
        &["--stdio", "--", "npx", "books"],
        expect![[r#"
            {
                "mcpServers": {
                    "books": {
                        "command": "npx",
                        "args": ["books"]
                    }
                }
            }
        "#]],
    );
    // A file without the key gets it; an uninstall leaves the key with nothing in it.
    let file = dir.join("other.json");
    fs::write(&file, "{\"theme\": \"dark\"}").expect("written");
    let path = file.to_str().expect("utf-8");
    let line =
        ["install", "file", "--config-file", path, "--name", "books", "https://b.example/mcp"];
    mcp_at(&dir, &line).code(0);
    expect![[r#"
        {
          "theme": "dark",
          "mcpServers": {
            "books": {
              "type": "http",
              "url": "https://b.example/mcp"
            }
          }
        }"#]]
    .assert_eq(&read(&file));
    mcp_at(&dir, &["uninstall", "file", "--config-file", path, "--name", "books"]).code(0);
    expect![[r#"
        {
          "theme": "dark",
          "mcpServers": {}
        }"#]]
    .assert_eq(&read(&file));
}
