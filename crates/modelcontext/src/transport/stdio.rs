//! Newline-delimited JSON over any reader/writer pair: the stdio transport of every revision.
//!
//! Spec (`basic/transports`, stdio): one JSON-RPC message per line, UTF-8, no embedded
//! newlines, nothing but MCP messages on the stream. A line longer than the configured limit
//! is skipped up to its newline and reported to the engine, which answers it with an error;
//! the connection keeps serving.

use modelcontext_types::{DecodeError, Message};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::{CHANNEL_CAPACITY, Connection, Incoming, Transport};

/// Default limit for one line: 4 MiB, the same as the HTTP body limit.
pub const DEFAULT_MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Newline-delimited JSON-RPC over a reader and a writer (stdin/stdout, pipes, sockets).
#[derive(Debug)]
pub struct Stdio<R, W> {
    reader: R,
    writer: W,
    max_line_bytes: usize,
}

impl Stdio<BufReader<tokio::io::Stdin>, tokio::io::Stdout> {
    /// The process's own stdin and stdout, for a server launched by a host.
    pub fn stdin_stdout() -> Self {
        Stdio::new(BufReader::new(tokio::io::stdin()), tokio::io::stdout())
    }
}

impl<R, W> Stdio<R, W> {
    /// A transport over `reader` and `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        Stdio { reader, writer, max_line_bytes: DEFAULT_MAX_LINE_BYTES }
    }

    /// Sets the longest line accepted, in bytes (without the newline).
    pub fn max_line_bytes(mut self, limit: usize) -> Self {
        self.max_line_bytes = limit;
        self
    }
}

impl<R, W> Transport for Stdio<R, W>
where
    R: AsyncBufRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    fn open(self) -> Connection {
        let (in_tx, in_rx) = mpsc::channel(CHANNEL_CAPACITY);
        let (out_tx, out_rx) = mpsc::channel(CHANNEL_CAPACITY);
        tokio::spawn(read_lines(self.reader, self.max_line_bytes, in_tx));
        let writer = tokio::spawn(write_lines(self.writer, out_rx));
        // Shutting down waits for the writer to flush what the engine already queued: a
        // server that exits on EOF must not lose its last answers.
        let flushed = async move {
            let _ = writer.await;
        };
        Connection { sender: out_tx, receiver: in_rx, shutdown: Some(Box::pin(flushed)) }
    }
}

/// One frame read from the stream.
enum Frame {
    Line(Vec<u8>),
    TooLong(usize),
    Eof,
}

async fn read_lines<R: AsyncBufRead + Unpin>(
    mut reader: R,
    limit: usize,
    tx: mpsc::Sender<Incoming>,
) {
    let mut line = Vec::new();
    loop {
        let incoming = match read_frame(&mut reader, &mut line, limit).await {
            Ok(Frame::Eof) | Err(_) => return,
            Ok(Frame::TooLong(len)) => Err(DecodeError::Invalid {
                id: None,
                reason: format!("message of more than {len} bytes exceeds the limit of {limit}"),
            }),
            Ok(Frame::Line(bytes)) if is_blank(&bytes) => continue,
            Ok(Frame::Line(bytes)) => Message::decode(&bytes),
        };
        if tx.send(incoming).await.is_err() {
            return;
        }
    }
}

fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_whitespace)
}

/// Reads up to the next `\n` without ever buffering more than `limit` bytes of one line.
async fn read_frame<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Frame> {
    line.clear();
    let mut skipped = 0usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // EOF: a final line without a newline still counts.
            return Ok(match (skipped, line.is_empty()) {
                (0, true) => Frame::Eof,
                (0, false) => Frame::Line(std::mem::take(line)),
                (n, _) => Frame::TooLong(n),
            });
        }
        let (chunk, found) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if skipped > 0 || line.len() + chunk.len() > limit {
            skipped += line.len() + chunk.len();
            line.clear();
        } else {
            line.extend_from_slice(chunk);
        }
        let consumed = found.unwrap_or(available.len());
        reader.consume(consumed);
        if found.is_some() {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(if skipped > 0 {
                Frame::TooLong(skipped)
            } else {
                Frame::Line(std::mem::take(line))
            });
        }
    }
}

/// Writes each message as one line, batching whatever is already queued into one write.
async fn write_lines<W: AsyncWrite + Unpin>(mut writer: W, mut rx: mpsc::Receiver<Message>) {
    let mut buf = Vec::with_capacity(8 * 1024);
    while let Some(message) = rx.recv().await {
        buf.clear();
        push_line(&mut buf, &message);
        while let Ok(message) = rx.try_recv() {
            push_line(&mut buf, &message);
        }
        if writer.write_all(&buf).await.is_err() || writer.flush().await.is_err() {
            return;
        }
    }
    let _ = writer.shutdown().await;
}

fn push_line(buf: &mut Vec<u8>, message: &Message) {
    message.encode_into(buf);
    buf.push(b'\n');
}
