//! Form elicitation from a Rust type: `ctx.elicit::<T>(message)` derives the form from `T`.
//!
//! The spec allows only a flat object of primitive fields (`client/elicitation`). Every form
//! of the 2025-11-25 and 2026-07-28 schemas derives from a field of `T`:
//!
//! | field | form |
//! |---|---|
//! | `String`, with `#[schemars(length(..))]`, `email`, `url` or `extend("format" = "date")` | text with lengths and a format |
//! | integers and floats, with `#[schemars(range(..))]` | a number or integer with bounds |
//! | `bool` | a checkbox |
//! | a unit-variant enum | a single select (`enum`); with doc comments on the variants, titled (`oneOf` of `const` + `title`) |
//! | `Vec` or a set of such an enum, with `length(..)` for the count | a multi-select (`items.enum`, or titled `items.anyOf`) |
//! | `#[serde(default = ..)]` | the field's `default` |
//! | `Option<_>` | an optional field |
//!
//! Enums referenced through `$defs` are inlined; anything else (a nested struct, a list of
//! numbers, a map) is refused with an error naming the field. An accepted answer is checked
//! against the form before `T` is built from it (see `input.rs`).

use std::collections::BTreeMap;

use modelcontext_types::{ElicitationSchema, McpError, PrimitiveSchemaDefinition};
use schemars::JsonSchema;
use serde_json::{Map, Value};

use super::schema::schema_for;

/// What the user did with a form elicitation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Elicitation<T> {
    /// The user submitted the form; the values, typed.
    Accepted(T),
    /// The user explicitly refused.
    Declined,
    /// The user dismissed the form without choosing.
    Cancelled,
}

impl<T> Elicitation<T> {
    /// The values if the user accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicitation::Accepted(value) => Some(value),
            _ => None,
        }
    }
}

/// The form for `T`, or an error naming the first field that is not a primitive.
pub(crate) fn form_for<T: JsonSchema>() -> Result<ElicitationSchema, McpError> {
    let schema = schema_for::<T>();
    let defs = schema.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Err(not_flat("the type is not a struct with named fields"));
    };
    let mut fields = BTreeMap::new();
    for (name, property) in properties {
        fields.insert(name.clone(), primitive(name, property, &defs)?);
    }
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).map(str::to_owned).collect::<Vec<_>>());
    let mut form = ElicitationSchema::new(fields);
    form.required = required;
    Ok(form)
}

/// One field as a primitive schema: `$ref` inlined, `null` taken out of `Option` types.
fn primitive(
    name: &str,
    property: &Value,
    defs: &Map<String, Value>,
) -> Result<PrimitiveSchemaDefinition, McpError> {
    let mut field = inline(property, defs);
    if let Some(Value::Array(types)) = field.get("type") {
        let non_null: Vec<&Value> = types.iter().filter(|t| t.as_str() != Some("null")).collect();
        if let [only] = non_null.as_slice() {
            let only = (*only).clone();
            field.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(any_of)) = field.get("anyOf").cloned() {
        let non_null: Vec<&Value> = any_of
            .iter()
            .filter(|s| s.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        if let [only] = non_null.as_slice() {
            field = inline(only, defs);
        }
    }
    let field = normalize(field, defs);
    serde_json::from_value(Value::Object(field.clone())).map_err(|_| {
        not_flat(&format!(
            "field '{name}' rendered as {}, which is not a primitive (string, number, integer, \
             boolean, or enum of strings)",
            Value::Object(field)
        ))
    })
}

/// Rewrites what schemars writes into the forms the elicitation schema names: a Rust enum
/// with documented variants (`oneOf` of `const` + `description`) becomes a titled
/// single-select (`oneOf` of `const` + `title`); a `Vec` or set of an enum becomes a
/// multi-select (`items.enum`, or `items.anyOf` when titled). Anything else is left for the
/// typed parse to accept or refuse.
fn normalize(mut field: Map<String, Value>, defs: &Map<String, Value>) -> Map<String, Value> {
    if let Some(options) = field.get("oneOf").and_then(titled_options) {
        field.insert("type".into(), Value::from("string"));
        field.insert("oneOf".into(), options);
    }
    if field.get("type").and_then(Value::as_str) == Some("array") {
        let items = field.get("items").map(|items| inline(items, defs)).unwrap_or_default();
        let items = match (items.get("enum"), items.get("oneOf").and_then(titled_options)) {
            (Some(values), _) => Some(serde_json::json!({ "type": "string", "enum": values })),
            (None, Some(options)) => Some(serde_json::json!({ "anyOf": options })),
            (None, None) => None,
        };
        if let Some(items) = items {
            field.insert("items".into(), items);
            // Sets say `uniqueItems`; a multi-select's choices are distinct anyway.
            field.remove("uniqueItems");
        }
    }
    field
}

/// `[{const, title}]` from a `oneOf` whose every member is one string constant; the title is
/// the member's `title`, else its doc comment (`description`), else the value itself.
fn titled_options(one_of: &Value) -> Option<Value> {
    let options = one_of.as_array()?.iter().map(|option| {
        let value = option.get("const")?.as_str()?;
        let title = ["title", "description"]
            .iter()
            .find_map(|key| option.get(*key).and_then(Value::as_str))
            .unwrap_or(value);
        Some(serde_json::json!({ "const": value, "title": title }))
    });
    options.collect::<Option<Vec<Value>>>().map(Value::Array)
}

/// The schema itself, or the `$defs` entry a local `$ref` names.
fn inline(schema: &Value, defs: &Map<String, Value>) -> Map<String, Value> {
    let target = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|name| defs.get(name));
    match target.or(Some(schema)) {
        Some(Value::Object(map)) => map.clone(),
        _ => Map::new(),
    }
}

fn not_flat(reason: &str) -> McpError {
    McpError::internal(format!(
        "Elicitation schema must be a flat object of primitive fields: {reason}"
    ))
}
