//! Why a run did not succeed, and the exit code each kind of failure earns: the lowest layer
//! of the command, which every other part reports its failures in.

use modelcontext::ErrorKind;
use serde_json::Value;

/// Exit codes, as documented in `--help` and the crate docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success = 0,
    Other = 1,
    ToolError = 2,
    Protocol = 3,
    Connection = 4,
    Usage = 64,
    Interrupted = 130,
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> std::process::ExitCode {
        std::process::ExitCode::from(exit as u8)
    }
}

/// Why a run did not succeed. Each variant has its exit code.
#[derive(Debug)]
pub enum Failure {
    /// Bad options or arguments (64).
    Usage(String),
    /// The server could not be started or reached, went away, or did not answer in time (4).
    Connection(String),
    /// The connection ended or never came up (4); the SDK's message.
    Closed(String),
    /// The server answered with a JSON-RPC error (3).
    Protocol { code: i64, message: String, data: Option<Value> },
    /// The server's answer did not parse (3).
    BadAnswer(String),
    /// Anything else (1).
    Other(String),
    /// Ctrl-C while the server was working: the request was cancelled (130, as a shell
    /// reports SIGINT).
    Interrupted,
}

impl Failure {
    /// Classifies an SDK error.
    pub fn from_sdk(err: modelcontext::Error) -> Failure {
        let text = chain(&err);
        match err.kind() {
            ErrorKind::Protocol => match err.as_mcp_error() {
                Some(e) => Failure::Protocol {
                    code: e.code.0.into(),
                    message: e.message.clone(),
                    data: e.data.clone(),
                },
                None => Failure::BadAnswer(text),
            },
            ErrorKind::Json => {
                Failure::BadAnswer(format!("the server's answer does not parse: {text}"))
            }
            ErrorKind::Closed => Failure::Closed(text),
            ErrorKind::Timeout => Failure::Connection(format!("{text}; --timeout waits longer")),
            ErrorKind::Io => Failure::Connection(text),
            ErrorKind::Negotiation => {
                Failure::Connection(format!("{text}; --era handshake or --era modern may help"))
            }
            _ => Failure::Other(text),
        }
    }

    /// The failure in one line, for a message of another command (`serve`'s upstream errors).
    pub fn text(&self) -> String {
        match self {
            Failure::Usage(text)
            | Failure::Connection(text)
            | Failure::Closed(text)
            | Failure::BadAnswer(text)
            | Failure::Other(text) => text.clone(),
            Failure::Protocol { code, message, .. } => format!("{message} (code {code})"),
            Failure::Interrupted => "interrupted".into(),
        }
    }

    /// The exit code this failure ends the command with.
    pub fn exit(&self) -> Exit {
        match self {
            Failure::Usage(_) => Exit::Usage,
            Failure::Connection(_) | Failure::Closed(_) => Exit::Connection,
            Failure::Protocol { .. } | Failure::BadAnswer(_) => Exit::Protocol,
            Failure::Other(_) => Exit::Other,
            Failure::Interrupted => Exit::Interrupted,
        }
    }

    /// The failure in one line, for the UI's page.
    pub fn describe(&self) -> String {
        match self {
            Failure::Usage(message)
            | Failure::Connection(message)
            | Failure::Closed(message)
            | Failure::BadAnswer(message)
            | Failure::Other(message) => message.clone(),
            Failure::Protocol { code, message, .. } => {
                format!("the server answered with error {code}: {message}")
            }
            Failure::Interrupted => "interrupted; the request was cancelled at the server".into(),
        }
    }
}

/// `err` and every error beneath it, joined with ": ", for a person to read. An error's
/// `Display` is its own layer only ("I/O error"); what caused it is in `source()`.
pub fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sdk_error_is_reported_with_its_causes() {
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        match Failure::from_sdk(refused.into()) {
            Failure::Connection(message) => assert_eq!(message, "I/O error: refused"),
            other => panic!("not a connection failure: {other:?}"),
        }
    }
}
