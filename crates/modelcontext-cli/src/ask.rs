//! What the server asks of the person running `mcp`: elicitation (a form from its schema),
//! sampling (approve, then type the answer, or let `--sampling-cmd` answer), and roots
//! (`--root PATH`).
//!
//! Questions are asked on stderr and answered on stdin, so only when stdin is a terminal; in
//! a script nobody is there to answer, and waiting would hang: elicitation is declined and
//! sampling refused, each with a line on stderr that says so.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use modelcontext::McpError;
use modelcontext::client::ClientBuilder;
use modelcontext::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams,
    ElicitResult, ErrorCode, Role, Root, SamplingMessageContentBlock,
};
use serde_json::{Map, Value};

use crate::cli::Cli;
use crate::failure::Failure;
use crate::words;

/// The spec's code for a sampling request the user rejected.
const USER_REJECTED: ErrorCode = ErrorCode(-1);

/// Declares elicitation and sampling (answered at the terminal, by `--sampling-cmd`, or
/// refused), and roots when `--root` names any.
pub fn install(builder: ClientBuilder, cli: &Cli) -> Result<ClientBuilder, Failure> {
    let sampler = match &cli.sampling_cmd {
        Some(command) => Some(words::command(command, "--sampling-cmd").map_err(Failure::Usage)?),
        None => None,
    };
    let mut builder = builder
        .on_elicit(|question| async move { blocking(move || Ok(elicit(&question))).await })
        .on_sample(move |request| {
            let sampler = sampler.clone();
            async move { blocking(move || sample(&request, sampler.as_deref())).await }
        });
    if !cli.roots.is_empty() {
        let roots = roots(&cli.roots)?;
        builder = builder.on_roots(move || {
            let roots = roots.clone();
            async move { Ok(roots) }
        });
    }
    Ok(builder)
}

/// Runs `ask` (which reads the terminal) off the runtime's only thread.
async fn blocking<T: Send + 'static>(
    ask: impl FnOnce() -> Result<T, McpError> + Send + 'static,
) -> Result<T, McpError> {
    tokio::task::spawn_blocking(ask)
        .await
        .unwrap_or_else(|err| Err(McpError::internal(format!("the question failed: {err}"))))
}

/// Whether a person can answer: stdin is a terminal.
pub fn at_terminal() -> bool {
    std::io::stdin().is_terminal()
}

/// One line typed at the terminal after `prompt`; `None` at end of input (Ctrl-D).
pub fn read_answer(prompt: &str) -> Option<String> {
    let mut stderr = std::io::stderr().lock();
    let _ = write!(stderr, "{prompt}").and_then(|()| stderr.flush());
    drop(stderr);
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
    }
}

/// Accept, decline or cancel: `None` means cancel.
fn choose(prompt: &str) -> Option<bool> {
    loop {
        match read_answer(prompt)?.trim().to_lowercase().as_str() {
            "" | "y" | "yes" => return Some(true),
            "n" | "no" => return Some(false),
            "c" | "cancel" => return None,
            _ => say!("mcp: answer y (yes), n (no, decline) or c (cancel)"),
        }
    }
}

/// Elicitation: declined without a terminal; else the form, field by field.
fn elicit(question: &ElicitRequestParams) -> ElicitResult {
    let (message, url) = match question {
        ElicitRequestParams::Form(form) => (&form.message, None),
        ElicitRequestParams::Url(url) => (&url.message, Some(&url.url)),
        _ => return ElicitResult::new(ElicitAction::Decline),
    };
    if !at_terminal() {
        say!("mcp: the server asks: {message}");
        say!("mcp: declined: stdin is not a terminal, so nobody can answer here");
        return ElicitResult::new(ElicitAction::Decline);
    }
    say!("mcp: the server asks: {message}");
    if let Some(url) = url {
        say!("mcp: it asks you to open {url}");
    }
    let action = match choose("  answer? [Y]es / [n]o, decline / [c]ancel: ") {
        None => return ElicitResult::new(ElicitAction::Cancel),
        Some(false) => return ElicitResult::new(ElicitAction::Decline),
        Some(true) => ElicitAction::Accept,
    };
    let ElicitRequestParams::Form(form) = question else { return ElicitResult::new(action) };
    let schema = serde_json::to_value(&form.requested_schema).unwrap_or_default();
    match fill_form(&schema) {
        Some(content) => ElicitResult::accept(content),
        None => ElicitResult::new(ElicitAction::Cancel),
    }
}

