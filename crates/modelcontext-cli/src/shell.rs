//! `mcp shell`'s line reading: at a terminal, a line editor with history (kept in a file across
//! sessions) and Tab completion; otherwise plain lines from stdin, so scripts piping commands in
//! see exactly what they always did.

use std::io::IsTerminal;
use std::path::PathBuf;

use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::{FileHistory, History};
use rustyline::validate::Validator;
use rustyline::{Config, Context, Editor, Helper};

/// Lines kept in the history file: enough for days of debugging, small enough to load at once.
const HISTORY_LINES: usize = 1000;

/// What Tab can complete: the subcommands and the server's tools with their argument keys.
#[derive(Debug, Clone, Default)]
pub struct Known {
    pub subcommands: Vec<String>,
    /// Each tool's name and the keys of its input schema's `properties`.
    pub tools: Vec<(String, Vec<String>)>,
}

impl Known {
    /// The tools as `tools/list` returned them.
    pub fn set_tools(&mut self, tools: &[modelcontext::types::Tool]) {
        self.tools = tools
            .iter()
            .map(|tool| {
                let keys = tool.input_schema.get("properties").and_then(|p| p.as_object());
                (tool.name.clone(), keys.map(|k| k.keys().cloned().collect()).unwrap_or_default())
            })
            .collect();
    }
}

/// The completions for `line` with the cursor at byte `pos`: where the word being completed
/// starts, and the candidates for it (sorted). Words are split at whitespace only: a quoted
/// value is never what Tab completes, so quotes need no parsing here.
pub fn complete(line: &str, pos: usize, known: &Known) -> (usize, Vec<String>) {
    let before = line.get(..pos).unwrap_or(line);
    let start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
    let word = &before[start..];
    let earlier: Vec<&str> = before[..start].split_whitespace().collect();
    let names = |names: Vec<&String>| -> Vec<String> {
        let mut found: Vec<String> =
            names.into_iter().filter(|n| n.starts_with(word)).cloned().collect();
        found.sort();
        found.dedup();
        found
    };
    let candidates = match earlier.as_slice() {
        [] | ["help"] => names(known.subcommands.iter().collect()),
        ["call"] => names(known.tools.iter().map(|(name, _)| name).collect()),
        ["call", tool, given @ ..] if !word.contains('=') && !word.starts_with('-') => {
            argument_keys(known, tool, given, word)
        }
        _ => Vec::new(),
    };
    (start, candidates)
}

/// `key=` for each argument of `tool` starting with `word` and not already on the line.
fn argument_keys(known: &Known, tool: &str, given: &[&str], word: &str) -> Vec<String> {
    let Some((_, keys)) = known.tools.iter().find(|(name, _)| name == tool) else {
        return Vec::new();
    };
    let already =
        |key: &str| given.iter().any(|g| g.split_once('=').is_some_and(|(k, _)| k == key));
    let mut found: Vec<String> = keys
        .iter()
        .filter(|key| key.starts_with(word) && !already(key))
        .map(|key| format!("{key}="))
        .collect();
    found.sort();
    found
}

/// Hands rustyline the completions; no hints, colours or multi-line validation.
pub struct ShellHelper {
    known: Known,
}

impl Completer for ShellHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        Ok(complete(line, pos, &self.known))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}
impl Highlighter for ShellHelper {}
impl Validator for ShellHelper {}
impl Helper for ShellHelper {}

/// Where the shell's lines come from.
pub enum Lines {
    /// stdin is not a terminal: a line at a time, as before the editor existed.
    Plain,
    /// At a terminal: the editor, and the history file when there is a place for one.
    Editor { editor: Box<Editor<ShellHelper, FileHistory>>, history: Option<PathBuf> },
}

impl Lines {
    /// The editor when stdin is a terminal (and the terminal can be driven), else plain lines.
    pub fn new(known: Known) -> Lines {
        if !std::io::stdin().is_terminal() {
            return Lines::Plain;
        }
        let config = Config::builder()
            .max_history_size(HISTORY_LINES)
            .and_then(|c| c.history_ignore_dups(true))
            .map(|c| c.history_ignore_space(true).auto_add_history(false).build());
        let Ok(Ok(mut editor)) = config.map(Editor::with_config) else { return Lines::Plain };
        editor.set_helper(Some(ShellHelper { known }));
        let history = history_file();
        if let Some(path) = &history {
            // A missing or unreadable file starts an empty history, not an error.
            let _ = editor.load_history(path);
        }
        Lines::Editor { editor: Box::new(editor), history }
    }

