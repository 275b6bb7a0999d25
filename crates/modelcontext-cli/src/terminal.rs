//! The running process as the source of a `--config` file's variables: its environment, and
//! one line typed at its terminal, shown or hidden, to answer an `${input:..}`.
//!
//! The question and the echo go to the terminal itself (`/dev/tty`), not to stdout, so
//! `mcp tools --config .. > tools.txt` still asks on the screen and keeps the file clean.

use std::borrow::Cow;

use rustyline::completion::Completer;
use rustyline::config::{Behavior, ColorMode};
use rustyline::error::ReadlineError;
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Config, Editor, Helper};

use crate::config_vars::Source;

/// The running process: its environment, and a person at its terminal.
pub struct Process;

impl Source for Process {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn can_ask(&self) -> bool {
        crate::ask::at_terminal()
    }

    fn ask(&self, prompt: &str, hidden: bool) -> Result<String, String> {
        read_line(prompt, hidden)
    }
}

/// Reads a line after `prompt`; with `hidden`, each typed character shows as `*`. Kept out of
/// the history.
fn read_line(prompt: &str, hidden: bool) -> Result<String, String> {
    let config = Config::builder()
        .behavior(Behavior::PreferTerm)
        .auto_add_history(false)
        // The mask is drawn by the highlighter, which rustyline only runs with colours on.
        .color_mode(ColorMode::Forced)
        .build();
    let mut editor =
        Editor::<Mask, DefaultHistory>::with_config(config).map_err(|e| e.to_string())?;
    if hidden {
        editor.set_helper(Some(Mask));
    }
    editor.readline(prompt).map_err(|err| match err {
        ReadlineError::Interrupted | ReadlineError::Eof => "not answered".to_owned(),
        other => other.to_string(),
    })
}

/// Draws the line as stars. rustyline has no password mode; masking in the highlighter is
/// how its own example reads a password.
struct Mask;

impl Highlighter for Mask {
    fn highlight<'l>(&self, line: &'l str, _cursor: usize) -> Cow<'l, str> {
        Cow::Owned("*".repeat(line.chars().count()))
    }

    fn highlight_char(&self, _line: &str, _cursor: usize, kind: CmdKind) -> bool {
        kind != CmdKind::MoveCursor
    }
}

impl Completer for Mask {
    type Candidate = String;
}

impl Hinter for Mask {
    type Hint = String;
}

impl Validator for Mask {}

impl Helper for Mask {}
