//! One function per subcommand, and how each failure becomes a message and an exit code.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use clap::Parser;
use modelcontext::Client;
use modelcontext::client::{CallOptions, Subscription};
use modelcontext::types::{
    CompleteResult, Era, PromptReference, Reference, ResourceTemplateReference, SubscriptionFilter,
    Tool,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::cli::{After, Cli, Command, RefKind};
use crate::connect::Target;
use crate::failure::{Exit, Failure};
use crate::pages::all_pages;
use crate::progress::Progress;
use crate::shell::List;
use crate::{args, login, output, print, shell, words};

/// Prints `failure` (stderr; in JSON mode a protocol error also as JSON on stdout) and
/// returns its exit code. `target` is the server the command named, when it got that far.
pub fn report(failure: Failure, json_output: bool, target: Option<&Target>) -> Exit {
    let exit = failure.exit();
    match failure {
        Failure::Closed(message) => match target.map(Target::program) {
            Some(Some(program)) => say!(
                "mcp: the server ({program}) closed the connection: its process exited \
                 or closed its stdout (its stderr, above, may say why)"
            ),
            Some(None) => say!("mcp: no connection to the server: {message}"),
            None => say!("mcp: the connection closed: {message}"),
        },
        Failure::Usage(message) => say!("mcp: {message}\nRun `mcp --help` for usage."),
        Failure::Protocol { code, message, data } => {
            if json_output {
                let mut error = json!({"code": code, "message": message});
                if let Some(data) = &data {
                    error["data"] = data.clone();
                }
                emit(&pretty(&json!({ "error": error })));
            }
            say!("mcp: the server answered with error {code}: {message}");
            if let Some(data) = data {
                say!("mcp: error data: {data}");
            }
        }
        Failure::Connection(message) | Failure::BadAnswer(message) | Failure::Other(message) => {
            say!("mcp: {message}")
        }
        Failure::Interrupted => say!("mcp: interrupted; the request was cancelled at the server"),
    }
    exit
}

/// How a command that ran to the end went.
enum Outcome {
    Success,
    ToolError,
}

/// Connects, runs the subcommand, closes, and says how it went.
pub async fn run(mut cli: Cli) -> Exit {
    if let Err(message) = cli.settle() {
        return report(Failure::Usage(message), false, None);
    }
    if let Some(result) = crate::install::run(&cli) {
        return match result {
            Ok(()) => Exit::Success,
            Err(failure) => report(failure, false, None),
        };
    }
    if let Some(result) = run_account(&cli).await {
        return match result {
            Ok(()) => Exit::Success,
            Err(failure) => report(failure, false, None),
        };
    }
    if let Command::Ui { .. } = cli.command {
        return match run_ui(cli).await {
            Ok(()) => Exit::Success,
            Err(failure) => report(failure, false, None),
        };
    }
    let json_output = cli.json;
    let target = match Target::from_cli(&cli) {
        Ok(target) => target,
        Err(failure) => return report(failure, json_output, None),
    };
    let result = async {
        check_arguments(&cli.command)?;
        // The shell keeps its lists current from the server's list_changed notifications.
        let (hook, changes) = match cli.command {
            Command::Shell { .. } => {
                let (hook, changes) = shell::list_changes();
                (Some(hook), Some(changes))
            }
            _ => (None, None),
        };
        let started = Instant::now();
        let client = target.connect(&cli, hook).await?;
        let connected = started.elapsed();
        let run = async {
            match changes {
                Some(changes) => shell(&client, changes, json_output).await,
                None => execute(&client, &cli.command, json_output, connected).await,
            }
        };
        // Ctrl-C drops the request's future, which sends the server notifications/cancelled;
        // closing the client below flushes it before the process ends.
        let outcome = tokio::select! {
            outcome = run => outcome,
            // Listening lasts until interrupted: that is its normal end.
            _ = tokio::signal::ctrl_c() => match cli.command {
                Command::Listen { .. } => Ok(Outcome::Success),
                _ => Err(Failure::Interrupted),
            },
        };
        // Closing lets a child server exit on end of input instead of being killed.
        let _ = tokio::time::timeout(Duration::from_secs(5), client.close()).await;
        outcome
    };
    match result.await {
        Ok(Outcome::Success) => Exit::Success,
        Ok(Outcome::ToolError) => Exit::ToolError,
        Err(failure) => {
            let hint = login::refusal_hint(&cli, &failure);
            let exit = report(failure, json_output, Some(&target));
            if let Some(hint) = hint {
                say!("mcp: {hint}");
            }
            exit
        }
    }
}

/// `ui`: the inspector serves until Ctrl-C.
async fn run_ui(cli: Cli) -> Result<(), Failure> {
    let Command::Ui { no_open, port, .. } = cli.command else { return Ok(()) };
    let options = crate::ui::UiOptions { no_open: no_open || login::no_browser_env(), port };
    crate::ui::run(cli, options).await
}

/// `login` and `logout`, which manage stored tokens rather than run one command on a server.
async fn run_account(cli: &Cli) -> Option<Result<(), Failure>> {
    let (Command::Login { .. } | Command::Logout { .. }) = &cli.command else {
        return None;
    };
    let configured = match configured_url(cli) {
        Ok(configured) => configured,
        Err(message) => return Some(Err(Failure::Usage(message))),
    };
    let url = match (&cli.url, configured.as_ref()) {
        _ if cli.stdio.is_some() || cli.stdio_words.is_some() => {
            Err("login and logout are for HTTP servers, not --stdio")
        }
        (Some(_), Some(_)) => Err("give either a URL or --config, not both"),
        (Some(url), None) | (None, Some(url)) => Ok(url.as_str()),
        (None, None) => Err("say which server: mcp login URL"),
    };
    let url = match url {
        Ok(url) => url,
        Err(message) => return Some(Err(Failure::Usage(message.into()))),
    };
    Some(match &cli.command {
        Command::Login { no_browser, wait, client_metadata_url, .. } => {
            let options = login::LoginOptions {
                no_browser: *no_browser,
                wait: *wait,
                client_metadata_url: client_metadata_url.clone(),
            };
            login::login(cli, url, options).await
        }
        _ => login::logout(cli, url).await,
    })
}

/// The URL of the `--config` entry `--server` names, for `login` and `logout`.
fn configured_url(cli: &Cli) -> Result<Option<String>, String> {
    let Some(path) = &cli.config else { return Ok(None) };
    match crate::config::load(path, cli.server.as_deref())? {
        crate::config::Entry::Http { url, .. } => Ok(Some(url)),
        crate::config::Entry::Stdio { .. } => {
            Err("login and logout are for HTTP servers; that --config entry is a command".into())
        }
    }
}

/// Mistakes in KEY=VALUE syntax are found before a server is started.
fn check_arguments(command: &Command) -> Result<(), Failure> {
    let pairs = match command {
        Command::Call { arguments, .. } | Command::Get { arguments, .. } => arguments.as_slice(),
        Command::Complete { argument, .. } => std::slice::from_ref(argument),
        _ => &[],
    };
    args::string_pairs(pairs).map(drop).map_err(Failure::Usage)
}

/// Runs one subcommand on a connected client. One arm per subcommand: the dispatch reads best
/// as a single match, so it runs past the usual length; arms with more to do call a function.
async fn execute(
    client: &Client,
    command: &Command,
    json_output: bool,
    connected: Duration,
) -> Result<Outcome, Failure> {
    let sdk = Failure::from_sdk;
    let print = |value: Value, human: String| {
        match (json_output, human.is_empty()) {
            (true, _) => emit(&pretty(&value)),
            (false, false) => emit(&human),
            (false, true) => say!("mcp: (the server returned nothing)"),
        }
        Ok(Outcome::Success)
    };
    match command {
        Command::Tools(_) => {
            let tools = client.list_all_tools().await.map_err(sdk)?;
            print(json!({"tools": tools}), output::tools(&tools))
        }
        Command::Call { tool, arguments, object, .. } => {
            call(client, tool, arguments, object.as_deref(), json_output).await
        }
        Command::Listen { resources, .. } => listen(client, resources, json_output).await,
        Command::Resources(_) => {
            let resources =
                all_pages(|c| client.list_resources(c), |p| (p.resources, p.next_cursor)).await?;
            print(json!({"resources": resources}), output::resources(&resources))
        }
        Command::Templates(_) => {
            let templates = all_pages(
                |c| client.list_resource_templates(c),
                |p| (p.resource_templates, p.next_cursor),
            )
            .await?;
            print(json!({"resourceTemplates": templates}), output::templates(&templates))
        }
        Command::Prompts(_) => {
            let prompts =
                all_pages(|c| client.list_prompts(c), |p| (p.prompts, p.next_cursor)).await?;
            print(json!({"prompts": prompts}), output::prompts(&prompts))
        }
        Command::Read { uri, .. } => {
            let result = client.read_resource_with(uri, &progress_options()).await.map_err(sdk)?;
            print(to_json(&result), output::contents(&result.contents))
        }
        Command::Get { prompt, arguments, .. } => {
            let arguments = args::string_pairs(arguments).map_err(Failure::Usage)?;
            let result = client
                .get_prompt_with(prompt, arguments, &progress_options())
                .await
                .map_err(sdk)?;
            print(to_json(&result), output::messages(&result.messages))
        }
        Command::Complete { kind, name, argument, .. } => {
            let result = complete(client, *kind, name, argument).await?;
            let human = result.completion.values.iter().map(|v| format!("{v}\n")).collect();
            print(to_json(&result), human)
        }
        Command::Discover(_) => {
            let (value, human) = output::discover(client);
            print(value, human)
        }
        Command::Ping(_) => ping(client, connected, json_output).await,
        Command::Skills { action, .. } => {
            let printed = crate::skills::run(client, action.as_ref()).await?;
            print(printed.json, printed.human)
        }
        // Handled before any connection, or by `run` itself (the shell).
        Command::Shell { .. }
        | Command::Login { .. }
        | Command::Logout { .. }
        | Command::Completions { .. }
        | Command::Install { .. }
        | Command::Uninstall { .. }
        | Command::Serve { .. }
        | Command::Ui { .. } => Ok(Outcome::Success),
    }
}

/// `call`: the schema types the KEY=VALUE pairs, progress goes to stderr, and a tool error is
/// shown on stderr with exit code 2.
async fn call(
    client: &Client,
    tool: &str,
    pairs: &[String],
    base: Option<&str>,
    json_output: bool,
) -> Result<Outcome, Failure> {
    let schema =
        if pairs.is_empty() { Default::default() } else { input_schema(client, tool).await? };
    call_typed(client, tool, &schema, pairs, base, json_output).await
}

/// `call` with the tool's input schema at hand: the schema types the KEY=VALUE pairs.
async fn call_typed(
    client: &Client,
    tool: &str,
    schema: &serde_json::Map<String, Value>,
    pairs: &[String],
    base: Option<&str>,
    json_output: bool,
) -> Result<Outcome, Failure> {
    let arguments = args::tool_arguments(schema, base, pairs).map_err(Failure::Usage)?;
    if let args::UnknownKey::Suspect(warning) =
        args::check_keys(schema, &arguments).map_err(Failure::Usage)?
    {
        say!("mcp: {warning}");
    }
    let result = client
        .call_tool_with(tool, arguments, &progress_options())
        .await
        .map_err(Failure::from_sdk)?;
    let mut human = output::content(&result.content);
    if let (true, Some(structured)) = (result.content.is_empty(), &result.structured_content) {
        human = format!("{structured:#}\n");
    }
    if json_output {
        emit(&pretty(&to_json(&result)));
    } else if result.is_error() {
        say!("mcp: the tool {tool:?} reported an error:\n{}", human.trim_end_matches('\n'));
    } else {
        emit(&human);
    }
    Ok(if result.is_error() { Outcome::ToolError } else { Outcome::Success })
}

/// `listen`: every list change the server offers and updates of `resources`, one line each
/// (one JSON object each with `--json`), until the stream ends or Ctrl-C.
async fn listen(
    client: &Client,
    resources: &[String],
    json_output: bool,
) -> Result<Outcome, Failure> {
    let mut filter = SubscriptionFilter::default()
        .with_tools_list_changed(true)
        .with_prompts_list_changed(true)
        .with_resources_list_changed(true);
    if !resources.is_empty() {
        filter = filter.with_resource_subscriptions(resources.to_vec());
    }
    let mut subscription = client.listen(filter).await.map_err(Failure::from_sdk)?;
    let agreed = serde_json::to_string(subscription.agreed()).unwrap_or_default();
    say!("mcp: listening for {agreed}; Ctrl-C stops");
    while let Some(notification) = subscription.next().await {
        let params = notification.params().map(|raw| raw.get().to_owned());
        if json_output {
            let params: Value =
                params.and_then(|p| serde_json::from_str(&p).ok()).unwrap_or_default();
            emit(&format!("{}\n", json!({"method": notification.method(), "params": params})));
        } else {
            emit(&format!("{}\n", output::notification(&notification)));
        }
    }
    say!("mcp: the server ended the stream");
    Ok(Outcome::Success)
}

/// One line of `mcp shell`: a subcommand and its arguments, as on the command line.
#[derive(Debug, clap::Parser)]
#[command(name = "mcp>", no_binary_name = true, disable_version_flag = true)]
struct ShellLine {
    #[command(subcommand)]
    command: Command,
}

/// `shell`: each line is split like `--stdio` (quotes, no shell), parsed as a subcommand and
/// run on this connection; a failure is reported and the session goes on. At a terminal the
/// line editor keeps history and completes with Tab (`shell::Lines`) from lists fetched once
/// at the start and again only when the server says one changed (`changes`), even while the
/// person is typing.
async fn shell(
    client: &Client,
    changes: mpsc::UnboundedReceiver<List>,
    json_output: bool,
) -> Result<Outcome, Failure> {
    say!(
        "mcp: one subcommand a line (tools, call NAME KEY=VALUE, read URI, help); exit or Ctrl-D ends"
    );
    let known = shell::Known { subcommands: shell_subcommands(), ..Default::default() };
    let known = Arc::new(Mutex::new(known));
    let mut lines = shell::Lines::new(Arc::clone(&known));
    let completes = lines.completes();
    let mut session = ShellSession { client, known, tools: None, completes, changes };
    let mut stream = session.listen().await;
    if completes {
        session.refresh(&List::ALL).await;
    }
    loop {
        let changed = session.changed();
        session.refresh(&changed).await;
        let read = lines.next("mcp> ");
        tokio::pin!(read);
        let (next, line) = loop {
            tokio::select! {
                read = &mut read => break read,
                Some(list) = session.changes.recv() => session.refresh(&[list]).await,
                () = discard_next(&mut stream) => {}
            }
        };
        lines = next;
        let Some(line) = line else { break };
        let line = line.trim();
        if line == "exit" || line == "quit" {
            break;
        }
        if !line.is_empty() {
            session.run_line(line, json_output).await;
        }
    }
    Ok(Outcome::Success)
}

/// The subcommands a shell line can start with.
fn shell_subcommands() -> Vec<String> {
    use clap::CommandFactory;
    let mut subcommands: Vec<String> = ShellLine::command()
        .get_subcommands()
        .map(|sub| sub.get_name().to_owned())
        .filter(|name| {
            !["shell", "ui", "login", "logout", "completions", "install", "uninstall"]
                .contains(&name.as_str())
        })
        .collect();
    subcommands.extend(["help", "exit", "quit"].map(String::from));
    subcommands
}

/// Subcommands the shell does not run: they connect on their own or need no connection.
fn outside_the_shell(command: &Command) -> bool {
    matches!(
        command,
        Command::Shell { .. }
            | Command::Ui { .. }
            | Command::Serve { .. }
            | Command::Login { .. }
            | Command::Logout { .. }
            | Command::Completions { .. }
            | Command::Install { .. }
            | Command::Uninstall { .. }
    )
}

/// Waits for the next notification of the modern era's listen stream and drops it: the
/// stream is open only so the server sends list changes at all, and the notification hook
/// has already seen them. Never finishes without a stream.
async fn discard_next(stream: &mut Option<Subscription>) {
    let Some(subscription) = stream else { return std::future::pending().await };
    if subscription.next().await.is_none() {
        *stream = None;
    }
}

/// `mcp shell`'s state across lines: what Tab completes, and the tools `call` types its
/// arguments by, each listed again only when the server says it changed.
struct ShellSession<'a> {
    client: &'a Client,
    known: shell::SharedKnown,
    /// The tools as last listed: `None` until a call needs them (or Tab, at a terminal), and
    /// again after `notifications/tools/list_changed`.
    tools: Option<Vec<Tool>>,
    /// Whether Tab completes: then every list is kept current, else only the tools are
    /// fetched, and only when a call needs their schema.
    completes: bool,
    /// Which lists the server said changed, from the notification hook.
    changes: mpsc::UnboundedReceiver<List>,
}

