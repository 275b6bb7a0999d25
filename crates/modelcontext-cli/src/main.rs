//! `mcp`: talk to any MCP server from a terminal, for people who build and debug servers.
//!
//! ```text
//! mcp --stdio "target/debug/examples/bookshop" tools
//! mcp --stdio "target/debug/examples/bookshop" call get_author title=Dune
//! mcp tools http://127.0.0.1:8000/mcp
//! mcp call get_author title=Dune http://127.0.0.1:8000/mcp
//! mcp http://127.0.0.1:8000/mcp read books://Dune
//! mcp --json http://127.0.0.1:8000/mcp call search_books query=dune limit=5
//! mcp call get_author title=Dune --stdio -- npx -y some-server --flag
//! mcp tools --config ~/.config/Claude/claude_desktop_config.json --server books
//! mcp listen --resource books://Dune --stdio "target/debug/examples/bookshop"
//! mcp ui --stdio "target/debug/examples/bookshop"
//! mcp skills fetch pdf-processing ./skills http://127.0.0.1:8000/mcp
//! ```
//!
//! The server is a command run as a child process (`--stdio "cmd args"`, split like a shell
//! would but without a shell) or a Streamable HTTP endpoint (an `http://` URL), named before
//! the subcommand or after it (`mcp tools URL`; after `call` and `get`, the word with `://`
//! and no `=` before it is the URL, so `url=http://x` stays an argument). `key=value`
//! arguments are typed by the tool's input schema: a property the schema types as integer,
//! number, boolean, array, object or null is parsed as JSON, anything else is sent as the
//! string it is. `call --args '{..}'` gives the whole arguments object at once.
//!
//! A server behind OAuth: `mcp login URL` logs in once (browser, loopback redirect, PKCE) and
//! stores the tokens in `$XDG_CONFIG_HOME/mcp/tokens.json` (else `~/.config/mcp/`, mode 0600);
//! every later command against that URL uses them and refreshes them when they expire;
//! `mcp logout URL` revokes and forgets them. `--token-env NAME` sends the bearer token held
//! in the environment variable NAME instead (unlike `-H`, it does not show in `ps`).
//!
//! `mcp ui` serves a web inspector on 127.0.0.1 (the page is embedded in the binary) and opens
//! it in the browser: forms from each tool's input schema, resources, prompts, the server's
//! questions in dialogs, every message live. Only the holder of the token in the URL it prints
//! is served, and `Host` and `Origin` are checked (see the `ui` module).
//!
//! Output is for people by default; `--json` prints the result as JSON on stdout instead.
//! Diagnostics and progress always go to stderr: a progress bar at a terminal, plain lines
//! otherwise. Ctrl-C cancels the request in flight at the server (`notifications/cancelled`).
//!
//! # Exit codes
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | any other failure |
//! | 2 | the tool ran and reported an error (`isError: true`) |
//! | 3 | the server answered with a JSON-RPC (protocol) error, or an answer that does not parse |
//! | 4 | no connection: the server could not be started or reached, exited, or timed out |
//! | 64 | usage: bad options or arguments |
//! | 130 | interrupted (Ctrl-C); the request in flight was cancelled at the server |

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::failure::Exit;

#[macro_use]
mod print;
mod args;
mod ask;
mod authorize;
mod cli;
mod commands;
mod config;
mod config_vars;
mod connect;
mod edit;
mod env_file;
mod failure;
mod hosts;
mod install;
mod login;
mod loopback;
mod output;
mod pages;
mod progress;
mod schema;
mod serve;
mod shell;
mod skills;
mod suggest;
mod terminal;
mod ui;
mod verbose;
mod words;

/// Takes `--stdio -- PROGRAM ARGS...` off the end of the command line: after that `--` every
/// word is the server's, flags included, so clap must not see them (the subcommand and its
/// arguments come before `--stdio`).
fn split_trailing_command(mut line: Vec<String>) -> (Vec<String>, Option<Vec<String>>) {
    let Some(at) = line.windows(2).position(|pair| pair[0] == "--stdio" && pair[1] == "--") else {
        return (line, None);
    };
    let words = line.split_off(at + 2);
    line.truncate(at);
    (line, Some(words))
}

/// `mcp toools`: clap takes the mistyped word for the optional URL and then misses a
/// subcommand, so its own suggestion (which works after a URL) never comes. A word that is
/// not a URL and is close to a subcommand's name gets the tip here.
fn mistyped_subcommand(line: &[String]) -> Option<String> {
    use clap::CommandFactory;
    let command = Cli::command();
    let names: Vec<&str> = command.get_subcommands().map(|c| c.get_name()).collect();
    let word = line.iter().skip(1).find(|w| !w.starts_with('-') && !w.contains("://"))?;
    let name = suggest::closest(word, names)?;
    Some(format!(
        "error: unrecognized subcommand '{word}'\n\n  tip: a similar subcommand exists: '{name}'"
    ))
}

/// `mcp completions SHELL`: generated into memory first, then written as any output is
/// (a closed pipe ends it quietly).
fn print_completions(shell: clap_complete::Shell) {
    use clap::CommandFactory;
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "mcp", &mut script);
    print::stdout(&String::from_utf8_lossy(&script));
}

fn main() -> ExitCode {
    let line = std::env::args_os().map(|arg| arg.to_string_lossy().into_owned()).collect();
    let (line, stdio_words) = split_trailing_command(line);
    let cli = match Cli::try_parse_from(line) {
        Ok(cli) => Cli { stdio_words, ..cli },
        Err(err) => {
            use clap::error::ErrorKind::{
                DisplayHelpOnMissingArgumentOrSubcommand, MissingSubcommand,
            };
            let no_subcommand =
                matches!(err.kind(), MissingSubcommand | DisplayHelpOnMissingArgumentOrSubcommand);
            if no_subcommand && stdio_words.is_some() {
                say!(
                    "mcp: everything after `--stdio --` is the server's command, so the \
                     subcommand goes before it: mcp tools --stdio -- npx -y server"
                );
                return Exit::Usage.into();
            }
            if err.kind() == MissingSubcommand {
                if let Some(tip) = mistyped_subcommand(&std::env::args().collect::<Vec<_>>()) {
                    say!("{tip}");
                    return Exit::Usage.into();
                }
            }
            // clap's own exit code for usage errors is 2, which we use for tool errors.
            let _ = err.print();
            return if err.use_stderr() { Exit::Usage.into() } else { Exit::Success.into() };
        }
    };
    if let Command::Completions { shell } = cli.command {
        print_completions(shell);
        return Exit::Success.into();
    }
    // `serve` answers many clients at once and picks its own runtime (see there).
    if let Command::Serve { .. } = cli.command {
        return serve::main(cli).into();
    }
    // One connection needs one thread.
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            say!("mcp: cannot start the async runtime: {err}");
            return Exit::Other.into();
        }
    };
    runtime.block_on(commands::run(cli)).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stdio_command_can_trail_the_line() {
        let line = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let (rest, words) = split_trailing_command(line("mcp tools --stdio -- npx -y x --flag"));
        assert_eq!((rest, words), (line("mcp tools"), Some(line("npx -y x --flag"))));
        let (rest, words) = split_trailing_command(line("mcp tools --stdio srv"));
        assert_eq!((rest, words), (line("mcp tools --stdio srv"), None));
    }
}
