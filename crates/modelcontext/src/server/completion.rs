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

/// What a per-argument completer gets: the partial value the user typed, and the values of
/// the other arguments already filled in (`context.arguments`, 2025-06-18+; empty when the
/// client sent none).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// The partial value of the argument being completed.
    pub value: String,
    /// The other arguments' values, by name.
    pub arguments: std::collections::BTreeMap<String, String>,
}

/// What a per-argument completer may return: the suggestions (`Vec<String>`), a whole
/// [`Completion`] (to set `total` and `hasMore`), or a `Result` of either with `McpError`.
pub trait IntoCompletion: Send + 'static {
    /// The completion, or the error that fails the request.
    fn into_completion(self) -> Result<Completion, McpError>;
}

impl IntoCompletion for Vec<String> {
    fn into_completion(self) -> Result<Completion, McpError> {
        Ok(Completion::new(self))
    }
}

impl IntoCompletion for Completion {
    fn into_completion(self) -> Result<Completion, McpError> {
        Ok(self)
    }
}

impl<T: IntoCompletion> IntoCompletion for Result<T, McpError> {
    fn into_completion(self) -> Result<Completion, McpError> {
        self?.into_completion()
    }
}

/// Completes one argument of a prompt or one variable of a resource template: an async fn
/// or closure `|request: CompletionRequest| async { vec![..] }` (see [`IntoCompletion`]), set
/// with [`PromptDef::complete`](super::PromptDef::complete),
/// [`ResourceDef::complete`](super::ResourceDef::complete) or `#[arg(complete = f)]`.
pub trait ArgumentCompleter: Send + Sync + 'static {
    /// Suggests values for the argument.
    fn complete(&self, request: CompletionRequest) -> BoxFuture<Result<Completion, McpError>>;
}

impl<F, Fut> ArgumentCompleter for F
where
    F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoCompletion,
{
    fn complete(&self, request: CompletionRequest) -> BoxFuture<Result<Completion, McpError>> {
        let future = self(request);
        Box::pin(async move { future.await.into_completion().map(cap_values) })
    }
}

/// The completers of one prompt's arguments or one template's variables, by name.
pub(crate) type Completers =
    std::collections::BTreeMap<String, std::sync::Arc<dyn ArgumentCompleter>>;

/// The completer `params` asks for, with its request: a registered prompt's or template's
/// completer of the named argument.
pub(crate) fn find(
    catalog: &super::Catalog,
    params: &CompleteRequestParams,
) -> Option<(std::sync::Arc<dyn ArgumentCompleter>, CompletionRequest)> {
    use modelcontext_types::Reference;
    let completers = match &params.reference {
        Reference::Prompt(prompt) => &catalog.prompts.get(&prompt.name)?.completers,
        Reference::Resource(template) => &catalog.templates.get(&template.uri)?.def.completers,
        _ => return None,
    };
    let completer = completers.get(&params.argument.name)?;
    let arguments = params.context.as_ref().and_then(|c| c.arguments.clone()).unwrap_or_default();
    let request = CompletionRequest { value: params.argument.value.clone(), arguments };
    Some((std::sync::Arc::clone(completer), request))
}
