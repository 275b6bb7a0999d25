//! Argument completion: `completion/complete`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Meta, RequestMeta, ResultType};

/// What is being completed: a prompt's argument or a resource template's variable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum Reference {
    /// `"ref/prompt"`: an argument of a prompt.
    #[serde(rename = "ref/prompt")]
    Prompt(PromptReference),
    /// `"ref/resource"`: a variable of a resource template.
    #[serde(rename = "ref/resource")]
    Resource(ResourceTemplateReference),
}

impl From<PromptReference> for Reference {
    fn from(r: PromptReference) -> Self {
        Reference::Prompt(r)
    }
}

impl From<ResourceTemplateReference> for Reference {
    fn from(r: ResourceTemplateReference) -> Self {
        Reference::Resource(r)
    }
}

/// A prompt, by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptReference {
    /// The prompt's name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

impl PromptReference {
    /// A reference to the prompt `name`.
    pub fn new(name: impl Into<String>) -> PromptReference {
        PromptReference { name: name.into(), title: None }
    }
}

setters!(PromptReference { with_title => title: String });

/// A resource template, by URI template (or a resource, by URI).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplateReference {
    /// The URI template or URI.
    pub uri: String,
}

impl ResourceTemplateReference {
    /// A reference to the URI template (or URI) `uri`.
    pub fn new(uri: impl Into<String>) -> ResourceTemplateReference {
        ResourceTemplateReference { uri: uri.into() }
    }
}

/// The argument being completed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompletionArgument {
    /// Its name.
    pub name: String,
    /// What the user typed so far.
    pub value: String,
}

impl CompletionArgument {
    /// The argument `name`, typed so far as `value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> CompletionArgument {
        CompletionArgument { name: name.into(), value: value.into() }
    }
}

/// Already-resolved arguments, to narrow suggestions (2025-06-18+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompletionContext {
    /// Values of other arguments, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

setters!(CompletionContext { with_arguments => arguments: BTreeMap<String, String> });

/// Params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompleteRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: Reference,
    /// The argument and its partial value.
    pub argument: CompletionArgument,
    /// Other arguments already chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
}

impl CompleteRequestParams {
    /// Completes `argument` of the prompt or template `reference`.
    pub fn new(reference: impl Into<Reference>, argument: CompletionArgument) -> Self {
        CompleteRequestParams { meta: None, reference: reference.into(), argument, context: None }
    }
}

setters!(CompleteRequestParams {
    with_meta => meta: RequestMeta,
    with_context => context: CompletionContext,
});

/// The suggestions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// At most 100 values.
    pub values: Vec<String>,
    /// How many values exist in all, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more values exist than were sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// These suggestions, and no count.
    pub fn new(values: Vec<String>) -> Completion {
        Completion { values, total: None, has_more: None }
    }
}

setters!(Completion {
    with_total => total: u64,
    with_has_more => has_more: bool,
});

/// The answer to `completion/complete`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompleteResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result kind (2026-07-28+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The suggestions.
    pub completion: Completion,
}

impl CompleteResult {
    /// An answer with these suggestions.
    pub fn new(completion: Completion) -> CompleteResult {
        CompleteResult { meta: None, result_type: None, completion }
    }
}

setters!(CompleteResult { with_meta => meta: Meta });
