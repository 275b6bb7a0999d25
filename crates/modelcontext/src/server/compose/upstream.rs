//! One upstream server behind a composed server: its connection, made again when it breaks,
//! the calls waiting on it, and what it announces.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use modelcontext_types::{
    Implementation, LoggingLevel, LoggingMessageNotificationParams, McpError, SubscriptionFilter,
    method,
};
use tokio::sync::{broadcast, mpsc, watch};

use super::callers::{Callers, ask_caller};
use crate::client::{Client, ClientBuilder};
use crate::{Error, ErrorKind};

/// How an [`Upstream`] makes its connection: it is given a [`ClientBuilder`] that already
/// routes the upstream's questions and notifications, and connects it over any transport.
type Connector =
    Arc<dyn Fn(ClientBuilder) -> BoxFuture<'static, Result<Client, Error>> + Send + Sync>;

/// Another MCP server a composed server takes tools, resources and prompts from, through a
/// [`Client`] it connects and, when the connection breaks, connects again (with backoff).
///
/// ```no_run
/// use modelcontext::server::compose::Upstream;
/// use modelcontext::transport::ChildProcess;
///
/// # async fn run() -> Result<(), modelcontext::Error> {
/// let books = Upstream::builder("books", |client| async move {
///     client.connect(ChildProcess::new("bookshop").spawn()?).await
/// })
/// .connect()
/// .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Upstream {
    pub(super) shared: Arc<Shared>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream").field("name", &self.shared.name).finish_non_exhaustive()
    }
}

/// An [`Upstream`] being configured ([`Upstream::builder`]).
pub struct UpstreamBuilder {
    name: String,
    connector: Connector,
    options: UpstreamOptions,
}

impl std::fmt::Debug for UpstreamBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamBuilder").field("name", &self.name).finish_non_exhaustive()
    }
}

#[derive(Clone, Debug)]
struct UpstreamOptions {
    call_timeout: Duration,
    first_retry: Duration,
    longest_retry: Duration,
    ping_interval: Duration,
    failures_to_open: u32,
    open_for: Duration,
}

impl Default for UpstreamOptions {
    fn default() -> Self {
        UpstreamOptions {
            call_timeout: Duration::from_secs(60),
            first_retry: Duration::from_millis(100),
            longest_retry: Duration::from_secs(10),
            ping_interval: Duration::from_secs(15),
            failures_to_open: 5,
            open_for: Duration::from_secs(10),
        }
    }
}

/// What an upstream announces, for the composed servers that mount it.
#[derive(Clone, Debug)]
pub(super) enum Announcement {
    ToolsChanged,
    PromptsChanged,
    ResourcesChanged,
    /// A new connection replaced a broken one: what it serves may differ.
    Reconnected,
}

/// The connection as calls find it.
#[derive(Clone)]
enum Link {
    Up(Arc<Client>),
    Restarting,
}

pub(super) struct Shared {
    pub name: String,
    connector: Connector,
    options: UpstreamOptions,
    link: watch::Sender<Link>,
    pub callers: Callers,
    announcements: broadcast::Sender<Announcement>,
    /// The last ping (or the connection, before the first ping) succeeded.
    healthy: AtomicBool,
    breaker: Breaker,
    /// List changes announced so far, counted on the connection's loop as they arrive, so a
    /// call's answer that follows one counts it already.
    announced: AtomicU64,
    /// The announcements the mounts have imported (the count when their last import began).
    imported: watch::Sender<u64>,
    /// Mounts following the announcements: with none, nothing imports and nobody waits.
    followers: AtomicUsize,
}

