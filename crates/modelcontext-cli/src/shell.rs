//! `mcp shell`'s line reading: at a terminal, a line editor with history (kept in a file across
//! sessions) and Tab completion; otherwise plain lines from stdin, so scripts piping commands in
//! see exactly what they always did. What Tab completes is kept current from the server's
//! `list_changed` notifications ([`list_changes`]), not fetched again for every line.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use modelcontext::types::Notification;

use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::{FileHistory, History};
use rustyline::validate::Validator;
use rustyline::{Config, Context, Editor, Helper};
use tokio::sync::mpsc;

use crate::connect::NotificationHook;
use crate::words;

/// Lines kept in the history file: enough for days of debugging, small enough to load at once.
const HISTORY_LINES: usize = 1000;

/// What Tab can complete: the subcommands, and the server's tools, prompts and resources as
/// last listed (at the start, and again when the server says a list changed).
#[derive(Debug, Clone, Default)]
pub struct Known {
    pub subcommands: Vec<String>,
    /// Each tool's name and the keys of its input schema's `properties`, with `outer.inner`
    /// for the fields of a property that holds an object (see [`crate::schema::keys`]).
    pub tools: Vec<(String, Vec<String>)>,
    /// Each prompt's name and the names of its arguments.
    pub prompts: Vec<(String, Vec<String>)>,
    /// The URIs of the resources.
    pub resources: Vec<String>,
}

impl Known {
    /// The tools as `tools/list` returned them.
    pub fn set_tools(&mut self, tools: &[modelcontext::types::Tool]) {
        self.tools = tools
            .iter()
            .map(|tool| (tool.name.clone(), crate::schema::keys(&tool.input_schema)))
            .collect();
    }

    /// The prompts as `prompts/list` returned them.
    pub fn set_prompts(&mut self, prompts: &[modelcontext::types::Prompt]) {
        self.prompts = prompts
            .iter()
            .map(|prompt| {
                let names = prompt.arguments.iter().flatten().map(|a| a.name.clone()).collect();
                (prompt.name.clone(), names)
            })
            .collect();
    }
}

/// [`Known`], shared between the session (which updates it when a list changes) and the line
/// editor's thread (which completes from it at each Tab).
pub type SharedKnown = Arc<Mutex<Known>>;

/// The lists a server can say changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum List {
    Tools,
    Prompts,
    Resources,
}

impl List {
    pub const ALL: [List; 3] = [List::Tools, List::Prompts, List::Resources];

    /// The list a `notifications/*/list_changed` is about.
    fn changed_by(method: &str) -> Option<List> {
        use modelcontext::types::method;
        match method {
            method::TOOLS_LIST_CHANGED => Some(List::Tools),
            method::PROMPTS_LIST_CHANGED => Some(List::Prompts),
            method::RESOURCES_LIST_CHANGED => Some(List::Resources),
            _ => None,
        }
    }
}

/// A notification hook for [`Target::connect`](crate::connect::Target::connect) that passes
/// on which list changed, and the receiving end the shell reads them from.
pub fn list_changes() -> (NotificationHook, mpsc::UnboundedReceiver<List>) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let hook: NotificationHook = Arc::new(move |notification: Notification| {
        if let Some(list) = List::changed_by(&notification.method) {
            // The shell has ended when no one receives: nothing left to keep current.
            let _ = sender.send(list);
        }
    });
    (hook, receiver)
}

