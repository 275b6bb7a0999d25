//! `x-mcp-header` (2026-07-28, `server/tools`): tool arguments that Streamable HTTP mirrors
//! into `Mcp-Param-<Name>` headers, and the rules an annotation must follow.

use std::collections::HashSet;

use serde_json::Value;

/// One argument mirrored into a header.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MirroredArgument {
    /// The chain of `properties` keys from the schema root to the argument.
    pub path: Vec<String>,
    /// The header's name part: the header is `Mcp-Param-<header>`.
    pub header: String,
}

impl MirroredArgument {
    /// The argument's value in a call's `arguments`, if present.
    pub fn value_in<'a>(&self, arguments: &'a serde_json::Map<String, Value>) -> Option<&'a Value> {
        let (first, rest) = self.path.split_first()?;
        rest.iter().try_fold(arguments.get(first)?, |node, key| node.get(key))
    }
}

/// JSON Schema keywords whose value is one subschema, a list of them, or a map of them. Any
/// of these leaves the pure `properties` chain an `x-mcp-header` must sit on.
const SUBSCHEMA_ONE: &[&str] = &[
    "items",
    "contains",
    "unevaluatedItems",
    "additionalProperties",
    "propertyNames",
    "unevaluatedProperties",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];

const SUBSCHEMA_LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

const SUBSCHEMA_MAP: &[&str] = &["patternProperties", "dependentSchemas", "$defs", "definitions"];

/// The `x-mcp-header` arguments of a tool's input schema, or
/// why the annotations are invalid (spec 2026-07-28: on a property reached through
/// `properties` only, an RFC 9110 token, on a string, integer or boolean, unique ignoring case).
pub fn mirrored_arguments(schema: &Value) -> Result<Vec<MirroredArgument>, String> {
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    let mut stack: Vec<(Option<Vec<String>>, &Value)> = vec![(Some(Vec::new()), schema)];
    while let Some((path, node)) = stack.pop() {
        let Value::Object(object) = node else { continue };
        if let Some(token) = object.get("x-mcp-header") {
            let Some(path) = path.clone().filter(|p| !p.is_empty()) else {
                return Err("x-mcp-header outside a chain of `properties`".to_owned());
            };
            let at = path.join(".");
            let Some(token) = token.as_str().filter(|t| is_token(t)) else {
                return Err(format!("property {at:?}: x-mcp-header must be an RFC 9110 token"));
            };
            if !matches!(
                object.get("type").and_then(Value::as_str),
                Some("string" | "integer" | "boolean")
            ) {
                return Err(format!(
                    "property {at:?}: x-mcp-header needs type string, integer or boolean"
                ));
            }
            if !seen.insert(token.to_ascii_lowercase()) {
                return Err(format!("property {at:?}: x-mcp-header {token:?} is used twice"));
            }
            found.push(MirroredArgument { path, header: token.to_owned() });
        }
        for (keyword, value) in object {
            match (keyword.as_str(), value) {
                ("properties", Value::Object(properties)) => {
                    for (name, sub) in properties {
                        let sub_path = path.as_ref().map(|p| {
                            let mut sub_path = p.clone();
                            sub_path.push(name.clone());
                            sub_path
                        });
                        stack.push((sub_path, sub));
                    }
                }
                (k, sub) if SUBSCHEMA_ONE.contains(&k) => stack.push((None, sub)),
                (k, Value::Array(subs)) if SUBSCHEMA_LIST.contains(&k) => {
                    stack.extend(subs.iter().map(|sub| (None, sub)));
                }
                (k, Value::Object(subs)) if SUBSCHEMA_MAP.contains(&k) => {
                    stack.extend(subs.values().map(|sub| (None, sub)));
                }
                _ => {}
            }
        }
    }
    Ok(found)
}

/// RFC 9110 token characters: what a header name may contain.
fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_follow_properties_only() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"dry": {"type": "boolean", "x-mcp-header": "Dry-Run"}}}
        }});
        let mut found = mirrored_arguments(&schema).expect("valid");
        found.sort_by(|a, b| a.path.cmp(&b.path));
        let at = |path: &[&str], header: &str| MirroredArgument {
            path: path.iter().map(|p| p.to_string()).collect(),
            header: header.into(),
        };
        assert_eq!(found, [at(&["opts", "dry"], "Dry-Run"), at(&["region"], "Region")]);
        let args = json!({"opts": {"dry": true}});
        assert_eq!(found[0].value_in(args.as_object().expect("object")), Some(&json!(true)));
    }

    #[test]
    fn invalid_annotations_are_reported() {
        let cases = [
            json!({"x-mcp-header": "Root"}),
            json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "bad name"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": 1}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}}),
            json!({"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
        ];
        for schema in cases {
            assert!(mirrored_arguments(&schema).is_err(), "{schema}");
        }
    }
}
