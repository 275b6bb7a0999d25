//! [`ClientBuilder`]: options, and the callbacks whose presence declares capabilities.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use modelcontext_types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, Era, Implementation, LATEST_HANDSHAKE_VERSION, LoggingLevel,
    LoggingMessageNotificationParams, McpError, Notification, Root, ServerCapabilities,
};

use super::handlers::{ClientDispatch, Handlers, callback};
use super::{
    Client, DEFAULT_MAX_INPUT_ROUNDS, DEFAULT_REQUEST_TIMEOUT, EraMode, ResultCache, listen,
};
use crate::Error;
use crate::transport::Transport;

/// Builds a [`Client`] with options and callbacks. Setting a callback declares the matching
/// client capability.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    pub(super) info: Implementation,
    pub(super) mode: EraMode,
    pub(super) timeout: Option<Duration>,
    pub(super) capabilities: ClientCapabilities,
    pub(super) log_level: Option<LoggingLevel>,
    pub(super) max_input_rounds: usize,
    pub(super) handlers: Handlers,
    pub(super) cache: CacheChoice,
}

/// Which cache a client uses.
#[derive(Debug, Clone)]
pub(super) enum CacheChoice {
    /// A cache of its own (the default).
    Own,
    /// A cache shared with other clients.
    Shared(ResultCache),
    /// No caching: every call asks the server.
    Off,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            info: Implementation::new("modelcontext", env!("CARGO_PKG_VERSION")),
            mode: EraMode::Auto,
            timeout: Some(DEFAULT_REQUEST_TIMEOUT),
            capabilities: ClientCapabilities::default(),
            log_level: None,
            max_input_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            handlers: Handlers::default(),
            cache: CacheChoice::Own,
        }
    }
}

impl ClientBuilder {
    /// Sets the `clientInfo` name and version.
    pub fn info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info.name = name.into();
        self.info.version = version.into();
        self
    }

    /// Chooses the era (default [`EraMode::Auto`]).
    pub fn era(mut self, mode: EraMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the per-request timeout (default 60 s); `None` waits forever.
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Asks for log messages at `level` and above: `logging/setLevel` after `initialize` in the
    /// handshake era (when the server declares `logging`), `_meta` `logLevel` on every request
    /// in the modern era. Without it a modern server sends no log messages at all.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Calls `handler` with every `notifications/message` the server sends.
    pub fn on_log(
        mut self,
        handler: impl Fn(LoggingMessageNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.handlers.log = Some(Arc::new(handler));
        self
    }

    /// Calls `handler` with every server notification except progress (which goes to the call
    /// that asked for it): logging, `list_changed`, `resources/updated`, and any other method.
    /// Parse a known one with `ServerNotification::parse(&n.method, n.params.as_deref())`.
    /// Runs on the connection's loop, in arrival order: keep it quick (send to a channel).
    pub fn on_notification(
        mut self,
        handler: impl Fn(Notification) + Send + Sync + 'static,
    ) -> Self {
        self.handlers.notification = Some(Arc::new(handler));
        self
    }

    /// Calls `handler` with the `elicitationId` of every `notifications/elicitation/complete`
    /// (2025-11-25): the server says the out-of-band flow of a URL elicitation finished, so a
    /// call that failed with -32042 ([`Error::url_elicitations`](crate::Error::url_elicitations))
    /// can be retried. Runs on the connection's loop: keep it quick.
    pub fn on_elicitation_complete(
        mut self,
        handler: impl Fn(String) + Send + Sync + 'static,
    ) -> Self {
        self.handlers.elicitation_complete = Some(Arc::new(handler));
        self
    }

    /// Answers `elicitation/create` (handshake era) and elicitation input requests (modern
    /// era) with `handler`; declares the `elicitation` capability, form and URL modes.
    pub fn on_elicit<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, McpError>> + Send + 'static,
    {
        self.handlers.elicit = Some(callback(handler));
        self
    }

    /// Answers `sampling/createMessage` with `handler`; declares the `sampling` capability.
    /// Add [`ClientBuilder::sampling_tools`] if the handler supports `tools` and `toolChoice`.
    pub fn on_sample<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, McpError>> + Send + 'static,
    {
        self.handlers.sample = Some(callback(handler));
        self
    }

    /// Declares `sampling.tools`: the sampling handler understands `tools` and `toolChoice`.
    pub fn sampling_tools(mut self, supported: bool) -> Self {
        self.handlers.sampling_tools = supported;
        self
    }

    /// Answers `roots/list` with `handler`; declares the `roots` capability (with
    /// `listChanged`: call [`Client::notify_roots_changed`] when they change).
    pub fn on_roots<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, McpError>> + Send + 'static,
    {
        self.handlers.roots = Some(callback(move |()| handler()));
        self
    }

    /// Bounds the MRTR rounds of one `call_tool`/`get_prompt`/`read_resource` (default 10):
    /// after that many retries with answers, the call fails instead of asking again.
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// Turns result caching off (`false`) or back on. On by default: a modern list or read
    /// result whose `ttlMs` is above zero is reused until stale (see [`ResultCache`]).
    pub fn caching(mut self, on: bool) -> Self {
        self.cache = if on { CacheChoice::Own } else { CacheChoice::Off };
        self
    }

    /// Uses `cache`, shared with the other clients given it: `public` results are reused
    /// by all of them, `private` ones only by the client that fetched them.
    pub fn cache(mut self, cache: ResultCache) -> Self {
        self.cache = CacheChoice::Shared(cache);
        self
    }

    /// Connects over `transport` and negotiates.
    pub async fn connect(mut self, transport: impl Transport) -> Result<Client, Error> {
        self.handlers.declare(&mut self.capabilities);
        let handlers = Arc::new(self.handlers.clone());
        let listeners = listen::Listeners::default();
        let cache = match &self.cache {
            CacheChoice::Own => Some(ResultCache::new()),
            CacheChoice::Shared(cache) => Some(cache.clone()),
            CacheChoice::Off => None,
        };
        let dispatch = ClientDispatch {
            handlers: Arc::clone(&handlers),
            listeners: Arc::clone(&listeners),
            cache: cache.clone(),
            network_transport: transport.network_transport(),
            batches: Arc::default(),
        };
        let batches = Arc::clone(&dispatch.batches);
        let network_transport = transport.network_transport();
        let session_id = transport.session_id_watch();
        let settled = transport.settled();
        let (peer, run, stop) = crate::engine::start(transport.open(), dispatch);
        let engine = tokio::spawn(run);
        let mut client = Client {
            peer,
            engine: Some(engine),
            stop: Some(stop),
            options: self,
            handlers,
            listeners,
            era: Era::Handshake,
            protocol_version: LATEST_HANDSHAKE_VERSION.to_owned(),
            server_info: None,
            server_capabilities: ServerCapabilities::default(),
            instructions: None,
            network_transport,
            session_id,
            #[cfg(feature = "otel")]
            instruments: crate::observe::otel::Instruments::from_global(),
            cache,
            cache_owner: super::cache::next_owner(),
            batches,
        };
        client.negotiate(settled).await?;
        Ok(client)
    }
}
