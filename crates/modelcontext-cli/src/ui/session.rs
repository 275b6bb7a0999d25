//! The UI's side of the connection: one SDK client at a time, the questions the server asks
//! the person (answered from the page), the roots the page edits, and the requests in flight
//! (cancellable from the page).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use modelcontext::client::ClientBuilder;
use modelcontext::types::{
    CreateMessageResult, ElicitResult, ErrorCode, LoggingLevel, Notification, Root,
};
use modelcontext::{Client, McpError};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::{AbortHandle, JoinHandle};

use super::events::Events;
use super::started::Started;
use super::views::Views;
use crate::cli::{Cli, EraArg};
use crate::connect::{Target, base_builder};
use crate::failure::Failure;
use crate::login::{self, ShowUrl};
use crate::verbose::{Direction, Sink};

/// The spec's code for a sampling request the user rejected.
const USER_REJECTED: ErrorCode = ErrorCode(-1);

/// The person's answer to a question: a result to send the server, or why they refused.
type Reply = Result<Value, String>;

/// Questions from the server waiting for the page's answer, by number.
type Questions = Arc<Mutex<HashMap<u64, oneshot::Sender<Reply>>>>;

/// Everything the API handlers share.
pub struct Session {
    /// The command line: timeouts, `--cacert`, `-H`, `--token-env` for servers reached by URL.
    pub cli: Cli,
    pub events: Events,
    client: Mutex<Option<Arc<Client>>>,
    /// What the client is connected to, for the page's header.
    target: Mutex<Value>,
    /// Questions from the server waiting for the page's answer, by number.
    questions: Questions,
    next_question: Arc<AtomicU64>,
    /// Requests the page may cancel, by the page's name for them.
    in_flight: Mutex<HashMap<String, AbortHandle>>,
    roots: Arc<Mutex<Vec<Root>>>,
    /// The `listen` stream the page opened, if any.
    listening: Mutex<Option<JoinHandle<()>>>,
    /// The MCP Apps views the page asked for, served at `/view/N`.
    pub views: Views,
    /// The tasks the page started.
    pub tasks: Started,
}

/// A lock that a panicked holder did not spoil: the data are plain values.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// How to reach a server, as the page's connect form (or the command line) says.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectRequest {
    /// `stdio` or `http`.
    pub transport: String,
    /// stdio: the program and its arguments.
    #[serde(default)]
    pub command: Vec<String>,
    #[serde(default)]
    pub env: Vec<(String, String)>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// http: the endpoint and extra headers.
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// `auto`, `handshake` or `modern`.
    #[serde(default)]
    pub era: Option<String>,
    /// The lowest level of server log message to ask for.
    #[serde(default)]
    pub log_level: Option<LoggingLevel>,
}

impl Session {
    pub fn new(cli: Cli) -> Session {
        let roots = crate::ask::roots(&cli.roots).unwrap_or_default();
        Session {
            cli,
            events: Events::default(),
            client: Mutex::new(None),
            target: Mutex::new(Value::Null),
            questions: Arc::default(),
            next_question: Arc::default(),
            in_flight: Mutex::default(),
            roots: Arc::new(Mutex::new(roots)),
            listening: Mutex::default(),
            views: Views::default(),
            tasks: Started::default(),
        }
    }

    /// The connected client, or why there is none.
    pub fn client(&self) -> Result<Arc<Client>, Failure> {
        lock(&self.client).clone().ok_or_else(|| Failure::Usage("not connected to a server".into()))
    }

    /// Connects as `request` says, replacing (and closing) any earlier connection.
    pub async fn connect(&self, request: &ConnectRequest) -> Result<(), Failure> {
        let target = self.target_of(request)?;
        let era = match request.era.as_deref().unwrap_or("auto") {
            "auto" => EraArg::Auto,
            "handshake" => EraArg::Handshake,
            "modern" => EraArg::Modern,
            other => return Err(Failure::Usage(format!("unknown era {other:?}"))),
        };
        self.disconnect().await;
        let timeout = (!self.cli.timeout.is_zero()).then_some(self.cli.timeout);
        // The page renders MCP Apps views, so it says so: servers may then link them.
        let mut builder = self.install(base_builder(era, timeout).apps());
        if let Some(level) = request.log_level.or(self.cli.log_level) {
            builder = builder.log_level(level);
        }
        self.events.push("connecting", json!({"target": describe(request)}));
        let client = match target.open(builder, Some(self.tap())).await {
            Ok(client) => client,
            Err(failure) => {
                self.events.push("disconnected", json!({"error": failure.describe()}));
                return Err(failure);
            }
        };
        *lock(&self.target) = describe(request);
        *lock(&self.client) = Some(Arc::new(client));
        self.events.push("connected", self.info());
        Ok(())
    }

