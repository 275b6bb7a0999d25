//! The error SDK users get back from client calls and from setting up a server.

use std::fmt;

use modelcontext_types::{CONNECTION_CLOSED, ErrorCode, McpError, REQUEST_TIMEOUT};

/// What went wrong, asked rather than matched (the serde_json pattern).
pub struct Error {
    inner: Box<Inner>,
}

#[derive(Debug)]
enum Inner {
    Protocol(McpError),
    Io(std::io::Error),
    Json(serde_json::Error),
    Registration(String),
    Negotiation(String),
}

/// The class of an [`Error`].
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The peer answered with a JSON-RPC error ([`Error::as_mcp_error`] has it).
    Protocol,
    /// The connection is gone, or never came up.
    Closed,
    /// No answer came in time.
    Timeout,
    /// Reading or writing failed.
    Io,
    /// A message could not be (de)serialized into the expected type.
    Json,
    /// A tool, resource or prompt could not be registered (duplicate name, bad template...).
    Registration,
    /// The two peers found no protocol version or era they both speak.
    Negotiation,
}

impl Error {
    /// The class of this error.
    pub fn kind(&self) -> ErrorKind {
        match &*self.inner {
            Inner::Protocol(e) if e.code == CONNECTION_CLOSED => ErrorKind::Closed,
            Inner::Protocol(e) if e.code == REQUEST_TIMEOUT => ErrorKind::Timeout,
            Inner::Protocol(_) => ErrorKind::Protocol,
            Inner::Io(_) => ErrorKind::Io,
            Inner::Json(_) => ErrorKind::Json,
            Inner::Registration(_) => ErrorKind::Registration,
            Inner::Negotiation(_) => ErrorKind::Negotiation,
        }
    }

    /// The JSON-RPC error, when the peer (or the SDK on its behalf: a timeout, a closed
    /// connection) answered with one.
    pub fn as_mcp_error(&self) -> Option<&McpError> {
        match &*self.inner {
            Inner::Protocol(e) => Some(e),
            _ => None,
        }
    }

    /// The JSON-RPC error code, if any.
    pub fn code(&self) -> Option<ErrorCode> {
        self.as_mcp_error().map(|e| e.code)
    }

    /// The URL elicitations a -32042 `URLElicitationRequired` error (2025-11-25) lists: open
    /// each (with the user's consent), wait for its
    /// [`on_elicitation_complete`](crate::ClientBuilder::on_elicitation_complete), then retry
    /// the call. `None` for any other error.
    pub fn url_elicitations(&self) -> Option<Vec<modelcontext_types::ElicitRequestURLParams>> {
        self.as_mcp_error()?.url_elicitations()
    }

    pub(crate) fn registration(message: impl Into<String>) -> Error {
        Error { inner: Box::new(Inner::Registration(message.into())) }
    }

    pub(crate) fn negotiation(message: impl Into<String>) -> Error {
        Error { inner: Box::new(Inner::Negotiation(message.into())) }
    }
}

/// Shows the kind and the whole chain: this is what `main` prints when it returns `Err`.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error({:?}: {self:#})", self.kind())
    }
}

/// This layer's message only: the I/O or JSON error underneath is [`source`], which error
/// reporters (anyhow, eyre, `std::error::Report`) print on their own line after it. A protocol
/// error has no source: its [`McpError`] is the error itself ([`Error::as_mcp_error`]).
///
/// The alternate form, `{:#}`, appends every source, each after `": "`, for showing the whole
/// story to a person on one line: `I/O error: connection refused`.
///
/// [`source`]: std::error::Error::source
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.inner {
            Inner::Protocol(e) => write!(f, "{} (code {})", e.message, e.code)?,
            Inner::Io(_) => f.write_str("I/O error")?,
            Inner::Json(_) => f.write_str("invalid JSON from peer")?,
            Inner::Registration(m) => write!(f, "registration failed: {m}")?,
            Inner::Negotiation(m) => write!(f, "negotiation failed: {m}")?,
        }
        if f.alternate() {
            write_sources(f, self)?;
        }
        Ok(())
    }
}

/// `": {source}"` for each error in the chain below `err`.
fn write_sources(f: &mut fmt::Formatter<'_>, err: &dyn std::error::Error) -> fmt::Result {
    let mut source = err.source();
    while let Some(cause) = source {
        write!(f, ": {cause}")?;
        source = cause.source();
    }
    Ok(())
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.inner {
            Inner::Io(e) => Some(e),
            Inner::Json(e) => Some(e),
            _ => None,
        }
    }
}

impl From<McpError> for Error {
    fn from(e: McpError) -> Error {
        Error { inner: Box::new(Inner::Protocol(e)) }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error { inner: Box::new(Inner::Io(e)) }
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Error {
        Error { inner: Box::new(Inner::Json(e)) }
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    /// One error of each kind, with a source wherever the kind has one.
    fn one_of_each() -> Vec<Error> {
        let json = serde_json::from_str::<serde_json::Value>("{").expect_err("truncated JSON");
        vec![
            McpError::new(modelcontext_types::INVALID_PARAMS, "Unknown tool: x").into(),
            McpError::new(CONNECTION_CLOSED, "Connection closed").into(),
            McpError::new(REQUEST_TIMEOUT, "Request timed out").into(),
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused").into(),
            json.into(),
            Error::registration("tool 'x' is registered twice"),
            Error::negotiation("no common protocol version"),
        ]
    }

    /// Reporters print `Display` and then each source: a `Display` that repeated its source
    /// would show the same text twice.
    #[test]
    fn display_never_repeats_the_source() {
        for err in one_of_each() {
            if let Some(source) = err.source() {
                let (ours, theirs) = (err.to_string(), source.to_string());
                assert!(!ours.contains(&theirs), "{ours:?} repeats its source {theirs:?}");
            }
        }
    }

    #[test]
    fn the_alternate_form_and_debug_show_the_whole_chain() {
        let err = Error::from(std::io::Error::other("connection refused"));
        assert_eq!(err.to_string(), "I/O error");
        assert_eq!(format!("{err:#}"), "I/O error: connection refused");
        assert_eq!(format!("{err:?}"), "Error(Io: I/O error: connection refused)");
        let err = Error::from(McpError::new(modelcontext_types::INVALID_PARAMS, "Unknown tool: x"));
        assert_eq!(format!("{err:#}"), "Unknown tool: x (code -32602)");
    }
}
