//! `mcp ui`: a web inspector served by the `mcp` binary itself.
//!
//! The page (HTML, CSS and JavaScript embedded below: no build step, no Node) talks to this
//! process, which holds the SDK client and offers it as a small JSON API ([`api`]); what the
//! connection does on its own (every message both ways, logs, progress, the server's
//! questions) reaches the page through a long poll ([`events`]). The extensions have routes of
//! their own: MCP Apps views, served at `/view/N` for the page to frame ([`apps`]), tasks
//! ([`tasks`]) and skills ([`skills`]). The server listens on 127.0.0.1 only and serves nobody
//! without the token it prints ([`security`]).

use std::sync::Arc;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use tokio::net::TcpListener;

use crate::cli::Cli;
use crate::connect::{self, Named};
use crate::failure::Failure;
use crate::print;

mod api;
mod apps;
mod events;
mod security;
mod session;
mod skills;
mod started;
mod tasks;
mod views;

use security::Guard;
use session::{ConnectRequest, Session};

/// How `mcp ui` was asked to start.
pub struct UiOptions {
    /// Do not start a browser; only print the URL.
    pub no_open: bool,
    /// The port to listen on; 0 lets the system pick one.
    pub port: u16,
}

/// Serves the UI until Ctrl-C, connected at the start to the server the command line names
/// (if it names one).
pub async fn run(cli: Cli, options: UiOptions) -> Result<(), Failure> {
    let first = match connect::named_opt(&cli).map_err(Failure::Usage)? {
        Some(named) => Some(connect_request(&cli, named)?),
        None => None,
    };
    let listener = TcpListener::bind(("127.0.0.1", options.port)).await.map_err(|err| {
        Failure::Other(format!("cannot listen on 127.0.0.1:{}: {err}", options.port))
    })?;
    let port = listener.local_addr().map_err(|err| Failure::Other(err.to_string()))?.port();
    let guard = Guard::new(port).map_err(Failure::Other)?;
    let session = Arc::new(Session::new(cli));
    if let Some(request) = first {
        // A server that does not start is reported on the page too; the UI stays up.
        if let Err(failure) = session.connect(&request).await {
            say!("mcp: {}", failure.describe());
        }
    }
    let url = guard.url();
    print::stdout(&format!("{url}\n"));
    say!("mcp: serving the inspector on 127.0.0.1:{port}; Ctrl-C stops");
    if !options.no_open {
        crate::login::open_in_browser(&url);
    }
    let app = router(Arc::clone(&session), guard);
    let serving = axum::serve(listener, app).with_graceful_shutdown(async {
        let _ = tokio::signal::ctrl_c().await;
    });
    let served =
        serving.await.map_err(|err| Failure::Other(format!("the UI server failed: {err}")));
    session.disconnect().await;
    served
}

/// The page, its assets and the API, all behind the guard.
fn router(session: Arc<Session>, guard: Guard) -> Router {
    let api = Router::new()
        .route("/api/info", get(api::info))
        .route("/api/events", get(api::events))
        .route("/api/connect", post(api::connect))
        .route("/api/disconnect", post(api::disconnect))
        .route("/api/list", post(api::list))
        .route("/api/call", post(api::call))
        .route("/api/read", post(api::read))
        .route("/api/prompt", post(api::prompt))
        .route("/api/complete", post(api::complete))
        .route("/api/cancel", post(api::cancel))
        .route("/api/roots", post(api::roots))
        .route("/api/answer", post(api::answer))
        .route("/api/listen", post(api::listen))
        .route("/api/ping", post(api::ping))
        .route("/api/login", post(api::login))
        .route("/api/app", post(apps::app))
        .route("/api/call-task", post(tasks::call_task))
        .route("/api/tasks", post(tasks::tasks))
        .route("/api/cancel-task", post(tasks::cancel_task))
        .route("/api/skills", post(skills::list))
        .route("/api/skill", post(skills::read))
        .route("/view/{id}", get(apps::view))
        .with_state(session);
    Router::new()
        .route("/", get(|| asset("text/html; charset=utf-8", include_str!("assets/index.html"))))
        .route(
            "/app.js",
            get(|| asset("text/javascript; charset=utf-8", include_str!("assets/app.js"))),
        )
        .route("/app.css", get(|| asset("text/css; charset=utf-8", include_str!("assets/app.css"))))
        .route("/apps.js", get(|| script(include_str!("assets/apps.js"))))
        .route("/extensions.js", get(|| script(include_str!("assets/extensions.js"))))
        .merge(api)
        .layer(axum::middleware::from_fn_with_state(guard, security::check))
}

/// An embedded file (its Content-Security-Policy, as every response's, is set by the guard:
/// [`security::PAGE_POLICY`]).
async fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, content_type)], body)
}

/// An embedded script: the page's own files are its only scripts (no inline code).
async fn script(body: &'static str) -> impl IntoResponse {
    asset("text/javascript; charset=utf-8", body).await
}

/// The command line's server as the connect request the page would send.
fn connect_request(cli: &Cli, named: Named) -> Result<ConnectRequest, Failure> {
    let era = match cli.era {
        crate::cli::EraArg::Auto => "auto",
        crate::cli::EraArg::Handshake => "handshake",
        crate::cli::EraArg::Modern => "modern",
    };
    let mut request = ConnectRequest {
        transport: String::new(),
        command: vec![],
        env: vec![],
        cwd: None,
        url: String::new(),
        headers: vec![],
        era: Some(era.into()),
        log_level: cli.log_level,
    };
    match named {
        Named::Stdio(command) => {
            request.transport = "stdio".into();
            request.command = command.words;
            request.env = command.env;
            request.env.extend(crate::args::env_pairs(&cli.env).map_err(Failure::Usage)?);
            request.cwd = (cli.cwd.clone().or(command.cwd)).map(|d| d.display().to_string());
        }
        Named::Http { url, headers } => {
            request.transport = "http".into();
            request.url = url;
            request.headers = headers;
        }
    }
    Ok(request)
}