/// The completions for `line` with the cursor at byte `pos`: where the word being completed
/// starts, and the candidates that replace it (sorted), quoted where they need it. The line
/// is read as [`words::split`] reads it, so a quoted word before the cursor is one word and
/// a word the cursor is inside an open quote of completes too.
pub fn complete(line: &str, pos: usize, known: &Known) -> (usize, Vec<String>) {
    let before = line.get(..pos).unwrap_or(line);
    let words::Partial { done, start, word, .. } = words::partial(before);
    let earlier: Vec<&str> = done.iter().map(String::as_str).collect();
    let names = |names: Vec<&String>| -> Vec<String> {
        let mut found: Vec<String> =
            names.into_iter().filter(|n| n.starts_with(&word)).map(|n| words::quote(n)).collect();
        found.sort();
        found.dedup();
        found
    };
    let is_key = !word.contains('=') && !word.starts_with('-');
    let candidates = match earlier.as_slice() {
        [] | ["help"] => names(known.subcommands.iter().collect()),
        ["call"] => names(known.tools.iter().map(|(name, _)| name).collect()),
        ["get"] | ["complete", "prompt"] => {
            names(known.prompts.iter().map(|(name, _)| name).collect())
        }
        ["read"] => names(known.resources.iter().collect()),
        ["call", tool, given @ ..] if is_key => argument_keys(&known.tools, tool, given, &word),
        ["get", prompt, given @ ..] if is_key => {
            argument_keys(&known.prompts, prompt, given, &word)
        }
        _ => Vec::new(),
    };
    (start, candidates)
}

/// `key=` for each argument of `name` (a tool's or a prompt's) starting with `word` and not
/// already on the line.
fn argument_keys(
    known: &[(String, Vec<String>)],
    name: &str,
    given: &[&str],
    word: &str,
) -> Vec<String> {
    let Some((_, keys)) = known.iter().find(|(known, _)| known == name) else {
        return Vec::new();
    };
    let already =
        |key: &str| given.iter().any(|g| g.split_once('=').is_some_and(|(k, _)| k == key));
    let mut found: Vec<String> = keys
        .iter()
        .filter(|key| key.starts_with(word) && !already(key))
        .map(|key| format!("{}=", words::quote(key)))
        .collect();
    found.sort();
    found
}

/// Hands rustyline the completions; no hints, colours or multi-line validation.
pub struct ShellHelper {
    known: SharedKnown,
}

