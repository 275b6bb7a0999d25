//! `mcp ui`: the guard against other pages and hosts (no browser needed), and the page itself
//! driven in a real, headless Chromium against the bookshop over stdio and over HTTP, the
//! `confirm`, `progress` and `ask_client` examples (elicitation, progress, cancellation,
//! sampling, roots), a server whose tools grow (`listen`), and an OAuth-protected server
//! (logging in from the page); the extensions (MCP Apps, tasks, skills) in [`extensions`].
//!
//! `MCP_UI_SCREENSHOTS=DIR` also saves screenshots of the main views into DIR (how the
//! README's pictures are made: `MCP_UI_SCREENSHOTS=docs/images`).

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

use serde_json::json;

use super::login::Servers;
use super::shell::growing_server;
use super::{HttpBookshop, bookshop, example};

mod app_host;
mod extensions;
mod webdriver;

use webdriver::{Browser, WAIT, http, http_with_head};

/// A port nobody listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a loopback port").port()
}

/// A running `mcp ui --no-open ARGS`, stopped when dropped.
struct Ui {
    child: Child,
    /// The URL it printed, with its token.
    url: String,
    address: String,
    token: String,
}

impl Ui {
    fn start(args: &[&str]) -> Ui {
        Ui::start_with_env(args, &[])
    }

    fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Ui {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp"))
            .args(["ui", "--no-open"])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("mcp ui starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(WAIT).expect("mcp ui prints its URL");
        let url = line.trim().to_owned();
        let rest = url.strip_prefix("http://").unwrap_or_else(|| panic!("not a URL: {url:?}"));
        let (address, query) = rest.split_once("/?token=").expect("a URL with a token");
        let (address, token) = (address.to_owned(), query.to_owned());
        assert_eq!(token.len(), 32, "{url}");
        assert!(address.starts_with("127.0.0.1:"), "{url}");
        Ui { child, url, address, token }
    }

    /// A request to the UI with `headers`; its status and body.
    fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> (u16, String) {
        http(&self.address, method, path, headers, body)
    }
}

impl Drop for Ui {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A connect request for a stdio server that only creates `marker` (and so fails to talk).
fn marker_command(marker: &std::path::Path) -> String {
    json!({"transport": "stdio", "command": ["sh", "-c", format!("touch '{}'", marker.display())]})
        .to_string()
}

#[test]
fn the_ui_refuses_requests_without_the_token_from_other_hosts_and_other_origins() {
    let ui = Ui::start(&[]);
    let marker =
        std::env::temp_dir().join(format!("mcp-ui-marker-{}", ui.address.replace(':', "-")));
    let _ = std::fs::remove_file(&marker);
    let connect = marker_command(&marker);
    let token = ui.token.as_str();
    let host = ui.address.as_str();
    let foreign_host = format!("attacker.example:{}", host.rsplit(':').next().unwrap_or(""));
    type Headers<'a> = Vec<(&'a str, &'a str)>;
    let cases: [(&str, Headers, u16); 5] = [
        ("no token", vec![], 403),
        ("a wrong token", vec![("X-MCP-UI-Token", "00000000000000000000000000000000")], 403),
        // DNS rebinding: a name of the attacker's that resolves to 127.0.0.1.
        ("a foreign Host", vec![("X-MCP-UI-Token", token), ("Host", &foreign_host)], 421),
        (
            "a foreign Origin",
            vec![("X-MCP-UI-Token", token), ("Origin", "http://attacker.example")],
            403,
        ),
        ("the token for another port's UI", vec![("Cookie", "mcp_ui_1=0")], 403),
    ];
    for (what, headers, status) in &cases {
        let (got, body) = ui.request("POST", "/api/connect", headers, Some(&connect));
        assert_eq!(got, *status, "POST /api/connect with {what}: {body}");
        assert!(!marker.exists(), "POST /api/connect with {what} started the command");
        let (got, _) = ui.request("GET", "/", headers, None);
        assert_eq!(got, *status, "GET / with {what}");
        let (got, _) = ui.request("GET", "/api/events?after=0", headers, None);
        assert_eq!(got, *status, "GET /api/events with {what}");
    }
    let (status, _) = ui.request("GET", &format!("/?token={token}"), &[], None);
    assert_eq!(status, 200, "the page with its token");
    // The control: with the token, from our own origin, the command does run.
    let own_origin = format!("http://{host}");
    let headers = [("X-MCP-UI-Token", token), ("Origin", own_origin.as_str())];
    let (status, body) = ui.request("POST", "/api/connect", &headers, Some(&connect));
    assert_eq!(status, 502, "a server that exits at once is a failed connection: {body}");
    assert!(marker.exists(), "with the token the command ran");
    let _ = std::fs::remove_file(&marker);
}

/// The `Content-Security-Policy` header lines of a response head.
fn policies(head: &str) -> Vec<&str> {
    head.lines()
        .filter_map(|line| line.split_once(':'))
        .filter(|(name, _)| name.eq_ignore_ascii_case("content-security-policy"))
        .map(|(_, value)| value.trim())
        .collect()
}

#[test]
fn every_answer_of_the_ui_carries_the_pages_content_security_policy() {
    let ui = Ui::start(&[]);
    let policy = "default-src 'none'; script-src 'self'; style-src 'self'; \
                  img-src 'self' data: https:; media-src 'self' data:; connect-src 'self'; \
                  frame-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; \
                  frame-ancestors 'none'";
    let token = [("X-MCP-UI-Token", ui.token.as_str())];
    let page = format!("/?token={}", ui.token);
    type Headers<'a> = &'a [(&'a str, &'a str)];
    let requests: [(&str, &str, Headers, u16); 5] = [
        ("GET", page.as_str(), &[], 200),
        ("GET", "/app.js", &token, 200),
        ("GET", "/app.css", &token, 200),
        ("GET", "/api/info", &token, 200),
        ("GET", "/", &[], 403),
    ];
    for (method, path, headers, expected) in requests {
        let (status, head, _) = http_with_head(&ui.address, method, path, headers, None);
        assert_eq!(status, expected, "{method} {path}");
        assert_eq!(policies(&head), [policy], "{method} {path}:\n{head}");
    }
}

/// `MCP_UI_SCREENSHOTS`, where screenshots go, if anywhere.
fn screenshots() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("MCP_UI_SCREENSHOTS")?);
    std::fs::create_dir_all(&dir).expect("the screenshot folder");
    Some(dir)
}

