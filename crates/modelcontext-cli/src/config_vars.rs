//! VS Code's `${...}` variables in a `--config` file, expanded as VS Code documents them
//! (its "Variables reference" and "MCP configuration reference").
//!
//! - `${env:NAME}`: the environment variable. VS Code turns an unset one into an empty string;
//!   here it is an error that names it, since a silently empty key or path only fails later
//!   and less clearly (`NAME=` sets it empty on purpose).
//! - `${input:ID}`: the entry `ID` of the file's `inputs`. Each is answered once per run:
//!   by the environment variable [`input_variable`] (`MCP_INPUT_` and the id in capitals,
//!   other characters as `_`) when set, so a supervisor never meets a prompt; else, for a
//!   `promptString` with stdin a terminal, by asking its `description` (typing hidden when
//!   `password` is true; an empty answer takes its `default`); else by its `default`.
//! - `${workspaceFolder}` (and `${workspaceFolderBasename}`, `${cwd}`): the folder holding
//!   `.vscode/` for a file at `<dir>/.vscode/mcp.json`, else the file's own folder.
//! - `${userHome}`, `${pathSeparator}` and `${/}`.
//! - VS Code's variables about its own state (`${file}`, `${selectedText}`, `${config:..}`,
//!   `${command:..}`, ...) are errors; any other `${...}` stays as written, as VS Code leaves
//!   a variable it does not know, and so does an attempted nesting (`${env:${input:x}}`).
//!
//! Values are put in as they are, never expanded again, and `inputs` itself is not expanded
//! (VS Code supports no nesting).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// VS Code's variables that need an open editor, its settings, commands or extensions.
const VS_CODE_ONLY: &[&str] = &[
    "file",
    "fileWorkspaceFolder",
    "fileWorkspaceFolderBasename",
    "relativeFile",
    "relativeFileDirname",
    "fileBasename",
    "fileBasenameNoExtension",
    "fileExtname",
    "fileDirname",
    "fileDirnameBasename",
    "lineNumber",
    "columnNumber",
    "selectedText",
    "defaultBuildTask",
    "config",
    "command",
    "extensionInstallFolder",
];

/// The environment variable that answers `${input:ID}` without a prompt.
pub fn input_variable(id: &str) -> String {
    let id =
        id.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' });
    format!("MCP_INPUT_{}", id.collect::<String>())
}

/// Where values come from: the process (its environment and terminal), or a test's stand-in.
pub trait Source {
    /// The environment variable `name`, if set.
    fn var(&self, name: &str) -> Option<String>;
    /// Whether a person is there to answer: stdin is a terminal.
    fn can_ask(&self) -> bool;
    /// Asks at the terminal; `hidden` keeps the typing off the screen.
    fn ask(&self, prompt: &str, hidden: bool) -> Result<String, String>;
}

/// The variables of one file: its folder, its inputs, and the inputs answered so far.
pub struct Variables<'s> {
    folder: PathBuf,
    inputs: Vec<Value>,
    answers: HashMap<String, String>,
    source: &'s dyn Source,
}

impl<'s> Variables<'s> {
    /// The variables of the file at `path`, whose JSON is `json`.
    pub fn new(path: &Path, json: &Value, source: &'s dyn Source) -> Variables<'s> {
        let inputs = (json.get("inputs"))
            .or_else(|| json.get("mcp").and_then(|mcp| mcp.get("inputs")))
            .and_then(Value::as_array);
        Variables {
            folder: workspace_folder(path),
            inputs: inputs.cloned().unwrap_or_default(),
            answers: HashMap::new(),
            source,
        }
    }

    /// `text` with its variables replaced by their values.
    pub fn expand(&mut self, text: &str) -> Result<String, String> {
        let mut expanded = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            // Without a closing brace the rest is plain text.
            let Some(length) = rest[start..].find('}').map(|end| end + 1) else { break };
            expanded.push_str(&rest[..start]);
            let written = &rest[start..start + length];
            match self.value(written)? {
                Some(value) => expanded.push_str(&value),
                None => expanded.push_str(written),
            }
            rest = &rest[start + length..];
        }
        expanded.push_str(rest);
        Ok(expanded)
    }

