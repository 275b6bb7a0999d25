//! The command line: global options, the subcommands and their arguments, as clap parses
//! them and as `--help` and the completion scripts show them.

use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::hosts::Host;

/// Appended to `--help`: the exit codes scripts can rely on.
const EXIT_CODES: &str = "\
Exit codes:
  0   success
  1   any other failure
  2   the tool ran and reported an error (isError: true)
  3   the server answered with a JSON-RPC (protocol) error, or an answer that does not parse
  4   no connection: the server could not be started or reached, exited, or timed out
  64  usage: bad options or arguments
  130 interrupted (Ctrl-C); the request in flight was cancelled at the server

Examples:
  mcp --stdio \"target/debug/examples/bookshop\" tools
  mcp --stdio \"target/debug/examples/bookshop\" call get_author title=Dune
  mcp tools http://127.0.0.1:8000/mcp      (the server before or after the subcommand)
  mcp call get_author title=Dune http://127.0.0.1:8000/mcp
  mcp http://127.0.0.1:8000/mcp read books://Dune
  mcp skills fetch pdf-processing ./skills http://127.0.0.1:8000/mcp   (verified, to ./skills/pdf-processing/)
  mcp login http://127.0.0.1:8000/mcp      (then: mcp http://127.0.0.1:8000/mcp tools)
  mcp ui --stdio \"target/debug/examples/bookshop\"   (a web inspector in the browser)
  mcp install claude-desktop --name books --stdio -- /path/to/bookshop
  mcp install vscode --name books http://127.0.0.1:8000/mcp --dry-run
  MCP_TOKEN=... mcp --token-env MCP_TOKEN http://127.0.0.1:8000/mcp tools

Logins are stored in $XDG_CONFIG_HOME/mcp/tokens.json (else ~/.config/mcp/tokens.json).";

/// Talk to an MCP server from a terminal.
#[derive(Debug, Parser)]
#[command(name = "mcp", version, after_help = EXIT_CODES)]
pub struct Cli {
    /// The server's Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp or https://…
    #[arg(value_name = "URL")]
    pub url: Option<String>,

    /// Run COMMAND (program and arguments; quotes group words, no shell) as the server and
    /// talk to it over its stdin and stdout. Or last on the line, after `--`, word by word:
    /// `mcp tools --stdio -- npx -y server-x --flag`.
    #[arg(long, value_name = "COMMAND", global = true)]
    pub stdio: Option<String>,

    /// The words after `--stdio --`, taken out of the line before it is parsed.
    #[arg(skip)]
    pub stdio_words: Option<Vec<String>>,

    /// Set KEY=VALUE in the environment of the --stdio server (repeatable).
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE", global = true)]
    pub env: Vec<String>,

    /// Start the --stdio server in DIR.
    #[arg(long, value_name = "DIR", global = true)]
    pub cwd: Option<std::path::PathBuf>,

    /// Read the server from FILE: the `mcpServers` JSON of Claude Desktop and Cursor, or the
    /// `servers` of VS Code's mcp.json. Pick the entry with --server.
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<std::path::PathBuf>,

    /// The name of the server in --config (needed when it has more than one).
    #[arg(long, value_name = "NAME", global = true, requires = "config")]
    pub server: Option<String>,

    /// Protocol era: probe with server/discover and fall back to initialize (auto), always
    /// initialize (handshake, 2025-11-25), or always the stateless 2026-07-28 wire (modern).
    #[arg(long, value_enum, default_value_t = EraArg::Auto, global = true)]
    pub era: EraArg,

    /// An HTTP header for every request, e.g. 'Authorization: Bearer t' (repeatable; HTTP only).
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE", global = true)]
    pub headers: Vec<String>,

    /// Send 'Authorization: Bearer TOKEN' with the TOKEN held in the environment variable
    /// NAME (unlike -H, the token does not show in `ps`); overrides a stored login.
    #[arg(long, value_name = "NAME", global = true)]
    pub token_env: Option<String>,

    /// Trust the CA certificates in FILE (PEM) for https, besides the system's and those of
    /// $SSL_CERT_FILE: a private CA.
    #[arg(long, value_name = "FILE", global = true)]
    pub cacert: Option<std::path::PathBuf>,

