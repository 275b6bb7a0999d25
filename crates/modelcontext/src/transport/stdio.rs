//! Newline-delimited JSON over any reader/writer pair: the stdio transport of every revision.
//!
//! Spec (`basic/transports`, stdio): one JSON-RPC message per line, UTF-8, no embedded
//! newlines, nothing but MCP messages on the stream. A line longer than the configured limit
//! is skipped up to its newline and reported to the engine, which answers it with an error;
//! the connection keeps serving. A line holding a JSON array is a 2025-03-26 batch
//! ([`DecodeError::Batch`]): the engine answers it, or refuses it on any other revision, and
//! its answer goes out as one line ([`Message::BatchResponse`]).

use modelcontext_types::{DecodeError, MAX_JSON_DEPTH, Message};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::std_streams::{ProcessStdin, ProcessStdout};
use super::{CHANNEL_CAPACITY, Connection, Incoming, Transport};

/// Default limit for one line: 4 MiB, the same as the HTTP body limit.
pub const DEFAULT_MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Newline-delimited JSON-RPC over a reader and a writer (stdin/stdout, pipes, sockets).
#[derive(Debug)]
pub struct Stdio<R, W> {
    reader: R,
    writer: W,
    max_line_bytes: usize,
    max_json_depth: usize,
}

impl Stdio<BufReader<ProcessStdin>, ProcessStdout> {
    /// The process's own stdin and stdout, for a server launched by a host. Pipes are polled
    /// by the runtime's reactor (see [`ProcessStdin`]), so the runtime needs IO enabled, as
    /// `#[tokio::main]` has it.
    pub fn stdin_stdout() -> Self {
        let stdin = BufReader::with_capacity(STDIN_BUFFER_BYTES, ProcessStdin::open());
        Stdio::new(stdin, ProcessStdout::open())
    }
}

/// The read buffer of a process's stdin: a burst of 64 pipelined requests (about 15 KiB)
/// in one read. A longer line is gathered across reads, whatever this size. The buffer is
/// zeroed when made, so every page of it is touched at start: 64 KiB cost a server's cold
/// start 16 page faults for reads it never needed to be that large.
const STDIN_BUFFER_BYTES: usize = 16 * 1024;

impl<R, W> Stdio<R, W> {
    /// A transport over `reader` and `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        Stdio {
            reader,
            writer,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_json_depth: MAX_JSON_DEPTH,
        }
    }

    /// Sets the longest line accepted, in bytes (without the newline).
    pub fn max_line_bytes(mut self, limit: usize) -> Self {
        self.max_line_bytes = limit;
        self
    }

    /// Sets how deep arrays and objects may nest in one message (at most
    /// [`MAX_JSON_DEPTH`], the default); deeper is a parse error.
    pub fn max_json_depth(mut self, depth: usize) -> Self {
        self.max_json_depth = depth.min(MAX_JSON_DEPTH);
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
        let limits = Limits { line_bytes: self.max_line_bytes, json_depth: self.max_json_depth };
        tokio::spawn(read_lines(self.reader, limits, in_tx));
        let writer = tokio::spawn(write_lines(self.writer, out_rx));
        // Shutting down waits for the writer to flush what the engine already queued: a
        // server that exits on EOF must not lose its last answers.
        let flushed = async move {
            let _ = writer.await;
        };
        Connection { sender: out_tx, receiver: in_rx, shutdown: Some(Box::pin(flushed)) }
    }
}

/// What one message may be.
#[derive(Clone, Copy)]
struct Limits {
    line_bytes: usize,
    json_depth: usize,
}

/// Every this many messages the reader lets the engine and the writer run before it decodes
/// more, so it never decodes more than this many in a row. A pipelining peer sends a burst of
/// requests in one write; decoding the whole burst before answering any of it would hold
/// every answer until the last request is handled, so the peer and the server would take
/// turns instead of working at once. With answers going out a slice at a time, a peer that
/// sends 64 requests at once (mcpbench's stdio C=64) reads the first answers and sends more
/// requests while the server is still at the rest of the burst: 1.7x the calls per second,
/// and half the median latency (BENCHMARKS.md).
const READ_SLICE: usize = 16;