    /// The value of `written` (`${...}`), or `None` to leave it as written.
    fn value(&mut self, written: &str) -> Result<Option<String>, String> {
        let name = &written[2..written.len() - 1];
        if name.contains("${") {
            return Ok(None);
        }
        let (kind, argument) = match name.split_once(':') {
            Some((kind, argument)) => (kind, Some(argument)),
            None => (name, None),
        };
        let shown = |path: PathBuf| Some(path.display().to_string());
        match (kind, argument) {
            ("env" | "input", None | Some("")) => Err(format!("{written}: no name given")),
            ("env", Some(name)) => self.env(written, name).map(Some),
            ("input", Some(id)) => self.input(written, id).map(Some),
            ("workspaceFolder" | "workspaceRoot" | "cwd", _) => {
                Ok(shown(self.folder(written, argument)?))
            }
            ("workspaceFolderBasename" | "workspaceRootFolderName", _) => {
                let folder = self.folder(written, argument)?;
                Ok(Some(folder.file_name().unwrap_or_default().to_string_lossy().into_owned()))
            }
            ("userHome", None) => self.home(written).map(Some),
            ("pathSeparator" | "/", None) => Ok(Some(std::path::MAIN_SEPARATOR_STR.to_owned())),
            (kind, _) if VS_CODE_ONLY.contains(&kind) => {
                Err(format!("{written}: only VS Code can expand this variable"))
            }
            _ => Ok(None),
        }
    }

    fn env(&self, written: &str, name: &str) -> Result<String, String> {
        let unset = || format!("{written}: the environment variable {name} is not set");
        self.source.var(name).ok_or_else(unset)
    }

    /// The workspace folder; `${workspaceFolder:NAME}` (a multi-root workspace's folder) only
    /// when NAME is this one's name.
    fn folder(&self, written: &str, name: Option<&str>) -> Result<PathBuf, String> {
        let own = self.folder.file_name().unwrap_or_default().to_string_lossy();
        match name {
            Some(name) if name != own => Err(format!(
                "{written}: no workspace folder named {name:?} (this file's is {own:?})"
            )),
            _ => Ok(self.folder.clone()),
        }
    }

    fn home(&self, written: &str) -> Result<String, String> {
        let home = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
        self.source.var(home).ok_or_else(|| format!("{written}: {home} is not set"))
    }

    /// The answer to input `id`, asked for at most once.
    fn input(&mut self, written: &str, id: &str) -> Result<String, String> {
        if let Some(answer) = self.answers.get(id) {
            return Ok(answer.clone());
        }
        let declared = self.inputs.iter().find(|input| input.get("id") == Some(&Value::from(id)));
        let Some(declared) = declared else {
            return Err(format!("{written}: no input with id {id:?} in the file's \"inputs\""));
        };
        let answer = self.answer(written, &Input::from(declared, id))?;
        self.answers.insert(id.to_owned(), answer.clone());
        Ok(answer)
    }

    /// The environment variable, else the person at the terminal, else the default.
    fn answer(&self, written: &str, input: &Input) -> Result<String, String> {
        let variable = input_variable(&input.id);
        if let Some(value) = self.source.var(&variable) {
            return Ok(value);
        }
        if input.kind == "promptString" && self.source.can_ask() {
            let answer = self.source.ask(&input.prompt(), input.password);
            let answer = answer.map_err(|err| format!("{written}: {err}"))?;
            return Ok(if answer.is_empty() {
                input.default.clone().unwrap_or(answer)
            } else {
                answer
            });
        }
        input.default.clone().ok_or_else(|| unanswered(written, input, &variable))
    }
}

/// Why an input has no value, and which variable to set.
fn unanswered(written: &str, input: &Input, variable: &str) -> String {
    match input.kind.as_str() {
        "promptString" => format!(
            "{written} ({}): set {variable}, or run at a terminal to be asked",
            input.description
        ),
        kind => format!("{written}: a {kind} input, which only VS Code asks; set {variable}"),
    }
}

/// One entry of `inputs`, with VS Code's defaults for what it leaves out.
struct Input {
    id: String,
    kind: String,
    description: String,
    password: bool,
    default: Option<String>,
}

impl Input {
    fn from(declared: &Value, id: &str) -> Input {
        let text = |key: &str| declared.get(key).and_then(Value::as_str).map(str::to_owned);
        Input {
            id: id.to_owned(),
            kind: text("type").unwrap_or_else(|| "promptString".into()),
            description: text("description").unwrap_or_else(|| id.to_owned()),
            password: declared.get("password").and_then(Value::as_bool).unwrap_or(false),
            default: text("default"),
        }
    }

