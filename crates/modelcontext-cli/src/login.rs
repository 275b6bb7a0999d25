//! `mcp login` and `mcp logout`: the browser's round trip that stores tokens, and their
//! revocation. How the other commands use what was stored is in [`crate::authorize`].

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelcontext::auth::client::{
    AuthError, AuthProvider, Challenge, ClientCredentials, FileTokenStore, MemoryTokenStore,
    OAuthClient, StoredTokens, TokenStore,
};
use tokio::net::TcpListener;

use crate::authorize::{CLIENT_NAME, stored_login, token_file, token_key};
use crate::cli::Cli;
use crate::connect::{Target, http_client, http_transport};
use crate::failure::Failure;
use crate::loopback::{CALLBACK_PATH, Callback, wait_for_callback};

/// Set (to anything but `0` or empty) to never start a browser, as `--no-browser` does.
pub const NO_BROWSER_ENV: &str = "MCP_NO_BROWSER";

/// What to do about a refusal (401) from an HTTP server: log in, or check `--token-env`.
/// The transport does not hand the HTTP status on for an answer with a JSON-RPC body, so a
/// refusal is recognized by its message (`HTTP 401`, or our servers' `Unauthorized: ..`).
pub fn refusal_hint(cli: &Cli, failure: &Failure) -> Option<String> {
    let url = cli.url.as_deref()?;
    let (message, status) = match failure {
        Failure::Protocol { message, data, .. } => {
            (message.as_str(), data.as_ref().and_then(|d| d.get("status")?.as_u64()))
        }
        Failure::Connection(message) | Failure::Other(message) => (message.as_str(), None),
        _ => return None,
    };
    let refused =
        status == Some(401) || message.contains("HTTP 401") || message.starts_with("Unauthorized");
    if !refused || message.contains("mcp login") {
        return None;
    }
    Some(match &cli.token_env {
        Some(name) => format!("the server refused the token in ${name}"),
        None => format!(
            "the server wants authorization: run `mcp login {url}`, or pass a token with \
             --token-env NAME"
        ),
    })
}

/// The options of `mcp login`.
pub struct LoginOptions {
    /// Only print the authorization URL.
    pub no_browser: bool,
    /// How long the browser has to come back.
    pub wait: Duration,
    /// This client's Client ID Metadata Document, if it has one.
    pub client_metadata_url: Option<String>,
}

/// Shows the person the authorization URL: `mcp login` prints it (and opens a browser), `mcp
/// ui` puts it on its page.
pub type ShowUrl = Arc<dyn Fn(&str) + Send + Sync>;

/// A login that worked: who issued the tokens, and the file they were saved in.
pub struct LoggedIn {
    pub issuer: String,
    pub file: PathBuf,
}

/// `mcp login`: connects with an OAuth client whose user step is this machine's browser and a
/// loopback listener; the server's 401 starts discovery, registration and the authorization
/// code grant; the tokens land in the token file.
pub async fn login(cli: &Cli, url: &str, options: LoginOptions) -> Result<(), Failure> {
    let LoginOptions { no_browser, wait, client_metadata_url } = options;
    let open = !no_browser && !no_browser_env();
    let show: ShowUrl = Arc::new(move |auth_url| {
        // Always printed: the browser may be on another machine than this shell.
        say!("mcp: to log in, open this URL in a browser:\n\n    {auth_url}\n");
        if open {
            open_in_browser(auth_url);
        }
    });
    let logged_in = login_with(cli, url, &[], wait, client_metadata_url, show).await?;
    say!(
        "mcp: logged in to {url} (authorization server {}); tokens saved in {}",
        logged_in.issuer,
        logged_in.file.display()
    );
    Ok(())
}