    /// How long each request may take: 30, 30s, 500ms or 2m; 0 waits forever.
    #[arg(long, value_name = "DURATION", default_value = "60s", global = true,
          value_parser = parse_duration)]
    pub timeout: Duration,

    /// Print results as JSON on stdout, for scripts.
    #[arg(long)]
    pub json: bool,

    /// Answer the server's sampling requests with CMD (program and arguments, no shell): it
    /// gets the request as JSON on stdin, and what it prints is the answer. Without it, a
    /// person at the terminal approves and types the answer; without a terminal, refused.
    #[arg(long, value_name = "CMD", global = true)]
    pub sampling_cmd: Option<String>,

    /// Offer the directory PATH to the server as a root (repeatable).
    #[arg(long = "root", value_name = "PATH", global = true)]
    pub roots: Vec<std::path::PathBuf>,

    /// Print every JSON-RPC message sent (-->) and received (<--) on stderr.
    #[arg(long, short = 'v', global = true)]
    pub verbose: bool,

    /// Ask the server for log messages at LEVEL and above (debug, info, notice, warning,
    /// error, critical, alert, emergency); they are printed on stderr. Handshake era:
    /// logging/setLevel; 2026-07-28: the level rides on every request.
    #[arg(long, value_name = "LEVEL", global = true, value_parser = parse_level)]
    pub log_level: Option<modelcontext::types::LoggingLevel>,

    #[command(subcommand)]
    pub command: Command,
}

/// `--era`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EraArg {
    Auto,
    Handshake,
    Modern,
}

/// `--json` after a subcommand; the same as before it.
#[derive(Debug, Clone, Copy, Args)]
pub struct JsonFlag {
    /// Print the result as JSON on stdout, for scripts.
    #[arg(long)]
    pub json: bool,
}

