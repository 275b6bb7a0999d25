//! The command line: global options, the subcommands and their arguments, as clap parses
//! them and as `--help` and the completion scripts show them.

use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
  mcp http://127.0.0.1:8000/mcp read books://Dune
  mcp login http://127.0.0.1:8000/mcp      (then: mcp http://127.0.0.1:8000/mcp tools)
  mcp ui --stdio \"target/debug/examples/bookshop\"   (a web inspector in the browser)
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

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the tools and their parameters.
    Tools(JsonFlag),
    /// Call a tool: `call get_author title=Dune`, `call search_books --args '{"query":"dune"}'`.
    Call {
        /// The tool's name.
        tool: String,
        /// Arguments, typed by the tool's input schema (numbers, booleans, arrays and objects
        /// are parsed as JSON where the schema says so; strings are taken as they are).
        #[arg(value_name = "KEY=VALUE")]
        arguments: Vec<String>,
        /// The arguments as one JSON object (KEY=VALUE pairs are added to it).
        #[arg(long = "args", value_name = "OBJECT")]
        object: Option<String>,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// List the resources.
    Resources(JsonFlag),
    /// Read a resource by URI.
    Read {
        /// The resource's URI, e.g. books://Dune
        uri: String,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// List the resource templates.
    Templates(JsonFlag),
    /// List the prompts and their arguments.
    Prompts(JsonFlag),
    /// Render a prompt: `get review title=Dune`.
    Get {
        /// The prompt's name.
        prompt: String,
        /// Arguments (prompt arguments are always strings).
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
        output: JsonFlag,
    },
    /// Show the server's name, version, protocol revision, capabilities and instructions.
    Discover(JsonFlag),
    /// Check that the server answers, and how fast.
    Ping(JsonFlag),
    /// Print change notifications as they arrive, until interrupted: tool, prompt and
    /// resource list changes, and updates of the resources named with --resource.
    Listen {
        /// Also watch this resource for `notifications/resources/updated` (repeatable).
        #[arg(long = "resource", value_name = "URI")]
        resources: Vec<String>,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Run commands one per line on one connection (`tools`, `call get_author title=Dune`,
    /// ...) until end of input or `exit`: quicker than a process and a handshake per command.
    Shell,
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

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