fn screenshot(browser: &Browser, name: &str) {
    if let Some(dir) = screenshots() {
        browser.screenshot(&dir.join(format!("ui-{name}.png")));
    }
}

/// Opens the UI's page and waits until its script has started.
fn open_page(browser: &Browser, ui: &Ui) {
    browser.goto(&ui.url);
    browser.wait_until("the page to start", "return document.body.dataset.ready === 'true'");
}

/// The page of a UI connected to the bookshop: tools listed, `get_author` answered and
/// failed, a book read through the template form.
fn drive_the_bookshop(browser: &Browser, ui: &Ui, shots: bool) {
    open_page(browser, ui);
    browser.wait_for_text("#info-server", "Bookshop");
    browser.wait_for_text("#tool-list", "search_books");
    browser.wait_for_text(
        ".tool-item[data-name='get_author'] .description",
        "Look up the author of a book in the catalog.",
    );
    browser.click(".tool-item[data-name='get_author']");
    browser.type_into("#tool-form [data-path='title']", "Dune");
    browser.click("#call-button");
    browser.wait_for_text("#call-result", "Frank Herbert");
    let failed = "return document.querySelector('#call-result').classList.contains('error')";
    assert_eq!(browser.script(failed, json!([])), json!(false), "a result shown as an error");
    if shots {
        screenshot(browser, "tools");
    }
    browser.type_into("#tool-form [data-path='title']", "Nothing");
    browser.click("#call-button");
    browser.wait_for_text("#call-result", "No book titled 'Nothing'");
    browser.wait_until("the tool error shown as an error", failed);
    browser.wait_for_text("#call-result", "reported an error");

    browser.click("#tabs [data-tab='resources']");
    browser.click(".template-item[data-template='books://{title}']");
    browser.type_into("#template-values [data-path='title']", "Dune");
    browser.click("#template-values button[type='submit']");
    browser.wait_for_text("#resource-result", "Dune by Frank Herbert");
    if shots {
        screenshot(browser, "resources");
    }
    browser.click("#tabs [data-tab='messages']");
    browser.wait_for_text("#message-list", "tools/call");
    if shots {
        screenshot(browser, "messages");
    }
    browser.click("#tabs [data-tab='tools']");
}

/// Connects the page to another stdio server through its connect form.
fn connect_to(browser: &Browser, command: &str, tool: &str) {
    browser.script("document.querySelector('#connect-transport').value = 'stdio'; \
                    document.querySelector('#connect-transport').dispatchEvent(new Event('change'))", json!([]));
    browser.type_into("#connect-command", command);
    browser.click("#connect-button");
    browser.wait_for_text("#tool-list", tool);
    browser.click(&format!(".tool-item[data-name='{tool}']"));
}

