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
    let Some(Value::Object(properties)) = schema.get("properties") else { return String::new() };
    let required: Vec<&str> = match schema.get("required") {
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let one = |(name, property): (&String, &Value)| {
        let optional = if required.contains(&name.as_str()) { "" } else { "?" };
        let mut text = format!("{name}{optional}: {}", type_name(property));
        if let Some(default) = property.get("default") {
            let _ = write!(text, " = {default}");
        }
        text
    };
    let (mut first, rest): (Vec<_>, Vec<_>) =
        properties.iter().partition(|(name, _)| required.contains(&name.as_str()));
    first.extend(rest);
    first.into_iter().map(one).collect::<Vec<_>>().join(", ")
}

/// `integer`, `string | null`, or `any` when the schema does not say.
fn type_name(property: &Value) -> String {
    let branches = property.get("anyOf").or_else(|| property.get("oneOf"));
    match (property.get("type"), branches) {
        (Some(Value::String(t)), _) => t.clone(),
        (Some(Value::Array(list)), _) => {
            list.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" | ")
        }
        (None, Some(Value::Array(list))) => {
            list.iter().map(type_name).collect::<Vec<_>>().join(" | ")
        }
        _ => "any".to_owned(),
    }
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
    use super::bold;

    #[test]
    fn names_are_bold_only_when_asked() {
        assert_eq!(bold("get_author", true), "\x1b[1mget_author\x1b[0m");
        assert_eq!(bold("get_author", false), "get_author");
    }
}
