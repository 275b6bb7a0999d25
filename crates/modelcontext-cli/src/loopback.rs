//! The loopback redirect listener of `mcp login` (RFC 8252 §7.3): the authorization server
//! sends the browser to `http://127.0.0.1:PORT/callback?code=..&state=..`; this answers the
//! browser with a short page and hands the URL to the OAuth client, which checks it.
//!
//! Hand-written rather than a hyper server: it answers one kind of GET from the browser on
//! this machine, with a page, and reading a request line is all the HTTP it needs.

use std::time::Duration;

use modelcontext::types::percent;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// The path of the redirect URI.
pub const CALLBACK_PATH: &str = "/callback";

/// A browser sends its request at once; a connection that says nothing (a browser's
/// speculative preconnect) is dropped after this.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// A request line and headers; a real redirect is a few hundred bytes.
const MAX_REQUEST: usize = 16 * 1024;

/// What came back to the callback path.
#[derive(Debug, PartialEq, Eq)]
pub enum Callback {
    /// The authorization server's answer with a `code`, as the whole redirect URL (the OAuth
    /// client checks its `state` and `iss`).
    Answer(String),
    /// The authorization server's refusal: its `error` and `error_description`, decoded.
    Refused(String),
    /// A request to the callback path with neither `code` nor `error`.
    Bad(String),
}

/// Answers connections on `listener` until a request for the callback path arrives.
/// Other paths (a browser's `/favicon.ico`) get 404 and the wait goes on.
pub async fn wait_for_callback(listener: &TcpListener) -> Result<Callback, String> {
    let origin = match listener.local_addr() {
        Ok(addr) => format!("http://{addr}"),
        Err(err) => return Err(format!("the redirect listener has no address: {err}")),
    };
    let (found, mut callbacks) = mpsc::channel(1);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = accepted
                    .map_err(|err| format!("the redirect listener failed: {err}"))?;
                let (found, origin) = (found.clone(), origin.clone());
                tokio::spawn(async move {
                    if let Some(callback) = answer(stream, &origin).await {
                        let _ = found.send(callback).await;
                    }
                });
            }
            Some(callback) = callbacks.recv() => return Ok(callback),
        }
    }
}

/// Reads one request, answers it, and returns what it brought to the callback path.
async fn answer(mut stream: TcpStream, origin: &str) -> Option<Callback> {
    let head = tokio::time::timeout(REQUEST_TIMEOUT, read_head(&mut stream)).await.ok()??;
    let (status, page, callback) = respond(&head, origin);
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n{page}",
        page.len()
    );
    // The page is written before the URL is handed on: the process may exit soon after.
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
    callback
}

/// The request line and headers, up to the blank line (a GET has no body).
async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut chunk = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 || head.len() + n > MAX_REQUEST {
            return None;
        }
        head.extend_from_slice(&chunk[..n]);
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// The status, the page, and the callback a request head stands for.
fn respond(head: &str, origin: &str) -> (&'static str, String, Option<Callback>) {
    let mut words = head.lines().next().unwrap_or("").split(' ');
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    if path != CALLBACK_PATH {
        return ("404 Not Found", page("Not found", "This is mcp's login listener."), None);
    }
    if method != "GET" {
        return ("405 Method Not Allowed", page("Not allowed", "Expected a GET."), None);
    }
    let url = format!("{origin}{target}");
    let query = target.split_once('?').map_or("", |(_, q)| q);
    let param =
        |name: &str| query.split('&').find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='));
    match (param("code"), param("error")) {
        (_, Some(error)) => {
            let error = decode(error);
            let text = format!(
                "The authorization server refused the login ({}). The terminal says more.",
                escape(&error)
            );
            let reason = match param("error_description").map(decode) {
                Some(description) => format!("{error}: {description}"),
                None => error,
            };
            ("200 OK", page("Login refused", &text), Some(Callback::Refused(reason)))
        }
        (Some(_), None) => {
            let text = "mcp received the authorization. You can close this tab; the terminal \
                        shows whether the login succeeded.";
            ("200 OK", page("Authorization received", text), Some(Callback::Answer(url)))
        }
        (None, None) => {
            let text = "This request carries neither a code nor an error: it is not an \
                        authorization response. The login was stopped.";
            (
                "400 Bad Request",
                page("Not an authorization response", text),
                Some(Callback::Bad(url)),
            )
        }
    }
}