impl UpstreamBuilder {
    /// How long a call may take, including a wait for a restart (default 60 s). A call that
    /// takes longer is cancelled upstream and fails.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.options.call_timeout = timeout;
        self
    }

    /// How often the upstream is pinged for [`Upstream::is_healthy`] (default 15 s). A ping
    /// that finds the connection closed starts a restart.
    pub fn ping_interval(mut self, interval: Duration) -> Self {
        self.options.ping_interval = interval;
        self
    }

    /// The circuit breaker: after `failures` calls in a row fail for want of an answer
    /// (closed connection, timeout), calls fail at once for `open_for` (default 5 and 10 s).
    pub fn circuit_breaker(mut self, failures: u32, open_for: Duration) -> Self {
        self.options.failures_to_open = failures.max(1);
        self.options.open_for = open_for;
        self
    }

    /// The backoff between reconnection attempts: it starts at `first` and doubles up to
    /// `longest` (default 100 ms and 10 s).
    pub fn restart_backoff(mut self, first: Duration, longest: Duration) -> Self {
        self.options.first_retry = first;
        self.options.longest_retry = longest.max(first);
        self
    }

    /// Connects for the first time; an error here is the connector's.
    pub async fn connect(self) -> Result<Upstream, Error> {
        let (announcements, _) = broadcast::channel(64);
        let shared = Arc::new(Shared {
            name: self.name,
            connector: self.connector,
            options: self.options,
            link: watch::Sender::new(Link::Restarting),
            callers: Callers::default(),
            announcements,
            healthy: AtomicBool::new(false),
            breaker: Breaker::default(),
            announced: AtomicU64::new(0),
            imported: watch::Sender::new(0),
            followers: AtomicUsize::new(0),
        });
        let client = Shared::open(&shared).await?;
        Shared::go_up(&shared, client);
        tokio::spawn(keep_pinging(Arc::downgrade(&shared)));
        Ok(Upstream { shared })
    }
}

impl Upstream {
    /// An upstream named `name` (in logs and errors), connected by `connector`.
    pub fn builder<F, Fut>(name: impl Into<String>, connector: F) -> UpstreamBuilder
    where
        F: Fn(ClientBuilder) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Client, Error>> + Send + 'static,
    {
        let connector: Connector = Arc::new(move |builder| Box::pin(connector(builder)));
        UpstreamBuilder { name: name.into(), connector, options: UpstreamOptions::default() }
    }

    /// The name given at [`Upstream::builder`].
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Whether the upstream answered its last ping and is connected now.
    pub fn is_healthy(&self) -> bool {
        self.shared.healthy.load(Ordering::Relaxed)
            && matches!(*self.shared.link.borrow(), Link::Up(_))
    }

    /// The upstream's `serverInfo`, as its current connection negotiated it.
    pub fn server_info(&self) -> Option<Implementation> {
        self.connected().and_then(|client| client.server_info().cloned())
    }

    /// The upstream's `instructions`, as its current connection negotiated them.
    pub fn instructions(&self) -> Option<String> {
        self.connected().and_then(|client| client.instructions().map(str::to_owned))
    }

    fn connected(&self) -> Option<Arc<Client>> {
        match &*self.shared.link.borrow() {
            Link::Up(client) => Some(Arc::clone(client)),
            Link::Restarting => None,
        }
    }

    /// The connected client, waiting for a restart in progress (within the call timeout).
    pub(super) async fn client(&self) -> Result<Arc<Client>, String> {
        self.shared.breaker.check(&self.shared.name)?;
        // The usual case, with no timer to set: the connection is up.
        if let Link::Up(client) = &*self.shared.link.borrow() {
            return Ok(Arc::clone(client));
        }
        let mut link = self.shared.link.subscribe();
        let up = link.wait_for(|link| matches!(link, Link::Up(_)));
        let waited = tokio::time::timeout(self.shared.options.call_timeout, up).await;
        let up = match waited {
            Ok(Ok(link)) => match &*link {
                Link::Up(client) => Some(Arc::clone(client)),
                Link::Restarting => None,
            },
            _ => None,
        };
        match up {
            Some(client) => Ok(client),
            _ => Err(format!(
                "upstream server '{}' is restarting and did not come back within {:?}",
                self.shared.name, self.shared.options.call_timeout
            )),
        }
    }

    pub(super) fn call_timeout(&self) -> Duration {
        self.shared.options.call_timeout
    }