impl ShellSession<'_> {
    /// The modern era's server sends list changes only on a `subscriptions/listen` stream;
    /// in the handshake era they come anyway. A server that refuses the stream is used as
    /// it is (a call naming a tool not yet listed lists again).
    async fn listen(&self) -> Option<Subscription> {
        if self.client.era() != Era::Modern {
            return None;
        }
        let filter = SubscriptionFilter::default()
            .with_tools_list_changed(true)
            .with_prompts_list_changed(true)
            .with_resources_list_changed(true);
        self.client.listen(filter).await.ok()
    }

    /// The lists said to have changed since the last look, each once.
    fn changed(&mut self) -> Vec<List> {
        let mut lists = Vec::new();
        while let Ok(list) = self.changes.try_recv() {
            if !lists.contains(&list) {
                lists.push(list);
            }
        }
        lists
    }

    /// Lists again what changed. A failure only leaves those names out of completion.
    async fn refresh(&mut self, lists: &[List]) {
        let client = self.client;
        let capabilities = client.server_capabilities();
        for list in lists {
            match list {
                List::Tools => {
                    self.tools = None;
                    if self.completes && capabilities.tools.is_some() {
                        let _ = self.tools().await;
                    }
                }
                List::Prompts if self.completes && capabilities.prompts.is_some() => {
                    let prompts =
                        all_pages(|c| client.list_prompts(c), |p| (p.prompts, p.next_cursor));
                    if let Ok(prompts) = prompts.await {
                        self.known().set_prompts(&prompts);
                    }
                }
                List::Resources if self.completes && capabilities.resources.is_some() => {
                    let resources =
                        all_pages(|c| client.list_resources(c), |p| (p.resources, p.next_cursor));
                    if let Ok(resources) = resources.await {
                        self.known().resources = resources.into_iter().map(|r| r.uri).collect();
                    }
                }
                List::Prompts | List::Resources => {}
            }
        }
    }

    fn known(&self) -> MutexGuard<'_, shell::Known> {
        self.known.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The tools, listed if they are not at hand.
    async fn tools(&mut self) -> Result<&[Tool], Failure> {
        if self.tools.is_none() {
            let tools = self.client.list_all_tools().await.map_err(Failure::from_sdk)?;
            self.known().set_tools(&tools);
            self.tools = Some(tools);
        }
        Ok(self.tools.as_deref().unwrap_or_default())
    }

    /// `tool`'s input schema from the tools at hand; listed again when `tool` is not among
    /// them (a server may add one without saying so), empty when it is still missing.
    async fn input_schema(
        &mut self,
        tool: &str,
    ) -> Result<serde_json::Map<String, Value>, Failure> {
        if !self.tools().await?.iter().any(|t| t.name == tool) {
            self.tools = None;
        }
        let tools = self.tools().await?;
        Ok(tools
            .iter()
            .find(|t| t.name == tool)
            .map(|t| t.input_schema.clone())
            .unwrap_or_default())
    }

    /// Parses and runs one non-empty line, reporting any failure on stderr.
    async fn run_line(&mut self, line: &str, json_output: bool) {
        let words = match words::split(line) {
            Ok(words) => words,
            Err(problem) => return say!("mcp: {problem}"),
        };
        let mut command = match ShellLine::try_parse_from(words) {
            Ok(parsed) => parsed.command,
            Err(err) => return drop(err.print()),
        };
        if outside_the_shell(&command) {
            return say!("mcp: not inside the shell");
        }
        let json_output = match command.take_trailing() {
            Ok(After { url: None, json }) => json_output || json,
            Ok(After { url: Some(url), .. }) => {
                return say!("mcp: the shell talks to the server it started with, not {url}");
            }
            Err(message) => return say!("mcp: {message}"),
        };
        let outcome = match &command {
            Command::Call { tool, arguments, object, .. } if !arguments.is_empty() => {
                match self.input_schema(tool).await {
                    Ok(schema) => {
                        let base = object.as_deref();
                        call_typed(self.client, tool, &schema, arguments, base, json_output).await
                    }
                    Err(failure) => Err(failure),
                }
            }
            _ => execute(self.client, &command, json_output, Duration::ZERO).await,
        };
        if let Err(failure) = outcome {
            report(failure, json_output, None);
        }
    }
}

