//! From the command line to a connected [`Client`]: a child process over stdio or a
//! Streamable HTTP endpoint, with the era and timeout asked for.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use modelcontext::client::ClientBuilder;
use modelcontext::net::HttpClient;
use modelcontext::transport::http::HttpTransport;
use modelcontext::types::{LoggingMessageNotificationParams, Notification};
use modelcontext::{ChildProcess, Client, Connection, EraMode, Transport};
use tokio::sync::mpsc;

use crate::cli::{Cli, EraArg};
use crate::failure::{Failure, chain};
use crate::verbose::{self, Sink, Tapped};
use crate::{args, ask, authorize, config, words};

/// Called with each notification from the server, on the connection's loop (keep it quick).
pub type NotificationHook = Arc<dyn Fn(Notification) + Send + Sync>;

/// Where the server is, checked before anything is started.
pub enum Target {
    /// A program, its arguments, environment and directory.
    Stdio(StdioCommand),
    /// A Streamable HTTP endpoint with its headers already applied (boxed: it is most of the
    /// enum's size, and a target is built once).
    Http(Box<HttpTransport>),
}

/// A server to run as a child process.
pub struct StdioCommand {
    /// The program and its arguments.
    pub words: Vec<String>,
    /// Variables set in its environment (besides ours, which it inherits).
    pub env: Vec<(String, String)>,
    /// The directory it starts in.
    pub cwd: Option<PathBuf>,
}

/// The server as the command line names it, before it is checked.
pub enum Named {
    Stdio(StdioCommand),
    Http { url: String, headers: Vec<(String, String)> },
}

impl Target {
    /// Reads `--stdio`, `--config`, the URL, `--header`, `-e`, `--cwd` and `--token-env`; any
    /// mistake in them is a usage error. An HTTP target is authorized as [`authorize::authorize`]
    /// says.
    pub fn from_cli(cli: &Cli) -> Result<Target, Failure> {
        match named(cli).map_err(Failure::Usage)? {
            Named::Stdio(mut command) => {
                if !cli.headers.is_empty() || cli.token_env.is_some() {
                    let message = "--header and --token-env only apply to an HTTP URL";
                    return Err(Failure::Usage(message.into()));
                }
                command.env.extend(args::env_pairs(&cli.env).map_err(Failure::Usage)?);
                command.cwd = cli.cwd.clone().or(command.cwd);
                Ok(Target::Stdio(command))
            }
            Named::Http { url, headers } => {
                if !cli.env.is_empty() || cli.cwd.is_some() {
                    let message = "-e and --cwd only apply to a --stdio server";
                    return Err(Failure::Usage(message.into()));
                }
                Target::http(cli, &url, headers)
            }
        }
    }

    /// An HTTP endpoint: `--header`s, then `headers`, then the authorization
    /// [`authorize::authorize`] finds (`--token-env`, a stored login).
    pub fn http(cli: &Cli, url: &str, headers: Vec<(String, String)>) -> Result<Target, Failure> {
        let client = http_client(cli)?;
        let mut transport = http_transport(cli, url, &client)?;
        for (name, value) in headers {
            transport = transport
                .header(name.trim(), value.trim())
                .map_err(|err| Failure::Usage(format!("header {name:?}: {}", io_message(&err))))?;
        }
        let transport = authorize::authorize(cli, url, transport, &client)?;
        Ok(Target::Http(Box::new(transport)))
    }

    /// The program's name, for messages about a stdio server.
    pub fn program(&self) -> Option<&str> {
        match self {
            Target::Stdio(command) => Some(&command.words[0]),
            Target::Http(_) => None,
        }
    }

    /// Starts or reaches the server and negotiates, each request bounded by `--timeout`.
    /// Every notification from the server but progress (which goes to its request) is also
    /// handed to `hook` when there is one: how `mcp shell` learns that a list changed.
    pub async fn connect(
        &self,
        cli: &Cli,
        hook: Option<NotificationHook>,
    ) -> Result<Client, Failure> {
        let timeout = (!cli.timeout.is_zero()).then_some(cli.timeout);
        self.connect_with(cli, timeout, hook).await
    }