#[test]
fn the_inspector_in_a_browser() {
    let Some(browser) = Browser::start() else { return };

    // Over stdio, the server named on the command line.
    let bookshop_path = bookshop();
    let ui = Ui::start(&["--stdio", &format!("'{}'", bookshop_path.display())]);
    drive_the_bookshop(&browser, &ui, true);

    // The `confirm` example's question, answered in the dialog.
    connect_to(&browser, &format!("'{}' --stdio", example("confirm").display()), "delete_file");
    browser.type_into("#tool-form [data-path='path']", "notes.txt");
    browser.click("#call-button");
    wait_for_question(&browser);
    browser.wait_for_text("#question-message", "Delete notes.txt?");
    browser.click("#question-body [data-path='confirm']");
    screenshot(&browser, "elicitation");
    browser.click("#question-accept");
    browser.wait_for_text("#call-result", "deleted notes.txt");

    // The `progress` example's bar, filled.
    connect_to(&browser, &format!("'{}' --stdio", example("progress").display()), "index");
    browser.type_into("#tool-form [data-path='files']", "1001");
    browser.click("#call-button");
    browser.wait_for_text("#call-errors", "at most 1000");
    browser.type_into("#tool-form [data-path='files']", "25");
    browser.click("#call-button");
    browser.wait_for_text("#call-result", "indexed 25 documents");
    let full = "const bar = document.querySelector('#call-progress'); \
                return bar !== null && bar.max === 25 && bar.value === 25";
    browser.wait_until("the progress bar at 100%", full);
    browser.wait_for_text("#call-progress-text", "(100%)");
    screenshot(&browser, "progress");
    drop(ui);

    // Over HTTP, the same page against the bookshop's endpoint.
    let server = HttpBookshop::start();
    let ui = Ui::start(&[&server.url]);
    drive_the_bookshop(&browser, &ui, false);
}

