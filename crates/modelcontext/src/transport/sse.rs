//! Server-sent events (the WHATWG `text/event-stream` format), both directions: the HTTP
//! server writes events with [`write_event`], the HTTP client reads them with [`SseDecoder`].
//!
//! Streamable HTTP carries one JSON-RPC message per event (`data:`), event ids for
//! resumability (`id:`, echoed back as `Last-Event-ID`), the reconnection delay (`retry:`), and
//! keep-alive comments (`:`) that readers must ignore.

use std::fmt;

/// Appends one event. `data` may span lines: each becomes its own `data:` line, and the reader
/// joins them back with `\n`. Line breaks in `id` or `event` would end the field early, so
/// they are dropped.
pub(crate) fn write_event(buf: &mut Vec<u8>, id: Option<&str>, event: Option<&str>, data: &str) {
    if let Some(id) = id {
        write_field(buf, "id", id);
    }
    if let Some(event) = event {
        write_field(buf, "event", event);
    }
    for line in lines(data) {
        write_field(buf, "data", line);
    }
    buf.push(b'\n');
}

/// Appends a comment (keep-alive), which every reader ignores.
pub(crate) fn comment(buf: &mut Vec<u8>, text: &str) {
    for line in lines(text) {
        buf.push(b':');
        if !line.is_empty() {
            buf.push(b' ');
            buf.extend_from_slice(line.as_bytes());
        }
        buf.push(b'\n');
    }
    buf.push(b'\n');
}

/// Appends a `retry:` field: how long the reader waits before reconnecting, in milliseconds.
// For the server's priming event (spec 2025-11-25: SHOULD send `retry` before closing a
// stream); until the server sends one, only the tests use it.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn retry(buf: &mut Vec<u8>, ms: u64) {
    buf.extend_from_slice(format!("retry: {ms}\n\n").as_bytes());
}

fn write_field(buf: &mut Vec<u8>, name: &str, value: &str) {
    buf.extend_from_slice(name.as_bytes());
    buf.push(b':');
    if !value.is_empty() {
        buf.push(b' ');
        buf.extend(value.bytes().filter(|b| *b != b'\r' && *b != b'\n'));
    }
    buf.push(b'\n');
}

/// Splits on `\r\n`, `\r` and `\n`, the three line ends the format allows.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        match text.find(['\r', '\n']) {
            Some(i) => {
                let skip = if text[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = Some(&text[i + skip..]);
                Some(&text[..i])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

/// One dispatched event: the fields of a block of lines ended by a blank line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SseEvent {
    /// The block's `id:` field, when it had one (the decoder also remembers it across events).
    pub id: Option<String>,
    /// The event type; `None` means the default, `message`.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`; empty for a block without data (a priming event).
    pub data: String,
    /// The block's `retry:` field, in milliseconds.
    pub retry: Option<u64>,
}

/// An event grew past the decoder's limit; it is skipped up to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventTooLarge {
    /// The limit in bytes.
    pub limit: usize,
}

impl fmt::Display for EventTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an SSE event exceeds the limit of {} bytes", self.limit)
    }
}

/// Decodes a `text/event-stream` body incrementally: feed it chunks as they arrive, whatever
/// their boundaries (a chunk may end inside a line, a UTF-8 character or a `\r\n`).
#[derive(Debug)]
pub(crate) struct SseDecoder {
    max_event_bytes: usize,
    /// The current line, not yet terminated.
    line: Vec<u8>,
    /// The previous chunk ended with `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
    /// Still at the very start of the stream, where one UTF-8 BOM is skipped.
    at_start: bool,
    /// The event being built.
    pending: SseEvent,
    /// Bytes of `pending`, counted against the limit.
    pending_bytes: usize,
    /// The block has at least one field, so a blank line dispatches it.
    has_fields: bool,
    /// The current event overflowed: skip to its blank line.
    skipping: bool,
    /// Bytes of the current line were dropped, so it is not blank even if `line` is empty.
    line_dropped: bool,
    /// The last `id:` seen, kept across events (the reader's "last event ID buffer").
    last_event_id: Option<String>,
}

impl SseDecoder {
    /// A decoder that refuses events larger than `max_event_bytes`: their field lines, each
    /// with its line end, together.
    pub(crate) fn new(max_event_bytes: usize) -> SseDecoder {
        SseDecoder {
            max_event_bytes,
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            pending: SseEvent::default(),
            pending_bytes: 0,
            has_fields: false,
            skipping: false,
            line_dropped: false,
            last_event_id: None,
        }
    }