/// Asks for each field until its answer is valid; `None` when input ends (cancel).
fn fill_form(schema: &Value) -> Option<Map<String, Value>> {
    let required: Vec<&str> = (schema.get("required").and_then(Value::as_array).into_iter())
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut content = Map::new();
    let properties =
        schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    for (name, field) in &properties {
        let required = required.contains(&name.as_str());
        if let Some(description) = field.get("description").and_then(Value::as_str) {
            say!("  {description}");
        }
        let prompt =
            format!("  {name} ({}){}: ", describe_field(field, required), default_hint(field));
        loop {
            let typed = read_answer(&prompt)?;
            if typed.trim().is_empty() {
                if let Some(default) = field.get("default") {
                    content.insert(name.clone(), default.clone());
                    break;
                }
                if !required {
                    break;
                }
                say!("mcp: {name} is required");
                continue;
            }
            match parse_field(field, typed.trim()) {
                Ok(value) => {
                    content.insert(name.clone(), value);
                    break;
                }
                Err(problem) => say!("mcp: {problem}"),
            }
        }
    }
    Some(content)
}

/// `integer 1..=10, required`, `one of: red, green`.
fn describe_field(field: &Value, required: bool) -> String {
    let mut text = match choices(field) {
        Some(choices) => format!("one of: {}", choices.join(", ")),
        None => field.get("type").and_then(Value::as_str).unwrap_or("string").to_owned(),
    };
    let bound = |key| field.get(key).map(Value::to_string);
    if let (Some(min), Some(max)) = (bound("minimum"), bound("maximum")) {
        text.push_str(&format!(" {min}..={max}"));
    }
    if required {
        text.push_str(", required");
    }
    text
}

fn default_hint(field: &Value) -> String {
    field.get("default").map(|d| format!(" [{d}]")).unwrap_or_default()
}

/// The allowed values of an enum field (`enum`, or `oneOf`/`anyOf` of `const`s), also for
/// the items of a multi-select array.
fn choices(field: &Value) -> Option<Vec<String>> {
    let field = field.get("items").unwrap_or(field);
    if let Some(list) = field.get("enum").and_then(Value::as_array) {
        return Some(list.iter().filter_map(Value::as_str).map(str::to_owned).collect());
    }
    let branches = field.get("oneOf").or_else(|| field.get("anyOf"))?.as_array()?;
    Some(branches.iter().filter_map(|b| b.get("const")?.as_str()).map(str::to_owned).collect())
}

/// A typed answer as the field's schema wants it, or why it is not acceptable.
fn parse_field(field: &Value, typed: &str) -> Result<Value, String> {
    let kind = field.get("type").and_then(Value::as_str).unwrap_or("string");
    if kind == "array" {
        let picked: Vec<&str> = typed.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        let allowed = choices(field).unwrap_or_default();
        if let Some(bad) = picked.iter().find(|p| !allowed.iter().any(|a| a == *p)) {
            return Err(format!("{bad:?} is not one of: {}", allowed.join(", ")));
        }
        check_count(field, picked.len(), "minItems", "maxItems", "choices")?;
        return Ok(Value::from(picked));
    }
    if let Some(allowed) = choices(field) {
        return match allowed.iter().find(|a| *a == typed) {
            Some(choice) => Ok(Value::from(choice.as_str())),
            None => Err(format!("{typed:?} is not one of: {}", allowed.join(", "))),
        };
    }
    match kind {
        "boolean" => match typed.to_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("answer yes or no".into()),
        },
        "integer" => {
            let number: i64 =
                typed.parse().map_err(|_| format!("{typed:?} is not a whole number"))?;
            check_range(field, number as f64)?;
            Ok(Value::from(number))
        }
        "number" => {
            let number: f64 = typed.parse().map_err(|_| format!("{typed:?} is not a number"))?;
            check_range(field, number)?;
            Ok(Value::from(number))
        }
        _ => {
            check_count(field, typed.chars().count(), "minLength", "maxLength", "characters")?;
            if field.get("format").and_then(Value::as_str) == Some("email") && !typed.contains('@')
            {
                return Err(format!("{typed:?} is not an email address"));
            }
            Ok(Value::from(typed))
        }
    }
}