    /// [`Target::connect`] with another per-request timeout (`None`: wait forever).
    pub async fn connect_with(
        &self,
        cli: &Cli,
        timeout: Option<Duration>,
        hook: Option<NotificationHook>,
    ) -> Result<Client, Failure> {
        let mut builder = base_builder(cli.era, timeout).on_log(show_log);
        if let Some(hook) = hook {
            builder = builder.on_notification(move |notification| hook(notification));
        }
        if let Some(level) = cli.log_level {
            builder = builder.log_level(level);
        }
        let builder = ask::install(builder, cli)?;
        self.open(builder, cli.verbose.then(verbose::to_stderr)).await
    }

    /// Starts or reaches the server and connects `builder` to it, every message handed to
    /// `tap` when there is one.
    pub async fn open(&self, builder: ClientBuilder, tap: Option<Sink>) -> Result<Client, Failure> {
        match self {
            Target::Stdio(command) => {
                let child = Watched(spawn(command)?);
                connect_over(builder, child, tap).await
            }
            // Its connections are bounded by the command's `HttpClient` (`http_client`).
            Target::Http(transport) => connect_over(builder, (**transport).clone(), tap).await,
        }
    }
}

/// A client builder named `mcp`, in the era asked for, each request bounded by `timeout`.
pub fn base_builder(era: EraArg, timeout: Option<Duration>) -> ClientBuilder {
    let mode = match era {
        EraArg::Auto => EraMode::Auto,
        EraArg::Handshake => EraMode::Handshake,
        EraArg::Modern => EraMode::Modern,
    };
    Client::builder().info("mcp", env!("CARGO_PKG_VERSION")).era(mode).timeout(timeout)
}

/// Connects over `transport`, every message handed to `tap` when there is one.
async fn connect_over(
    builder: ClientBuilder,
    transport: impl Transport,
    tap: Option<Sink>,
) -> Result<Client, Failure> {
    let connected = match tap {
        Some(sink) => builder.connect(Tapped(transport, sink)).await,
        None => builder.connect(transport).await,
    };
    connected.map_err(Failure::from_sdk)
}

/// A `notifications/message` from the server: `mcp: [warning] logger: text` on stderr (a
/// string as it is, any other data as JSON).
fn show_log(log: LoggingMessageNotificationParams) {
    let logger = log.logger.map(|name| format!("{name}: ")).unwrap_or_default();
    let data = match log.data {
        serde_json::Value::String(text) => text,
        other => other.to_string(),
    };
    say!("mcp: [{}] {logger}{data}", log.level.as_str());
}

/// Which server the command line names, if it names one (`mcp ui` may start without).
pub fn named_opt(cli: &Cli) -> Result<Option<Named>, String> {
    let given = cli.stdio.is_some() || cli.stdio_words.is_some();
    if given || cli.config.is_some() || cli.url.is_some() { named(cli).map(Some) } else { Ok(None) }
}

/// Which server the command line names: `--stdio`, `--config`, or a URL (exactly one).
fn named(cli: &Cli) -> Result<Named, String> {
    let given =
        [cli.stdio.is_some() || cli.stdio_words.is_some(), cli.config.is_some(), cli.url.is_some()];
    if given.iter().filter(|&&g| g).count() > 1 {
        return Err("give one of --stdio, --config or a URL".into());
    }
    if let Some(words) = &cli.stdio_words {
        if words.is_empty() {
            return Err("--stdio -- needs a command after the --".into());
        }
        return Ok(Named::Stdio(StdioCommand { words: words.clone(), env: vec![], cwd: None }));
    }
    if let Some(command) = &cli.stdio {
        let words = words::command(command, "--stdio")?;
        return Ok(Named::Stdio(StdioCommand { words, env: vec![], cwd: None }));
    }
    if let Some(path) = &cli.config {
        return Ok(match config::load(path, cli.server.as_deref())? {
            config::Entry::Stdio { words, env, cwd } => {
                Named::Stdio(StdioCommand { words, env, cwd })
            }
            config::Entry::Http { url, headers } => Named::Http { url, headers },
        });
    }
    match &cli.url {
        Some(url) => Ok(Named::Http { url: url.clone(), headers: vec![] }),
        None => Err("say which server: --stdio \"command args\", --config FILE --server NAME, \
                     or an http:// or https:// URL"
            .into()),
    }
}

