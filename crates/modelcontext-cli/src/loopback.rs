//! The loopback redirect listener of `mcp login` (RFC 8252 §7.3): the authorization server
//! sends the browser to `http://127.0.0.1:PORT/callback?code=..&state=..`; this answers the
//! browser with a short page and hands the URL to the OAuth client, which checks it.
//!
//! A two-route axum router (axum is in `mcp` for `mcp ui` already): the callback path, and a
//! 404 page for anything else (a browser's `/favicon.ico`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use modelcontext::types::percent;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

/// The path of the redirect URI.
pub const CALLBACK_PATH: &str = "/callback";

/// How long, once the callback came, the listener has to finish writing its pages. The page
/// is a few hundred bytes to a local socket; the bound is for a browser's speculative
/// preconnect, which sends nothing and would otherwise hold the listener open.
const PAGE_WRITE_TIME: Duration = Duration::from_millis(250);

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

/// What the callback handler needs: our origin (to rebuild the redirect URL) and where to
/// hand the callback on.
#[derive(Clone)]
struct Redirect {
    origin: String,
    found: mpsc::Sender<Callback>,
}

/// Answers requests on `listener` until one for the callback path arrives.
/// Other paths (a browser's `/favicon.ico`) get 404 and the wait goes on.
pub async fn wait_for_callback(listener: &Arc<TcpListener>) -> Result<Callback, String> {
    let origin = match listener.local_addr() {
        Ok(addr) => format!("http://{addr}"),
        Err(err) => return Err(format!("the redirect listener has no address: {err}")),
    };
    let (found, mut callbacks) = mpsc::channel(1);
    let app = Router::new()
        .route(CALLBACK_PATH, any(callback))
        .fallback(not_found)
        .with_state(Redirect { origin, found });
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = axum::serve(Shared(Arc::clone(listener)), app)
        .with_graceful_shutdown(async {
            let _ = stopped.await;
        })
        .into_future();
    let mut serving = std::pin::pin!(serving);
    let callback = tokio::select! {
        served = &mut serving => {
            let why = served.err().map_or_else(|| "it stopped".to_owned(), |e| e.to_string());
            return Err(format!("the redirect listener failed: {why}"));
        }
        Some(callback) = callbacks.recv() => callback,
    };
    // The page is written before the URL is handed on: the process may exit soon after.
    let _ = stop.send(());
    let _ = tokio::time::timeout(PAGE_WRITE_TIME, serving).await;
    Ok(callback)
}

/// The login's listener, kept by `mcp login` across its waits, served anew by each.
struct Shared(Arc<TcpListener>);

impl axum::serve::Listener for Shared {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        loop {
            match self.0.accept().await {
                Ok(accepted) => return accepted,
                // Out of file descriptors, say: what axum's own listener does, wait and retry.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

/// The callback path: a page for the browser, and the callback handed on.
async fn callback(State(redirect): State<Redirect>, method: Method, uri: Uri) -> Response {
    let target = uri.path_and_query().map_or(CALLBACK_PATH, |target| target.as_str());
    let (status, page, callback) = respond(&method, target, &redirect.origin);
    if let Some(callback) = callback {
        let _ = redirect.found.try_send(callback);
    }
    html(status, page)
}

async fn not_found() -> Response {
    html(StatusCode::NOT_FOUND, page("Not found", "This is mcp's login listener."))
}

fn html(status: StatusCode, page: String) -> Response {
    let headers = [
        (header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8")),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        (header::CONNECTION, HeaderValue::from_static("close")),
    ];
    (status, headers, page).into_response()
}

/// The status, the page, and the callback a request to the callback path stands for.
fn respond(method: &Method, target: &str, origin: &str) -> (StatusCode, String, Option<Callback>) {
    if method != Method::GET {
        return (StatusCode::METHOD_NOT_ALLOWED, page("Not allowed", "Expected a GET."), None);
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
            (StatusCode::OK, page("Login refused", &text), Some(Callback::Refused(reason)))
        }
        (Some(_), None) => {
            let text = "mcp received the authorization. You can close this tab; the terminal \
                        shows whether the login succeeded.";
            (StatusCode::OK, page("Authorization received", text), Some(Callback::Answer(url)))
        }
        (None, None) => {
            let text = "This request carries neither a code nor an error: it is not an \
                        authorization response. The login was stopped.";
            (
                StatusCode::BAD_REQUEST,
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
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    const ORIGIN: &str = "http://127.0.0.1:5000";

    #[track_caller]
    fn check(request_line: &str, status: &str, page_has: &str, callback: Option<Callback>) {
        let mut words = request_line.split(' ');
        let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        let method = Method::from_bytes(method.as_bytes()).expect("method");
        let (got_status, got_page, got_callback) = respond(&method, target, ORIGIN);
        assert_eq!(got_status.to_string(), status);
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
        let listener = Arc::new(TcpListener::bind("127.0.0.1:0").await.expect("bind"));
        let addr = listener.local_addr().expect("addr");
        let browser = tokio::spawn(async move {
            // A preconnect that never speaks must not hold the callback up.
            let _idle = TcpStream::connect(addr).await.expect("connect");
            let mut favicon = TcpStream::connect(addr).await.expect("connect");
            favicon.write_all(b"GET /favicon.ico HTTP/1.1\r\n\r\n").await.expect("write");
            let mut not_found = String::new();
            favicon.read_to_string(&mut not_found).await.expect("read");
            let mut stream = TcpStream::connect(addr).await.expect("connect");
            stream
                .write_all(b"GET /callback?code=c&state=s HTTP/1.1\r\n\r\n")
                .await
                .expect("write");
            let mut page = String::new();
            stream.read_to_string(&mut page).await.expect("read");
            (not_found, page)
        });
        let callback = wait_for_callback(&listener).await.expect("callback");
        assert_eq!(callback, Callback::Answer(format!("http://{addr}/callback?code=c&state=s")));
        let (not_found, page) = browser.await.expect("browser");
        assert!(not_found.starts_with("HTTP/1.1 404 Not Found\r\n"), "{not_found}");
        assert!(not_found.contains("This is mcp's login listener."), "{not_found}");
        assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");
        assert!(page.contains("You can close this tab"), "{page}");
    }
}
