//! A tool's input schema read as far as the command needs it: local `$ref`s followed
//! (`#/$defs/Order`, `#/definitions/Order`, any JSON pointer into the schema), the object a
//! property holds found through them, and the JSON types a property allows.
//!
//! Every walk is bounded: a schema may refer to itself (a tree of categories), and a walk
//! that followed such a `$ref` each time would never end.

use serde_json::{Map, Value};

/// How many `$ref`s and nested objects a walk follows: deep enough for any real schema, and
/// the end of a cycle of references.
pub const MAX_DEPTH: usize = 8;

/// A local reference such as `#/$defs/Order`, resolved against the root schema.
pub fn resolve<'a>(root: &'a Map<String, Value>, reference: &str) -> Option<&'a Value> {
    let mut parts = reference.strip_prefix("#/")?.split('/');
    let mut node = root.get(&unescape(parts.next()?))?;
    for part in parts {
        node = node.get(unescape(part))?;
    }
    Some(node)
}

/// A JSON pointer's segment as the key it stands for (`~1` is `/`, `~0` is `~`).
fn unescape(part: &str) -> String {
    part.replace("~1", "/").replace("~0", "~")
}

/// The name a reference gives what it points at: its last segment (`Order`).
pub fn reference_name(reference: &str) -> &str {
    reference.rsplit('/').next().unwrap_or(reference)
}

/// The object schema (one with `properties`) that `schema` is: itself, what its `$ref`
/// points at, or the one branch of an `anyOf`/`oneOf` that is not `null` (how generators
/// write an optional struct). `None` for anything else.
pub fn object_of<'a>(
    root: &'a Map<String, Value>,
    schema: &'a Value,
) -> Option<&'a Map<String, Value>> {
    let mut schema = schema;
    for _ in 0..MAX_DEPTH {
        if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
            schema = resolve(root, target)?;
            continue;
        }
        if schema.get("properties").is_some_and(Value::is_object) {
            return schema.as_object();
        }
        let branches = schema.get("anyOf").or_else(|| schema.get("oneOf"))?.as_array()?;
        let mut real = branches.iter().filter(|b| b.get("type") != Some(&Value::from("null")));
        match (real.next(), real.next()) {
            (Some(only), None) => schema = only,
            _ => return None,
        }
    }
    None
}

/// The properties of an object schema, in the schema's order (empty when it has none).
pub fn properties(object: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    object.get("properties").and_then(Value::as_object).into_iter().flatten()
}

/// The JSON types `schema` allows: its `type` (a string or a list), and those of its
/// `anyOf`/`oneOf` branches (how optional and union types come out of most generators),
/// following local `$ref`s. Empty when the schema does not say.
pub fn types(root: &Map<String, Value>, schema: &Value) -> Vec<String> {
    let mut types = Vec::new();
    collect_types(root, schema, &mut types, 0);
    types
}

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
        _ if schema.get("properties").is_some_and(Value::is_object) => types.push("object".into()),
        _ => {}
    }
    for keyword in ["anyOf", "oneOf"] {
        for branch in schema.get(keyword).and_then(Value::as_array).into_iter().flatten() {
            collect_types(root, branch, types, depth + 1);
        }
    }
}

/// Every key a `key=value` pair can name in `schema`: each property, and for a property that
/// holds an object, its fields as `property.field` (and theirs, down to [`MAX_DEPTH`]), so
/// Tab offers `order.book=` as well as `order=`. A schema that holds itself is not walked
/// into again.
pub fn keys(root: &Map<String, Value>) -> Vec<String> {
    let mut keys = Vec::new();
    let mut trail = Vec::new();
    collect_keys(root, root, "", &mut trail, &mut keys);
    keys
}

fn collect_keys<'a>(
    root: &'a Map<String, Value>,
    object: &'a Map<String, Value>,
    prefix: &str,
    trail: &mut Vec<&'a Map<String, Value>>,
    keys: &mut Vec<String>,
) {
    if trail.len() >= MAX_DEPTH || trail.iter().any(|seen| std::ptr::eq(*seen, object)) {
        return;
    }
    trail.push(object);
    for (name, property) in properties(object) {
        let key = format!("{prefix}{name}");
        keys.push(key.clone());
        if let Some(inner) = object_of(root, property) {
            collect_keys(root, inner, &format!("{key}."), trail, keys);
        }
    }
    trail.pop();
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn root() -> Map<String, Value> {
        let Value::Object(root) = json!({
            "type": "object",
            "properties": {
                "order": {"$ref": "#/$defs/Order"},
                "shelf": {"anyOf": [{"$ref": "#/definitions/Shelf"}, {"type": "null"}]}
            },
            "$defs": {"Order": {"type": "object", "properties": {"book": {"type": "string"}}}},
            "definitions": {"Shelf": {"type": "object", "properties": {
                "name": {"type": "string"},
                "parent": {"anyOf": [{"$ref": "#/definitions/Shelf"}, {"type": "null"}]}
            }}}
        }) else {
            unreachable!("an object")
        };
        root
    }

    #[test]
    fn references_are_followed_to_their_object() {
        let root = root();
        let order = object_of(&root, &root["properties"]["order"]).expect("order");
        assert_eq!(order["properties"]["book"], json!({"type": "string"}));
        assert!(object_of(&root, &root["properties"]["shelf"]).is_some());
        assert_eq!(types(&root, &root["properties"]["shelf"]), ["object", "null"]);
        assert_eq!(reference_name("#/$defs/Order"), "Order");
        assert!(resolve(&root, "#/$defs/Nothing").is_none());
        assert!(resolve(&root, "other.json#/x").is_none());
    }

    #[test]
    fn keys_reach_into_objects_and_stop_at_a_cycle() {
        let keys = keys(&root());
        assert_eq!(keys, ["order", "order.book", "shelf", "shelf.name", "shelf.parent"]);
    }

    #[test]
    fn a_reference_to_itself_ends() {
        let Value::Object(root) = json!({"$ref": "#"}) else { unreachable!() };
        assert!(object_of(&root, &Value::Object(root.clone())).is_none());
        let Value::Object(looped) = json!({"$defs": {"A": {"$ref": "#/$defs/A"}}}) else {
            unreachable!()
        };
        assert!(types(&looped, &json!({"$ref": "#/$defs/A"})).is_empty());
    }
}