/// The tool's input schema, or an empty one (everything a string) when the server does not
/// list the tool: the call then fails with the server's own message.
async fn input_schema(
    client: &Client,
    tool: &str,
) -> Result<serde_json::Map<String, Value>, Failure> {
    let tools = client.list_all_tools().await.map_err(Failure::from_sdk)?;
    Ok(tools.into_iter().find(|t| t.name == tool).map(|t| t.input_schema).unwrap_or_default())
}

/// `completion/complete` for an argument of a prompt or a resource template.
async fn complete(
    client: &Client,
    kind: RefKind,
    name: &str,
    argument: &str,
) -> Result<CompleteResult, Failure> {
    let (argument, partial) = args::split_pair(argument).map_err(Failure::Usage)?;
    let reference = match kind {
        RefKind::Prompt => Reference::Prompt(PromptReference::new(name)),
        RefKind::Resource => Reference::Resource(ResourceTemplateReference::new(name)),
    };
    client.complete(reference, (argument, partial)).await.map_err(Failure::from_sdk)
}

/// `ping` in the handshake era; 2026-07-28 removed it, so there the answer to the
/// `server/discover` that opened the connection is the sign of life.
async fn ping(client: &Client, connected: Duration, json_output: bool) -> Result<Outcome, Failure> {
    let (method, elapsed) = if client.era() == Era::Modern {
        ("server/discover", connected)
    } else {
        let started = Instant::now();
        client.ping().await.map_err(Failure::from_sdk)?;
        ("ping", started.elapsed())
    };
    let millis = elapsed.as_secs_f64() * 1000.0;
    if json_output {
        emit(&pretty(&json!({"ok": true, "method": method, "milliseconds": millis})));
    } else {
        emit(&format!("ok: {method} answered in {millis:.1} ms\n"));
    }
    Ok(Outcome::Success)
}

/// Per-call options: progress updates go to stderr as they come.
fn progress_options() -> CallOptions {
    Progress::start().options()
}

/// Writes to stdout; a closed pipe (`mcp tools | head`) ends the command quietly.
fn emit(text: &str) {
    print::stdout(text);
}

/// Pretty-printed JSON and a newline.
fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// Any result as JSON (results always serialize; `Null` is never printed in practice).
fn to_json(value: impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or_default()
}
