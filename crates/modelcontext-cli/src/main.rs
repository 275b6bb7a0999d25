//! `mcp`: talk to any MCP server from a terminal, for people who build and debug servers.
//!
//! ```text
//! mcp --stdio "target/debug/examples/bookshop" tools
//! mcp --stdio "target/debug/examples/bookshop" call get_author title=Dune
//! mcp http://127.0.0.1:8000/mcp read books://Dune
//! mcp --json http://127.0.0.1:8000/mcp call search_books query=dune limit=5
//! mcp call get_author title=Dune --stdio -- npx -y some-server --flag
//! mcp --config ~/.config/Claude/claude_desktop_config.json --server books tools
//! mcp listen --resource books://Dune --stdio "target/debug/examples/bookshop"
//! mcp ui --stdio "target/debug/examples/bookshop"
//! ```
//!
//! The server is a command run as a child process (`--stdio "cmd args"`, split like a shell
//! would but without a shell) or a Streamable HTTP endpoint (an `http://` URL). `key=value`
//! arguments are typed by the tool's input schema: a property the schema types as integer,
//! number, boolean, array, object or null is parsed as JSON, anything else is sent as the
//! string it is. `call --args '{..}'` gives the whole arguments object at once.
//!
//! A server behind OAuth: `mcp login URL` logs in once (browser, loopback redirect, PKCE) and
//! stores the tokens in `$XDG_CONFIG_HOME/mcp/tokens.json` (else `~/.config/mcp/`, mode 0600);
//! every later command against that URL uses them and refreshes them when they expire;
//! `mcp logout URL` revokes and forgets them. `--token-env NAME` sends the bearer token held
//! in the environment variable NAME instead (unlike `-H`, it does not show in `ps`).
//!
//! `mcp ui` serves a web inspector on 127.0.0.1 (the page is embedded in the binary) and opens
//! it in the browser: forms from each tool's input schema, resources, prompts, the server's
//! questions in dialogs, every message live. Only the holder of the token in the URL it prints
//! is served, and `Host` and `Origin` are checked (see the `ui` module).
//!
//! Output is for people by default; `--json` prints the result as JSON on stdout instead.
//! Diagnostics and progress always go to stderr: a progress bar at a terminal, plain lines
//! otherwise. Ctrl-C cancels the request in flight at the server (`notifications/cancelled`).
//!
//! # Exit codes
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | any other failure |
//! | 2 | the tool ran and reported an error (`isError: true`) |
//! | 3 | the server answered with a JSON-RPC (protocol) error, or an answer that does not parse |
//! | 4 | no connection: the server could not be started or reached, exited, or timed out |
//! | 64 | usage: bad options or arguments |
//! | 130 | interrupted (Ctrl-C); the request in flight was cancelled at the server |

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[macro_use]
mod print;
mod args;
mod ask;
mod commands;
mod config;
mod connect;
mod login;
mod loopback;
mod output;
mod progress;
mod shell;
mod ui;
mod verbose;
mod words;

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

/// Exit codes, as documented in `--help` and the crate docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exit {
    Success = 0,
    Other = 1,
    ToolError = 2,
    Protocol = 3,
    Connection = 4,
    Usage = 64,
    Interrupted = 130,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit as u8)
    }
}

/// Talk to an MCP server from a terminal.
#[derive(Debug, Parser)]
#[command(name = "mcp", version, after_help = EXIT_CODES)]
struct Cli {
    /// The server's Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp or https://…
    #[arg(value_name = "URL")]
    url: Option<String>,

    /// Run COMMAND (program and arguments; quotes group words, no shell) as the server and
    /// talk to it over its stdin and stdout. Or last on the line, after `--`, word by word:
    /// `mcp tools --stdio -- npx -y server-x --flag`.
    #[arg(long, value_name = "COMMAND", global = true)]
    stdio: Option<String>,