fn page(title: &str, text: &str) -> String {
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>mcp: {title}</title></head>\
         <body><h1>{title}</h1><p>{text}</p></body></html>\n"
    )
}

/// A query value, `+` and `%XX` decoded. It is only shown to the user, so a malformed escape
/// (`%+1`, which a sign-taking hex parse would read as 0x01) leaves the value as it came.
fn decode(text: &str) -> String {
    let spaced = text.replace('+', " ");
    percent::decode(spaced.as_bytes()).unwrap_or_else(|_| text.to_owned())
}

/// Text from the query, made inert in HTML.
fn escape(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '&' => "&amp;".to_owned(),
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '"' => "&quot;".to_owned(),
            '\'' => "&#39;".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGIN: &str = "http://127.0.0.1:5000";

    #[track_caller]
    fn check(request_line: &str, status: &str, page_has: &str, callback: Option<Callback>) {
        let head = format!("{request_line}\r\nHost: 127.0.0.1:5000\r\n\r\n");
        let (got_status, got_page, got_callback) = respond(&head, ORIGIN);
        assert_eq!(got_status, status);
        assert!(got_page.contains(page_has), "{got_page}");
        assert_eq!(got_callback, callback);
    }

    #[test]
    fn the_callback_is_answered_and_handed_on() {
        let url = format!("{ORIGIN}/callback?code=abc&state=s");
        check(
            "GET /callback?code=abc&state=s HTTP/1.1",
            "200 OK",
            "received",
            Some(Callback::Answer(url)),
        );
        check(
            "GET /callback?error=access_denied&error_description=no+thanks%21&state=s HTTP/1.1",
            "200 OK",
            "refused the login (access_denied)",
            Some(Callback::Refused("access_denied: no thanks!".into())),
        );
    }

    #[test]
    fn other_requests_are_refused_and_bad_callbacks_reported() {
        check("GET /favicon.ico HTTP/1.1", "404 Not Found", "listener", None);
        check("POST /callback?code=a HTTP/1.1", "405 Method Not Allowed", "GET", None);
        let url = format!("{ORIGIN}/callback?state=s");
        check(
            "GET /callback?state=s HTTP/1.1",
            "400 Bad Request",
            "neither",
            Some(Callback::Bad(url)),
        );
        check("GET /callback?error=%3Cscript%3E HTTP/1.1", "200 OK", "(&lt;script&gt;)", {
            Some(Callback::Refused("<script>".into()))
        });
        // A malformed escape is shown as it came, not read as a signed number (0x01).
        check("GET /callback?error=bad%+1&state=s HTTP/1.1", "200 OK", "(bad%+1)", {
            Some(Callback::Refused("bad%+1".into()))
        });
    }

    #[tokio::test]
    async fn a_browser_is_answered_over_a_socket() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let browser = tokio::spawn(async move {
            // A preconnect that never speaks must not hold the callback up.
            let _idle = TcpStream::connect(addr).await.expect("connect");
            let mut favicon = TcpStream::connect(addr).await.expect("connect");
            favicon.write_all(b"GET /favicon.ico HTTP/1.1\r\n\r\n").await.expect("write");
            let mut stream = TcpStream::connect(addr).await.expect("connect");
            stream
                .write_all(b"GET /callback?code=c&state=s HTTP/1.1\r\n\r\n")
                .await
                .expect("write");
            let mut page = String::new();
            stream.read_to_string(&mut page).await.expect("read");
            page
        });
        let callback = wait_for_callback(&listener).await.expect("callback");
        assert_eq!(callback, Callback::Answer(format!("http://{addr}/callback?code=c&state=s")));
        let page = browser.await.expect("browser");
        assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");
        assert!(page.contains("You can close this tab"), "{page}");
    }
}
