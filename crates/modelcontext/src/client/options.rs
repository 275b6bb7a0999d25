//! Per-call options: timeout, progress, extra `_meta`.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use modelcontext_types::{Meta, ProgressNotificationParams};
use serde_json::Value;

/// Options for one call (`call_tool_with`, `get_prompt_with`, `read_resource_with`,
/// `request_with`). Cancellation needs no option: drop the call's future and the server is
/// sent `notifications/cancelled`.
///
/// ```
/// # use std::time::Duration;
/// use modelcontext::client::CallOptions;
/// let options = CallOptions::new()
///     .timeout(Duration::from_secs(10))
///     .reset_timeout_on_progress(Duration::from_secs(300))
///     .on_progress(|p| eprintln!("{}/{:?} {:?}", p.progress, p.total, p.message));
/// ```
#[derive(Clone, Default)]
pub struct CallOptions {
    /// `None`: the client's default; `Some(None)`: wait forever.
    pub(crate) timeout: Option<Option<Duration>>,
    /// Set: progress restarts the timeout, up to this total.
    pub(crate) reset_on_progress: Option<Duration>,
    pub(crate) on_progress: Option<ProgressHandler>,
    pub(crate) meta: Meta,
}

/// A progress callback.
pub(crate) type ProgressHandler = Arc<dyn Fn(ProgressNotificationParams) + Send + Sync>;

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("reset_on_progress", &self.reset_on_progress)
            .field("on_progress", &self.on_progress.is_some())
            .field("meta", &self.meta)
            .finish()
    }
}

impl CallOptions {
    /// The client's defaults.
    pub fn new() -> CallOptions {
        CallOptions::default()
    }

    /// Gives up (and cancels the request) after `timeout` without an answer.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(Some(timeout));
        self
    }

    /// Waits for the answer however long it takes.
    pub fn no_timeout(mut self) -> Self {
        self.timeout = Some(None);
        self
    }

    /// Every progress update restarts the timeout, but the call never takes longer than
    /// `max_total` (spec `basic/utilities/cancellation`: timeouts MAY reset on progress, with
    /// a maximum). Progress only flows when [`CallOptions::on_progress`] is set too.
    pub fn reset_timeout_on_progress(mut self, max_total: Duration) -> Self {
        self.reset_on_progress = Some(max_total);
        self
    }

    /// Asks for progress (a `progressToken` goes in `_meta`) and calls `handler` with each
    /// `notifications/progress` the server sends for this call, in order.
    pub fn on_progress(
        mut self,
        handler: impl Fn(ProgressNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.on_progress = Some(Arc::new(handler));
        self
    }

    /// Adds a key to the request's `_meta` (a trace context, an extension key...). The SDK's
    /// own keys (protocol version, capabilities, progress token) win over these.
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.meta.insert(key.into(), value.into());
        self
    }
}