/// A login to `url` (with `headers` besides the command line's), the authorization URL handed
/// to `show` and the browser given `wait` to come back to the loopback listener.
pub async fn login_with(
    cli: &Cli,
    url: &str,
    headers: &[(String, String)],
    wait: Duration,
    client_metadata_url: Option<String>,
    show: ShowUrl,
) -> Result<LoggedIn, Failure> {
    if cli.token_env.is_some() {
        return Err(Failure::Usage("--token-env and login do not go together".into()));
    }
    let client = http_client(cli)?;
    let path = token_file().map_err(Failure::Other)?;
    let file = Arc::new(FileTokenStore::new(&path));
    file.check().map_err(|err| Failure::Other(err.to_string()))?;
    let listener = TcpListener::bind("127.0.0.1:0").await.map_err(|err| {
        Failure::Other(format!("cannot listen for the browser's redirect on 127.0.0.1: {err}"))
    })?;
    let port = listener.local_addr().map_err(|err| Failure::Other(err.to_string()))?.port();
    let redirect_uri = format!("http://127.0.0.1:{port}{CALLBACK_PATH}");
    let browser = Browser { listener: Arc::new(listener), show, wait };
    let oauth = OAuthClient::authorization_code(CLIENT_NAME, redirect_uri, move |auth_url| {
        browser.clone().visit(auth_url)
    })
    .token_store(LoginStore { file: file.clone(), fresh: MemoryTokenStore::default() })
    .http_client(client.clone());
    let oauth = match client_metadata_url {
        Some(document) => oauth.client_metadata_url(document),
        None => oauth,
    };
    let provider = Arc::new(OneAttempt { oauth, failure: Mutex::default() });
    let mut transport = http_transport(cli, url, &client)?;
    for (name, value) in headers {
        transport = transport
            .header(name.trim(), value.trim())
            .map_err(|_| Failure::Usage(format!("header {name:?}: not a valid header")))?;
    }
    let transport = transport.auth_provider(provider.clone());
    // The request that meets the 401 waits for the person at the browser as well.
    let timeout = (!cli.timeout.is_zero()).then(|| cli.timeout + wait);
    let connected = Target::Http(Box::new(transport)).connect_with(cli, timeout, None).await;
    // Why the authorization failed says more than the 401 it left in place.
    let client = match (connected, provider.failure()) {
        (Ok(client), _) => client,
        (Err(_), Some(failure)) => return Err(Failure::Other(format!("login failed: {failure}"))),
        (Err(failure), None) => return Err(failure),
    };
    let _ = tokio::time::timeout(Duration::from_secs(5), client.close()).await;
    if let Some(err) = file.last_error() {
        return Err(Failure::Other(format!("the login worked but was not saved: {err}")));
    }
    match file.load(&token_key(url)) {
        Ok(Some(tokens)) => Ok(LoggedIn { issuer: tokens.issuer, file: path }),
        Ok(None) => Err(Failure::Other(format!(
            "{url} did not ask for a login (no 401), so there is nothing to store"
        ))),
        Err(err) => Err(Failure::Other(err.to_string())),
    }
}

/// `mcp logout`: revokes the stored tokens for `url` where the authorization server offers
/// revocation (best effort), then forgets them (and the registration with their
/// authorization server when no other server uses it).
pub async fn logout(cli: &Cli, url: &str) -> Result<(), Failure> {
    let client = http_client(cli)?;
    let path = token_file().map_err(Failure::Other)?;
    let store = FileTokenStore::new(&path);
    let key = token_key(url);
    let stored = store.load(&key).map_err(|err| Failure::Other(err.to_string()))?;
    let Some(tokens) = stored else {
        say!("mcp: no stored login for {url} in {}", path.display());
        return Ok(());
    };
    match stored_login(url, FileTokenStore::new(&path), &client).revoke(&tokens).await {
        Ok(true) => say!("mcp: the tokens were revoked at {}", tokens.issuer),
        Ok(false) => {}
        Err(err) => say!("mcp: could not revoke the tokens ({err}); forgetting them anyway"),
    }
    store.remove(&key).map_err(|err| Failure::Other(err.to_string()))?;
    say!("mcp: logged out of {url} (removed from {})", path.display());
    Ok(())
}

