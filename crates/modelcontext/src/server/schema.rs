//! JSON Schemas derived from Rust types, and validation against them.
//!
//! Input schemas are JSON Schema 2020-12 from schemars. Each schema is compiled into a
//! validator once, at registration; a request only runs the compiled validator. The validator
//! is our own (`compile`, `evaluate`): the applicator and validation vocabularies of 2020-12
//! with `unevaluated*`, in about 1,500 lines of code, where the `jsonschema` crate brought some
//! forty packages into every build and built its meta-schema validator at the first
//! registration of each process. `format` is an annotation, as 2020-12 makes it by default.
//!
//! A schema may come from somewhere the server does not control (a gateway re-exporting an
//! upstream server's tools), and the arguments always come from the peer, so compiling and
//! validating are bounded:
//! - Nothing is ever fetched: a `$ref` is followed only within the schema (`#` and
//!   `#/json/pointer`); one naming another document fails to compile, and `$schema` and `$id`
//!   are never resolved.
//! - `pattern` and `patternProperties` use the `regex` crate, which matches in linear time.
//!   Patterns it cannot run in linear time (backreferences, look-around) fail to compile, and
//!   so do inline flags such as `(?i)`, which ECMA-262 has not. What the two dialects read
//!   differently is translated to ECMA-262's meaning: `\d`, `\w`, `\b` are ASCII, `\s` is
//!   ECMA-262's whitespace, `.` stops at every line terminator; `\p{...}` names Unicode
//!   general categories, scripts and binary properties.
//! - A schema nested deeper than [`SchemaLimits::max_depth`] or longer than
//!   [`SchemaLimits::max_bytes`] is refused before it reaches the compiler (whose recursion
//!   follows the schema's nesting), and so is one that applies more than `max_depth`
//!   subschemas in a row to one value (a chain of `$ref`s) or a cycle of them.
//! - An argument's nesting is bounded by the message decoder (serde_json's 128 levels), and a
//!   failed check reports at most [`MAX_REPORTED_VIOLATIONS`] violations.

mod compile;
mod evaluate;
mod pattern;
mod values;

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

/// A tool's input schema made from its arguments' schema: always an object schema, as the
/// spec requires.
pub(crate) fn input_schema(mut schema: Map<String, Value>) -> Map<String, Value> {
    if schema.get("type") != Some(&Value::from("object")) {
        schema.insert("type".into(), Value::from("object"));
    }
    schema.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    schema
}

/// How big a schema the server agrees to compile: see `McpServer::max_schema_depth` and
/// `McpServer::max_schema_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SchemaLimits {
    /// Deepest nesting of objects and arrays; the schema object itself is level 1.
    pub max_depth: usize,
    /// Longest schema, in bytes of compact JSON.
    pub max_bytes: usize,
}

impl Default for SchemaLimits {
    fn default() -> Self {
        SchemaLimits {
            max_depth: super::DEFAULT_MAX_SCHEMA_DEPTH,
            max_bytes: super::DEFAULT_MAX_SCHEMA_BYTES,
        }
    }
}

impl SchemaLimits {
    /// Refuses a schema over either limit. Depth is checked first and without recursion, so
    /// the size check (which serializes) never meets a schema deep enough to exhaust the stack.
    fn check(&self, schema: &Map<String, Value>) -> Result<(), String> {
        if exceeds_depth(schema, self.max_depth) {
            return Err(format!(
                "it nests objects and arrays more than {} levels deep (McpServer::max_schema_depth)",
                self.max_depth
            ));
        }
        let mut counter = ByteCounter { count: 0, limit: self.max_bytes };
        if serde_json::to_writer(&mut counter, schema).is_err() {
            return Err(format!(
                "it is longer than {} bytes as JSON (McpServer::max_schema_bytes)",
                self.max_bytes
            ));
        }
        Ok(())
    }
}

/// Whether objects and arrays nest more than `max` levels, counting `schema` as level 1.
fn exceeds_depth(schema: &Map<String, Value>, max: usize) -> bool {
    if max == 0 {
        return true;
    }
    let mut stack: Vec<(&Value, usize)> = schema.values().map(|v| (v, 2)).collect();
    while let Some((value, depth)) = stack.pop() {
        let is_container = matches!(value, Value::Object(_) | Value::Array(_));
        if is_container && depth > max {
            return true;
        }
        match value {
            Value::Object(map) => stack.extend(map.values().map(|child| (child, depth + 1))),
            Value::Array(items) => stack.extend(items.iter().map(|child| (child, depth + 1))),
            _ => {}
        }
    }
    false
}

/// Counts bytes written and fails once there are more than `limit`, which stops serde_json
/// early on a huge schema.
struct ByteCounter {
    count: usize,
    limit: usize,
}

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.count += buf.len();
        if self.count > self.limit {
            return Err(std::io::Error::other("schema too long"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// At most this many violations are described when arguments fail their schema; the rest
/// are counted. Each description quotes the offending value, so an unbounded list would let a
/// large argument come back many times over.
pub(crate) const MAX_REPORTED_VIOLATIONS: usize = 10;

/// A compiled validator for one schema.
pub(crate) struct Validator {
    inner: compile::CompiledSchema,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Validator")
    }
}

impl Validator {
    /// Compiles `schema` (read as 2020-12 whatever `$schema` says) within the default limits.
    pub(crate) fn compile(schema: &Map<String, Value>) -> Result<Validator, String> {
        Validator::compile_with(schema, SchemaLimits::default())
    }

    /// Compiles `schema` within `limits`: offline, with the linear-time regex engine.
    pub(crate) fn compile_with(
        schema: &Map<String, Value>,
        limits: SchemaLimits,
    ) -> Result<Validator, String> {
        limits.check(schema)?;
        compile::compile(schema, limits.max_depth).map(|inner| Validator { inner })
    }

    /// Checks `instance`; on failure, one sentence per violation, each naming the argument
    /// (by its path, `a.0.b`) and the rule it broke.
    pub(crate) fn check(&self, instance: &Value) -> Result<(), String> {
        self.inner.check(instance)
    }
}

#[cfg(test)]
mod tests;