    /// What the upstream announces from now on; the caller imports after each one and says
    /// so ([`Upstream::imported`]).
    pub(super) fn follow(&self) -> broadcast::Receiver<Announcement> {
        self.shared.followers.fetch_add(1, Ordering::Relaxed);
        self.shared.announcements.subscribe()
    }

    /// The count of list changes announced so far, for an import about to begin.
    pub(super) fn announced(&self) -> u64 {
        self.shared.announced.load(Ordering::SeqCst)
    }

    /// An import that began when `announced` changes were announced is done.
    pub(super) fn imported(&self, announced: u64) {
        self.shared.imported.send_if_modified(|done| {
            let newer = announced > *done;
            *done = (*done).max(announced);
            newer
        });
    }

    /// Waits (a few seconds at most) until every list change the upstream announced before
    /// now is imported: a tool that adds a tool or resource upstream answers after announcing
    /// it, and its caller may use the new one at once.
    pub(super) async fn changes_imported(&self) {
        if self.shared.followers.load(Ordering::Relaxed) == 0 {
            return;
        }
        let announced = self.announced();
        let mut imported = self.shared.imported.subscribe();
        let caught_up = imported.wait_for(|done| *done >= announced);
        let _ = tokio::time::timeout(Duration::from_secs(5), caught_up).await;
    }

    /// Notes how a call through `client` ended: a closed connection starts a restart, and
    /// failures for want of an answer count toward the circuit breaker.
    pub(super) fn settle<T>(&self, client: &Arc<Client>, outcome: &Result<T, Error>) {
        match outcome.as_ref().map_err(Error::kind) {
            Err(ErrorKind::Closed | ErrorKind::Io) => {
                self.shared.breaker.failed(&self.shared.options);
                Shared::restart(&self.shared, client);
            }
            Err(ErrorKind::Timeout) => self.shared.breaker.failed(&self.shared.options),
            _ => self.shared.breaker.succeeded(),
        }
    }
}

impl Shared {
    /// A new connection, with the upstream's questions and log messages routed to the
    /// callers and its announcements watched.
    async fn open(shared: &Arc<Shared>) -> Result<Arc<Client>, Error> {
        let builder = routed_builder(shared);
        let client = Arc::new((shared.connector)(builder).await?);
        tokio::spawn(watch_connection(Arc::downgrade(shared), Arc::clone(&client)));
        Ok(client)
    }

    fn go_up(shared: &Arc<Shared>, client: Arc<Client>) {
        shared.healthy.store(true, Ordering::Relaxed);
        shared.breaker.succeeded();
        shared.link.send_replace(Link::Up(client));
    }

    /// Replaces `broken` with a new connection, unless another call already started that.
    fn restart(shared: &Arc<Shared>, broken: &Arc<Client>) {
        let started = shared.link.send_if_modified(|link| match link {
            Link::Up(client) if Arc::ptr_eq(client, broken) => {
                *link = Link::Restarting;
                true
            }
            _ => false,
        });
        if started {
            shared.healthy.store(false, Ordering::Relaxed);
            tracing::warn!(upstream = %shared.name, "upstream connection lost; restarting");
            tokio::spawn(reconnect(Arc::downgrade(shared)));
        }
    }
}

/// Connects again with exponential backoff until it works or the upstream is dropped.
async fn reconnect(shared: Weak<Shared>) {
    let Some(first) = shared.upgrade().map(|s| s.options.first_retry) else { return };
    let mut delay = first;
    loop {
        let Some(upstream) = shared.upgrade() else { return };
        match Shared::open(&upstream).await {
            Ok(client) => {
                Shared::go_up(&upstream, client);
                tracing::info!(upstream = %upstream.name, "upstream reconnected");
                let _ = upstream.announcements.send(Announcement::Reconnected);
                return;
            }
            Err(error) => {
                tracing::warn!(upstream = %upstream.name, %error, ?delay, "upstream restart failed");
                let longest = upstream.options.longest_retry;
                drop(upstream);
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(longest);
            }
        }
    }
}

