//! `mcp serve`: the servers the command line names, served as one endpoint over Streamable
//! HTTP or stdio. A thin command over the SDK's composition ([`modelcontext::server::compose`]):
//! each server is an [`Upstream`] (restarted with backoff when it crashes) mounted through a
//! [`Transform`] (namespaced by its config name when there are several, filtered by
//! `--allow`/`--deny`).

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use modelcontext::server::KeyRing;
use modelcontext::server::compose::{Transform, Upstream};
use modelcontext::server::http::{HttpOptions, ServerTls};
use modelcontext::{Error, McpServer};
use serde_json::json;
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;

use crate::cli::{Cli, Command};
use crate::config::{self, Entry};
use crate::connect::{StdioCommand, Target};
use crate::failure::{Exit, Failure};

#[cfg(feature = "otel")]
mod otlp;
#[cfg(feature = "gateway")]
mod telemetry;

/// What `serve` was asked to do, beside the servers.
#[derive(Default)]
struct Serving {
    http: Option<String>,
    tls: Option<(PathBuf, PathBuf)>,
    bearer_env: Option<String>,
    allow: Vec<String>,
    deny: Vec<String>,
    issuer: Option<String>,
    // Read with the `gateway` feature only; without it, --issuer is refused first.
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    audience: Option<String>,
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    jwks_url: Option<String>,
    redis: Option<String>,
    signing_keys: Vec<String>,
}

/// The deployment name: the audience of the key ring and the Redis namespace, the same on
/// every instance of one fleet.
const DEPLOYMENT: &str = "mcp-serve";

/// `mcp serve`, start to end: options this build cannot honour are refused first; then the
/// servers are chosen (a `--config` file read) before the runtime is built, because how many
/// workers it gets depends on them.
pub fn main(mut cli: Cli) -> Exit {
    // The URL may come after `serve` too, as for every other subcommand.
    if let Err(message) = cli.settle() {
        return crate::commands::report(Failure::Usage(message), false, None);
    }
    let checked = check_features(&serving(&cli.command));
    let served = checked.and_then(|()| selected(&cli)).and_then(|servers| {
        let runtime = runtime(&cli, &servers)?;
        runtime.block_on(run(cli, servers))
    });
    match served {
        Ok(()) => Exit::Success,
        Err(failure) => crate::commands::report(failure, false, None),
    }
}

/// A multi-threaded runtime with [`worker_threads`] workers.
fn runtime(cli: &Cli, servers: &[(String, Target)]) -> Result<tokio::runtime::Runtime, Failure> {
    let threads = match cli.command {
        Command::Serve { threads, .. } => threads,
        _ => None,
    };
    let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let starts_a_process = servers.iter().any(|(_, target)| matches!(target, Target::Stdio(_)));
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(
            threads.map_or_else(|| worker_threads(cores, starts_a_process), usize::from),
        )
        .enable_all()
        .build()
        .map_err(|err| Failure::Other(format!("cannot start the async runtime: {err}")))
}

/// One worker per core, less one when a server is a process of ours: that process runs on
/// the same machine, and a worker competing with it for its core slows both. On two cores
/// the one worker that is left carries a gateway's load with less CPU per call than two
/// (they hand every call's wake-ups to each other).
fn worker_threads(cores: usize, starts_a_process: bool) -> usize {
    match starts_a_process {
        true => cores.saturating_sub(1).max(1),
        false => cores.max(1),
    }
}

/// Connects every server, mounts them, and serves until Ctrl-C or SIGTERM; then flushes
/// the telemetry.
async fn run(cli: Cli, servers: Vec<(String, Target)>) -> Result<(), Failure> {
    let serving = serving(&cli.command);
    #[cfg(feature = "gateway")]
    let telemetry = telemetry::Telemetry::init()?;
    let served = serve(cli, serving, servers).await;
    #[cfg(feature = "gateway")]
    telemetry.flush().await;
    served
}

