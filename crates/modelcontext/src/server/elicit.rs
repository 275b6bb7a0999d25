//! Form elicitation from a Rust type: `ctx.elicit::<T>(message)` derives the form from `T`.
//!
//! The spec allows only a flat object of primitive fields (`client/elicitation`): strings
//! (with `format` and lengths), numbers and integers (with bounds), booleans, and enums of
//! strings. `T`'s schemars schema is checked field by field; `Option<_>` fields become optional
//! ones, enums referenced through `$defs` are inlined, and anything else (a nested struct, a
//! list of numbers, a map) is refused with an error naming the field.

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
    serde_json::from_value(Value::Object(field.clone())).map_err(|_| {
        not_flat(&format!(
            "field '{name}' rendered as {}, which is not a primitive (string, number, integer, \
             boolean, or enum of strings)",
            Value::Object(field)
        ))
    })
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