async fn read_lines<R: AsyncBufRead + Unpin>(
    mut reader: R,
    limits: Limits,
    tx: mpsc::Sender<Incoming>,
) {
    let mut line = Vec::new();
    let mut in_slice = 0;
    loop {
        let incoming = match read_frame(&mut reader, &mut line, limits).await {
            Ok(Frame::Eof) | Err(_) => return,
            Ok(Frame::Blank) => continue,
            Ok(Frame::Message(incoming)) => incoming,
        };
        if tx.send(incoming).await.is_err() {
            return;
        }
        in_slice += 1;
        if in_slice == READ_SLICE {
            in_slice = 0;
            // Runs every other task that is ready first (on a current-thread runtime, the
            // engine, then the writer with the slice's answers), then reads on.
            tokio::task::yield_now().await;
        }
    }
}

/// One frame read from the stream, decoded.
enum Frame {
    Message(Incoming),
    Blank,
    Eof,
}

/// Reads up to the next `\n` without ever buffering more than `limit` bytes of one line, and
/// decodes it. A line that fits in the reader's buffer (the usual case) is decoded where it
/// lies; only a line split across reads is copied into `line` first.
async fn read_frame<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    limits: Limits,
) -> std::io::Result<Frame> {
    let Limits { line_bytes: limit, json_depth } = limits;
    line.clear();
    let mut skipped = 0usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // EOF: a final line without a newline still counts. It has no CRLF, so the byte
            // of slack kept for a `\r` is over the limit here.
            return Ok(match (skipped, line.len()) {
                (0, 0) => Frame::Eof,
                (0, len) if len > limit => too_long(len, limit),
                (0, _) => decode_line(line, json_depth),
                (n, _) => too_long(n, limit),
            });
        }
        let Some(newline) = find_newline(available) else {
            let chunk = available.len();
            // One byte of slack: it may be the `\r` of a CRLF that ends a full-size message.
            if skipped > 0 || line.len() + chunk > limit.saturating_add(1) {
                skipped += line.len() + chunk;
                line.clear();
            } else {
                line.extend_from_slice(available);
            }
            reader.consume(chunk);
            continue;
        };
        let chunk = &available[..newline];
        // The `\r` of a CRLF line end is not part of the message.
        let cr = usize::from(chunk.last().or(line.last()) == Some(&b'\r'));
        let frame = if skipped > 0 || line.len() + chunk.len() - cr > limit {
            too_long(skipped + line.len() + chunk.len(), limit)
        } else if line.is_empty() {
            decode_line(without_cr(chunk), json_depth)
        } else {
            line.extend_from_slice(chunk);
            decode_line(without_cr(line), json_depth)
        };
        reader.consume(newline + 1);
        return Ok(frame);
    }
}

/// The first `\n` in `bytes`. On x86_64 with the SSE2 searcher, which every such CPU has:
/// `memchr::memchr` would pick AVX2 at run time, asking the CPU on the first line, and in a
/// virtual machine that question (`cpuid`) traps to the hypervisor: about 30 µs of a server's
/// cold start (`modelcontext_types`' byte searches make the same choice).
fn find_newline(bytes: &[u8]) -> Option<usize> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if let Some(searcher) = memchr::arch::x86_64::sse2::memchr::One::new(b'\n') {
        return searcher.find(bytes);
    }
    memchr::memchr(b'\n', bytes)
}

/// A line without the `\r` of its CRLF end (only a line that ended in `\n` has one).
fn without_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn decode_line(bytes: &[u8], json_depth: usize) -> Frame {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Frame::Blank;
    }
    Frame::Message(Message::decode_with_depth(bytes, json_depth))
}

fn too_long(len: usize, limit: usize) -> Frame {
    Frame::Message(Err(DecodeError::Invalid {
        id: None,
        reason: format!("message of more than {len} bytes exceeds the limit of {limit}"),
    }))
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