    /// Closes the connection, if there is one: a child server sees end of input.
    pub async fn disconnect(&self) {
        if let Some(task) = lock(&self.listening).take() {
            task.abort();
        }
        self.tasks.clear();
        let Some(client) = lock(&self.client).take() else { return };
        *lock(&self.target) = Value::Null;
        self.events.push("disconnected", json!({}));
        // Requests still running hold their own `Arc`; the connection closes with the last.
        if let Ok(client) = Arc::try_unwrap(client) {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), client.close()).await;
        }
    }

    fn target_of(&self, request: &ConnectRequest) -> Result<Target, Failure> {
        match request.transport.as_str() {
            "stdio" => {
                if request.command.first().is_none_or(|program| program.is_empty()) {
                    return Err(Failure::Usage("a stdio server needs a command".into()));
                }
                Ok(Target::Stdio(crate::connect::StdioCommand {
                    words: request.command.clone(),
                    env: request.env.clone(),
                    cwd: request.cwd.clone().filter(|dir| !dir.is_empty()).map(Into::into),
                }))
            }
            "http" => Target::http(&self.cli, &request.url, request.headers.clone()),
            other => Err(Failure::Usage(format!("unknown transport {other:?}: stdio or http"))),
        }
    }

    /// What negotiation learned, and what we are connected to; `host` names this program
    /// for the MCP Apps views the page renders (their `hostInfo`).
    pub fn info(&self) -> Value {
        let host = json!({"name": "mcp", "version": env!("CARGO_PKG_VERSION")});
        let Ok(client) = self.client() else {
            return json!({"connected": false, "roots": *lock(&self.roots), "host": host});
        };
        let (mut info, _) = crate::output::discover(&client);
        info["connected"] = json!(true);
        info["host"] = host;
        info["target"] = lock(&self.target).clone();
        info["roots"] = json!(*lock(&self.roots));
        info
    }

    /// Every message both ways goes to the page's message pane.
    fn tap(&self) -> Sink {
        let events = self.events.clone();
        Arc::new(move |direction, text| {
            let message: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
            let direction = if direction == Direction::Sent { "sent" } else { "received" };
            events.push("message", json!({"direction": direction, "message": message}));
        })
    }

    /// The callbacks that carry the server's notifications and questions to the page.
    fn install(&self, builder: ClientBuilder) -> ClientBuilder {
        let events = self.events.clone();
        let builder = builder.on_notification(move |notification| notify(&events, notification));
        let ask = self.asker();
        let builder = builder.on_elicit(move |params| {
            let ask = ask.clone();
            async move { ask.ask::<ElicitResult>("elicit", json!(params)).await }
        });
        let ask = self.asker();
        let builder = builder.on_sample(move |params| {
            let ask = ask.clone();
            async move { ask.ask::<CreateMessageResult>("sample", json!(params)).await }
        });
        let roots = Arc::clone(&self.roots);
        builder.on_roots(move || {
            let roots = lock(&roots).clone();
            async move { Ok(roots) }
        })
    }

    fn asker(&self) -> Asker {
        Asker {
            events: self.events.clone(),
            questions: Arc::clone(&self.questions),
            next: Arc::clone(&self.next_question),
        }
    }

    /// The page's answer to question `id`: a result, or a refusal with its reason.
    pub fn answer(&self, id: u64, answer: Reply) -> Result<(), Failure> {
        let waiting = lock(&self.questions).remove(&id);
        let waiting = waiting
            .ok_or_else(|| Failure::Usage(format!("no question {id} is waiting (answered?)")))?;
        let _ = waiting.send(answer);
        self.events.push("answered", json!({"id": id}));
        Ok(())
    }

    /// Runs `request` under the page's name `name`, so [`Session::cancel`] can stop it; `None`
    /// when it was cancelled.
    pub async fn cancellable<T: Send + 'static>(
        &self,
        name: String,
        request: impl Future<Output = T> + Send + 'static,
    ) -> Result<Option<T>, Failure> {
        let task = tokio::spawn(request);
        lock(&self.in_flight).insert(name.clone(), task.abort_handle());
        let outcome = task.await;
        lock(&self.in_flight).remove(&name);
        match outcome {
            Ok(value) => Ok(Some(value)),
            Err(err) if err.is_cancelled() => Ok(None),
            Err(err) => Err(Failure::Other(format!("the request failed: {err}"))),
        }
    }

    /// Stops the request named `name`: dropping it sends the server `notifications/cancelled`.
    pub fn cancel(&self, name: &str) -> bool {
        lock(&self.in_flight).remove(name).map(|task| task.abort()).is_some()
    }

    /// Replaces the roots and tells the server they changed.
    pub async fn set_roots(&self, roots: Vec<Root>) -> Result<(), Failure> {
        *lock(&self.roots) = roots;
        match self.client() {
            Ok(client) => client.notify_roots_changed().await.map_err(Failure::from_sdk),
            Err(_) => Ok(()),
        }
    }

    /// Opens a `listen` stream for list changes and `resources` (replacing any earlier one);
    /// what it delivers becomes `listened` events.
    pub async fn listen(&self, resources: Vec<String>) -> Result<Value, Failure> {
        use modelcontext::types::SubscriptionFilter;
        if let Some(task) = lock(&self.listening).take() {
            task.abort();
        }
        let client = self.client()?;
        let mut filter = SubscriptionFilter::default()
            .with_tools_list_changed(true)
            .with_prompts_list_changed(true)
            .with_resources_list_changed(true);
        if !resources.is_empty() {
            filter = filter.with_resource_subscriptions(resources);
        }
        let mut subscription = client.listen(filter).await.map_err(Failure::from_sdk)?;
        let agreed = json!(subscription.agreed());
        let events = self.events.clone();
        let task = tokio::spawn(async move {
            while let Some(notification) = subscription.next().await {
                let params: Value = (notification.params())
                    .and_then(|raw| serde_json::from_str(raw.get()).ok())
                    .unwrap_or_default();
                events.push("listened", json!({"method": notification.method(), "params": params}));
            }
        });
        *lock(&self.listening) = Some(task);
        Ok(json!({"agreed": agreed}))
    }
}