    /// The id of the last event that carried one: what a reconnect sends as `Last-Event-ID`.
    pub(crate) fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// Feeds one chunk, appending every event it completes to `out`.
    pub(crate) fn feed(
        &mut self,
        mut chunk: &[u8],
        out: &mut Vec<Result<SseEvent, EventTooLarge>>,
    ) {
        if self.at_start && !chunk.is_empty() {
            let bom = b"\xEF\xBB\xBF";
            let have = self.line.len() + chunk.len();
            // The BOM may itself arrive split; wait for three bytes before deciding.
            if have < bom.len() && bom.starts_with(&[self.line.as_slice(), chunk].concat()) {
                self.line.extend_from_slice(chunk);
                return;
            }
            self.at_start = false;
            let head = [std::mem::take(&mut self.line).as_slice(), chunk].concat();
            let body = head.strip_prefix(bom).unwrap_or(&head).to_vec();
            return self.feed_lines(&body, out);
        }
        if self.after_cr && chunk.first() == Some(&b'\n') {
            chunk = &chunk[1..];
        }
        self.after_cr = false;
        self.feed_lines(chunk, out);
    }

    fn feed_lines(&mut self, mut chunk: &[u8], out: &mut Vec<Result<SseEvent, EventTooLarge>>) {
        while let Some(end) = chunk.iter().position(|b| *b == b'\n' || *b == b'\r') {
            self.push_partial(&chunk[..end]);
            let line = std::mem::take(&mut self.line);
            self.line = Vec::with_capacity(line.capacity().min(1024));
            let dropped = std::mem::take(&mut self.line_dropped);
            if let Some(result) = self.process_line(&line, dropped) {
                out.push(result);
            }
            let crlf = chunk[end] == b'\r' && chunk.get(end + 1) == Some(&b'\n');
            if chunk[end] == b'\r' && end + 1 == chunk.len() {
                self.after_cr = true;
            }
            chunk = &chunk[end + if crlf { 2 } else { 1 }..];
        }
        self.push_partial(chunk);
    }

