//! The bad-input corpus: tables of hostile or malformed input in seven groups, each case with
//! the exact answer the spec prescribes (wire JSON, HTTP status and body, registration error),
//! each followed by a request that must still succeed on the same connection.
//!
//! A case is data: a name, an input and an `expect!` snapshot (`UPDATE_EXPECT=1` refreshes
//! them; review the diff against the spec). A group runs every case, then fails once, naming
//! each failed case as `group/case`. [`KNOWN_GAPS`] lists cases whose snapshot is the spec's
//! answer but whose code lives elsewhere and does not give it yet: they are reported, not
//! failed, and reported again once they pass so they can leave the list.

use std::panic::{AssertUnwindSafe, catch_unwind};

use expect_test::Expect;

mod envelope;
#[cfg(feature = "http")]
mod http;
mod lifecycle;
mod schema;
#[cfg(feature = "http")]
mod sse;
mod stdio;
mod uri_template;

/// Cases whose snapshot holds the spec's answer but whose behaviour is owned by another part of
/// the code base and is not there yet: `(group, case, what is wrong)`. A gap counts as closed
/// once the answer has the snapshot's status, id and result-or-error code, whatever the wording.
const KNOWN_GAPS: &[(&str, &str, &str)] = &[];

/// One row of a group's table.
pub(crate) struct Case<T> {
    pub name: &'static str,
    pub input: T,
    pub expect: Expect,
}

/// Shorthand for a table row.
pub(crate) fn case<T>(name: &'static str, input: T, expect: Expect) -> Case<T> {
    Case { name, input, expect }
}

/// Runs every case of `group` through `run` (which returns the observed answer as text and
/// panics if the connection stopped serving), then fails once listing every failed case.
pub(crate) fn run_group<T>(
    group: &str,
    minimum: usize,
    cases: Vec<Case<T>>,
    run: impl Fn(&T) -> String,
) {
    assert!(cases.len() >= minimum, "{group}: {} cases, expected at least {minimum}", cases.len());
    eprintln!("corpus {group}: {} cases", cases.len());
    let mut failed = Vec::new();
    for case in &cases {
        let label = format!("{group}/{}", case.name);
        let outcome = catch_unwind(AssertUnwindSafe(|| run(&case.input)));
        let actual = match outcome {
            Ok(actual) => actual,
            Err(panic) => {
                failed.push(format!("{label}: {}", panic_text(&*panic)));
                continue;
            }
        };
        if let Some((_, _, why)) =
            KNOWN_GAPS.iter().find(|(g, c, _)| *g == group && *c == case.name)
        {
            if same_answer(&actual, case.expect.data().trim()) {
                eprintln!("known gap {label} now passes: remove it from KNOWN_GAPS");
            } else {
                eprintln!(
                    "known gap {label} ({why}):\n  spec: {}\n  got:  {actual}",
                    case.expect.data()
                );
            }
            continue;
        }
        if catch_unwind(AssertUnwindSafe(|| case.expect.assert_eq(&actual))).is_err() {
            failed.push(format!("{label}: got {actual}"));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} cases failed:\n{}",
        failed.len(),
        cases.len(),
        failed.join("\n")
    );
}

/// Whether two answers agree on what matters to a peer: HTTP status (if any), id, and result or
/// error code.
fn same_answer(actual: &str, expected: &str) -> bool {
    fn key(answer: &str) -> Option<(String, serde_json::Value, Option<i64>, bool)> {
        let (status, json) = match answer.split_once(' ') {
            Some((status, json)) if status.parse::<u16>().is_ok() => (status, json),
            _ => ("", answer),
        };
        let value: serde_json::Value = serde_json::from_str(json).ok()?;
        let code = value["error"]["code"].as_i64();
        Some((status.to_owned(), value["id"].clone(), code, value.get("result").is_some()))
    }
    actual == expected || key(actual).is_some_and(|k| Some(k) == key(expected))
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    match (panic.downcast_ref::<String>(), panic.downcast_ref::<&str>()) {
        (Some(text), _) => text.clone(),
        (None, Some(text)) => (*text).to_owned(),
        _ => "panicked".to_owned(),
    }
}

/// Runs `future` on a fresh single-threaded runtime: one per case, so a case's server tasks
/// end with it.
pub(crate) fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(future)
}

#[cfg(feature = "http")]
#[test]
fn the_corpus_has_at_least_130_cases_in_seven_groups() {
    let counts = [
        ("stdio framing", stdio::cases().len()),
        ("JSON-RPC envelope", envelope::cases().len()),
        ("lifecycle and params", lifecycle::cases().len()),
        ("HTTP headers and statuses", http::cases().len()),
        ("SSE", sse::server_cases().len() + sse::client_cases().len()),
        ("URI templates", uri_template::negative_cases().len() + uri_template::wire_cases().len()),
        ("JSON Schema", schema::cases().len()),
    ];
    let total: usize = counts.iter().map(|(_, n)| n).sum();
    for (group, n) in counts {
        eprintln!("{group}: {n}");
        assert!(n >= 10, "{group} has only {n} cases");
    }
    eprintln!("total: {total}");
    assert!(total >= 130, "{total} cases");
}

