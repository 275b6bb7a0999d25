//! `key=value` arguments, typed by the tool's input schema.
//!
//! On a command line every value is a string, but `limit=5` means the integer 5 to a tool whose
//! schema says `limit` is an integer. So a value is parsed as JSON when the property's schema
//! allows only non-string types (integer, number, boolean, array, object, null), and is sent
//! as the string it is otherwise, including when the schema does not mention the key.
//!
//! A property that holds an object can be given whole as JSON (`order='{"book":"Dune"}'`) or
//! field by field with dotted keys (`order.book=Dune order.quantity=2`), each field typed by
//! its own schema, found through `$ref`s.

use serde_json::{Map, Value};

use crate::schema::{self, MAX_DEPTH, object_of};

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
        let (path, property) = key_path(schema, key);
        let types = property.map(|p| schema::types(schema, p)).unwrap_or_default();
        insert(&mut arguments, &path, typed(key, raw, &types)?, key)?;
    }
    Ok(arguments)
}

/// Where `key` puts its value, and the schema of what it names (if the schema has one): a
/// property the schema lists (even one with a `.` in its name), else `outer.inner` for a
/// field of a property that holds an object, else the key as it is.
fn key_path<'a, 'k>(
    root: &'a Map<String, Value>,
    key: &'k str,
) -> (Vec<&'k str>, Option<&'a Value>) {
    if let Some(property) = root.get("properties").and_then(|p| p.get(key)) {
        return (vec![key], Some(property));
    }
    let segments: Vec<&str> = key.split('.').collect();
    let Some((last, outer)) = segments.split_last().filter(|(_, outer)| !outer.is_empty()) else {
        return (vec![key], None);
    };
    let mut object = root;
    for segment in outer {
        let inner = object.get("properties").and_then(|p| p.get(*segment));
        match inner.and_then(|property| object_of(root, property)) {
            Some(inner) => object = inner,
            None => return (vec![key], None),
        }
    }
    let property = object.get("properties").and_then(|p| p.get(*last));
    (segments, property)
}

/// Puts `value` at `path` in `arguments`, making the objects on the way.
fn insert(
    arguments: &mut Map<String, Value>,
    path: &[&str],
    value: Value,
    key: &str,
) -> Result<(), String> {
    let Some((last, outer)) = path.split_last() else { return Ok(()) };
    let mut object = arguments;
    for (at, segment) in outer.iter().enumerate() {
        let slot = object.entry(*segment).or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(inner) = slot else {
            let given = path[..=at].join(".");
            return Err(format!("{key}: `{given}` is already given as a value, not an object"));
        };
        object = inner;
    }
    object.insert((*last).to_owned(), value);
    Ok(())
}

/// What the schema says about keys it does not list.
#[derive(Debug, PartialEq, Eq)]
pub enum UnknownKey {
    /// Every key is one the schema lists.
    None,
    /// A key it does not list, allowed there (no `additionalProperties: false`), that looks
    /// like a slip of one it does: worth a warning, but sent as given.
    Suspect(String),
}

/// Checks the keys of `arguments` against the input schema before anything is sent, and
/// the keys of the objects inside them against their properties' schemas: a key the schema
/// does not list is refused when the schema forbids other properties
/// (`additionalProperties: false` or `unevaluatedProperties: false`, with no
/// `patternProperties` or composition that could admit it), with the nearest listed key as
/// a suggestion, and so is a near miss of a required key that is missing, whatever the
/// schema allows. Otherwise, where the schema allows other keys (JSON Schema's default when
/// `additionalProperties` is absent), a near miss is only reported back as
/// [`UnknownKey::Suspect`].
pub fn check_keys(
    schema: &Map<String, Value>,
    arguments: &Map<String, Value>,
) -> Result<UnknownKey, String> {
    let mut suspect = None;
    check_object(schema, schema, arguments, "", &mut suspect, 0)?;
    Ok(suspect.map_or(UnknownKey::None, UnknownKey::Suspect))
}

/// [`check_keys`] for one object `value` and its schema `object`; `prefix` is the dotted
/// path to it (empty at the top).
fn check_object(
    root: &Map<String, Value>,
    object: &Map<String, Value>,
    value: &Map<String, Value>,
    prefix: &str,
    suspect: &mut Option<String>,
    depth: usize,
) -> Result<(), String> {
    let Some(Value::Object(properties)) = object.get("properties") else { return Ok(()) };
    for (key, inner) in value {
        let Some(property) = properties.get(key) else {
            let near = crate::suggest::closest(key, properties.keys().map(String::as_str));
            if forbids_other_keys(object) || near.is_some_and(|n| lacks_required(object, value, n))
            {
                return Err(unknown_key(prefix, key, near, properties));
            }
            if let (Some(near), None) = (near, &suspect) {
                *suspect = Some(format!(
                    "`{prefix}{key}` is not among the tool's arguments (did you mean \
                     `{prefix}{near}`?); sent as given"
                ));
            }
            continue;
        };
        if let (Some(schema), Value::Object(inner), true) =
            (object_of(root, property), inner, depth < MAX_DEPTH)
        {
            check_object(root, schema, inner, &format!("{prefix}{key}."), suspect, depth + 1)?;
        }
    }
    Ok(())
}