    /// Adds bytes of an unterminated line, dropping them once the event is over the limit.
    fn push_partial(&mut self, bytes: &[u8]) {
        // Nothing to add (the blank line that ends a block) cannot overflow anything.
        if bytes.is_empty() {
            return;
        }
        if self.skipping {
            self.line_dropped |= !bytes.is_empty();
            return;
        }
        if self.pending_bytes + self.line.len() + bytes.len() > self.max_event_bytes {
            self.skipping = true;
            self.line_dropped = true;
            self.line.clear();
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    /// Handles one complete line; a blank line ends the block.
    fn process_line(
        &mut self,
        line: &[u8],
        dropped: bool,
    ) -> Option<Result<SseEvent, EventTooLarge>> {
        if line.is_empty() && !dropped {
            return self.dispatch();
        }
        if self.skipping || dropped || line.first() == Some(&b':') {
            return None;
        }
        let line = String::from_utf8_lossy(line);
        let (name, value) = match line.split_once(':') {
            Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        self.pending_bytes += line.len() + 1;
        if self.pending_bytes > self.max_event_bytes {
            // Over only by its line end: still too large, and reported as such at the blank line.
            self.skipping = true;
            return None;
        }
        match name {
            "data" => {
                self.pending.data.push_str(value);
                self.pending.data.push('\n');
            }
            "event" => self.pending.event = Some(value.to_owned()),
            // An id containing NUL is ignored (WHATWG HTML, "process the field").
            "id" if !value.contains('\0') => self.pending.id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.pending.retry = value.parse().ok();
            }
            _ => return None,
        }
        self.has_fields = true;
        None
    }

    fn dispatch(&mut self) -> Option<Result<SseEvent, EventTooLarge>> {
        let mut event = std::mem::take(&mut self.pending);
        let (has_fields, skipping) = (self.has_fields, self.skipping);
        self.pending_bytes = 0;
        self.has_fields = false;
        self.skipping = false;
        if skipping {
            return Some(Err(EventTooLarge { limit: self.max_event_bytes }));
        }
        if !has_fields {
            return None;
        }
        if event.data.ends_with('\n') {
            event.data.pop();
        }
        if let Some(id) = &event.id {
            self.last_event_id = Some(id.clone());
        }
        Some(Ok(event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `chunks` and renders each event on one line, for literal comparison.
    fn decode(limit: usize, chunks: &[&[u8]]) -> Vec<String> {
        let mut decoder = SseDecoder::new(limit);
        let mut out = Vec::new();
        for chunk in chunks {
            decoder.feed(chunk, &mut out);
        }
        out.into_iter()
            .map(|event| match event {
                Ok(e) => format!(
                    "id={:?} event={:?} data={:?} retry={:?}",
                    e.id, e.event, e.data, e.retry
                ),
                Err(e) => e.to_string(),
            })
            .collect()
    }

    #[test]
    fn one_event_with_every_field() {
        let got = decode(1024, &[b"id: 7\nevent: message\nretry: 1500\ndata: {\"a\":1}\n\n"]);
        assert_eq!(
            got,
            [r#"id=Some("7") event=Some("message") data="{\"a\":1}" retry=Some(1500)"#]
        );
    }

    #[test]
    fn crlf_cr_and_lf_line_ends_mix() {
        let got = decode(1024, &[b"data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r"]);
        assert_eq!(
            got,
            [
                r#"id=None event=None data="a\nb\nc" retry=None"#,
                r#"id=None event=None data="d" retry=None"#
            ]
        );
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_end() {
        let got = decode(1024, &[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
        assert_eq!(got, [r#"id=None event=None data="a\nb" retry=None"#]);
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let stream =
            "\u{feff}: hi\r\nid: 1\r\ndata: {\"x\":\"é\"}\r\n\r\nevent: ping\ndata\n\n".as_bytes();
        let whole = decode(1024, &[stream]);
        assert_eq!(whole.len(), 2, "{whole:?}");
        for split in 0..stream.len() {
            assert_eq!(
                decode(1024, &[&stream[..split], &stream[split..]]),
                whole,
                "split at {split}"
            );
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(decode(1024, &bytes), whole);
    }

    #[test]
    fn comments_and_unknown_fields_are_ignored() {
        let got = decode(1024, &[b": keep-alive\n\n:\nfoo: bar\ndata:x\n\n"]);
        assert_eq!(got, [r#"id=None event=None data="x" retry=None"#]);
    }

    #[test]
    fn only_one_leading_space_is_stripped() {
        let got = decode(1024, &[b"data:  two\ndata:none\ndata\n\n"]);
        assert_eq!(got, [r#"id=None event=None data=" two\nnone\n" retry=None"#]);
    }

    #[test]
    fn priming_event_has_an_id_and_no_data() {
        let mut decoder = SseDecoder::new(1024);
        let mut out = Vec::new();
        decoder.feed(b"id: prime-1\ndata:\n\nretry: 10\n\n", &mut out);
        assert_eq!(decoder.last_event_id(), Some("prime-1"));
        let events: Vec<_> = out.into_iter().flatten().collect();
        assert_eq!(events[0].data, "");
        assert_eq!(events[1].retry, Some(10));
        assert_eq!(events[1].id, None, "an event without id: keeps the decoder's last id only");
        assert_eq!(decoder.last_event_id(), Some("prime-1"));
    }

    #[test]
    fn bad_retry_and_nul_ids_are_ignored() {
        let got = decode(1024, &[b"retry: 1s\nid: a\0b\ndata: x\n\n"]);
        assert_eq!(got, [r#"id=None event=None data="x" retry=None"#]);
    }

    #[test]
    fn an_oversized_event_is_reported_once_and_skipped() {
        let big = format!("data: {}\n\ndata: ok\n\n", "x".repeat(100));
        let got = decode(32, &[big.as_bytes()]);
        assert_eq!(
            got,
            [
                "an SSE event exceeds the limit of 32 bytes",
                r#"id=None event=None data="ok" retry=None"#
            ]
        );
        // Split into many small lines, the total still counts.
        let many = "data: aaaaaaaa\n".repeat(10) + "\n";
        assert_eq!(decode(32, &[many.as_bytes()]), ["an SSE event exceeds the limit of 32 bytes"]);
    }

    #[test]
    fn an_unterminated_event_at_the_end_is_not_dispatched() {
        assert!(decode(1024, &[b"data: half"]).is_empty());
    }

    #[test]
    fn written_events_decode_to_what_was_written() {
        let mut buf = Vec::new();
        write_event(&mut buf, Some("s1-4"), Some("message"), "line one\nline two\r\nthree");
        comment(&mut buf, "keep-alive");
        retry(&mut buf, 3000);
        write_event(&mut buf, Some("bad\nid"), None, "");
        assert_eq!(
            String::from_utf8_lossy(&buf),
            "id: s1-4\nevent: message\ndata: line one\ndata: line two\ndata: three\n\n\
             : keep-alive\n\nretry: 3000\n\nid: badid\ndata:\n\n"
        );
        assert_eq!(
            decode(1024, &[&buf]),
            [
                r#"id=Some("s1-4") event=Some("message") data="line one\nline two\nthree" retry=None"#,
                r#"id=None event=None data="" retry=Some(3000)"#,
                r#"id=Some("badid") event=None data="" retry=None"#,
            ]
        );
    }
}