pub fn no_browser_env() -> bool {
    std::env::var_os(NO_BROWSER_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// The user's step of the authorization code grant, on this machine.
#[derive(Clone)]
struct Browser {
    listener: Arc<TcpListener>,
    show: ShowUrl,
    wait: Duration,
}

impl Browser {
    /// Shows the authorization URL and waits for the redirect.
    async fn visit(self, auth_url: String) -> Result<String, String> {
        (self.show)(&auth_url);
        say!("mcp: waiting for the browser to come back (up to {:?})", self.wait);
        let waited = tokio::time::timeout(self.wait, wait_for_callback(&self.listener)).await;
        match waited {
            Err(_) => Err(format!(
                "the browser did not come back within {:?} (login --wait gives it longer)",
                self.wait
            )),
            Ok(Err(err)) => Err(err),
            Ok(Ok(Callback::Answer(url))) => Ok(url),
            Ok(Ok(Callback::Refused(reason))) => {
                Err(format!("the authorization server refused the login: {reason}"))
            }
            Ok(Ok(Callback::Bad(url))) => Err(format!(
                "the redirect to {url} carried neither a code nor an error; login stopped"
            )),
        }
    }
}

/// Best effort: a missing opener only means the user opens the printed URL.
pub fn open_in_browser(url: &str) {
    let (program, args): (&str, &[&str]) = if cfg!(target_os = "macos") {
        ("open", &[])
    } else if cfg!(windows) {
        // Not `cmd /c start`, which would read the `&`s of the query as command separators.
        ("rundll32", &["url.dll,FileProtocolHandler"])
    } else {
        ("xdg-open", &[])
    };
    let spawned = Command::new(program)
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match spawned {
        // Reaped in the background; an opener exits once it has handed the URL on.
        Ok(mut child) => drop(std::thread::spawn(move || child.wait())),
        Err(err) => say!("mcp: could not start {program} ({err}); open the URL yourself"),
    }
}

/// The OAuth client of a login, authorizing at most once: every request of the connection
/// meets the same 401 (era probing sends more than one), and the first authorization's
/// failure is the answer for all of them, not a new browser visit each.
struct OneAttempt {
    oauth: OAuthClient,
    failure: Mutex<Option<AuthError>>,
}

impl OneAttempt {
    fn failure(&self) -> Option<AuthError> {
        self.failure.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

impl AuthProvider for OneAttempt {
    fn access_token<'a>(&'a self, server_url: &'a str) -> BoxFuture<'a, Option<String>> {
        self.oauth.access_token(server_url)
    }

    fn on_challenge<'a>(
        &'a self,
        challenge: &'a Challenge,
    ) -> BoxFuture<'a, Result<String, AuthError>> {
        Box::pin(async move {
            if let Some(failure) = self.failure() {
                return Err(failure);
            }
            let answer = self.oauth.on_challenge(challenge).await;
            if let Err(failure) = &answer {
                *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(failure.clone());
            }
            answer
        })
    }
}

/// The token store of a login: it starts empty (a login replaces what was stored, and
/// registers afresh since the redirect port is new) and writes through to the file.
struct LoginStore {
    file: Arc<FileTokenStore>,
    fresh: MemoryTokenStore,
}

impl TokenStore for LoginStore {
    fn tokens(&self, server_url: &str) -> Option<StoredTokens> {
        self.fresh.tokens(server_url)
    }
    fn save_tokens(&self, server_url: &str, tokens: StoredTokens) {
        self.fresh.save_tokens(server_url, tokens.clone());
        self.file.save_tokens(server_url, tokens);
    }
    fn client(&self, issuer: &str) -> Option<ClientCredentials> {
        self.fresh.client(issuer)
    }
    fn save_client(&self, issuer: &str, client: ClientCredentials) {
        self.fresh.save_client(issuer, client.clone());
        self.file.save_client(issuer, client);
    }
}