impl Completer for ShellHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let known = self.known.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        Ok(complete(line, pos, &known))
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
    /// Tab completes from `known` as it is at the moment Tab is pressed.
    pub fn new(known: SharedKnown) -> Lines {
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

    /// Whether Tab completion is on, so the caller knows the lists are worth fetching.
    pub fn completes(&self) -> bool {
        matches!(self, Lines::Editor { .. })
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
            subcommands: words(&["call", "complete", "get", "tools", "read", "help", "exit"]),
            tools: vec![
                ("get_author".into(), words(&["title", "edition"])),
                ("get_price".into(), words(&["title"])),
                ("search_books".into(), words(&["query", "limit"])),
                ("rate book".into(), words(&["stars", "the title"])),
            ],
            prompts: vec![("review".into(), words(&["title", "tone"]))],
            resources: words(&["books://Dune", "books://The Left Hand", "notes://today"]),
        }
    }

    fn at_end(line: &str) -> (usize, Vec<String>) {
        complete(line, line.len(), &known())
    }

    fn found(candidates: &[&str]) -> Vec<String> {
        candidates.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn the_first_word_completes_to_subcommands() {
        assert_eq!(at_end("c"), (0, found(&["call", "complete"])));
        assert_eq!(at_end("  to"), (2, found(&["tools"])));
        assert_eq!(at_end("help re"), (5, found(&["read"])));
        assert_eq!(at_end("x").1, Vec::<String>::new());
    }

    #[test]
    fn after_call_come_tool_names() {
        assert_eq!(at_end("call get_"), (5, found(&["get_author", "get_price"])));
        assert_eq!(at_end("call ").1.len(), 4);
        assert_eq!(at_end("call  se"), (6, found(&["search_books"])));
    }

    #[test]
    fn after_the_tool_come_its_argument_keys_not_yet_given() {
        assert_eq!(at_end("call get_author "), (16, found(&["edition=", "title="])));
        assert_eq!(at_end("call get_author title=Dune e"), (27, found(&["edition="])));
        assert_eq!(at_end("call get_author title=Dune ").1, found(&["edition="]));
        // A value, an option, an unknown tool and other subcommands complete nothing.
        assert!(at_end("call get_author title=D").1.is_empty());
        assert!(at_end("call get_author --").1.is_empty());
        assert!(at_end("call nope ").1.is_empty());
        assert!(at_end("ping ").1.is_empty());
    }

    #[test]
    fn the_fields_of_an_object_argument_complete_as_dotted_keys() {
        let serde_json::Value::Object(schema) = serde_json::json!({
            "type": "object",
            "properties": {"order": {"$ref": "#/$defs/Order"}},
            "$defs": {"Order": {"type": "object", "properties": {
                "book": {"type": "string"}, "quantity": {"type": "integer"}
            }}}
        }) else {
            unreachable!("an object")
        };
        let known = Known {
            tools: vec![("place_order".into(), crate::schema::keys(&schema))],
            ..Known::default()
        };
        let line = "call place_order ";
        let all = found(&["order.book=", "order.quantity=", "order="]);
        assert_eq!(complete(line, line.len(), &known), (17, all));
        let line = "call place_order order.book=Dune order.q";
        assert_eq!(complete(line, line.len(), &known), (33, found(&["order.quantity="])));
    }

    #[test]
    fn prompts_and_resources_complete_too() {
        assert_eq!(at_end("get r"), (4, found(&["review"])));
        assert_eq!(at_end("get review tone=dry "), (20, found(&["title="])));
        assert_eq!(at_end("complete prompt "), (16, found(&["review"])));
        let both = found(&["'books://The Left Hand'", "books://Dune"]);
        assert_eq!(at_end("read books://"), (5, both));
    }

    #[test]
    fn quotes_are_read_as_the_shell_line_reads_them() {
        // A name that needs quotes is offered quoted, and completes inside an open quote.
        assert_eq!(at_end("call r"), (5, found(&["'rate book'"])));
        assert_eq!(at_end("call 'rate b"), (5, found(&["'rate book'"])));
        assert_eq!(at_end("call \"rate "), (5, found(&["'rate book'"])));
        assert_eq!(at_end("read 'books://The L"), (5, found(&["'books://The Left Hand'"])));
        assert_eq!(at_end("read books://The\\ L"), (5, found(&["'books://The Left Hand'"])));
        // A quoted tool is one word, its keys follow; a quoted value with spaces is one word.
        assert_eq!(at_end("call 'rate book' "), (17, found(&["'the title'=", "stars="])));
        assert_eq!(at_end("call get_author title='The Left' e"), (33, found(&["edition="])));
        assert_eq!(at_end("call get_author 'title=a b' "), (28, found(&["edition="])));
        // Inside a quoted value nothing completes.
        assert!(at_end("call get_author title=\"The e").1.is_empty());
        // What completion offers, the line parser reads back as the name.
        let line =
            format!("call {} {}x", at_end("call r").1[0], at_end("call 'rate book' the").1[0]);
        assert_eq!(words::split(&line), Ok(found(&["call", "rate book", "the title=x"])));
    }

    #[test]
    fn the_cursor_not_the_line_end_decides() {
        let line = "call get_author title=Dune";
        assert_eq!(complete(line, 8, &known()), (5, found(&["get_author", "get_price"])));
        // A position inside a character or past the end is read as the whole line.
        assert_eq!(complete("call ü", 6, &known()).0, 5);
        assert_eq!(complete("c", 99, &known()).1.len(), 2);
    }

    #[test]
    fn list_changed_notifications_name_their_list() {
        assert_eq!(List::changed_by("notifications/tools/list_changed"), Some(List::Tools));
        assert_eq!(List::changed_by("notifications/prompts/list_changed"), Some(List::Prompts));
        let resources = "notifications/resources/list_changed";
        assert_eq!(List::changed_by(resources), Some(List::Resources));
        assert_eq!(List::changed_by("notifications/resources/updated"), None);
    }
}
