//! `key=value` arguments, typed by the tool's input schema.
//!
//! On a command line every value is a string, but `limit=5` means the integer 5 to a tool whose
//! schema says `limit` is an integer. So a value is parsed as JSON when the property's schema
//! allows only non-string types (integer, number, boolean, array, object, null), and is sent
//! as the string it is otherwise, including when the schema does not mention the key.

use serde_json::{Map, Value};

/// The arguments object: `base` (from `--args`) with the pairs added.
pub fn tool_arguments(
    schema: &Map<String, Value>,
    base: Option<&str>,
    pairs: &[String],
) -> Result<Map<String, Value>, String> {
    let mut arguments = match base {
        None => Map::new(),
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(object)) => object,
            Ok(_) => return Err("--args must be a JSON object, e.g. '{\"title\":\"Dune\"}'".into()),
            Err(err) => return Err(format!("--args is not valid JSON: {err}")),
        },
    };
    for pair in pairs {
        let (key, raw) = split_pair(pair)?;
        let types = property_types(schema, key);
        arguments.insert(key.to_owned(), typed(key, raw, &types)?);
    }
    Ok(arguments)
}

/// Prompt arguments: always strings.
pub fn string_pairs(pairs: &[String]) -> Result<Vec<(String, String)>, String> {
    pairs.iter().map(|p| split_pair(p).map(|(k, v)| (k.to_owned(), v.to_owned()))).collect()
}

/// `key=value`, split at the first `=`.
pub fn split_pair(pair: &str) -> Result<(&str, &str), String> {
    match pair.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key, value)),
        _ => Err(format!("expected KEY=VALUE, got {pair:?}")),
    }
}

/// A value as the schema types it: a string unless only non-string types are allowed.
fn typed(key: &str, raw: &str, types: &[String]) -> Result<Value, String> {
    if types.is_empty() || types.iter().any(|t| t == "string") {
        return Ok(Value::String(raw.to_owned()));
    }
    serde_json::from_str(raw).map_err(|err| {
        format!("{key}={raw}: the schema expects {} (written as JSON): {err}", types.join(" or "))
    })
}

/// The JSON types `key`'s schema allows: its `type` (a string or a list), and those of its
/// `anyOf`/`oneOf` branches (how optional and union types come out of most generators),
/// following local `$ref`s. Empty when the schema does not say.
fn property_types(schema: &Map<String, Value>, key: &str) -> Vec<String> {
    let mut types = Vec::new();
    if let Some(property) = schema.get("properties").and_then(|p| p.get(key)) {
        collect_types(schema, property, &mut types, 0);
    }
    types
}

/// Deep enough for any real schema; stops a `$ref` cycle.
const MAX_DEPTH: usize = 8;

fn collect_types(root: &Map<String, Value>, schema: &Value, types: &mut Vec<String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(target) = schema.get("$ref").and_then(Value::as_str).and_then(|r| resolve(root, r))
    {
        collect_types(root, target, types, depth + 1);
    }
    match schema.get("type") {
        Some(Value::String(t)) => types.push(t.clone()),
        Some(Value::Array(list)) => {
            types.extend(list.iter().filter_map(Value::as_str).map(Into::into))
        }
        _ => {}
    }
    for keyword in ["anyOf", "oneOf"] {
        for branch in schema.get(keyword).and_then(Value::as_array).into_iter().flatten() {
            collect_types(root, branch, types, depth + 1);
        }
    }
}

/// A local reference such as `#/$defs/Book`.
fn resolve<'a>(root: &'a Map<String, Value>, reference: &str) -> Option<&'a Value> {
    let mut parts = reference.strip_prefix("#/")?.split('/');
    let mut node = root.get(parts.next()?)?;
    for part in parts {
        node = node.get(part.replace("~1", "/").replace("~0", "~"))?;
    }
    Some(node)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::tool_arguments;

    fn schema() -> serde_json::Map<String, Value> {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "limit": {"type": "integer"},
                "ratio": {"type": ["number", "null"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "flag": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
                "book": {"$ref": "#/$defs/Book"},
                "either": {"type": ["string", "integer"]}
            },
            "$defs": {"Book": {"type": "object"}}
        });
        let Value::Object(schema) = schema else { unreachable!() };
        schema
    }

    #[track_caller]
    fn check(base: Option<&str>, pairs: &[&str], expected: Result<Value, &str>) {
        let pairs: Vec<String> = pairs.iter().map(|p| p.to_string()).collect();
        let got = tool_arguments(&schema(), base, &pairs).map(Value::Object);
        match expected {
            Ok(value) => assert_eq!(got, Ok(value)),
            Err(fragment) => {
                let err = got.expect_err("an error");
                assert!(err.contains(fragment), "{err:?} does not contain {fragment:?}");
            }
        }
    }

    #[test]
    fn values_are_typed_by_the_schema() {
        check(None, &["title=1984", "limit=5"], Ok(json!({"title": "1984", "limit": 5})));
        check(None, &["ratio=0.5", "flag=true"], Ok(json!({"ratio": 0.5, "flag": true})));
        check(None, &["tags=[\"a\",\"b\"]"], Ok(json!({"tags": ["a", "b"]})));
        check(None, &["book={\"t\":1}", "either=7"], Ok(json!({"book": {"t": 1}, "either": "7"})));
        check(None, &["unknown=5", "title=a=b"], Ok(json!({"unknown": "5", "title": "a=b"})));
    }

    #[test]
    fn json_base_and_pairs_merge() {
        check(
            Some(r#"{"title":"Dune","limit":1}"#),
            &["limit=3"],
            Ok(json!({"title": "Dune", "limit": 3})),
        );
    }

    #[test]
    fn mistakes_are_explained() {
        check(None, &["limit=five"], Err("limit=five: the schema expects integer"));
        check(None, &["limit"], Err("expected KEY=VALUE"));
        check(Some("[1]"), &[], Err("--args must be a JSON object"));
        check(Some("{oops"), &[], Err("--args is not valid JSON"));
    }
}
