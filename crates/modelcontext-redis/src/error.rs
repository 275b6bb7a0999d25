//! The one error type of the crate.

use std::fmt;

/// Why a Redis backend could not be set up.
#[derive(Debug)]
pub struct Error {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    /// The configuration is unusable (a URL, a name).
    Config(String),
    /// Redis answered with an error or the connection failed.
    Redis(redis::RedisError),
    /// Redis did not answer within the command timeout.
    Timeout(&'static str),
    /// The connection closed before the answer.
    Closed(&'static str),
}

impl Error {
    pub(crate) fn config(message: String) -> Error {
        Error { kind: Kind::Config(message) }
    }

    pub(crate) fn timeout(what: &'static str) -> Error {
        Error { kind: Kind::Timeout(what) }
    }

    pub(crate) fn closed(what: &'static str) -> Error {
        Error { kind: Kind::Closed(what) }
    }
}

impl From<redis::RedisError> for Error {
    fn from(error: redis::RedisError) -> Error {
        Error { kind: Kind::Redis(error) }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Config(message) => write!(f, "redis backend configuration: {message}"),
            Kind::Redis(error) => write!(f, "redis: {error}"),
            Kind::Timeout(what) => write!(f, "redis: no answer in time to {what}"),
            Kind::Closed(what) => write!(f, "redis: the connection closed during {what}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            Kind::Redis(error) => Some(error),
            _ => None,
        }
    }
}