/// The end of a subcommand that talks to a server: the server's URL, as people type it after
/// the subcommand (`mcp tools URL`), and `--json`.
#[derive(Debug, Clone, Args)]
pub struct Trailing {
    /// The server's URL (or give it before the subcommand, or name the server with --stdio
    /// or --config, which may also come after it).
    #[arg(value_name = "URL")]
    pub url: Option<String>,
    #[command(flatten)]
    pub output: JsonFlag,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the tools and their parameters.
    Tools(Trailing),
    /// Call a tool: `call get_author title=Dune`, `call search_books --args '{"query":"dune"}'`.
    Call {
        /// The tool's name.
        tool: String,
        /// Arguments, typed by the tool's input schema (numbers, booleans, arrays and objects
        /// are parsed as JSON where the schema says so; strings are taken as they are). A
        /// word with `://` and no `=` before it is the server's URL, not an argument.
        #[arg(value_name = "KEY=VALUE")]
        arguments: Vec<String>,
        /// The arguments as one JSON object (KEY=VALUE pairs are added to it).
        #[arg(long = "args", value_name = "OBJECT")]
        object: Option<String>,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// List the resources.
    Resources(Trailing),
    /// Read a resource by URI.
    Read {
        /// The resource's URI, e.g. books://Dune (a server's URL after it is the server).
        uri: String,
        #[command(flatten)]
        trailing: Trailing,
    },
    /// List the resource templates.
    Templates(Trailing),
    /// List the prompts and their arguments.
    Prompts(Trailing),
    /// Render a prompt: `get review title=Dune`.
    Get {
        /// The prompt's name.
        prompt: String,
        /// Arguments (prompt arguments are always strings). A word with `://` and no `=`
        /// before it is the server's URL, not an argument.
        #[arg(value_name = "KEY=VALUE")]
        arguments: Vec<String>,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Complete an argument: `complete prompt review title=Du`,
    /// `complete resource 'books://{title}' title=Du`.
    Complete {
        /// What the argument belongs to.
        #[arg(value_enum)]
        kind: RefKind,
        /// The prompt's name or the resource template's URI template.
        name: String,
        /// The argument and the partial value typed so far.
        #[arg(value_name = "ARGUMENT=PARTIAL")]
        argument: String,
        #[command(flatten)]
        trailing: Trailing,
    },
    /// List the server's skills, show one, or fetch one verified into a folder.
    ///
    /// The skills extension (io.modelcontextprotocol/skills): `skills` lists them, `skills
    /// show NAME` prints one's entry (front matter, files with sizes and digests), `skills
    /// fetch NAME DIR` verifies every file and writes them under DIR/NAME/.
    #[command(args_conflicts_with_subcommands = true)]
    Skills {
        #[command(subcommand)]
        action: Option<SkillsAction>,
        #[command(flatten)]
        trailing: Trailing,
    },
    /// Show the server's name, version, protocol revision, capabilities and instructions.
    Discover(Trailing),
    /// Check that the server answers, and how fast.
    Ping(Trailing),
    /// Print change notifications as they arrive, until interrupted: tool, prompt and
    /// resource list changes, and updates of the resources named with --resource.
    Listen {
        /// Also watch this resource for `notifications/resources/updated` (repeatable).
        #[arg(long = "resource", value_name = "URI")]
        resources: Vec<String>,
        #[command(flatten)]
        trailing: Trailing,
    },
    /// Run commands one per line on one connection (`tools`, `call get_author title=Dune`,
    /// ...) until end of input or `exit`: quicker than a process and a handshake per command.
    Shell {
        /// The server's URL (or give it before `shell`, or name it with --stdio or --config).
        #[arg(value_name = "URL")]
        url: Option<String>,
    },
    /// Serve a web inspector on 127.0.0.1 and open it in a browser: connect to any server,
    /// call tools from forms, read resources, render prompts, answer the server's questions,
    /// and watch every message.
    ///
    /// The server named as for every subcommand (a URL, --stdio, --config) is connected at
    /// the start; the page can connect to others. The URL printed on stdout carries a random
    /// token: only a browser that opened it is served (Host and Origin are checked too).
    Ui {
        /// The server's URL (or give it before `ui`, or name it with --stdio or --config).
        #[arg(value_name = "URL")]
        url: Option<String>,
        /// Only print the URL; do not start a browser (also: MCP_NO_BROWSER=1).
        #[arg(long)]
        no_open: bool,
        /// Listen on this port of 127.0.0.1 (default: one the system picks).
        #[arg(long, value_name = "PORT", default_value_t = 0)]
        port: u16,
    },
    /// Serve the server (or every server of a --config file) as one endpoint: Streamable
    /// HTTP on --http HOST:PORT at /mcp (both eras, sessions, resumability), or stdio with
    /// --stdio-out. Several servers are namespaced by their config names (`<name>_<tool>`).
    /// A crashed stdio server is restarted with backoff; `GET /healthz` says whether every
    /// server answered its last ping.
    Serve {
        /// The server's URL (or give it before `serve`, or name it with --stdio or --config).
        #[arg(value_name = "URL")]
        url: Option<String>,
        /// Serve Streamable HTTP on this address, e.g. 127.0.0.1:8080.
        #[arg(
            long,
            value_name = "HOST:PORT",
            conflicts_with = "stdio_out",
            required_unless_present = "stdio_out"
        )]
        http: Option<String>,
        /// Serve over this process's stdin and stdout instead (for a host that only starts
        /// commands).
        #[arg(long)]
        stdio_out: bool,
        /// Serve HTTPS with this certificate chain (PEM); needs --tls-key.
        #[arg(long, value_name = "FILE", requires = "tls_key")]
        tls_cert: Option<std::path::PathBuf>,
        /// The private key (PEM) of --tls-cert.
        #[arg(long, value_name = "FILE", requires = "tls_cert")]
        tls_key: Option<std::path::PathBuf>,
        /// Require `Authorization: Bearer <token>` on /mcp, the token read from this
        /// environment variable.
        #[arg(long, value_name = "VAR")]
        bearer_env: Option<String>,
        /// Only show the tools and prompts matching PATTERN (`*` is any run of characters);
        /// `SERVER:PATTERN` for one server of a --config file. Repeatable.
        #[arg(long, value_name = "PATTERN")]
        allow: Vec<String>,
        /// Hide the tools and prompts matching PATTERN; `SERVER:PATTERN` for one server.
        /// Repeatable.
        #[arg(long, value_name = "PATTERN")]
        deny: Vec<String>,
        /// Accept only OAuth access tokens (JWT) from this issuer (feature `gateway`); with
        /// --audience.
        #[arg(long, value_name = "URL", requires = "audience")]
        issuer: Option<String>,
        /// The audience the tokens must name: this endpoint's canonical URL, e.g.
        /// `https://mcp.example.com/mcp` (feature `gateway`).
        #[arg(long, value_name = "URI", requires = "issuer")]
        audience: Option<String>,
        /// Where the issuer's keys are (default: found through its metadata).
        #[arg(long, value_name = "URL", requires = "issuer")]
        jwks_url: Option<String>,
        /// Share sessions, their events and change notifications with the other instances
        /// on this Redis (feature `gateway`); needs --http and --signing-key.
        #[arg(long, value_name = "URL", requires_all = ["http", "signing_key"])]
        redis: Option<String>,
        /// A 64-hex-digit key sealing cursors and request state, the same on every instance
        /// (repeatable: the first signs, all verify).
        #[arg(long, value_name = "HEX")]
        signing_key: Vec<String>,
        /// Worker threads (default: one per core, less one when it starts a server's process,
        /// which needs a core of its own).
        #[arg(long, value_name = "N")]
        threads: Option<std::num::NonZeroUsize>,
    },
    /// Add a server to a host's configuration: Claude Desktop, Claude Code, Cursor, VS Code,
    /// or a plain `mcpServers` JSON file.
    ///
    /// The server is named as for every subcommand: `--stdio -- COMMAND ARGS` (with -e and
    /// --cwd), a URL (with -H, or --with-login), or --config FILE --server NAME. The rest of
    /// the file is kept as it was (unknown keys in place, comments in VS Code's JSONC); the
    /// previous file is kept as FILE.bak and the new one replaces it atomically. Default
    /// files: Claude Desktop's claude_desktop_config.json (macOS: ~/Library/Application
    /// Support/Claude/, Windows: %APPDATA%\Claude\, else ~/.config/Claude/), Claude Code's
    /// ~/.claude.json (user scope), Cursor's ~/.cursor/mcp.json, VS Code's user mcp.json
    /// (macOS: ~/Library/Application Support/Code/User/, Windows: %APPDATA%\Code\User\, else
    /// ~/.config/Code/User/; a workspace's: --config-file .vscode/mcp.json).
    Install {
        /// The host whose configuration gets the server.
        #[arg(value_enum)]
        host: Host,
        /// The server's name in the host's list.
        #[arg(long, value_name = "NAME")]
        name: String,
        /// The server's URL (or name it with --stdio or --config).
        #[arg(value_name = "URL")]
        url: Option<String>,
        /// Edit FILE instead of the host's own (needed for `file`).
        #[arg(long, value_name = "FILE")]
        config_file: Option<std::path::PathBuf>,
        /// Replace an entry of the same name.
        #[arg(long)]
        force: bool,
        /// Print the file as it would be written; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Write the access token `mcp login URL` stored as an Authorization header (it stops
        /// working when it expires; hosts that log in themselves need none).
        #[arg(long)]
        with_login: bool,
    },
    /// Remove a server from a host's configuration (the same files as `install`).
    Uninstall {
        /// The host whose configuration loses the server.
        #[arg(value_enum)]
        host: Host,
        /// The server's name in the host's list.
        #[arg(long, value_name = "NAME")]
        name: String,
        /// Edit FILE instead of the host's own (needed for `file`).
        #[arg(long, value_name = "FILE")]
        config_file: Option<std::path::PathBuf>,
        /// Print the file as it would be written; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Print a completion script for SHELL: `mcp completions bash > /etc/bash_completion.d/mcp`.
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Log in to a server behind OAuth, for the commands that follow.
    ///
    /// Opens the authorization page in a browser (the URL is printed too, for a shell on
    /// another machine), waits for its redirect to 127.0.0.1, and stores the tokens for later
    /// commands against the same URL, which refresh them as needed.
    Login {
        /// The server's URL (or give it before `login`).
        #[arg(value_name = "URL")]
        url: Option<String>,
        /// Only print the authorization URL; do not start a browser (also: MCP_NO_BROWSER=1).
        #[arg(long)]
        no_browser: bool,
        /// How long to wait for the browser to come back: 30s, 5m, ...
        #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
        wait: Duration,
        /// The https URL of a Client ID Metadata Document describing this client, used as its
        /// client_id where the authorization server supports them (else: dynamic registration).
        #[arg(long, value_name = "URL")]
        client_metadata_url: Option<String>,
    },
    /// Forget the tokens `login` stored for a server (revoked first where the authorization
    /// server offers revocation).
    Logout {
        /// The server's URL (or give it before `logout`).
        #[arg(value_name = "URL")]
        url: Option<String>,
    },
}

impl Cli {
    /// Moves what was given after the subcommand (the server's URL, `--json`) to where the
    /// same given before it goes, so the rest of the command reads one `url` and one `json`.
    /// Both places naming different URLs is an error.
    pub fn settle(&mut self) -> Result<(), String> {
        let after = self.command.take_trailing()?;
        self.json |= after.json;
        let Some(url) = after.url else { return Ok(()) };
        match &self.url {
            Some(before) if *before != url => {
                Err(format!("two different URLs given: {before} and {url}"))
            }
            _ => {
                self.url = Some(url);
                Ok(())
            }
        }
    }
}

/// What a subcommand was given at its end: the server's URL and `--json`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct After {
    /// The server's URL, when one came after the subcommand.
    pub url: Option<String>,
    /// `--json` after the subcommand (for `call`: without an object).
    pub json: bool,
}