    /// The question: the description, and the default unless it is a password.
    fn prompt(&self) -> String {
        match &self.default {
            Some(default) if !self.password => format!("{} [{default}]: ", self.description),
            _ => format!("{}: ", self.description),
        }
    }
}

/// VS Code's workspace root for the file at `path`: the folder that holds `.vscode/`, or for
/// a file elsewhere (a user's `mcp.json`, Claude Desktop's file) the file's own folder.
fn workspace_folder(path: &Path) -> PathBuf {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let folder = path.parent().unwrap_or(Path::new("")).to_path_buf();
    match (folder.file_name(), folder.parent()) {
        (Some(name), Some(root)) if name == ".vscode" => root.to_path_buf(),
        _ => folder,
    }
}

/// A stand-in for the process: set variables, and a terminal that gives one answer.
#[cfg(test)]
pub struct Fake {
    /// The environment.
    pub vars: Vec<(&'static str, &'static str)>,
    /// What the terminal answers; `None` when stdin is not a terminal.
    pub answer: Option<Result<&'static str, &'static str>>,
    /// Each question asked, and whether it hid the typing.
    pub asked: std::cell::RefCell<Vec<(String, bool)>>,
}

#[cfg(test)]
impl Fake {
    pub fn with(vars: &[(&'static str, &'static str)]) -> Fake {
        Fake { vars: vars.to_vec(), answer: None, asked: Default::default() }
    }
}

#[cfg(test)]
impl Source for Fake {
    fn var(&self, name: &str) -> Option<String> {
        self.vars.iter().find(|(key, _)| *key == name).map(|(_, value)| value.to_string())
    }

    fn can_ask(&self) -> bool {
        self.answer.is_some()
    }