// ---------------------------------------------------------------------------------------------
// The stdio wire, shared by the framing, envelope and lifecycle groups
// ---------------------------------------------------------------------------------------------

/// The line limit of every wire case (small, so over-limit lines stay cheap).
pub(crate) const LINE_LIMIT: usize = 4096;

/// The state a wire case starts from, which also picks the request that proves the
/// connection still serves afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// Nothing sent yet; `ping` afterwards (allowed before initialization).
    Fresh,
    /// Nothing sent yet, the case pins the modern era; a modern `tools/list` afterwards.
    FreshModern,
    /// After `initialize` and `notifications/initialized`; `ping` afterwards.
    Handshake,
    /// After a modern `tools/list` pinned the 2026-07-28 era; a modern `tools/list` afterwards.
    Modern,
}

/// What a wire case sends: raw lines (a newline is added to each), from a starting state.
pub(crate) struct Lines {
    pub start: Start,
    pub lines: Vec<Vec<u8>>,
}

/// One line sent after `start`.
pub(crate) fn line(start: Start, line: impl Into<Vec<u8>>) -> Lines {
    Lines { start, lines: vec![line.into()] }
}

/// Sends the case's lines to a fresh bookshop over the stdio framing, then the liveness probe;
/// returns every line the server sent before the probe's answer (`(no answer)` if none). Every
/// line is checked against the revision's schema; the probe must succeed.
pub(crate) fn run_wire(case: &Lines) -> String {
    use crate::support::{MODERN_META, Wire, bookshop};
    block_on(async {
        let modern = matches!(case.start, Start::Modern | Start::FreshModern);
        let revision = if modern { "2026-07-28" } else { "2025-11-25" };
        let mut wire = Wire::start_with(bookshop(), revision, |s| s.max_line_bytes(LINE_LIMIT));
        let list = format!(
            r#"{{"jsonrpc":"2.0","id":"alive","method":"tools/list","params":{{{MODERN_META}}}}}"#
        );
        match case.start {
            Start::Handshake => wire.initialize().await,
            Start::Modern => {
                let pin = list.replace("alive", "pin");
                let answer = wire.call(&pin).await;
                assert!(answer.contains(r#""result""#), "the modern era is pinned: {answer}");
            }
            Start::Fresh | Start::FreshModern => {}
        }
        let mut pending = Vec::new();
        for bytes in &case.lines {
            if bytes.len() <= LINE_LIMIT {
                pending.extend(request_id(bytes));
            }
            match std::str::from_utf8(bytes) {
                Ok(text) => wire.send(text).await,
                Err(_) => wire.send_bytes(bytes).await,
            }
        }
        let probe = if modern {
            list
        } else {
            r#"{"jsonrpc":"2.0","id":"alive","method":"ping"}"#.to_owned()
        };
        wire.send(&probe).await;
        let mut seen = Vec::new();
        let mut alive = false;
        while !alive || !pending.is_empty() {
            let answer = wire.recv().await;
            let value: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
            let id = value.get("id").map(serde_json::Value::to_string);
            if id.as_deref() == Some(r#""alive""#) && !alive {
                assert!(value.get("result").is_some(), "the connection stopped serving: {answer}");
                alive = true;
                continue;
            }
            if let Some(at) = pending.iter().position(|p| Some(p) == id.as_ref()) {
                pending.remove(at);
            }
            seen.push(answer);
        }
        if seen.is_empty() { "(no answer)".to_owned() } else { seen.join("\n") }
    })
}

/// The answer to request `id` (JSON text), skipping notifications.
pub(crate) async fn answer_to(wire: &mut crate::support::Wire, id: &str) -> String {
    loop {
        let line = wire.recv().await;
        let value: serde_json::Value = serde_json::from_str(&line).expect("JSON");
        // An error without an id answers a message that did not decode (too deep, say).
        let undecodable = value.get("id").is_none() && value.get("error").is_some();
        if undecodable || value.get("id").map(serde_json::Value::to_string).as_deref() == Some(id) {
            return line;
        }
    }
}

/// The id of a line that decodes as a request, as JSON text: an answer must come for it.
fn request_id(bytes: &[u8]) -> Option<String> {
    match modelcontext::types::Message::decode(bytes) {
        Ok(modelcontext::types::Message::Request(request)) => {
            serde_json::to_string(&request.id).ok()
        }
        _ => None,
    }
}