impl Command {
    /// Takes the server's URL and `--json` given after the subcommand out of it: its `URL`
    /// argument, or for `call` and `get` the word among the KEY=VALUE pairs that is a URL.
    pub fn take_trailing(&mut self) -> Result<After, String> {
        Ok(match self {
            Command::Tools(trailing)
            | Command::Resources(trailing)
            | Command::Templates(trailing)
            | Command::Prompts(trailing)
            | Command::Discover(trailing)
            | Command::Ping(trailing)
            | Command::Read { trailing, .. }
            | Command::Complete { trailing, .. }
            | Command::Listen { trailing, .. }
            | Command::Skills { action: None, trailing } => {
                After { url: trailing.url.take(), json: trailing.output.json }
            }
            Command::Skills { action: Some(action), trailing } => {
                let inner = action.trailing();
                let json = trailing.output.json || inner.output.json;
                match (trailing.url.take(), inner.url.take()) {
                    (Some(a), Some(b)) if a != b => {
                        return Err(format!("two different URLs given: {a} and {b}"));
                    }
                    (a, b) => After { url: a.or(b), json },
                }
            }
            Command::Call { arguments, output, .. } | Command::Get { arguments, output, .. } => {
                After { url: take_url_word(arguments)?, json: output.json }
            }
            Command::Shell { url }
            | Command::Ui { url, .. }
            | Command::Serve { url, .. }
            | Command::Install { url, .. }
            | Command::Login { url, .. }
            | Command::Logout { url } => After { url: url.take(), json: false },
            Command::Completions { .. } | Command::Uninstall { .. } => After::default(),
        })
    }
}

