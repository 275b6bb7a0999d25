//! A server launched as a child process, spoken to over its stdin and stdout.
//!
//! Shutdown follows the spec's stdio section: close the child's stdin, give it time to exit,
//! then SIGTERM, then SIGKILL.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio as ProcessStdio;
use std::time::Duration;

use tokio::io::BufReader;
use tokio::process::{Child, Command};

use super::{Connection, Stdio, Transport};

/// How long the child gets after its stdin closes, and again after SIGTERM.
const GRACE: Duration = Duration::from_secs(2);

/// A command to run as an MCP server over stdio.
#[derive(Debug)]
pub struct ChildProcess {
    command: Command,
    max_line_bytes: usize,
}

impl ChildProcess {
    /// A child running `program`. Its stderr is inherited: servers log there.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        let mut command = Command::new(program);
        command.stdin(ProcessStdio::piped()).stdout(ProcessStdio::piped());
        command.stderr(ProcessStdio::inherit()).kill_on_drop(true);
        ChildProcess { command, max_line_bytes: super::DEFAULT_MAX_LINE_BYTES }
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.command.args(args);
        self
    }

    /// Sets an environment variable for the child.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    /// Sets the child's working directory.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.command.current_dir(dir);
        self
    }

    /// Discards the child's stderr instead of inheriting it.
    pub fn quiet(mut self) -> Self {
        self.command.stderr(ProcessStdio::null());
        self
    }

    /// Sets the longest line accepted from the child, in bytes.
    pub fn max_line_bytes(mut self, limit: usize) -> Self {
        self.max_line_bytes = limit;
        self
    }

    /// The underlying command, for anything the builder does not cover.
    pub fn command_mut(&mut self) -> &mut Command {
        &mut self.command
    }

    /// Starts the child and returns the connection to it.
    pub fn spawn(mut self) -> std::io::Result<Connection> {
        let mut child = self.command.spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other("child process has no stdin/stdout pipes"));
        };
        let mut connection =
            Stdio::new(BufReader::new(stdout), stdin).max_line_bytes(self.max_line_bytes).open();
        let flushed = connection.shutdown.take();
        connection.shutdown = Some(Box::pin(async move {
            if let Some(flushed) = flushed {
                flushed.await;
            }
            reap(child).await;
        }));
        Ok(connection)
    }
}

/// Waits for the child after its stdin closed, escalating to SIGTERM and SIGKILL.
async fn reap(mut child: Child) {
    if tokio::time::timeout(GRACE, child.wait()).await.is_ok() {
        return;
    }
    terminate(&child);
    if tokio::time::timeout(GRACE, child.wait()).await.is_ok() {
        return;
    }
    let _ = child.kill().await;
}

#[cfg(unix)]
#[allow(unsafe_code)]
fn terminate(child: &Child) {
    if let Some(pid) = child.id().and_then(|pid| i32::try_from(pid).ok()) {
        // SAFETY: kill(2) with a pid we own and a valid signal number has no memory effects.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
}

#[cfg(not(unix))]
fn terminate(_child: &Child) {}
