//! Human-readable renderings of results. Each function returns the text; the caller prints it.
//!
//! At a terminal the names a person scans for (tools, resources, templates, prompts) are bold;
//! piped or redirected output, and `NO_COLOR` (no-color.org), stay plain text.

use std::fmt::Write;
use std::io::IsTerminal;
use std::sync::OnceLock;

use modelcontext::types::{
    Era, Prompt, PromptMessage, Resource, ResourceContents, ResourceTemplate, ServerNotification,
    Tool,
};
use modelcontext::{Client, ContentBlock};
use serde_json::{Map, Value, json};

use crate::schema::{self, MAX_DEPTH};

/// `name(param: type, optional?: type = default)` and the description, indented.
pub fn tools(tools: &[Tool]) -> String {
    let mut text = String::new();
    for tool in tools {
        let _ = writeln!(text, "{}({})", highlight(&tool.name), parameters(&tool.input_schema));
        describe(&mut text, tool.description.as_deref().or(tool.title.as_deref()));
    }
    text
}

/// A name in bold when stdout is a terminal and `NO_COLOR` is unset.
fn highlight(name: &str) -> String {
    static COLOUR: OnceLock<bool> = OnceLock::new();
    let colour = *COLOUR.get_or_init(|| {
        std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
    });
    bold(name, colour)
}

/// `name` between the ANSI codes for bold and normal, when `on`.
fn bold(name: &str, on: bool) -> String {
    if on { format!("\x1b[1m{name}\x1b[0m") } else { name.to_owned() }
}

/// The parameters of an input schema, required ones first as the schema lists them.
fn parameters(schema: &Map<String, Value>) -> String {
    fields(schema, schema, &mut Vec::new())
}

/// `name: type, optional?: type = default` for the properties of `object` (the input schema
/// or an object inside it), required ones first. `trail` holds the `$ref`s being expanded,
/// so a schema that holds itself is shown by name where it comes round again.
fn fields<'a>(
    root: &'a Map<String, Value>,
    object: &'a Map<String, Value>,
    trail: &mut Vec<&'a str>,
) -> String {
    let required: Vec<&str> = match object.get("required") {
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let (mut first, rest): (Vec<_>, Vec<_>) =
        schema::properties(object).partition(|(name, _)| required.contains(&name.as_str()));
    first.extend(rest);
    let one = |(name, property): (&String, &'a Value), trail: &mut Vec<&'a str>| {
        let optional = if required.contains(&name.as_str()) { "" } else { "?" };
        let mut text = format!("{name}{optional}: {}", type_text(root, property, trail));
        if let Some(default) = property.get("default") {
            let _ = write!(text, " = {default}");
        }
        text
    };
    first.into_iter().map(|field| one(field, trail)).collect::<Vec<_>>().join(", ")
}

/// A schema in a few words: `integer (1..=50)`, `string | null`, `{book: string}` for an
/// object (through `$ref`s), `string[]`, `"a" | "b"` for an enum, or `any` when it does not
/// say. Constraints follow in parentheses.
fn type_text<'a>(
    root: &'a Map<String, Value>,
    schema: &'a Value,
    trail: &mut Vec<&'a str>,
) -> String {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let target = schema::resolve(root, reference);
        let Some(target) =
            target.filter(|_| !trail.contains(&reference) && trail.len() < MAX_DEPTH)
        else {
            return schema::reference_name(reference).to_owned();
        };
        trail.push(reference);
        let text = type_text(root, target, trail);
        trail.pop();
        return text;
    }
    let mut text = match (schema.get("enum"), schema.get("type")) {
        (Some(Value::Array(values)), _) => {
            values.iter().map(Value::to_string).collect::<Vec<_>>().join(" | ")
        }
        (_, Some(Value::String(t))) => one_type(root, schema, t, trail),
        (_, Some(Value::Array(list))) => (list.iter().filter_map(Value::as_str))
            .map(|t| one_type(root, schema, t, trail))
            .collect::<Vec<_>>()
            .join(" | "),
        _ => match schema.get("anyOf").or_else(|| schema.get("oneOf")) {
            Some(Value::Array(branches)) => (branches.iter())
                .map(|branch| type_text(root, branch, trail))
                .collect::<Vec<_>>()
                .join(" | "),
            _ if schema.get("properties").is_some_and(Value::is_object) => {
                one_type(root, schema, "object", trail)
            }
            _ => "any".to_owned(),
        },
    };
    let constraints = constraints(schema);
    if !constraints.is_empty() {
        let _ = write!(text, " ({})", constraints.join(", "));
    }
    text
}

