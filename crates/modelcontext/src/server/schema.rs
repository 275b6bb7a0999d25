//! JSON Schemas derived from Rust types, and validation against them.
//!
//! Input schemas are JSON Schema 2020-12 from schemars. Each schema is compiled into a
//! validator once, at registration; a request only runs the compiled validator. Remote `$ref`s
//! are never fetched (the `jsonschema` crate is built without its HTTP and file resolvers).

use std::fmt::Write;

use schemars::JsonSchema;
use serde_json::{Map, Value};

/// The schema of `T` as a JSON object, without the `$schema` and root `title` keys (the
/// dialect is 2020-12 by default in MCP, and the Rust type name means nothing to a model).
pub(crate) fn schema_for<T: JsonSchema>() -> Map<String, Value> {
    let settings = schemars::generate::SchemaSettings::draft2020_12();
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut object = match schema.to_value() {
        Value::Object(object) => object,
        // `true` (any value) is the only non-object schema schemars produces.
        _ => Map::new(),
    };
    object.remove("$schema");
    object.remove("title");
    object
}

/// The input schema of a tool whose arguments are `A`: always an object schema, as the spec
/// requires, with `additionalProperties: false` for argument-less tools.
pub(crate) fn input_schema_for<A: JsonSchema>() -> Map<String, Value> {
    let mut schema = schema_for::<A>();
    if schema.get("type") != Some(&Value::from("object")) {
        schema.insert("type".into(), Value::from("object"));
    }
    schema.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    schema
}

/// A compiled validator for one schema.
pub(crate) struct Validator {
    inner: jsonschema::Validator,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Validator")
    }
}

impl Validator {
    /// Compiles `schema` (2020-12 unless it names another dialect).
    pub(crate) fn compile(schema: &Map<String, Value>) -> Result<Validator, String> {
        let schema = Value::Object(schema.clone());
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schema)
            .map(|inner| Validator { inner })
            .map_err(|e| e.to_string())
    }

    /// Checks `instance`; on failure, one sentence per violation, each naming the argument
    /// (by its JSON pointer) and the rule it broke.
    pub(crate) fn check(&self, instance: &Value) -> Result<(), String> {
        if self.inner.is_valid(instance) {
            return Ok(());
        }
        let mut message = String::new();
        for error in self.inner.iter_errors(instance) {
            if !message.is_empty() {
                message.push_str("; ");
            }
            describe(&mut message, &error);
        }
        Err(message)
    }
}

fn describe(out: &mut String, error: &jsonschema::ValidationError<'_>) {
    let path = error.instance_path().to_string();
    let argument = path.trim_start_matches('/').replace('/', ".");
    if argument.is_empty() {
        let _ = write!(out, "{error}");
    } else {
        let _ = write!(out, "argument '{argument}': {error}");
    }
}