/// Starts the server's process.
fn spawn(command: &StdioCommand) -> Result<Connection, Failure> {
    let program = &command.words[0];
    let mut child = ChildProcess::new(program).args(&command.words[1..]);
    for (key, value) in &command.env {
        child = child.env(key, value);
    }
    if let Some(dir) = &command.cwd {
        child = child.current_dir(dir);
    }
    child
        .spawn()
        .map_err(|err| Failure::Connection(format!("cannot start the server {program:?}: {err}")))
}

/// The one HTTP client of a command, for the MCP server and its authorization server alike:
/// `--cacert` trusted besides the system's roots, `--timeout` bounding each connection.
pub fn http_client(cli: &Cli) -> Result<HttpClient, Failure> {
    let timeout = (!cli.timeout.is_zero()).then_some(cli.timeout);
    let builder = HttpClient::builder().connect_timeout(timeout);
    let Some(path) = &cli.cacert else { return Ok(builder.build()) };
    let pem = std::fs::read(path).map_err(|err| {
        Failure::Usage(format!("--cacert {}: cannot read it: {err}", path.display()))
    })?;
    let builder = builder.root_certificate(pem).map_err(|err| {
        Failure::Usage(format!("--cacert {}: {}", path.display(), io_message(&err)))
    })?;
    Ok(builder.build())
}

/// The transport for `url` with the `--header`s applied, sending through `client`.
pub fn http_transport(cli: &Cli, url: &str, client: &HttpClient) -> Result<HttpTransport, Failure> {
    let usage = |err: modelcontext::Error| Failure::Usage(io_message(&err));
    let mut transport = HttpTransport::new(url).map_err(usage)?.http_client(client.clone());
    for header in &cli.headers {
        let (name, value) = args::split_header(header).map_err(Failure::Usage)?;
        transport = transport.header(name, value).map_err(usage)?;
    }
    Ok(transport)
}

/// Checks a URL and headers the way a request would use them, sending nothing: `mcp install`
/// writes them into a host's file, where a typo would only show when the host connects.
pub fn check_http(url: &str, headers: &[(String, String)]) -> Result<(), String> {
    let mut transport = HttpTransport::new(url).map_err(|e| io_message(&e))?;
    for (name, value) in headers {
        transport = transport.header(name, value).map_err(|e| io_message(&e))?;
    }
    Ok(())
}

/// What was wrong (with the URL or header typed, or a server that did not start): the error
/// beneath the SDK's "I/O error" layer.
pub fn io_message(err: &modelcontext::Error) -> String {
    std::error::Error::source(err).map_or_else(|| chain(err), chain)
}

/// The child's connection, watched: a line on its stdout that is not JSON-RPC is reported on
/// stderr as it arrives, since the engine only answers it (with a parse error) and moves on.
/// That line is almost always a log message printed to the wrong stream.
struct Watched(Connection);

/// Stray lines reported before the rest are only counted.
const STRAY_REPORTS: usize = 3;

impl Transport for Watched {
    fn open(self) -> Connection {
        let Connection { sender, mut receiver, shutdown } = self.0;
        let (tx, rx) = mpsc::channel(64);
        let stray = Arc::new(AtomicUsize::new(0));
        tokio::spawn(async move {
            while let Some(incoming) = receiver.recv().await {
                if let Err(err) = &incoming {
                    report_stray(&stray, err);
                }
                if tx.send(incoming).await.is_err() {
                    break;
                }
            }
        });
        Connection { sender, receiver: rx, shutdown }
    }
}

fn report_stray(count: &AtomicUsize, err: &modelcontext::types::DecodeError) {
    let seen = count.fetch_add(1, Ordering::Relaxed);
    if seen < STRAY_REPORTS {
        say!(
            "mcp: the server wrote something that is not JSON-RPC on its stdout ({err}). \
             On stdio, stdout carries protocol messages only; logs belong on stderr."
        );
    } else if seen == STRAY_REPORTS {
        say!("mcp: (more stray output from the server; not reported again)");
    }
}