/// Whether the schema requires `name` and `value` lacks it. A near miss of such a key is
/// that key misspelt whatever else the schema allows: sent as typed, the call could only be
/// refused for the missing key, which would hide the typo.
fn lacks_required(schema: &Map<String, Value>, value: &Map<String, Value>, name: &str) -> bool {
    let required = schema.get("required").and_then(Value::as_array);
    required.is_some_and(|keys| keys.iter().any(|k| k == name)) && !value.contains_key(name)
}

/// "unknown argument `tittle` (did you mean `title`?)", or the keys there are.
fn unknown_key(prefix: &str, key: &str, near: Option<&str>, known: &Map<String, Value>) -> String {
    let owner = match prefix.strip_suffix('.') {
        Some(outer) => format!("`{outer}`"),
        None => "the tool".to_owned(),
    };
    let hint = match near {
        Some(near) => format!("did you mean `{prefix}{near}`?"),
        None if known.is_empty() => format!("{owner} takes none"),
        None => {
            let names: Vec<String> = known.keys().map(|k| format!("`{k}`")).collect();
            format!("{owner} takes {}", names.join(", "))
        }
    };
    format!("unknown argument `{prefix}{key}` ({hint})")
}

/// Whether the schema refuses keys its `properties` do not list, as far as can be told
/// without evaluating it: `false` at the top, and nothing beside `properties` that could
/// admit another key (`patternProperties`, a `$ref`, `allOf`/`anyOf`/`oneOf`, conditionals).
fn forbids_other_keys(schema: &Map<String, Value>) -> bool {
    let closed = |keyword: &str| schema.get(keyword) == Some(&Value::Bool(false));
    let composed =
        ["patternProperties", "$ref", "allOf", "anyOf", "oneOf", "if", "dependentSchemas"]
            .iter()
            .any(|keyword| schema.contains_key(*keyword));
    (closed("additionalProperties") || closed("unevaluatedProperties")) && !composed
}

/// Prompt arguments: always strings.
pub fn string_pairs(pairs: &[String]) -> Result<Vec<(String, String)>, String> {
    pairs.iter().map(|p| split_pair(p).map(|(k, v)| (k.to_owned(), v.to_owned()))).collect()
}

/// `-e KEY=VALUE` options as pairs.
pub fn env_pairs(pairs: &[String]) -> Result<Vec<(String, String)>, String> {
    string_pairs(pairs).map_err(|e| format!("-e: {e}"))
}