    fn ask(&self, prompt: &str, hidden: bool) -> Result<String, String> {
        self.asked.borrow_mut().push((prompt.to_owned(), hidden));
        let answer = self.answer.expect("asked only at a terminal");
        answer.map(str::to_owned).map_err(str::to_owned)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A folder of the test's, absolute on every platform.
    fn project() -> PathBuf {
        std::env::temp_dir().join("project")
    }

    fn inputs() -> Value {
        json!({"inputs": [
            {"type": "promptString", "id": "api-key", "description": "API key", "password": true},
            {"type": "promptString", "id": "shelf", "description": "Shelf", "default": "fiction"},
            {"type": "pickString", "id": "size", "description": "Size", "options": ["s", "m"]}
        ]})
    }

    /// `text` expanded in a file at `<project>/.vscode/mcp.json` with `inputs()`.
    fn expand(source: &Fake, text: &str) -> Result<String, String> {
        let path = project().join(".vscode").join("mcp.json");
        Variables::new(&path, &inputs(), source).expand(text)
    }

    #[test]
    fn environment_variables() {
        let source = Fake::with(&[("TOKEN", "t0k"), ("EMPTY", "")]);
        assert_eq!(expand(&source, "Bearer ${env:TOKEN}${env:EMPTY}!"), Ok("Bearer t0k!".into()));
        assert_eq!(
            expand(&source, "${env:NOPE}"),
            Err("${env:NOPE}: the environment variable NOPE is not set".into())
        );
        assert_eq!(expand(&source, "${env:}"), Err("${env:}: no name given".into()));
        assert_eq!(expand(&source, "${env}"), Err("${env}: no name given".into()));
    }

    #[test]
    fn an_input_from_its_environment_variable() {
        assert_eq!(input_variable("api-key"), "MCP_INPUT_API_KEY");
        assert_eq!(input_variable("db.url2"), "MCP_INPUT_DB_URL2");
        let source = Fake::with(&[("MCP_INPUT_API_KEY", "k3y")]);
        assert_eq!(expand(&source, "${input:api-key}"), Ok("k3y".into()));
    }

    #[test]
    fn an_input_is_asked_once_at_a_terminal() {
        let source = Fake { answer: Some(Ok("k3y")), ..Fake::with(&[]) };
        let path = project().join(".vscode").join("mcp.json");
        let mut variables = Variables::new(&path, &inputs(), &source);
        assert_eq!(variables.expand("${input:api-key}/${input:api-key}"), Ok("k3y/k3y".into()));
        assert_eq!(variables.expand("${input:api-key}"), Ok("k3y".into()));
        assert_eq!(variables.expand("${input:shelf}"), Ok("k3y".into()));
        let asked = [("API key: ".to_owned(), true), ("Shelf [fiction]: ".to_owned(), false)];
        assert_eq!(*source.asked.borrow(), asked);
    }

    #[test]
    fn an_empty_answer_takes_the_default() {
        let source = Fake { answer: Some(Ok("")), ..Fake::with(&[]) };
        assert_eq!(expand(&source, "${input:shelf}"), Ok("fiction".into()));
        assert_eq!(expand(&source, "${input:api-key}"), Ok("".into()));
        let source = Fake { answer: Some(Err("not answered")), ..Fake::with(&[]) };
        assert_eq!(
            expand(&source, "${input:api-key}"),
            Err("${input:api-key}: not answered".into())
        );
    }

    #[test]
    fn without_a_terminal_an_input_needs_its_variable_or_a_default() {
        let source = Fake::with(&[]);
        assert_eq!(expand(&source, "${input:shelf}"), Ok("fiction".into()));
        assert_eq!(
            expand(&source, "${input:api-key}"),
            Err("${input:api-key} (API key): set MCP_INPUT_API_KEY, or run at a terminal to be asked"
                .into())
        );
        assert_eq!(
            expand(&source, "${input:size}"),
            Err("${input:size}: a pickString input, which only VS Code asks; set MCP_INPUT_SIZE"
                .into())
        );
        assert_eq!(
            expand(&source, "${input:nope}"),
            Err("${input:nope}: no input with id \"nope\" in the file's \"inputs\"".into())
        );
    }

    #[test]
    fn settings_json_keeps_its_inputs_under_mcp() {
        let json =
            json!({"mcp": {"inputs": [{"type": "promptString", "id": "k", "default": "v"}]}});
        let source = Fake::with(&[]);
        let mut variables = Variables::new(Path::new("settings.json"), &json, &source);
        assert_eq!(variables.expand("${input:k}"), Ok("v".into()));
    }

    #[test]
    fn the_workspace_folder_holds_dot_vscode_or_the_file() {
        let source = Fake::with(&[]);
        let sep = std::path::MAIN_SEPARATOR_STR;
        let folder = project().display().to_string();
        let expected = format!("{folder}{sep}src|project|{folder}");
        assert_eq!(
            expand(&source, "${workspaceFolder}${/}src|${workspaceFolderBasename}|${cwd}"),
            Ok(expected)
        );
        assert_eq!(expand(&source, "${workspaceFolder:project}"), Ok(folder.clone()));
        assert_eq!(
            expand(&source, "${workspaceFolder:other}"),
            Err("${workspaceFolder:other}: no workspace folder named \"other\" (this file's is \"project\")"
                .into())
        );
        let elsewhere = project().join("claude.json");
        assert_eq!(workspace_folder(&elsewhere), project());
        let relative = workspace_folder(Path::new("mcp.json"));
        assert_eq!(relative, std::env::current_dir().expect("cwd"));
    }

    #[test]
    fn the_home_folder_and_the_separator() {
        let home = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
        let source = Fake::with(&[(home, "/home/me")]);
        let sep = std::path::MAIN_SEPARATOR_STR;
        assert_eq!(expand(&source, "${userHome}${pathSeparator}x"), Ok(format!("/home/me{sep}x")));
        let error = format!("${{userHome}}: {home} is not set");
        assert_eq!(expand(&Fake::with(&[]), "${userHome}"), Err(error));
    }

    #[test]
    fn unknown_nested_and_unclosed_variables_stay_as_written() {
        let source = Fake::with(&[("A", "${env:B}"), ("B", "b")]);
        let text = "${unknown} ${env:${env:A}} ${execPath} $HOME ${env:A} ${env:A";
        let expected = "${unknown} ${env:${env:A}} ${execPath} $HOME ${env:B} ${env:A";
        assert_eq!(expand(&source, text), Ok(expected.into()));
    }

    #[test]
    fn vs_code_s_own_variables_are_refused() {
        let source = Fake::with(&[]);
        for written in
            ["${file}", "${selectedText}", "${config:editor.fontSize}", "${command:pick}"]
        {
            let error = format!("{written}: only VS Code can expand this variable");
            assert_eq!(expand(&source, written), Err(error));
        }
    }
}