async fn serve(cli: Cli, serving: Serving, servers: Vec<(String, Target)>) -> Result<(), Failure> {
    let several = servers.len() > 1;
    let names: Vec<String> = servers.iter().map(|(name, _)| name.clone()).collect();
    let mut upstreams = Vec::new();
    for (name, target) in servers {
        upstreams.push(connect(&cli, &name, target).await?);
    }
    let mut server = identity(&upstreams);
    if !serving.signing_keys.is_empty() {
        let ring = KeyRing::from_hex(&serving.signing_keys)
            .map_err(|e| Failure::Usage(format!("--signing-key: {}", e)))?;
        server = server.key_ring(ring.audience(DEPLOYMENT));
    }
    #[cfg_attr(not(feature = "gateway"), allow(unused_mut))]
    let mut options = http_options(&serving)?;
    // The fleet's bus must be the server's before anything is mounted: mounts publish on it.
    #[cfg(feature = "gateway")]
    if let Some(url) = &serving.redis {
        (server, options) = join_fleet(url, server, options).await?;
    }
    for upstream in &upstreams {
        let transform = transform(upstream.name(), several, &names, &serving)?;
        server = server.mount(upstream, transform).await.map_err(Failure::from_sdk)?;
    }
    let serve = async {
        match &serving.http {
            Some(addr) => serve_http(server, options, addr, &serving, upstreams).await,
            None => server.run_stdio().await.map_err(Failure::from_sdk),
        }
    };
    tokio::select! {
        served = serve => served,
        () = stopped() => Ok(()),
    }
}

