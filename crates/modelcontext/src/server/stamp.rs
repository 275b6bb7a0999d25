//! The modern result stamp: `resultType`, `serverInfo`, caching hints.

use std::sync::Arc;

use modelcontext_types::{
    CallToolResult, CompleteResult, DiscoverResult, EmptyResult, Era, GetPromptResult,
    InputRequiredResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, McpError, Meta, MrtrResult, ReadResourceResult, ResultType,
    SERVER_INFO_META_KEY, to_raw,
};
use serde::Serialize;
use serde_json::Value;

use super::CacheHint;
use crate::engine::Outcome;

/// What the modern era adds to every result: `resultType`, the `serverInfo` stamp, and the
/// caching hints on cacheable results (spec 2026-07-28, SEP-2549: `ttlMs: 0`, private by
/// default; the server's [`CacheHint`]s where it set them). The handshake era gets none of
/// them.
pub(super) struct Stamp {
    server_info: Option<Arc<Value>>,
    /// The caching hint of a cacheable result, when the server set one.
    hint: Option<CacheHint>,
}

impl Stamp {
    pub(super) fn new(server_info: &Arc<Value>, era: Era) -> Stamp {
        Stamp { server_info: (era == Era::Modern).then(|| Arc::clone(server_info)), hint: None }
    }

    /// Stamps cacheable results with `hint` instead of the default (modern era only).
    pub(super) fn with_hint(mut self, hint: CacheHint) -> Stamp {
        self.hint = Some(hint);
        self
    }

    pub(super) fn apply<R: WireResult>(&self, mut result: R) -> Outcome {
        if let Some(info) = &self.server_info {
            if let Some(hint) = &self.hint {
                result.hint(hint);
            }
            result.stamp(Value::clone(info));
        }
        to_raw(&result).map_err(internal)
    }
}

pub(super) fn internal(err: serde_json::Error) -> McpError {
    McpError::internal(format!("result did not serialize: {err}"))
}

/// A result type with the shared result fields.
pub(super) trait WireResult: Serialize + Send {
    fn stamp(&mut self, server_info: Value);

    /// Sets the caching hint; only cacheable results have one.
    fn hint(&mut self, _hint: &CacheHint) {}
}

pub(super) fn stamp_meta(meta: &mut Option<Meta>, server_info: Value) {
    meta.get_or_insert_with(Meta::new).insert(SERVER_INFO_META_KEY.into(), server_info);
}

/// Implements [`WireResult`] for a cacheable result type (`resultType`, `ttlMs`, `cacheScope`
/// and `_meta` fields).
macro_rules! cacheable_result {
    ($ty:ty) => {
        impl $crate::server::stamp::WireResult for $ty {
            fn stamp(&mut self, server_info: serde_json::Value) {
                self.result_type = Some(modelcontext_types::ResultType::Complete);
                self.ttl_ms.get_or_insert(0);
                self.cache_scope.get_or_insert(modelcontext_types::CacheScope::Private);
                $crate::server::stamp::stamp_meta(&mut self.meta, server_info);
            }

            fn hint(&mut self, hint: &$crate::server::CacheHint) {
                self.ttl_ms = Some(hint.ttl_ms());
                self.cache_scope = Some(hint.scope);
            }
        }
    };
}
pub(super) use cacheable_result;

macro_rules! wire_result {
    (plain: $($ty:ty),*) => {$(
        impl WireResult for $ty {
            fn stamp(&mut self, server_info: Value) {
                self.result_type = Some(ResultType::Complete);
                stamp_meta(&mut self.meta, server_info);
            }
        }
    )*};
    (cacheable: $($ty:ty),*) => {$( cacheable_result!($ty); )*};
}

impl WireResult for InputRequiredResult {
    fn stamp(&mut self, server_info: Value) {
        self.result_type = Some(ResultType::InputRequired);
        stamp_meta(&mut self.meta, server_info);
    }
}

impl<T: WireResult> WireResult for MrtrResult<T> {
    fn hint(&mut self, hint: &CacheHint) {
        // An `input_required` round is never cached (spec: results tied to input responses
        // must not be).
        if let MrtrResult::Complete(result) = self {
            result.hint(hint);
        }
    }

    fn stamp(&mut self, server_info: Value) {
        match self {
            MrtrResult::Complete(result) => result.stamp(server_info),
            MrtrResult::InputRequired(result) => result.stamp(server_info),
            // A result kind a later revision adds carries its own `resultType`: left as is.
            _ => {}
        }
    }
}

wire_result!(plain: EmptyResult, CallToolResult, GetPromptResult, CompleteResult);
wire_result!(cacheable: DiscoverResult, ListToolsResult, ListResourcesResult, ListResourceTemplatesResult, ListPromptsResult, ReadResourceResult);