/// `--header 'Name: value'`, split at the first `:` and trimmed.
pub fn split_header(header: &str) -> Result<(&str, &str), String> {
    match header.split_once(':') {
        Some((name, value)) => Ok((name.trim(), value.trim())),
        None => Err(format!("--header {header:?}: expected 'Name: value'")),
    }
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

    fn object(value: Value) -> serde_json::Map<String, Value> {
        let Value::Object(object) = value else { panic!("not an object: {value}") };
        object
    }

    #[test]
    fn unknown_keys_are_refused_only_where_the_schema_forbids_them() {
        use super::{UnknownKey, check_keys};
        let closed = object(json!({
            "type": "object",
            "properties": {"title": {"type": "string"}, "edition": {"type": "integer"}},
            "additionalProperties": false
        }));
        let typo = object(json!({"tittle": "Dune"}));
        let err = "unknown argument `tittle` (did you mean `title`?)";
        assert_eq!(check_keys(&closed, &typo), Err(err.into()));
        let far = object(json!({"colour": "red"}));
        let err = "unknown argument `colour` (the tool takes `title`, `edition`)";
        assert_eq!(check_keys(&closed, &far), Err(err.into()));
        let none =
            object(json!({"type": "object", "properties": {}, "additionalProperties": false}));
        let err = "unknown argument `colour` (the tool takes none)";
        assert_eq!(check_keys(&none, &far), Err(err.into()));
        let known = object(json!({"title": "Dune", "edition": 2}));
        assert_eq!(check_keys(&closed, &known), Ok(UnknownKey::None));
        let mut unevaluated = closed.clone();
        unevaluated.remove("additionalProperties");
        unevaluated.insert("unevaluatedProperties".into(), json!(false));
        assert!(check_keys(&unevaluated, &typo).is_err());
        // Absent `additionalProperties` allows other keys: a near miss is only a warning.
        let open = object(json!({"type": "object", "properties": {"title": {"type": "string"}}}));
        let warning =
            "`tittle` is not among the tool's arguments (did you mean `title`?); sent as given";
        assert_eq!(check_keys(&open, &typo), Ok(UnknownKey::Suspect(warning.into())));
        assert_eq!(check_keys(&open, &far), Ok(UnknownKey::None));
        // ... unless the key it misses is required and absent: then it is surely a typo.
        let mut required = open.clone();
        required.insert("required".into(), json!(["title"]));
        let err = "unknown argument `tittle` (did you mean `title`?)";
        assert_eq!(check_keys(&required, &typo), Err(err.into()));
        let both = object(json!({"title": "Dune", "tittle": "Dune"}));
        assert!(matches!(check_keys(&required, &both), Ok(UnknownKey::Suspect(_))));
        // What could admit a key the check cannot see keeps it from refusing.
        let mut patterned = closed.clone();
        patterned.insert("patternProperties".into(), json!({"^x-": {}}));
        assert!(matches!(check_keys(&patterned, &typo), Ok(UnknownKey::Suspect(_))));
        assert_eq!(check_keys(&serde_json::Map::new(), &typo), Ok(UnknownKey::None));
    }

    fn order_schema() -> serde_json::Map<String, Value> {
        object(json!({
            "type": "object",
            "properties": {"order": {"$ref": "#/$defs/Order"}, "a.b": {"type": "integer"}},
            "required": ["order"],
            "$defs": {"Order": {
                "type": "object",
                "properties": {
                    "book": {"type": "string"},
                    "quantity": {"type": "integer", "minimum": 1},
                    "gift": {"anyOf": [{"$ref": "#/$defs/Gift"}, {"type": "null"}]}
                },
                "additionalProperties": false
            },
            "Gift": {"type": "object", "properties": {"wrap": {"type": "boolean"}}}}
        }))
    }

    #[test]
    fn dotted_keys_fill_the_fields_of_an_object() {
        let schema = order_schema();
        let pairs: Vec<String> =
            ["order.book=Dune", "order.quantity=2", "order.gift.wrap=true", "a.b=3"]
                .map(String::from)
                .to_vec();
        let arguments = tool_arguments(&schema, None, &pairs).expect("arguments");
        let expected =
            json!({"order": {"book": "Dune", "quantity": 2, "gift": {"wrap": true}}, "a.b": 3});
        assert_eq!(Value::Object(arguments), expected);
        let pairs = ["order={\"book\":\"Dune\"}", "order.quantity=1"].map(String::from).to_vec();
        let arguments = tool_arguments(&schema, None, &pairs).expect("merged");
        assert_eq!(Value::Object(arguments), json!({"order": {"book": "Dune", "quantity": 1}}));
        let pairs = ["order=5", "order.book=Dune"].map(String::from).to_vec();
        let err = tool_arguments(&schema, None, &pairs).expect_err("not an object");
        assert_eq!(err, "order.book: `order` is already given as a value, not an object");
        // A dotted key the schema cannot place is one key, as typed.
        let pairs = ["x.y=1".to_owned()];
        let arguments = tool_arguments(&schema, None, &pairs).expect("as typed");
        assert_eq!(Value::Object(arguments), json!({"x.y": "1"}));
    }

    #[test]
    fn unknown_keys_inside_objects_are_caught_too() {
        use super::{UnknownKey, check_keys};
        let schema = order_schema();
        let arguments = object(json!({"order": {"bok": "Dune"}}));
        let err = "unknown argument `order.bok` (did you mean `order.book`?)";
        assert_eq!(check_keys(&schema, &arguments), Err(err.into()));
        let arguments = object(json!({"order": {"colour": "red"}}));
        let err = "unknown argument `order.colour` (`order` takes `book`, `quantity`, `gift`)";
        assert_eq!(check_keys(&schema, &arguments), Err(err.into()));
        // `Gift` allows other keys: a near miss there is a warning.
        let arguments = object(json!({"order": {"gift": {"wrapp": true}}}));
        let warning = "`order.gift.wrapp` is not among the tool's arguments (did you mean \
                       `order.gift.wrap`?); sent as given";
        assert_eq!(check_keys(&schema, &arguments), Ok(UnknownKey::Suspect(warning.into())));
    }

    #[test]
    fn mistakes_are_explained() {
        check(None, &["limit=five"], Err("limit=five: the schema expects integer"));
        check(None, &["limit"], Err("expected KEY=VALUE"));
        check(Some("[1]"), &[], Err("--args must be a JSON object"));
        check(Some("{oops"), &[], Err("--args is not valid JSON"));
    }
}