/// The one word of `words` that is a URL, taken out of them: `scheme://…` with nothing
/// before the `://` but a scheme's letters, so `title=http://x` stays a KEY=VALUE pair.
fn take_url_word(words: &mut Vec<String>) -> Result<Option<String>, String> {
    let mut urls = words.iter().filter(|word| is_url(word));
    let (Some(url), second) = (urls.next(), urls.next()) else { return Ok(None) };
    if let Some(second) = second {
        return Err(format!("two URLs among the arguments: {url} and {second}"));
    }
    let url = url.clone();
    words.retain(|word| *word != url);
    Ok(Some(url))
}

/// Whether `word` is a URL rather than a KEY=VALUE pair: a scheme (a letter, then letters,
/// digits, `+`, `-` or `.`) right before `://`.
pub fn is_url(word: &str) -> bool {
    let Some((scheme, _)) = word.split_once("://") else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// What `mcp skills` does; listing when none is given.
#[derive(Debug, Subcommand)]
pub enum SkillsAction {
    /// List the skills: name, URI and description.
    List(Trailing),
    /// Print a skill's entry: its front matter and files, with their sizes and digests.
    Show {
        /// The skill's name, or the URI of its SKILL.md when names repeat.
        name: String,
        #[command(flatten)]
        trailing: Trailing,
    },
    /// Load a skill, verify every file (listed, size, digest, front matter) and write them
    /// under DIR/NAME/; nothing is written when a check fails.
    Fetch {
        /// The skill's name, or the URI of its SKILL.md when names repeat.
        name: String,
        /// The folder the skill's own folder is made in.
        dir: std::path::PathBuf,
        #[command(flatten)]
        trailing: Trailing,
    },
}

impl SkillsAction {
    fn trailing(&mut self) -> &mut Trailing {
        match self {
            SkillsAction::List(trailing)
            | SkillsAction::Show { trailing, .. }
            | SkillsAction::Fetch { trailing, .. } => trailing,
        }
    }
}

/// What `complete` completes an argument of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RefKind {
    Prompt,
    Resource,
}