    /// Whether Tab completion is on, so the caller knows the tool list is worth fetching.
    pub fn completes(&self) -> bool {
        matches!(self, Lines::Editor { .. })
    }

    /// Replaces what Tab completes (after the tool list was fetched again).
    pub fn set_known(&mut self, known: Known) {
        if let Lines::Editor { editor, .. } = self {
            editor.set_helper(Some(ShellHelper { known }));
        }
    }

    /// The next line after `prompt`, off the runtime's thread; `None` at the end of input.
    /// Ctrl-C at the prompt drops the line being typed, as a shell does.
    pub async fn next(self, prompt: &'static str) -> (Lines, Option<String>) {
        let read = tokio::task::spawn_blocking(move || match self {
            Lines::Plain => {
                let line = crate::ask::read_answer(prompt);
                (Lines::Plain, line)
            }
            Lines::Editor { mut editor, history } => {
                let line = loop {
                    match editor.readline(prompt) {
                        Ok(line) => break Some(line),
                        Err(ReadlineError::Interrupted) => continue,
                        Err(_) => break None,
                    }
                };
                if let (Some(line), Some(path)) = (&line, &history) {
                    remember(&mut editor, line, path);
                }
                (Lines::Editor { editor, history }, line)
            }
        });
        match read.await {
            Ok(read) => read,
            Err(_) => (Lines::Plain, None),
        }
    }
}

/// Adds `line` to the history and saves the file at once, so a session killed later keeps it.
fn remember(editor: &mut Editor<ShellHelper, FileHistory>, line: &str, path: &PathBuf) {
    if line.trim().is_empty() || editor.history_mut().add(line).ok() != Some(true) {
        return;
    }
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    // rustyline creates the file readable by its owner only (0600): commands can hold secrets.
    let _ = editor.append_history(path);
}

/// The history file: `$XDG_STATE_HOME/mcp/history`, else `~/.local/state/mcp/history`;
/// `None` (history for this session only) when neither is set.
fn history_file() -> Option<PathBuf> {
    let non_empty =
        |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let state = non_empty("XDG_STATE_HOME")
        .or_else(|| non_empty("HOME").map(|home| home.join(".local").join("state")))?;
    Some(state.join("mcp").join("history"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Known {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Known {
            subcommands: words(&["call", "complete", "tools", "read", "help", "exit"]),
            tools: vec![
                ("get_author".into(), words(&["title", "edition"])),
                ("get_price".into(), words(&["title"])),
                ("search_books".into(), words(&["query", "limit"])),
            ],
        }
    }

    fn at_end(line: &str) -> (usize, Vec<String>) {
        complete(line, line.len(), &known())
    }

    #[test]
    fn the_first_word_completes_to_subcommands() {
        assert_eq!(at_end("c"), (0, vec!["call".into(), "complete".into()]));
        assert_eq!(at_end("  to"), (2, vec!["tools".into()]));
        assert_eq!(at_end("help re"), (5, vec!["read".into()]));
        assert_eq!(at_end("x").1, Vec::<String>::new());
    }

    #[test]
    fn after_call_come_tool_names() {
        assert_eq!(at_end("call get_"), (5, vec!["get_author".into(), "get_price".into()]));
        assert_eq!(at_end("call ").1.len(), 3);
        assert_eq!(at_end("call  se"), (6, vec!["search_books".into()]));
    }

    #[test]
    fn after_the_tool_come_its_argument_keys_not_yet_given() {
        assert_eq!(at_end("call get_author "), (16, vec!["edition=".into(), "title=".into()]));
        assert_eq!(at_end("call get_author title=Dune e"), (27, vec!["edition=".into()]));
        assert_eq!(at_end("call get_author title=Dune ").1, vec!["edition=".to_string()]);
        // A value, an option, an unknown tool and other subcommands complete nothing.
        assert!(at_end("call get_author title=D").1.is_empty());
        assert!(at_end("call get_author --").1.is_empty());
        assert!(at_end("call nope ").1.is_empty());
        assert!(at_end("read books").1.is_empty());
    }

    #[test]
    fn the_cursor_not_the_line_end_decides() {
        let line = "call get_author title=Dune";
        assert_eq!(complete(line, 8, &known()), (5, vec!["get_author".into(), "get_price".into()]));
        // A position inside a character or past the end is read as the whole line.
        assert_eq!(complete("call ü", 6, &known()).0, 5);
        assert_eq!(complete("c", 99, &known()).1.len(), 2);
    }
}
