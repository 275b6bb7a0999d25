//! `mcp install HOST --name NAME SERVER` and `mcp uninstall HOST --name NAME`: a server entry
//! written into (or removed from) a host's configuration, the server named as for every
//! other subcommand. What each host's file looks like is in [`crate::hosts`]; how the file is
//! edited without losing the rest of it, in [`crate::edit`].

use std::path::{Path, PathBuf};

use crate::cli::{Cli, Command};
use crate::connect::{self, Named};
use crate::edit::{Added, ConfigFile};
use crate::failure::Failure;
use crate::hosts::{Host, Server};
use crate::{args, authorize, print};

/// Runs `install` or `uninstall`; any other subcommand is not ours.
pub fn run(cli: &Cli) -> Option<Result<(), Failure>> {
    Some(match &cli.command {
        Command::Install { host, name, config_file, force, dry_run, with_login, .. } => {
            let place = Place { host: *host, file: config_file.as_deref(), dry_run: *dry_run };
            install(cli, &place, name, *force, *with_login)
        }
        Command::Uninstall { host, name, config_file, dry_run } => {
            let place = Place { host: *host, file: config_file.as_deref(), dry_run: *dry_run };
            uninstall(cli, &place, name)
        }
        _ => return None,
    })
}

/// Which file of which host, and whether to only show the result.
struct Place<'a> {
    host: Host,
    file: Option<&'a Path>,
    dry_run: bool,
}

impl Place<'_> {
    /// `--config-file`, else the host's own file.
    fn path(&self) -> Result<PathBuf, Failure> {
        match self.file {
            Some(file) => Ok(file.to_owned()),
            None => self.host.default_file().map_err(Failure::Usage),
        }
    }

    /// Writes the edited file, or prints it for `--dry-run`, and says what was done.
    fn finish(&self, file: &ConfigFile, done: &str) -> Result<(), Failure> {
        let path = file.path().display();
        if self.dry_run {
            print::stdout(&file.text());
            say!("mcp: --dry-run: {path} would be written as above; it was not changed");
            return Ok(());
        }
        let backup = file.save().map_err(Failure::Other)?;
        let backup = backup.map(|b| format!("; the previous file is {}", b.display()));
        say!("mcp: {done} {path}{}", backup.unwrap_or_default());
        Ok(())
    }
}

fn install(
    cli: &Cli,
    place: &Place,
    name: &str,
    force: bool,
    with_login: bool,
) -> Result<(), Failure> {
    let server = server(cli, with_login).map_err(Failure::Usage)?;
    let entry = place.host.entry(&server).map_err(Failure::Usage)?;
    let file = ConfigFile::open(&place.path()?, place.host.reads_comments(), true)
        .map_err(Failure::Other)?;
    let added = file.add(place.host.servers_key(), name, &entry, force).map_err(Failure::Other)?;
    let verb = if added == Added::Replaced { "replaced" } else { "added" };
    let title = place.host.title();
    place.finish(&file, &format!("{verb} the server {name:?} for {title} in"))?;
    if !place.dry_run && place.host != Host::File {
        say!(
            "mcp: {title} loads it when it next reads its configuration (restart it if it does not)"
        );
    }
    Ok(())
}

fn uninstall(cli: &Cli, place: &Place, name: &str) -> Result<(), Failure> {
    if connect::named_opt(cli).map_err(Failure::Usage)?.is_some() {
        return Err(Failure::Usage("uninstall takes only --name: the server is not needed".into()));
    }
    let file = ConfigFile::open(&place.path()?, place.host.reads_comments(), false)
        .map_err(Failure::Other)?;
    file.remove(place.host.servers_key(), name).map_err(Failure::Other)?;
    place.finish(&file, &format!("removed the server {name:?} for {} from", place.host.title()))
}

/// The server the command line names, with its `-e`, `--cwd` and `--header`s, and the
/// stored login's token with `--with-login`.
fn server(cli: &Cli, with_login: bool) -> Result<Server, String> {
    let named = connect::named_opt(cli)?.ok_or(
        "say which server: --stdio -- COMMAND ARGS, a URL, or --config FILE --server NAME",
    )?;
    if cli.token_env.is_some() {
        return Err(
            "--token-env is for requests mcp sends; write a header with -H, or use --with-login"
                .into(),
        );
    }
    match named {
        Named::Stdio(command) => stdio_server(cli, command, with_login),
        Named::Http { url, headers } => http_server(cli, url, headers, with_login),
    }
}

/// A command to start, with `-e` added to its environment and `--cwd` over its directory.
fn stdio_server(
    cli: &Cli,
    mut command: connect::StdioCommand,
    with_login: bool,
) -> Result<Server, String> {
    if !cli.headers.is_empty() || with_login {
        return Err("--header and --with-login only apply to a URL".into());
    }
    command.env.extend(args::env_pairs(&cli.env)?);
    let cwd = cli.cwd.clone().or(command.cwd);
    Ok(Server::Stdio { words: command.words, env: command.env, cwd })
}

/// A URL to reach, with the `-H` headers and, with `--with-login`, the stored access token.
fn http_server(
    cli: &Cli,
    url: String,
    mut headers: Vec<(String, String)>,
    with_login: bool,
) -> Result<Server, String> {
    if !cli.env.is_empty() || cli.cwd.is_some() {
        return Err("-e and --cwd only apply to a --stdio server".into());
    }
    for header in &cli.headers {
        let (name, value) = args::split_header(header)?;
        headers.push((name.to_owned(), value.to_owned()));
    }
    connect::check_http(&url, &headers)?;
    if with_login {
        headers.push(("Authorization".into(), stored_bearer(&url)?));
    }
    Ok(Server::Http { url, headers })
}

/// `Bearer TOKEN` for the access token `mcp login URL` stored.
fn stored_bearer(url: &str) -> Result<String, String> {
    let (token, expires) = authorize::stored_access_token(url)?;
    if expires.is_some() {
        say!(
            "mcp: the stored access token expires; run `mcp login {url}` and install again \
             with --force when the host is refused"
        );
    }
    Ok(format!("Bearer {token}"))
}
