//! The one parse of a client request into its method's type, and the errors it answers: every
//! path (the engine's loop, an HTTP session's POST, a stateless or 2026-07-28 POST, each
//! element of a batch) parses here, so a request is refused in the same words everywhere.

use modelcontext_types::{ClientRequest, McpError, ParamsError, RawValue};

/// `params` parsed as `method`'s: -32601 for a method the server does not know, -32602 naming
/// the method and what is wrong with its params.
pub(crate) fn parse_request(
    method: &str,
    params: Option<&RawValue>,
) -> Result<ClientRequest, McpError> {
    ClientRequest::parse(method, params).map_err(|err| match err {
        ParamsError::UnknownMethod => McpError::method_not_found(method),
        ParamsError::Invalid(reason) => {
            McpError::invalid_params(format!("Invalid params for '{method}': {reason}"))
        }
        other => McpError::invalid_params(other.to_string()),
    })
}