#[test]
fn the_inspector_fills_a_struct_argument_field_by_field() {
    let Some(browser) = Browser::start() else { return };
    let server = super::schemas::start();
    let ui = Ui::start(&[&server.url]);
    open_page(&browser, &ui);
    browser.wait_for_text("#tool-list", "place_order");
    // `order` is a `$ref` to `Order`: its fields are fields of the form.
    browser.click(".tool-item[data-name='place_order']");
    browser.type_into("#tool-form [data-path='order.book']", "Dune");
    browser.type_into("#tool-form [data-path='order.quantity']", "11");
    browser.click("#call-button");
    browser.wait_for_text("#call-errors", "at most 10");
    browser.type_into("#tool-form [data-path='order.quantity']", "2");
    browser.click("#call-button");
    browser.wait_for_text("#call-result", "2 x Dune");
    // `Shelf` holds itself: one level of fields, then the inner shelf as JSON, not forms
    // nested without end.
    browser.click(".tool-item[data-name='file_under']");
    browser.type_into("#tool-form [data-path='shelf.name']", "Dune");
    let inner =
        "return document.querySelector(\"#tool-form textarea[data-path='shelf.parent']\") !== null";
    browser.wait_until("the inner shelf as JSON", inner);
    browser.type_into("#tool-form [data-path='shelf.parent']", r#"{"name":"SF"}"#);
    browser.click("#call-button");
    browser.wait_for_text("#call-result", "Dune < SF");
}

/// The number of elements `css` matches, as a script's return value.
fn count(css: &str) -> String {
    format!("return document.querySelectorAll({}).length", serde_json::to_string(css).expect("css"))
}

/// Whether the message pane lists `method` sent `times` times.
fn sent_times(method: &str, times: usize) -> String {
    format!(
        "return [...document.querySelectorAll('#message-list .sent')]\
           .filter((e) => e.textContent.includes({})).length === {times}",
        serde_json::to_string(method).expect("method")
    )
}

/// Two calls of the `progress` example at once, each with its own bar in the run list, both
/// cancelled (one from its row, one from the tool pane), each cancellation sent to the server.
fn cancel_two_running_calls(browser: &Browser) {
    let start_index = |files: &str| {
        browser.click(".tool-item[data-name='index']");
        browser.type_into("#tool-form [data-path='files']", files);
        browser.click("#call-button");
    };
    start_index("1000");
    browser.wait_until("the first call's row", &format!("{} === 1", count("#run-list .run")));
    // Picking the tool again gives a fresh pane; the first call goes on in the run list.
    start_index("1000");
    let both_moving = "const bars = [...document.querySelectorAll('#run-list .run progress')]; \
                       return bars.length === 2 && bars.every((bar) => bar.value > 0)";
    browser.wait_until("two progress bars, both moving", both_moving);
    screenshot(browser, "runs");
    browser.click("#run-list .run:first-child .run-cancel");
    browser.wait_until("one call left", &format!("{} === 1", count("#run-list .run")));
    browser.click("#cancel-button");
    browser.wait_for_text("#call-result", "Cancelled");
    browser.wait_until("no call left", "return document.querySelector('#runs').hidden");
    browser.click("#tabs [data-tab='messages']");
    browser.wait_until("two cancellations sent", &sent_times("notifications/cancelled", 2));
    browser.click("#tabs [data-tab='tools']");
}

/// Waits until the page shows the server's question (elicitation or sampling) in its dialog.
fn wait_for_question(browser: &Browser) {
    let open = "return document.querySelector('#question-dialog').open";
    browser.wait_until("the question dialog", open);
}

/// The `ask_client` example's sampling request answered in the dialog, then declined.
fn answer_and_decline_sampling(browser: &Browser) {
    let ask = || {
        browser.click(".tool-item[data-name='summarize']");
        browser.type_into("#tool-form [data-path='text']", "hello");
        browser.click("#call-button");
        wait_for_question(browser);
        browser.wait_for_text("#question-body", "Summarize in one line: hello");
    };
    ask();
    browser.type_into("#sampling-answer", "a greeting");
    screenshot(browser, "sampling");
    browser.click("#question-accept");
    browser.wait_for_text("#call-result", "a greeting (by mcp-ui-person)");
    ask();
    browser.click("#question-decline");
    browser
        .wait_until("the dialog closed", "return !document.querySelector('#question-dialog').open");
    browser.wait_for_text("#call-result", "the user declined the sampling request");
}

/// A root added on the Roots tab: the server is told, and its `workspace` tool sees it.
fn edit_the_roots(browser: &Browser) {
    browser.click("#tabs [data-tab='roots']");
    browser.click("#root-add");
    browser.type_into("#root-rows .root-row:last-child .root-uri", "file:///tmp/shelf");
    browser.type_into("#root-rows .root-row:last-child .root-name", "shelf");
    browser.click("#root-save");
    browser.click("#tabs [data-tab='messages']");
    browser.wait_until("the change sent", &sent_times("notifications/roots/list_changed", 1));
    browser.click("#tabs [data-tab='tools']");
    browser.click(".tool-item[data-name='workspace']");
    browser.click("#call-button");
    browser.wait_for_text("#call-result", "file:///tmp/shelf");
}

#[test]
fn the_inspector_cancels_answers_sampling_edits_roots_and_listens() {
    let Some(browser) = Browser::start() else { return };
    let progress = format!("'{}' --stdio", example("progress").display());
    let ui = Ui::start(&["--stdio", &progress]);
    open_page(&browser, &ui);
    browser.wait_for_text("#tool-list", "index");
    cancel_two_running_calls(&browser);

    // The handshake era, where a change of roots is a notification the server is sent.
    browser.script("document.querySelector('#connect-era').value = 'handshake'", json!([]));
    connect_to(&browser, &format!("'{}'", example("ask_client").display()), "summarize");
    answer_and_decline_sampling(&browser);
    edit_the_roots(&browser);
    drop(ui);

    // A modern-era server sends list changes only on a listen stream: after Listen, a tool
    // the server adds shows up in the list.
    let server = growing_server();
    let ui = Ui::start(&["--era", "modern", &server.url]);
    open_page(&browser, &ui);
    browser.wait_for_text("#tool-list", "grow");
    browser.click("#tabs [data-tab='resources']");
    browser.click("#subscribe-button");
    browser.wait_for_text("#subscribe-button", "Listening");
    browser.click("#tabs [data-tab='tools']");
    browser.click(".tool-item[data-name='grow']");
    browser.click("#call-button");
    browser.wait_for_text("#call-result", "grown");
    browser.wait_for_text("#tool-list", "fresh_tool");
}

#[test]
fn the_inspector_logs_in_to_a_server_behind_oauth() {
    let Some(browser) = Browser::start() else { return };
    let servers = Servers::start(|_| {});
    let config = servers.config.to_str().expect("utf-8");
    let ui = Ui::start_with_env(&[], &[("XDG_CONFIG_HOME", config), ("MCP_NO_BROWSER", "1")]);
    open_page(&browser, &ui);
    browser.script(
        "document.querySelector('#connect-transport').value = 'http'; \
         document.querySelector('#connect-transport').dispatchEvent(new Event('change'))",
        json!([]),
    );
    browser.type_into("#connect-url", &servers.url);
    // Without a login the server refuses the connection.
    browser.click("#connect-button");
    browser
        .wait_until("the refusal", "return document.querySelector('#connect-error').textContent");
    browser.click("#login-button");
    // The test's authorization server approves at once and redirects to the login's
    // loopback listener; the page then connects with the stored tokens.
    browser.click("#login-open");
    browser.wait_for_text("#login-status", "Logged in");
    browser.wait_for_text("#tool-list", "whoami");
    let tokens = servers.tokens();
    assert_eq!(tokens["servers"][&servers.url]["access_token"], "access-1", "{tokens}");
}

#[test]
fn the_ui_wants_a_free_port() {
    let taken = TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("address").port().to_string();
    let output = Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(["ui", "--no-open", "--port", &port])
        .stdin(Stdio::null())
        .output()
        .expect("mcp runs");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&format!("cannot listen on 127.0.0.1:{port}")), "{stderr}");
}