/// Parses `--timeout`: a number of seconds, or a number with `ms`, `s` or `m`.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| format!("not a duration: {text:?}"))?;
    let seconds = match unit.trim() {
        "" | "s" => number,
        "ms" => number / 1000.0,
        "m" => number * 60.0,
        other => return Err(format!("unknown unit {other:?} (use ms, s or m)")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("{text:?}: {e}"))
}

/// Parses `--log-level`: one of the eight syslog level names the protocol uses.
fn parse_level(text: &str) -> Result<modelcontext::types::LoggingLevel, String> {
    serde_json::from_value(serde_json::Value::String(text.to_lowercase())).map_err(|_| {
        "not a level: debug, info, notice, warning, error, critical, alert or emergency".into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5h").is_err());
    }

    fn parsed(line: &str) -> Result<Cli, String> {
        let mut cli = Cli::try_parse_from(line.split(' ')).map_err(|e| e.to_string())?;
        cli.settle()?;
        Ok(cli)
    }

    #[test]
    fn the_url_may_come_before_or_after_the_subcommand() {
        let url = Some("http://h/mcp".to_owned());
        for line in
            ["mcp http://h/mcp tools", "mcp tools http://h/mcp", "mcp tools --json http://h/mcp"]
        {
            assert_eq!(parsed(line).expect(line).url, url, "{line}");
        }
        let cli = parsed("mcp call get_author title=Dune http://h/mcp --json").expect("call");
        assert_eq!(cli.url, url);
        let Command::Call { arguments, output, .. } = cli.command else { panic!("not call") };
        assert_eq!((arguments, output.json), (vec!["title=Dune".to_owned()], true));
        let cli = parsed("mcp read books://Dune http://h/mcp").expect("read");
        let Command::Read { uri, .. } = &cli.command else { panic!("not read") };
        assert_eq!((uri.as_str(), &cli.url), ("books://Dune", &url));
        // One positional after `read` is the resource, not the server.
        assert_eq!(parsed("mcp read http://h/r").expect("read").url, None);
        assert_eq!(parsed("mcp http://h/mcp shell http://h/mcp").expect("same").url, url);
        for line in [
            "mcp complete prompt review title=Du http://h/mcp",
            "mcp get review http://h/mcp t=D",
            "mcp skills http://h/mcp",
            "mcp skills show pdf http://h/mcp",
            "mcp skills fetch pdf out http://h/mcp --json",
        ] {
            assert_eq!(parsed(line).expect(line).url, url, "{line}");
        }
    }

    #[test]
    fn a_value_that_is_a_url_stays_an_argument() {
        let cli = parsed("mcp call fetch url=http://x/y").expect("call");
        let Command::Call { arguments, .. } = cli.command else { panic!("not call") };
        assert_eq!((arguments, cli.url), (vec!["url=http://x/y".to_owned()], None));
        assert!(is_url("https://h:1/p?q=a://b") && is_url("books://Dune"));
        assert!(!is_url("title=http://x") && !is_url("://x") && !is_url("1a://x") && !is_url("a"));
    }

    #[test]
    fn two_urls_are_refused() {
        let err = parsed("mcp http://a/mcp tools http://b/mcp").expect_err("two");
        assert_eq!(err, "two different URLs given: http://a/mcp and http://b/mcp");
        let err = parsed("mcp call t http://a/mcp k=v http://b/mcp").expect_err("two");
        assert_eq!(err, "two URLs among the arguments: http://a/mcp and http://b/mcp");
    }

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