fn check_range(field: &Value, number: f64) -> Result<(), String> {
    if let Some(min) = field.get("minimum").and_then(Value::as_f64).filter(|min| number < *min) {
        return Err(format!("at least {min}"));
    }
    if let Some(max) = field.get("maximum").and_then(Value::as_f64).filter(|max| number > *max) {
        return Err(format!("at most {max}"));
    }
    Ok(())
}

fn check_count(
    field: &Value,
    count: usize,
    min: &str,
    max: &str,
    what: &str,
) -> Result<(), String> {
    let bound = |key: &str| field.get(key).and_then(Value::as_u64).map(|n| n as usize);
    if let Some(min) = bound(min).filter(|min| count < *min) {
        return Err(format!("at least {min} {what}"));
    }
    if let Some(max) = bound(max).filter(|max| count > *max) {
        return Err(format!("at most {max} {what}"));
    }
    Ok(())
}

/// Sampling: `--sampling-cmd` answers; else the person approves and types the answer; else
/// (no terminal) it is refused.
fn sample(
    request: &CreateMessageRequestParams,
    sampler: Option<&[String]>,
) -> Result<CreateMessageResult, McpError> {
    if let Some(words) = sampler {
        return run_sampler(request, words);
    }
    if !at_terminal() {
        let why = "mcp declined the sampling request: stdin is not a terminal, so nobody can \
                   approve it (--sampling-cmd CMD answers with a program)";
        say!("mcp: the server asked for a model's answer; {why}");
        return Err(McpError::new(USER_REJECTED, why));
    }
    say!("mcp: the server asks for a model's answer to:");
    if let Some(system) = &request.system_prompt {
        say!("  system: {system}");
    }
    for message in &request.messages {
        let role = serde_json::to_value(message.role).unwrap_or_default();
        let content = serde_json::to_value(&message.content).unwrap_or_default();
        say!("  {}: {}", role.as_str().unwrap_or("?"), text_of(&content));
    }
    if choose("  answer it? [Y]es / [n]o: ") != Some(true) {
        return Err(McpError::new(USER_REJECTED, "the user declined the sampling request"));
    }
    say!("  type the answer; an empty line ends it:");
    let mut lines = Vec::new();
    while let Some(line) = read_answer("  > ").filter(|line| !line.is_empty()) {
        lines.push(line);
    }
    Ok(answer(lines.join("\n"), "the person at the terminal"))
}

/// The text of a content block or a list of them (other kinds as JSON).
fn text_of(content: &Value) -> String {
    match content {
        Value::Array(blocks) => blocks.iter().map(text_of).collect::<Vec<_>>().join(" "),
        block => block
            .get("text")
            .and_then(Value::as_str)
            .map_or_else(|| block.to_string(), str::to_owned),
    }
}