    /// The words after `--stdio --`, taken out of the line before it is parsed.
    #[arg(skip)]
    stdio_words: Option<Vec<String>>,

    /// Set KEY=VALUE in the environment of the --stdio server (repeatable).
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE", global = true)]
    env: Vec<String>,

    /// Start the --stdio server in DIR.
    #[arg(long, value_name = "DIR", global = true)]
    cwd: Option<std::path::PathBuf>,

    /// Read the server from FILE: the `mcpServers` JSON of Claude Desktop and Cursor, or the
    /// `servers` of VS Code's mcp.json. Pick the entry with --server.
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<std::path::PathBuf>,

    /// The name of the server in --config (needed when it has more than one).
    #[arg(long, value_name = "NAME", global = true, requires = "config")]
    server: Option<String>,

    /// Protocol era: probe with server/discover and fall back to initialize (auto), always
    /// initialize (handshake, 2025-11-25), or always the stateless 2026-07-28 wire (modern).
    #[arg(long, value_enum, default_value_t = EraArg::Auto, global = true)]
    era: EraArg,

    /// An HTTP header for every request, e.g. 'Authorization: Bearer t' (repeatable; HTTP only).
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE", global = true)]
    headers: Vec<String>,

    /// Send 'Authorization: Bearer TOKEN' with the TOKEN held in the environment variable
    /// NAME (unlike -H, the token does not show in `ps`); overrides a stored login.
    #[arg(long, value_name = "NAME", global = true)]
    token_env: Option<String>,

    /// Trust the CA certificates in FILE (PEM) for https, besides the system's and those of
    /// $SSL_CERT_FILE: a private CA.
    #[arg(long, value_name = "FILE", global = true)]
    cacert: Option<std::path::PathBuf>,

    /// How long each request may take: 30, 30s, 500ms or 2m; 0 waits forever.
    #[arg(long, value_name = "DURATION", default_value = "60s", global = true,
          value_parser = parse_duration)]
    timeout: Duration,

    /// Print results as JSON on stdout, for scripts.
    #[arg(long)]
    json: bool,

    /// Answer the server's sampling requests with CMD (program and arguments, no shell): it
    /// gets the request as JSON on stdin, and what it prints is the answer. Without it, a
    /// person at the terminal approves and types the answer; without a terminal, refused.
    #[arg(long, value_name = "CMD", global = true)]
    sampling_cmd: Option<String>,

    /// Offer the directory PATH to the server as a root (repeatable).
    #[arg(long = "root", value_name = "PATH", global = true)]
    roots: Vec<std::path::PathBuf>,

    /// Print every JSON-RPC message sent (-->) and received (<--) on stderr.
    #[arg(long, short = 'v', global = true)]
    verbose: bool,

    /// Ask the server for log messages at LEVEL and above (debug, info, notice, warning,
    /// error, critical, alert, emergency); they are printed on stderr. Handshake era:
    /// logging/setLevel; 2026-07-28: the level rides on every request.
    #[arg(long, value_name = "LEVEL", global = true, value_parser = parse_level)]
    log_level: Option<modelcontext::types::LoggingLevel>,

    #[command(subcommand)]
    command: Command,
}

/// `--era`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum EraArg {
    Auto,
    Handshake,
    Modern,
}