/// A server notification as an event: `log` for `notifications/message`, else `notification`.
fn notify(events: &Events, notification: Notification) {
    let params: Value = (notification.params.as_deref())
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
        .unwrap_or_default();
    if notification.method == "notifications/message" {
        events.push("log", params);
    } else {
        events.push("notification", json!({"method": notification.method, "params": params}));
    }
}

/// Asks the page a question and waits for its answer.
#[derive(Clone)]
struct Asker {
    events: Events,
    questions: Questions,
    next: Arc<AtomicU64>,
}

impl Asker {
    /// Shows the question (`elicit` or `sample`) on the page and waits for the answer, which
    /// must parse as `T`. A refusal from the person is the spec's "user rejected" error.
    async fn ask<T: DeserializeOwned>(&self, kind: &str, params: Value) -> Result<T, McpError> {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (answer, answered) = oneshot::channel();
        lock(&self.questions).insert(id, answer);
        self.events.push("question", json!({"id": id, "kind": kind, "params": params}));
        match answered.await {
            Ok(Ok(value)) => serde_json::from_value(value).map_err(|err| {
                McpError::internal(format!("the page's answer is malformed: {err}"))
            }),
            Ok(Err(reason)) => Err(McpError::new(USER_REJECTED, reason)),
            Err(_) => Err(McpError::internal("the UI closed before the question was answered")),
        }
    }
}

/// How long a login from the page waits for the browser to come back from the authorization
/// server (as `mcp login`'s default `--wait`).
const LOGIN_WAIT: std::time::Duration = std::time::Duration::from_secs(300);

impl Session {
    /// Logs in to the server at `url` behind OAuth, as `mcp login` does (the tokens go to the
    /// same file, where connecting to `url` finds them): the authorization URL becomes a
    /// `login` event the page shows as a link, and the browser's redirect comes back to a
    /// loopback listener of the login's own.
    pub async fn login(&self, url: &str, headers: &[(String, String)]) -> Result<Value, Failure> {
        let events = self.events.clone();
        let show: ShowUrl =
            Arc::new(move |auth_url| events.push("login", json!({"url": auth_url})));
        let logged_in = login::login_with(&self.cli, url, headers, LOGIN_WAIT, None, show).await?;
        Ok(json!({"issuer": logged_in.issuer, "file": logged_in.file}))
    }
}

/// A short description of a target for the page: the command or the URL.
fn describe(request: &ConnectRequest) -> Value {
    match request.transport.as_str() {
        "stdio" => json!({"transport": "stdio", "command": request.command}),
        _ => json!({"transport": "http", "url": request.url}),
    }
}