/// One JSON type of `schema`: an object with its fields, an array with its items' type.
fn one_type<'a>(
    root: &'a Map<String, Value>,
    schema: &'a Value,
    name: &str,
    trail: &mut Vec<&'a str>,
) -> String {
    match (name, schema.as_object(), schema.get("items")) {
        ("object", Some(object), _) if object.contains_key("properties") => {
            format!("{{{}}}", fields(root, object, trail))
        }
        ("array", _, Some(items)) => {
            // `(string | null)[]`, but `{a: string}[]`: braces already hold an object together.
            let item = type_text(root, items, trail);
            let whole = (item.starts_with('{') && item.ends_with('}')) || !item.contains(' ');
            if whole { format!("{item}[]") } else { format!("({item})[]") }
        }
        _ => name.to_owned(),
    }
}

/// What the schema bounds: `1..=50`, `>= 0`, `length <= 80`, `items 1..=5`, `pattern ^a`,
/// and a string's `format`.
fn constraints(schema: &Value) -> Vec<String> {
    let number = |key: &str| schema.get(key).filter(|v| v.is_number()).map(Value::to_string);
    let range = |low: Option<String>, high: Option<String>, label: &str| match (low, high) {
        (Some(low), Some(high)) => Some(format!("{label}{low}..={high}")),
        (Some(low), None) => Some(format!("{label}>= {low}")),
        (None, Some(high)) => Some(format!("{label}<= {high}")),
        (None, None) => None,
    };
    let mut found = Vec::new();
    found.extend(range(number("minimum"), number("maximum"), ""));
    found.extend(number("exclusiveMinimum").map(|low| format!("> {low}")));
    found.extend(number("exclusiveMaximum").map(|high| format!("< {high}")));
    found.extend(range(number("minLength"), number("maxLength"), "length "));
    found.extend(range(number("minItems"), number("maxItems"), "items "));
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        found.push(format!("pattern {pattern}"));
    }
    let is_string = schema.get("type") == Some(&Value::from("string"));
    if let (true, Some(format)) = (is_string, schema.get("format").and_then(Value::as_str)) {
        found.push(format.to_owned());
    }
    found
}

/// What negotiation learned about the server.
pub fn discover(client: &Client) -> (Value, String) {
    let era = if client.era() == Era::Modern { "modern" } else { "handshake" };
    let capabilities = serde_json::to_value(client.server_capabilities()).unwrap_or_default();
    let value = json!({
        "serverInfo": client.server_info(),
        "protocolVersion": client.protocol_version(),
        "era": era,
        "capabilities": capabilities,
        "instructions": client.instructions(),
    });
    let mut human = match client.server_info() {
        Some(info) => format!("server: {} {}\n", info.name, info.version),
        None => "server: (no serverInfo given)\n".to_owned(),
    };
    human.push_str(&format!("protocol: {} ({era} era)\n", client.protocol_version()));
    let names: Vec<&str> =
        capabilities.as_object().into_iter().flatten().map(|(k, _)| k.as_str()).collect();
    human.push_str(&format!("capabilities: {}\n", names.join(", ")));
    if let Some(instructions) = client.instructions() {
        human.push_str(&format!("instructions: {instructions}\n"));
    }
    (value, human)
}

/// An indented description line, when there is one.
fn describe(text: &mut String, description: Option<&str>) {
    if let Some(description) = description.filter(|d| !d.is_empty()) {
        for line in description.lines() {
            let _ = writeln!(text, "    {line}");
        }
    }
}

/// `uri  name (mime)` and the description.
pub fn resources(resources: &[Resource]) -> String {
    let mut text = String::new();
    for resource in resources {
        let mime = resource.mime_type.as_deref().map(|m| format!(" ({m})")).unwrap_or_default();
        let _ = writeln!(text, "{}  {}{mime}", highlight(&resource.uri), resource.name);
        describe(&mut text, resource.description.as_deref());
    }
    text
}

/// `template  name (mime)` and the description.
pub fn templates(templates: &[ResourceTemplate]) -> String {
    let mut text = String::new();
    for template in templates {
        let mime = template.mime_type.as_deref().map(|m| format!(" ({m})")).unwrap_or_default();
        let _ = writeln!(text, "{}  {}{mime}", highlight(&template.uri_template), template.name);
        describe(&mut text, template.description.as_deref());
    }
    text
}

/// `name(arg, optional?)` and the description.
pub fn prompts(prompts: &[Prompt]) -> String {
    let mut text = String::new();
    for prompt in prompts {
        let arguments: Vec<String> = (prompt.arguments.iter().flatten())
            .map(|a| format!("{}{}", a.name, if a.required == Some(true) { "" } else { "?" }))
            .collect();
        let _ = writeln!(text, "{}({})", highlight(&prompt.name), arguments.join(", "));
        describe(&mut text, prompt.description.as_deref());
    }
    text
}

