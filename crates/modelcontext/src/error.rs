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

    pub(crate) fn registration(message: impl Into<String>) -> Error {
        Error { inner: Box::new(Inner::Registration(message.into())) }
    }

    pub(crate) fn negotiation(message: impl Into<String>) -> Error {
        Error { inner: Box::new(Inner::Negotiation(message.into())) }
    }
}

/// Shows the kind and the message: this is what `main` prints when it returns `Err`.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error({:?}: {self})", self.kind())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.inner {
            Inner::Protocol(e) => write!(f, "{} (code {})", e.message, e.code),
            Inner::Io(e) => write!(f, "I/O error: {e}"),
            Inner::Json(e) => write!(f, "invalid JSON from peer: {e}"),
            Inner::Registration(m) => write!(f, "registration failed: {m}"),
            Inner::Negotiation(m) => write!(f, "negotiation failed: {m}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.inner {
            Inner::Protocol(e) => Some(e),
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
