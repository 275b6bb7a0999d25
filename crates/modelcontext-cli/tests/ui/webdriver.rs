//! Just enough WebDriver to drive Chromium: a session, navigation, clicks, typing, scripts
//! and screenshots, over plain HTTP/1.1 to `chromedriver` (a dozen endpoints do not need a
//! client crate and its dependency tree).

use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The key of an element reference in WebDriver answers.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// How long a condition may take to come true before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// One HTTP request with `Connection: close`: the status and the body.
pub fn http(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> (u16, String) {
    let (status, _, body) = http_with_head(address, method, path, headers, body);
    (status, body)
}

/// One HTTP request with `Connection: close`: the status, the response's header lines and
/// the body.
pub fn http_with_head(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(address).unwrap_or_else(|e| panic!("{address}: {e}"));
    stream.set_read_timeout(Some(Duration::from_secs(60))).expect("timeout");
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {address}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    let body = body.unwrap_or("");
    if !body.is_empty() || method == "POST" {
        request.push_str("Content-Type: application/json\r\n");
        request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).expect("request sent");
    // chromedriver keeps the connection open whatever we ask, so the body is read by its
    // length (or its chunks), not to the end of the stream.
    let mut reader = std::io::BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        let read = reader.read_line(&mut line).expect("answer read");
        if read == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let header = |name: &str| {
        head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim().to_owned())
        })
    };
    let mut body = Vec::new();
    if let Some(length) = header("content-length").and_then(|l| l.parse::<usize>().ok()) {
        body.resize(length, 0);
        reader.read_exact(&mut body).expect("body read");
    } else if header("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        body = read_chunks(&mut reader);
    } else {
        reader.read_to_end(&mut body).expect("body read");
    }
    (status, head, String::from_utf8_lossy(&body).into_owned())
}

/// A chunked body, joined.
fn read_chunks(reader: &mut impl BufRead) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size).expect("chunk size");
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            return body;
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..]).expect("chunk read");
        let mut end = String::new();
        reader.read_line(&mut end).expect("chunk end");
    }
}

/// A headless Chromium under chromedriver, with one session; both end when it is dropped.
pub struct Browser {
    driver: Child,
    address: String,
    session: String,
    profile: PathBuf,
}

impl Browser {
    /// `None` (with a line saying why) when Chromium or its driver is not installed and `CI`
    /// is not set; with `CI` set, a missing browser fails the test.
    pub fn start() -> Option<Browser> {
        if !(Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists()) {
            let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
            assert!(
                !ci,
                "{CHROMIUM} or {CHROMEDRIVER} is missing and CI is set: \
                 `apt-get install -y chromium chromium-driver`"
            );
            eprintln!(
                "SKIPPED: the browser tests of `mcp ui` need {CHROMIUM} and {CHROMEDRIVER} \
                 (`apt-get install -y chromium chromium-driver`)"
            );
            return None;
        }
        let port = super::free_port();
        let address = format!("127.0.0.1:{port}");
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let profile = std::env::temp_dir().join(format!("mcp-ui-test-profile-{port}"));
        let _ = std::fs::remove_dir_all(&profile);
        let mut browser = Browser { driver, address, session: String::new(), profile };
        browser.wait_for_driver();
        browser.open_session();
        Some(browser)
    }