/// `--sampling-cmd`: the request as JSON on the program's stdin, its stdout the answer.
fn run_sampler(
    request: &CreateMessageRequestParams,
    words: &[String],
) -> Result<CreateMessageResult, McpError> {
    let program = &words[0];
    let failed = |why: String| {
        say!("mcp: --sampling-cmd {program}: {why}");
        McpError::internal(format!("the sampling command failed: {why}"))
    };
    let mut child = Command::new(program)
        .args(&words[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|err| failed(format!("cannot start it: {err}")))?;
    let json = serde_json::to_string(request).unwrap_or_default();
    if let Some(mut stdin) = child.stdin.take() {
        // A program that answers without reading its input closes the pipe early: fine.
        let _ = stdin.write_all(json.as_bytes());
    }
    let output = child.wait_with_output().map_err(|err| failed(err.to_string()))?;
    if !output.status.success() {
        return Err(failed(format!("it exited with {}", output.status)));
    }
    let text = String::from_utf8_lossy(&output.stdout).trim_end().to_owned();
    say!("mcp: the server asked for a model's answer; {program} gave it");
    Ok(answer(text, program))
}

fn answer(text: String, model: &str) -> CreateMessageResult {
    let mut result =
        CreateMessageResult::new(Role::Assistant, SamplingMessageContentBlock::text(text), model);
    result.stop_reason = Some("endTurn".into());
    result
}

/// Every `--root`, as roots.
pub fn roots(paths: &[std::path::PathBuf]) -> Result<Vec<Root>, Failure> {
    paths.iter().map(|path| root(path)).collect()
}

/// `--root PATH`: the directory as a `file://` URI, named after its last component.
fn root(path: &Path) -> Result<Root, Failure> {
    let absolute = path
        .canonicalize()
        .map_err(|err| Failure::Usage(format!("--root {}: {err}", path.display())))?;
    let mut uri = String::from("file://");
    for byte in absolute.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(char::from(byte))
            }
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    let mut root = Root::new(uri);
    root.name = absolute.file_name().map(|name| name.to_string_lossy().into_owned());
    Ok(root)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answers_are_checked_against_the_field() {
        let ok = |field: Value, typed: &str| parse_field(&field, typed).expect("valid");
        let bad = |field: Value, typed: &str| parse_field(&field, typed).expect_err("invalid");
        assert_eq!(ok(json!({"type": "boolean"}), "y"), json!(true));
        assert_eq!(bad(json!({"type": "boolean"}), "maybe"), "answer yes or no");
        let age = json!({"type": "integer", "minimum": 0, "maximum": 150});
        assert_eq!(ok(age.clone(), "42"), json!(42));
        assert_eq!(bad(age.clone(), "200"), "at most 150");
        assert!(bad(age, "forty").contains("not a whole number"));
        let colour = json!({"type": "string", "enum": ["red", "green"]});
        assert_eq!(ok(colour.clone(), "red"), json!("red"));
        assert!(bad(colour, "blue").contains("one of: red, green"));
        let titled = json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]});
        assert_eq!(ok(titled, "a"), json!("a"));
        let name = json!({"type": "string", "minLength": 2, "maxLength": 4});
        assert_eq!(bad(name.clone(), "x"), "at least 2 characters");
        assert_eq!(ok(name, "abc"), json!("abc"));
        assert!(bad(json!({"type": "string", "format": "email"}), "nobody").contains("email"));
        let tags = json!({"type": "array", "items": {"enum": ["x", "y"]}, "maxItems": 1});
        assert_eq!(ok(tags.clone(), "x"), json!(["x"]));
        assert_eq!(bad(tags.clone(), "x, y"), "at most 1 choices");
        assert!(bad(tags, "z").contains("not one of"));
    }

    #[test]
    fn roots_are_file_uris() {
        let dir = std::env::temp_dir().join("mcp root test");
        std::fs::create_dir_all(&dir).expect("dir");
        let root = root(&dir).expect("a root");
        assert!(
            root.uri.starts_with("file:///") && root.uri.ends_with("/mcp%20root%20test"),
            "{}",
            root.uri
        );
        assert_eq!(root.name.as_deref(), Some("mcp root test"));
    }
}
