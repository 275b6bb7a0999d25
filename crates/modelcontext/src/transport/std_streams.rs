//! The process's stdin and stdout, read and written without Tokio's blocking pool when they
//! are pipes.
//!
//! `tokio::io::stdin()` hands every read to a blocking-pool thread, so each line costs two
//! thread wake-ups (and on a server pinned to one CPU, context switches). A host launches a
//! stdio server with pipes, and a pipe can be polled by the reactor like a socket: on Unix,
//! when fd 0 or fd 1 is a FIFO, we read or write it through [`tokio::net::unix::pipe`] in
//! non-blocking mode. Anything else (a terminal, a regular file, a socket, or another OS)
//! keeps Tokio's portable handles.
//!
//! Non-blocking mode belongs to the open file description, which the host's end does not
//! share but a child process spawned with inherited stdio would. We switch it on for a
//! duplicate of the descriptor and switch it back off when the handle is dropped, so the
//! process leaves its stdio as it found it.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The process's stdin: a reactor-driven pipe when possible, Tokio's stdin otherwise.
#[derive(Debug)]
pub struct ProcessStdin(Input);

#[derive(Debug)]
enum Input {
    #[cfg(unix)]
    Pipe(unix::Restoring<tokio::net::unix::pipe::Receiver>),
    Portable(tokio::io::Stdin),
}

/// The process's stdout: a reactor-driven pipe when possible, Tokio's stdout otherwise.
#[derive(Debug)]
pub struct ProcessStdout(Output);

#[derive(Debug)]
enum Output {
    #[cfg(unix)]
    Pipe(unix::Restoring<tokio::net::unix::pipe::Sender>),
    Portable(tokio::io::Stdout),
}

impl ProcessStdin {
    /// Opens stdin. Needs a Tokio runtime with IO enabled when stdin is a pipe.
    pub fn open() -> ProcessStdin {
        #[cfg(unix)]
        if let Some(pipe) = unix::stdin_pipe() {
            return ProcessStdin(Input::Pipe(pipe));
        }
        ProcessStdin(Input::Portable(tokio::io::stdin()))
    }
}

impl ProcessStdout {
    /// Opens stdout. Needs a Tokio runtime with IO enabled when stdout is a pipe.
    pub fn open() -> ProcessStdout {
        #[cfg(unix)]
        if let Some(pipe) = unix::stdout_pipe() {
            return ProcessStdout(Output::Pipe(pipe));
        }
        ProcessStdout(Output::Portable(tokio::io::stdout()))
    }
}

impl AsyncRead for ProcessStdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            Input::Pipe(pipe) => match &mut pipe.inner {
                Some(pipe) => Pin::new(pipe).poll_read(cx, buf),
                None => Poll::Ready(Ok(())),
            },
            Input::Portable(stdin) => Pin::new(stdin).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ProcessStdout {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            Output::Pipe(pipe) => match &mut pipe.inner {
                Some(pipe) => Pin::new(pipe).poll_write(cx, buf),
                None => Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
            },
            Output::Portable(stdout) => Pin::new(stdout).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            Output::Pipe(pipe) => match &mut pipe.inner {
                Some(pipe) => Pin::new(pipe).poll_flush(cx),
                None => Poll::Ready(Ok(())),
            },
            Output::Portable(stdout) => Pin::new(stdout).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            // Closing our duplicate would not close stdout; there is nothing to shut down.
            #[cfg(unix)]
            Output::Pipe(_) => Poll::Ready(Ok(())),
            Output::Portable(stdout) => Pin::new(stdout).poll_shutdown(cx),
        }
    }
}

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::os::fd::{AsFd, BorrowedFd};

    use tokio::net::unix::pipe;

    /// A pipe end in non-blocking mode that goes back to blocking mode when dropped.
    #[derive(Debug)]
    pub(super) struct Restoring<P: Blocking> {
        pub(super) inner: Option<P>,
    }

    /// A pipe end that can be turned back into a blocking descriptor.
    pub(super) trait Blocking: Sized {
        fn restore(self);
    }

    impl Blocking for pipe::Receiver {
        fn restore(self) {
            // Drops (closes) our duplicate after clearing O_NONBLOCK on the shared description.
            let _ = self.into_blocking_fd();
        }
    }

    impl Blocking for pipe::Sender {
        fn restore(self) {
            let _ = self.into_blocking_fd();
        }
    }

    impl<P: Blocking> Drop for Restoring<P> {
        fn drop(&mut self) {
            if let Some(pipe) = self.inner.take() {
                pipe.restore();
            }
        }
    }

    pub(super) fn stdin_pipe() -> Option<Restoring<pipe::Receiver>> {
        let file = duplicate_fifo(std::io::stdin().as_fd())?;
        // `from_file` checks the access mode and sets O_NONBLOCK.
        pipe::Receiver::from_file(file).ok().map(|pipe| Restoring { inner: Some(pipe) })
    }

    pub(super) fn stdout_pipe() -> Option<Restoring<pipe::Sender>> {
        let file = duplicate_fifo(std::io::stdout().as_fd())?;
        pipe::Sender::from_file(file).ok().map(|pipe| Restoring { inner: Some(pipe) })
    }

    /// A duplicate of `fd` when it is a FIFO and a runtime is there to poll it.
    fn duplicate_fifo(fd: BorrowedFd<'_>) -> Option<File> {
        use std::os::unix::fs::FileTypeExt;
        tokio::runtime::Handle::try_current().ok()?;
        let file = File::from(fd.try_clone_to_owned().ok()?);
        file.metadata().ok()?.file_type().is_fifo().then_some(file)
    }
}