/// Pings the current connection every interval, for [`Upstream::is_healthy`]; a ping that
/// finds it closed starts a restart.
async fn keep_pinging(shared: Weak<Shared>) {
    loop {
        let Some(interval) = shared.upgrade().map(|s| s.options.ping_interval) else { return };
        tokio::time::sleep(interval).await;
        let Some(upstream) = shared.upgrade() else { return };
        let Link::Up(client) = upstream.link.borrow().clone() else { continue };
        let ping = tokio::time::timeout(upstream.options.call_timeout, client.ping()).await;
        let outcome = ping.unwrap_or_else(|_| Err(McpError::internal("ping timed out").into()));
        upstream.healthy.store(outcome.is_ok(), Ordering::Relaxed);
        if matches!(outcome.as_ref().map_err(Error::kind), Err(ErrorKind::Closed | ErrorKind::Io)) {
            Shared::restart(&upstream, &client);
        }
    }
}

/// Keeps a listen stream open so that a 2026-07-28 upstream sends its list changes (they
/// arrive through the client's notification handler, [`routed_builder`]). The stream ends
/// with the connection: that is a crash, and starts a restart.
async fn watch_connection(shared: Weak<Shared>, client: Arc<Client>) {
    let filter = SubscriptionFilter::default()
        .with_tools_list_changed(true)
        .with_prompts_list_changed(true)
        .with_resources_list_changed(true);
    let Ok(mut subscription) = client.listen(filter).await else {
        // A server that cannot listen still serves; only its changes go unseen.
        return;
    };
    let weak_client = Arc::downgrade(&client);
    drop(client);
    while subscription.next().await.is_some() {}
    if let (Some(upstream), Some(client)) = (shared.upgrade(), weak_client.upgrade()) {
        Shared::restart(&upstream, &client);
    }
}

/// The announcement a notification makes, if it is a list change.
fn announcement(method: &str) -> Option<Announcement> {
    Some(match method {
        method::TOOLS_LIST_CHANGED => Announcement::ToolsChanged,
        method::PROMPTS_LIST_CHANGED => Announcement::PromptsChanged,
        method::RESOURCES_LIST_CHANGED => Announcement::ResourcesChanged,
        _ => return None,
    })
}

/// A client builder whose sampling, elicitation and roots requests and log messages go to
/// the downstream caller ([`super::callers`]). It asks for every log message: each caller's
/// own level filters them on the way down.
fn routed_builder(shared: &Arc<Shared>) -> ClientBuilder {
    let sample = Arc::downgrade(shared);
    let elicit = Arc::downgrade(shared);
    let roots = Arc::downgrade(shared);
    let logs = log_forwarder(Arc::downgrade(shared));
    let changes = Arc::downgrade(shared);
    // Sampling with tools is declared: whether a caller supports it is checked when the
    // question reaches it, and the upstream gets that caller's -32021 when it does not.
    Client::builder()
        .log_level(LoggingLevel::Debug)
        .sampling_tools(true)
        .on_log(move |message| {
            let _ = logs.send(message);
        })
        // On the connection's loop, in arrival order: counted before any later answer.
        .on_notification(move |notification| {
            let (Some(shared), Some(change)) =
                (changes.upgrade(), announcement(&notification.method))
            else {
                return;
            };
            shared.announced.fetch_add(1, Ordering::SeqCst);
            let _ = shared.announcements.send(change);
        })
        .on_sample(move |params| {
            let shared = sample.clone();
            async move {
                let shared = shared.upgrade().ok_or_else(gone)?;
                ask_caller(&shared.callers, |cx| async move { cx.sample(params).await }).await
            }
        })
        .on_elicit(move |params| {
            let shared = elicit.clone();
            async move {
                let shared = shared.upgrade().ok_or_else(gone)?;
                ask_caller(&shared.callers, |cx| async move { cx.elicit_raw(params).await }).await
            }
        })
        .on_roots(move || {
            let shared = roots.clone();
            async move {
                let shared = shared.upgrade().ok_or_else(gone)?;
                ask_caller(&shared.callers, |cx| async move { cx.list_roots().await }).await
            }
        })
}

fn gone() -> McpError {
    McpError::internal("the composed server is shutting down")
}