    fn wait_for_driver(&self) {
        let deadline = Instant::now() + WAIT;
        while TcpStream::connect(&self.address).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not listen on {}", self.address);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn open_session(&mut self) {
        // Flags that keep Chromium from reaching for a network it does not have (a closed
        // network makes it stall), and a fresh profile.
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=1180,760",
            &format!("--user-data-dir={}", self.profile.display()),
        ];
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
        }}});
        let answer = self.raw("POST", "/session", Some(capabilities));
        self.session = answer["sessionId"].as_str().expect("a session id").to_owned();
    }

    /// One WebDriver command; its `value`. A WebDriver error fails the test.
    fn raw(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let body = body.map(|b| b.to_string());
        let (status, text) = http(&self.address, method, path, &[], body.as_deref());
        let answer: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("chromedriver {method} {path}: {status} {text:?}: {e}"));
        let value = answer["value"].clone();
        assert!(status == 200, "chromedriver {method} {path}: {status} {value}");
        value
    }

    fn command(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.raw(method, &format!("/session/{}{path}", self.session), body)
    }

    pub fn goto(&self, url: &str) {
        self.command("POST", "/url", Some(json!({"url": url})));
    }

    /// Runs `script` (a function body; `arguments` are `args`) and gives what it returns.
    pub fn script(&self, script: &str, args: Value) -> Value {
        self.command("POST", "/execute/sync", Some(json!({"script": script, "args": args})))
    }

    /// Waits until `script` returns something truthy, which it gives; fails the test with
    /// `what` and the page's state after [`WAIT`].
    pub fn wait_until(&self, what: &str, script: &str) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let value = self.script(script, json!([]));
            let truthy = !matches!(&value, Value::Null | Value::Bool(false))
                && value != json!("")
                && value != json!(0);
            if truthy {
                return value;
            }
            if Instant::now() > deadline {
                let page = self.script("return document.body.innerText", json!([]));
                panic!(
                    "timed out waiting for {what}; the page says:\n{}",
                    page.as_str().unwrap_or("")
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The first element `css` matches, once there is one.
    pub fn element(&self, css: &str) -> String {
        let quoted = serde_json::to_string(css).expect("css");
        self.wait_until(
            &format!("an element {css}"),
            &format!("return document.querySelector({quoted}) !== null"),
        );
        let found =
            self.command("POST", "/element", Some(json!({"using": "css selector", "value": css})));
        found[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("{css}: not an element: {found}"))
            .to_owned()
    }

    pub fn click(&self, css: &str) {
        let element = self.element(css);
        self.command("POST", &format!("/element/{element}/click"), Some(json!({})));
    }

    /// Clears the input `css` and types `text` into it, key by key.
    pub fn type_into(&self, css: &str, text: &str) {
        let element = self.element(css);
        self.command("POST", &format!("/element/{element}/clear"), Some(json!({})));
        self.command("POST", &format!("/element/{element}/value"), Some(json!({"text": text})));
    }

    /// The visible text of `css`, once it contains `fragment`.
    pub fn wait_for_text(&self, css: &str, fragment: &str) -> String {
        let script = format!(
            "const e = document.querySelector({}); return e && e.innerText.includes({}) ? e.innerText : null",
            serde_json::to_string(css).expect("css"),
            serde_json::to_string(fragment).expect("text"),
        );
        let text = self.wait_until(&format!("{fragment:?} in {css}"), &script);
        text.as_str().unwrap_or_default().to_owned()
    }

    /// Runs the next commands inside the iframe `element` (from [`Browser::element`]).
    pub fn enter_frame(&self, element: &str) {
        self.command("POST", "/frame", Some(json!({"id": {ELEMENT: element}})));
    }

    /// Back to the top-level page after [`Browser::enter_frame`].
    pub fn leave_frame(&self) {
        self.command("POST", "/frame", Some(json!({"id": null})));
    }

    /// A PNG of the window, written to `path`.
    pub fn screenshot(&self, path: &Path) {
        let encoded = self.command("GET", "/screenshot", None);
        let png = decode_base64(encoded.as_str().expect("base64"));
        std::fs::write(path, png).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = http(&self.address, "DELETE", &format!("/session/{}", self.session), &[], None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// Standard base64 (with padding), as WebDriver sends screenshots.
fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let digits: Vec<u8> =
        text.bytes().filter(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/').collect();
    let mut bytes = Vec::with_capacity(digits.len() * 3 / 4);
    for group in digits.chunks(4) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &c)| n | u32::from(value(c)) << (18 - 6 * i));
        bytes.extend_from_slice(&n.to_be_bytes()[1..group.len()]);
    }
    bytes
}