/// Ctrl-C, or SIGTERM: what a service manager or a container runtime sends to stop a service.
async fn stopped() {
    #[cfg(unix)]
    if let Ok(mut terminate) =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
        return;
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// One server is served as itself: its name, version, title and instructions, so that a
/// client sees what it would see directly. Several are served as `mcp-serve`.
fn identity(upstreams: &[Upstream]) -> McpServer {
    let [upstream] = upstreams else {
        return McpServer::new("mcp-serve").version(env!("CARGO_PKG_VERSION"));
    };
    let Some(info) = upstream.server_info() else { return McpServer::new(upstream.name()) };
    let mut server = McpServer::new(info.name).version(info.version);
    if let Some(title) = info.title {
        server = server.title(title);
    }
    match upstream.instructions() {
        Some(instructions) => server.instructions(instructions),
        None => server,
    }
}

fn serving(command: &Command) -> Serving {
    let Command::Serve {
        http,
        tls_cert,
        tls_key,
        bearer_env,
        allow,
        deny,
        issuer,
        audience,
        jwks_url,
        redis,
        signing_key,
        ..
    } = command
    else {
        return Serving::default();
    };
    Serving {
        http: http.clone(),
        tls: tls_cert.clone().zip(tls_key.clone()),
        bearer_env: bearer_env.clone(),
        allow: allow.clone(),
        deny: deny.clone(),
        issuer: issuer.clone(),
        audience: audience.clone(),
        jwks_url: jwks_url.clone(),
        redis: redis.clone(),
        signing_keys: signing_key.clone(),
    }
}

/// Options this build cannot honour are refused before anything starts.
fn check_features(serving: &Serving) -> Result<(), Failure> {
    let wanted = [("--issuer", serving.issuer.is_some()), ("--redis", serving.redis.is_some())];
    match wanted.iter().find(|(_, given)| *given && !cfg!(feature = "gateway")) {
        Some((flag, _)) => Err(Failure::Usage(format!(
            "{flag} needs mcp built with the `gateway` feature: \
             cargo install --path crates/modelcontext-cli --features gateway"
        ))),
        None if serving.bearer_env.is_some() && serving.issuer.is_some() => {
            Err(Failure::Usage("give --bearer-env or --issuer, not both".into()))
        }
        None => Ok(()),
    }
}

/// The HTTP options: TLS, and the OAuth resource server in front when asked.
fn http_options(serving: &Serving) -> Result<HttpOptions, Failure> {
    let mut options = HttpOptions::default();
    if let Some((cert, key)) = &serving.tls {
        options = options.tls(ServerTls::from_pem_files(cert, key).map_err(Failure::from_sdk)?);
    }
    #[cfg(feature = "gateway")]
    if let (Some(issuer), Some(audience)) = (&serving.issuer, &serving.audience) {
        options = options.auth(resource_server(issuer, audience, serving.jwks_url.as_deref())?);
    }
    Ok(options)
}

/// Tokens from `issuer` for `audience`, this endpoint's canonical URL, which is also the
/// resource its protected-resource metadata names.
#[cfg(feature = "gateway")]
fn resource_server(
    issuer: &str,
    audience: &str,
    jwks_url: Option<&str>,
) -> Result<modelcontext::auth::AuthOptions, Failure> {
    use modelcontext::auth::{AuthOptions, JwtVerifier};
    let usage = |error: Error| Failure::Usage(format!("--issuer/--audience: {error}"));
    let mut verifier = JwtVerifier::new(issuer, audience).map_err(usage)?;
    if let Some(url) = jwks_url {
        verifier = verifier.jwks_uri(url).map_err(usage)?;
    }
    AuthOptions::new(audience, issuer, verifier).map_err(usage)
}

/// With `--redis`: the bus on the server, and the handshake era's stores and router in
/// `options`, all on the deployment's Redis.
#[cfg(feature = "gateway")]
async fn join_fleet(
    url: &str,
    server: McpServer,
    options: HttpOptions,
) -> Result<(McpServer, HttpOptions), Failure> {
    let failed =
        |error: modelcontext_redis::Error| Failure::Connection(format!("--redis {url}: {error}"));
    let deployment = modelcontext_redis::Deployment::new(url, DEPLOYMENT).map_err(failed)?;
    let server = server.subscription_bus(deployment.bus().await.map_err(failed)?);
    let options = options
        .session_store(Arc::new(deployment.session_store().map_err(failed)?))
        .event_store(Arc::new(deployment.event_store().map_err(failed)?))
        .peer_router(Arc::new(deployment.peer_router().map_err(failed)?));
    Ok((server, options))
}

/// The servers to serve, by name: every server of a `--config` file given without
/// `--server`, else the one server the command line names (named after its program or
/// host, or `--server`).
fn selected(cli: &Cli) -> Result<Vec<(String, Target)>, Failure> {
    if let (Some(path), None) = (&cli.config, &cli.server) {
        let entries = config::load_all(path).map_err(Failure::Usage)?;
        if entries.is_empty() {
            return Err(Failure::Usage(format!("--config {}: no servers in it", path.display())));
        }
        return entries.into_iter().map(|(name, entry)| Ok((name, target(cli, entry)?))).collect();
    }
    let target = Target::from_cli(cli)?;
    let name = cli.server.clone().or_else(|| target.program().map(program_name));
    Ok(vec![(name.unwrap_or_else(|| "upstream".into()), target)])
}

fn target(cli: &Cli, entry: Entry) -> Result<Target, Failure> {
    match entry {
        Entry::Stdio { words, env, cwd } => Ok(Target::Stdio(StdioCommand { words, env, cwd })),
        Entry::Http { url, headers } => Target::http(cli, &url, headers),
    }
}

fn program_name(program: &str) -> String {
    let path = std::path::Path::new(program);
    path.file_stem().map_or_else(|| program.to_owned(), |s| s.to_string_lossy().into_owned())
}

/// Connects `target` as the upstream `name`; each reconnection starts it again.
async fn connect(cli: &Cli, name: &str, target: Target) -> Result<Upstream, Failure> {
    let target = Arc::new(target);
    let builder = Upstream::builder(name, move |client| {
        let target = Arc::clone(&target);
        async move {
            target
                .open(client, None)
                .await
                .map_err(|failure| Error::from(std::io::Error::other(failure.text())))
        }
    });
    let builder = match cli.timeout.is_zero() {
        true => builder,
        false => builder.call_timeout(cli.timeout),
    };
    builder.connect().await.map_err(|error| {
        let cause = crate::connect::io_message(&error);
        Failure::Connection(format!("server {name:?} did not start: {cause}"))
    })
}

/// The transform of server `name`: namespaced when there are several, filtered by the
/// patterns that apply to it (`PATTERN`, or `SERVER:PATTERN` naming it).
fn transform(
    name: &str,
    several: bool,
    names: &[String],
    serving: &Serving,
) -> Result<Transform, Failure> {
    let mut transform = Transform::new();
    if several {
        transform = transform.namespace(name);
    }
    let allow = patterns_for(name, names, &serving.allow, "--allow")?;
    if !allow.is_empty() {
        transform = transform.allow(allow);
    }
    Ok(transform.deny(patterns_for(name, names, &serving.deny, "--deny")?))
}

/// The patterns of `given` for server `name`. Tool names have no `:`, so a pattern with one
/// names its server.
fn patterns_for(
    name: &str,
    names: &[String],
    given: &[String],
    flag: &str,
) -> Result<Vec<String>, Failure> {
    let mut patterns = Vec::new();
    for pattern in given {
        match pattern.split_once(':') {
            Some((server, _)) if !names.iter().any(|n| n == server) => {
                return Err(Failure::Usage(format!(
                    "{flag} {pattern}: no server named {server:?}"
                )));
            }
            Some((server, pattern)) if server == name => patterns.push(pattern.to_owned()),
            Some(_) => {}
            None => patterns.push(pattern.clone()),
        }
    }
    Ok(patterns)
}

/// Serves `/mcp` (behind the bearer check when asked) and `/healthz` on `addr`.
async fn serve_http(
    server: McpServer,
    options: HttpOptions,
    addr: &str,
    serving: &Serving,
    upstreams: Vec<Upstream>,
) -> Result<(), Failure> {
    let endpoint = server.http_endpoint_with(options);
    let mut router = endpoint.router();
    if let Some(variable) = &serving.bearer_env {
        let token =
            std::env::var(variable).ok().filter(|token| !token.is_empty()).ok_or_else(|| {
                Failure::Usage(format!("--bearer-env {variable}: the variable is not set"))
            })?;
        let expected: Arc<str> = format!("Bearer {token}").into();
        router =
            router.route_layer(axum::middleware::from_fn(move |request: Request, next: Next| {
                let expected = Arc::clone(&expected);
                async move { check_bearer(&expected, request, next).await }
            }));
    }
    let upstreams = Arc::new(upstreams);
    let router =
        router.route("/healthz", axum::routing::get(move || health(Arc::clone(&upstreams))));
    let listener =
        TcpListener::bind(addr).await.map_err(|e| Failure::Usage(format!("--http {addr}: {e}")))?;
    let local = listener.local_addr().map_err(|e| Failure::Other(e.to_string()))?;
    let scheme = if serving.tls.is_some() { "https" } else { "http" };
    eprintln!("mcp serve: {scheme}://{local}/mcp");
    endpoint.serve_router(listener, router).await.map_err(Failure::from_sdk)
}

async fn check_bearer(expected: &str, request: Request, next: Next) -> Response {
    let given = request.headers().get(header::AUTHORIZATION).map(|v| v.as_bytes());
    // In constant time, so that a token cannot be guessed byte by byte from response times.
    if given.is_some_and(|given| bool::from(given.ct_eq(expected.as_bytes()))) {
        return next.run(request).await;
    }
    let challenge = [(header::WWW_AUTHENTICATE, "Bearer")];
    (StatusCode::UNAUTHORIZED, challenge, "a bearer token is required").into_response()
}

/// 200 when every upstream answered its last ping and is connected, else 503; the body
/// names each upstream's state.
async fn health(upstreams: Arc<Vec<Upstream>>) -> Response {
    let states: serde_json::Map<String, serde_json::Value> = upstreams
        .iter()
        .map(|u| (u.name().to_owned(), json!(if u.is_healthy() { "up" } else { "down" })))
        .collect();
    let healthy = upstreams.iter().all(Upstream::is_healthy);
    let status = if healthy { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, axum::Json(json!({"healthy": healthy, "servers": states}))).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_process_is_left_a_core_of_its_own() {
        assert_eq!(worker_threads(8, true), 7);
        assert_eq!(worker_threads(2, true), 1);
        assert_eq!(worker_threads(1, true), 1);
        assert_eq!(worker_threads(8, false), 8);
        assert_eq!(worker_threads(1, false), 1);
    }
}