/// Log messages reach the caller in the order the upstream sent them: one task sends them.
fn log_forwarder(shared: Weak<Shared>) -> mpsc::UnboundedSender<LoggingMessageNotificationParams> {
    let (sender, mut messages) = mpsc::unbounded_channel::<LoggingMessageNotificationParams>();
    tokio::spawn(async move {
        while let Some(message) = messages.recv().await {
            let Some(shared) = shared.upgrade() else { return };
            let Some(caller) = shared.callers.current() else {
                log_here(&shared.name, &message);
                continue;
            };
            caller.cx.log_to(message.logger.as_deref(), message.level, message.data).await;
        }
    });
    sender
}

/// A log message the upstream sent outside any request: no caller of a server shared by
/// all of them may see it, so it goes to this process's own log, at its level.
fn log_here(upstream: &str, message: &LoggingMessageNotificationParams) {
    let (logger, data) = (message.logger.as_deref().unwrap_or(""), &message.data);
    match message.level {
        LoggingLevel::Debug => tracing::debug!(upstream, logger, %data, "upstream log"),
        LoggingLevel::Info | LoggingLevel::Notice => {
            tracing::info!(upstream, logger, %data, "upstream log")
        }
        LoggingLevel::Warning => tracing::warn!(upstream, logger, %data, "upstream log"),
        _ => tracing::error!(upstream, logger, %data, "upstream log"),
    }
}

/// Consecutive failures and, once too many, the time until which calls fail at once: kept
/// in atomics, since every call checks it.
struct Breaker {
    failures: AtomicU32,
    /// What `open_until` counts from.
    born: Instant,
    /// Milliseconds after `born` until which calls are refused; 0 when it never opened.
    open_until: AtomicU64,
}

impl Default for Breaker {
    fn default() -> Breaker {
        Breaker { failures: AtomicU32::new(0), born: Instant::now(), open_until: AtomicU64::new(0) }
    }
}

impl Breaker {
    fn check(&self, name: &str) -> Result<(), String> {
        match self.now() < self.open_until.load(Ordering::Relaxed) {
            true => Err(format!(
                "upstream server '{name}' failed too often; calls are refused for a while"
            )),
            false => Ok(()),
        }
    }

    fn failed(&self, options: &UpstreamOptions) {
        let failures = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
        if failures >= options.failures_to_open {
            self.failures.store(0, Ordering::Relaxed);
            let open_for = u64::try_from(options.open_for.as_millis()).unwrap_or(u64::MAX);
            self.open_until.store(self.now().saturating_add(open_for), Ordering::Relaxed);
        }
    }

    /// Milliseconds since `born`; at least 1, so a breaker that never opened (0) is closed.
    fn now(&self) -> u64 {
        u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX).max(1)
    }

    fn succeeded(&self) {
        self.failures.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(open_for: Duration) -> UpstreamOptions {
        UpstreamOptions { failures_to_open: 3, open_for, ..UpstreamOptions::default() }
    }

    #[test]
    fn the_breaker_opens_after_consecutive_failures_only() {
        let (breaker, options) = (Breaker::default(), options(Duration::from_secs(60)));
        breaker.failed(&options);
        breaker.failed(&options);
        breaker.succeeded();
        breaker.failed(&options);
        breaker.failed(&options);
        assert_eq!(breaker.check("up"), Ok(()));
        breaker.failed(&options);
        assert_eq!(
            breaker.check("up"),
            Err("upstream server 'up' failed too often; calls are refused for a while".into())
        );
    }

    #[test]
    fn an_open_breaker_lets_calls_through_once_its_time_is_over() {
        let (breaker, options) = (Breaker::default(), options(Duration::from_millis(20)));
        for _ in 0..3 {
            breaker.failed(&options);
        }
        assert!(breaker.check("up").is_err());
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(breaker.check("up"), Ok(()));
        assert_eq!(breaker.check("up"), Ok(()));
        for _ in 0..3 {
            breaker.failed(&options);
        }
        assert!(breaker.check("up").is_err(), "it opens again after as many failures");
    }
}