/// Every block on its own: text as it is, binary data summarized.
pub fn content(blocks: &[ContentBlock]) -> String {
    let mut text = String::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => push_line(&mut text, &t.text),
            ContentBlock::Image(i) => push_line(&mut text, &binary("image", &i.mime_type, &i.data)),
            ContentBlock::Audio(a) => push_line(&mut text, &binary("audio", &a.mime_type, &a.data)),
            ContentBlock::ResourceLink(link) => {
                push_line(&mut text, &format!("[resource link: {} ({})]", link.uri, link.name));
            }
            ContentBlock::Resource(embedded) => {
                text.push_str(&contents(std::slice::from_ref(&embedded.resource)));
            }
            other => push_line(&mut text, &serde_json::to_string(other).unwrap_or_default()),
        }
    }
    text
}

/// Resource contents: text as it is, blobs summarized.
pub fn contents(contents: &[ResourceContents]) -> String {
    let mut text = String::new();
    for item in contents {
        match item {
            ResourceContents::Text(t) => push_line(&mut text, &t.text),
            ResourceContents::Blob(b) => {
                let mime = b.mime_type.as_deref().unwrap_or("application/octet-stream");
                push_line(&mut text, &binary(&format!("blob {}", b.uri), mime, &b.blob));
            }
            // A kind of contents a later revision adds: shown as its JSON.
            other => push_line(&mut text, &serde_json::to_string(other).unwrap_or_default()),
        }
    }
    text
}

/// `role: text` per message.
pub fn messages(messages: &[PromptMessage]) -> String {
    let mut text = String::new();
    for message in messages {
        let role = serde_json::to_value(message.role).unwrap_or_default();
        let role = role.as_str().unwrap_or("?").to_owned();
        let _ = write!(text, "{role}: ");
        text.push_str(&content(std::slice::from_ref(&message.content)));
    }
    text
}

/// `[image: image/png, 1234 bytes]`: base64 is not for reading.
fn binary(what: &str, mime: &str, base64: &str) -> String {
    format!("[{what}: {mime}, {} bytes]", base64.trim_end_matches('=').len() * 3 / 4)
}

fn push_line(text: &mut String, line: &str) {
    text.push_str(line);
    if !line.ends_with('\n') {
        text.push('\n');
    }
}

/// A change notification: what changed, in a few words.
pub fn notification(notification: &ServerNotification) -> String {
    match notification {
        ServerNotification::ToolListChanged(_) => "tools changed (mcp tools lists them)".into(),
        ServerNotification::PromptListChanged(_) => "prompts changed (mcp prompts)".into(),
        ServerNotification::ResourceListChanged(_) => "resources changed (mcp resources)".into(),
        ServerNotification::ResourceUpdated(updated) => format!("updated: {}", updated.uri),
        other => {
            let params = other.params().map(|raw| raw.get().to_owned()).unwrap_or_default();
            format!("{} {params}", other.method())
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn shown(schema: Value) -> String {
        let Value::Object(schema) = schema else { panic!("not an object") };
        parameters(&schema)
    }

    #[test]
    fn parameters_show_types_constraints_and_defaults() {
        let schema = json!({
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                "query": {"type": "string", "minLength": 1, "pattern": "^\\w"},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
                "mode": {"enum": ["fast", "exact"]},
                "ratio": {"type": ["number", "null"], "exclusiveMinimum": 0},
                "when": {"type": "string", "format": "date-time"},
                "any": {}
            },
            "required": ["query"]
        });
        assert_eq!(
            shown(schema),
            "query: string (length >= 1, pattern ^\\w), limit?: integer (1..=50) = 10, \
             tags?: string[] (items <= 5), mode?: \"fast\" | \"exact\", ratio?: number | null (> 0), \
             when?: string (date-time), any?: any"
        );
    }

    #[test]
    fn a_reference_shows_the_objects_fields_and_a_cycle_its_name() {
        let schema = json!({
            "type": "object",
            "properties": {
                "order": {"$ref": "#/$defs/Order"},
                "shelf": {"anyOf": [{"$ref": "#/definitions/Shelf"}, {"type": "null"}]},
                "lost": {"$ref": "#/$defs/Missing"}
            },
            "required": ["order"],
            "$defs": {"Order": {"type": "object", "properties": {
                "book": {"type": "string"},
                "lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}}
            }, "required": ["book"]},
            "Line": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}},
            "definitions": {"Shelf": {"type": "object", "properties": {
                "parent": {"anyOf": [{"$ref": "#/definitions/Shelf"}, {"type": "null"}]}
            }}}
        });
        assert_eq!(
            shown(schema),
            "order: {book: string, lines?: {n?: integer (>= 0)}[]}, \
             shelf?: {parent?: Shelf | null} | null, lost?: Missing"
        );
    }

    #[test]
    fn names_are_bold_only_when_asked() {
        assert_eq!(bold("get_author", true), "\x1b[1mget_author\x1b[0m");
        assert_eq!(bold("get_author", false), "get_author");
    }
}