/// `--json` after a subcommand; the same as before it.
#[derive(Debug, Clone, Copy, Args)]
struct JsonFlag {
    /// Print the result as JSON on stdout, for scripts.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
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
enum RefKind {
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

/// Takes `--stdio -- PROGRAM ARGS...` off the end of the command line: after that `--` every
/// word is the server's, flags included, so clap must not see them (the subcommand and its
/// arguments come before `--stdio`).
fn split_trailing_command(mut line: Vec<String>) -> (Vec<String>, Option<Vec<String>>) {
    let Some(at) = line.windows(2).position(|pair| pair[0] == "--stdio" && pair[1] == "--") else {
        return (line, None);
    };
    let words = line.split_off(at + 2);
    line.truncate(at);
    (line, Some(words))
}

/// `mcp toools`: clap takes the mistyped word for the optional URL and then misses a
/// subcommand, so its own suggestion (which works after a URL) never comes. A word that is
/// not a URL and is close to a subcommand's name gets the tip here.
fn mistyped_subcommand(line: &[String]) -> Option<String> {
    use clap::CommandFactory;
    let command = Cli::command();
    let names: Vec<&str> = command.get_subcommands().map(|c| c.get_name()).collect();
    let word = line.iter().skip(1).find(|w| !w.starts_with('-') && !w.contains("://"))?;
    let (distance, name) = names.iter().map(|name| (edit_distance(word, name), *name)).min()?;
    (distance <= 2).then(|| {
        format!("error: unrecognized subcommand '{word}'\n\n  tip: a similar subcommand exists: '{name}'")
    })
}

/// Levenshtein distance: insertions, deletions and substitutions of one character.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// `mcp completions SHELL`: generated into memory first, then written as any output is
/// (a closed pipe ends it quietly).
fn print_completions(shell: clap_complete::Shell) {
    use clap::CommandFactory;
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "mcp", &mut script);
    print::stdout(&String::from_utf8_lossy(&script));
}

/// Parses `--log-level`: one of the eight syslog level names the protocol uses.
fn parse_level(text: &str) -> Result<modelcontext::types::LoggingLevel, String> {
    serde_json::from_value(serde_json::Value::String(text.to_lowercase())).map_err(|_| {
        "not a level: debug, info, notice, warning, error, critical, alert or emergency".into()
    })
}

fn main() -> ExitCode {
    let line = std::env::args_os().map(|arg| arg.to_string_lossy().into_owned()).collect();
    let (line, stdio_words) = split_trailing_command(line);
    let cli = match Cli::try_parse_from(line) {
        Ok(cli) => Cli { stdio_words, ..cli },
        Err(err) => {
            use clap::error::ErrorKind::{
                DisplayHelpOnMissingArgumentOrSubcommand, MissingSubcommand,
            };
            let no_subcommand =
                matches!(err.kind(), MissingSubcommand | DisplayHelpOnMissingArgumentOrSubcommand);
            if no_subcommand && stdio_words.is_some() {
                say!(
                    "mcp: everything after `--stdio --` is the server's command, so the \
                     subcommand goes before it: mcp tools --stdio -- npx -y server"
                );
                return Exit::Usage.into();
            }
            if err.kind() == MissingSubcommand {
                if let Some(tip) = mistyped_subcommand(&std::env::args().collect::<Vec<_>>()) {
                    say!("{tip}");
                    return Exit::Usage.into();
                }
            }
            // clap's own exit code for usage errors is 2, which we use for tool errors.
            let _ = err.print();
            return if err.use_stderr() { Exit::Usage.into() } else { Exit::Success.into() };
        }
    };
    if let Command::Completions { shell } = cli.command {
        print_completions(shell);
        return Exit::Success.into();
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            say!("mcp: cannot start the async runtime: {err}");
            return Exit::Other.into();
        }
    };
    runtime.block_on(commands::run(cli)).into()
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
    fn the_stdio_command_can_trail_the_line() {
        let line = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let (rest, words) = split_trailing_command(line("mcp tools --stdio -- npx -y x --flag"));
        assert_eq!((rest, words), (line("mcp tools"), Some(line("npx -y x --flag"))));
        let (rest, words) = split_trailing_command(line("mcp tools --stdio srv"));
        assert_eq!((rest, words), (line("mcp tools --stdio srv"), None));
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("toools", "tools"), 1);
        assert_eq!(edit_distance("lsten", "listen"), 1);
        assert_eq!(edit_distance("", "ping"), 4);
        assert_eq!(edit_distance("prompts", "prompts"), 0);
    }

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
