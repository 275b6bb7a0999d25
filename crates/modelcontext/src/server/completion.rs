//! `completion/complete`: suggestions for prompt arguments and template variables.

use std::future::Future;

use modelcontext_types::{CompleteRequestParams, Completion, McpError};

use crate::engine::BoxFuture;

/// Answers `completion/complete`. Implemented for async closures
/// `|params: CompleteRequestParams| async { Ok(Completion { .. }) }`. The SDK sends at most
/// 100 values, as the spec allows, and marks `hasMore` when it cut the list.
pub trait CompletionHandler: Send + Sync + 'static {
    /// Suggests values for `params.argument` given `params.reference`.
    fn complete(&self, params: CompleteRequestParams) -> BoxFuture<Result<Completion, McpError>>;
}

impl<F, Fut> CompletionHandler for F
where
    F: Fn(CompleteRequestParams) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Completion, McpError>> + Send + 'static,
{
    fn complete(&self, params: CompleteRequestParams) -> BoxFuture<Result<Completion, McpError>> {
        let future = self(params);
        Box::pin(async move { future.await.map(cap_values) })
    }
}

/// Spec (`server/utilities/completion`): at most 100 items per response.
fn cap_values(mut completion: Completion) -> Completion {
    const MAX_VALUES: usize = 100;
    if completion.values.len() > MAX_VALUES {
        let total = completion.values.len() as u64;
        completion.values.truncate(MAX_VALUES);
        completion.total.get_or_insert(total);
        completion.has_more = Some(true);
    }
    completion
}
