//! Compiling a schema: each subschema becomes a node, a list of the keywords that can fail,
//! checked for well-formedness here so that evaluation never meets a malformed one.
//!
//! What is compiled is JSON Schema 2020-12's applicator and validation vocabularies, plus
//! `unevaluatedItems`/`unevaluatedProperties`, which schemars emits for flattened types.
//! Annotations (`title`, `description`, `default`, `examples`, `format`, `content*`, ...),
//! `$schema`, `$id`, `$anchor`, `$comment`, `$vocabulary` and any unknown keyword are ignored.
//! `$ref` is followed within the document only: `#` or `#/json/pointer`, resolved against the
//! nearest enclosing `$id`. Anything else would have to be fetched, and is refused.

use std::collections::{HashMap, HashSet};

use regex::Regex;
use serde_json::{Map, Number, Value};

use super::pattern;
use super::values::{Decimal, as_count};

/// Index of a node in [`CompiledSchema::nodes`]; the root is node 0.
pub(super) type NodeId = usize;

/// A schema ready to evaluate.
pub(crate) struct CompiledSchema {
    pub(super) nodes: Vec<Vec<Keyword>>,
    /// Whether some node has `unevaluatedItems` or `unevaluatedProperties`: only then does
    /// evaluation record which items and properties each subschema looked at.
    pub(super) tracks_annotations: bool,
}

impl CompiledSchema {
    /// Whether `node` is the `false` schema, which some keywords describe in their own words.
    pub(super) fn is_false(&self, node: NodeId) -> bool {
        matches!(self.nodes[node].as_slice(), [Keyword::False])
    }
}

/// One keyword of a compiled node.
pub(super) enum Keyword {
    False,
    Type(Types),
    Const(Value),
    Enum(Vec<Value>),
    Range {
        kind: RangeKind,
        limit: Number,
    },
    MultipleOf {
        divisor: Decimal,
        shown: Number,
    },
    MinLength(u64),
    MaxLength(u64),
    Pattern {
        regex: Regex,
        source: String,
    },
    MinItems(u64),
    MaxItems(u64),
    UniqueItems,
    PrefixItems(Vec<NodeId>),
    /// `items`, which applies from the end of `prefixItems` on.
    Items {
        schema: NodeId,
        from: usize,
    },
    /// `contains` with its `minContains` (1 by default) and `maxContains`.
    Contains {
        schema: NodeId,
        min: u64,
        max: Option<u64>,
    },
    UnevaluatedItems(NodeId),
    MinProperties(u64),
    MaxProperties(u64),
    Required(Vec<String>),
    DependentRequired(Vec<(String, Vec<String>)>),
    Properties(Vec<(String, NodeId)>),
    PatternProperties(Vec<(Regex, NodeId)>),
    /// `additionalProperties`, with the names and patterns of its siblings that it skips.
    AdditionalProperties {
        schema: NodeId,
        named: Names,
        patterns: Vec<Regex>,
    },
    PropertyNames(NodeId),
    DependentSchemas(Vec<(String, NodeId)>),
    UnevaluatedProperties(NodeId),
    AllOf(Vec<NodeId>),
    AnyOf(Vec<NodeId>),
    OneOf(Vec<NodeId>),
    /// `not`, with the negated schema as written, which its message quotes.
    Not {
        schema: NodeId,
        source: Value,
    },
    If {
        condition: NodeId,
        then: Option<NodeId>,
        otherwise: Option<NodeId>,
    },
    Ref(NodeId),
}

impl Keyword {
    /// The subschemas this keyword applies to the same value (not to its items or
    /// properties): a cycle of these never ends.
    fn in_place(&self) -> Vec<NodeId> {
        match self {
            Keyword::AllOf(list) | Keyword::AnyOf(list) | Keyword::OneOf(list) => list.clone(),
            Keyword::Not { schema, .. } | Keyword::Ref(schema) => vec![*schema],
            Keyword::If { condition, then, otherwise } => {
                std::iter::once(*condition).chain(*then).chain(*otherwise).collect()
            }
            Keyword::DependentSchemas(list) => list.iter().map(|(_, node)| *node).collect(),
            _ => Vec::new(),
        }
    }
}

/// The property names `additionalProperties` skips: scanned when there are a few (comparing
/// short strings beats hashing them), hashed when there are many.
pub(super) struct Names {
    few: Vec<String>,
    many: Option<HashSet<String>>,
}

impl Names {
    const SCANNED: usize = 8;

    fn new<'n>(names: impl Iterator<Item = &'n String>) -> Names {
        let few: Vec<String> = names.cloned().collect();
        if few.len() <= Names::SCANNED {
            return Names { few, many: None };
        }
        Names { few: Vec::new(), many: Some(few.into_iter().collect()) }
    }

    pub(super) fn contains(&self, name: &str) -> bool {
        match &self.many {
            Some(many) => many.contains(name),
            None => self.few.iter().any(|few| few == name),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RangeKind {
    Minimum,
    Maximum,
    ExclusiveMinimum,
    ExclusiveMaximum,
}

/// The JSON types a `type` keyword admits, and their names as written, for its message.
pub(super) struct Types {
    pub(super) names: Vec<&'static str>,
}

const TYPE_NAMES: [&str; 7] = ["null", "boolean", "object", "array", "number", "string", "integer"];

/// Compiles `document`. `max_chain` bounds how many subschemas may apply to one value in a
/// row (through `$ref`, `allOf`, ...), which bounds the evaluator's recursion per level of
/// the value.
pub(crate) fn compile(
    document: &Map<String, Value>,
    max_chain: usize,
) -> Result<CompiledSchema, String> {
    let mut compiler = Compiler {
        document,
        nodes: Vec::new(),
        pointers: Vec::new(),
        located: HashMap::new(),
        pending: Vec::new(),
        tracks_annotations: false,
    };
    let root = compiler.allocate(String::new());
    compiler.nodes[root] = compiler.keywords(document, "", "")?;
    // `$ref` targets are compiled here rather than where they are met, so the compiler's
    // recursion follows the document's nesting (bounded by `max_schema_depth`), never a chain
    // of references.
    while let Some((node, pointer)) = compiler.pending.pop() {
        let value = compiler.lookup(&pointer).unwrap_or(&Value::Bool(true));
        let resource = compiler.resource_of(&pointer);
        compiler.nodes[node] = compiler.node(value, &pointer, &resource)?;
    }
    check_chains(&compiler.nodes, &compiler.pointers, max_chain)?;
    Ok(CompiledSchema { nodes: compiler.nodes, tracks_annotations: compiler.tracks_annotations })
}

struct Compiler<'d> {
    document: &'d Map<String, Value>,
    nodes: Vec<Vec<Keyword>>,
    /// Each node's JSON pointer in the document, for messages.
    pointers: Vec<String>,
    /// Nodes by JSON pointer, so a subschema reached twice (by nesting and by `$ref`, or by
    /// recursion) is compiled once.
    located: HashMap<String, NodeId>,
    /// `$ref` targets allocated but not compiled yet.
    pending: Vec<(NodeId, String)>,
    tracks_annotations: bool,
}

impl<'d> Compiler<'d> {
    /// The node for the subschema `value` at `pointer`, compiled unless it already was.
    fn subschema(
        &mut self,
        value: &'d Value,
        pointer: String,
        resource: &str,
    ) -> Result<NodeId, String> {
        if let Some(&node) = self.located.get(&pointer) {
            return Ok(node);
        }
        let node = self.allocate(pointer.clone());
        self.nodes[node] = self.node(value, &pointer, resource)?;
        Ok(node)
    }

    fn allocate(&mut self, pointer: String) -> NodeId {
        let node = self.nodes.len();
        self.nodes.push(Vec::new());
        self.pointers.push(pointer.clone());
        self.located.insert(pointer, node);
        node
    }

    fn node(
        &mut self,
        value: &'d Value,
        pointer: &str,
        resource: &str,
    ) -> Result<Vec<Keyword>, String> {
        match value {
            Value::Bool(true) => Ok(Vec::new()),
            Value::Bool(false) => Ok(vec![Keyword::False]),
            Value::Object(map) => self.keywords(map, pointer, resource),
            _ => Err(format!("the subschema at #{pointer} is not an object or a boolean")),
        }
    }

    fn keywords(
        &mut self,
        map: &'d Map<String, Value>,
        pointer: &str,
        resource: &str,
    ) -> Result<Vec<Keyword>, String> {
        // A subschema with its own `$id` is a resource: its `#...` references start there.
        let resource =
            if map.get("$id").is_some_and(Value::is_string) { pointer } else { resource };
        let mut keywords = Vec::new();
        let mut unevaluated = Vec::new();
        for (key, value) in map {
            let at = Location { parent: pointer, key };
            let keyword = match key.as_str() {
                "unevaluatedItems" | "unevaluatedProperties" => {
                    // Last: they see what every other keyword of the node evaluated.
                    self.tracks_annotations = true;
                    let schema = self.subschema(value, at.pointer(), resource)?;
                    unevaluated.push(if key == "unevaluatedItems" {
                        Keyword::UnevaluatedItems(schema)
                    } else {
                        Keyword::UnevaluatedProperties(schema)
                    });
                    None
                }
                "$defs" => {
                    // Compiled even when nothing refers to them, so a mistake in one is found.
                    for (name, schema) in object(value, &at)? {
                        self.subschema(schema, at.child(name), resource)?;
                    }
                    None
                }
                "$dynamicRef" => {
                    return Err(format!(
                        "{at} is not supported: use \"$ref\" to a definition under \"$defs\""
                    ));
                }
                _ => self.keyword(map, &at, value, resource)?,
            };
            keywords.extend(keyword);
        }
        keywords.extend(unevaluated);
        Ok(keywords)
    }

    /// The keyword `at.key` with its `value`, or `None` for one that never fails on its own.
    fn keyword(
        &mut self,
        map: &'d Map<String, Value>,
        at: &Location<'_>,
        value: &'d Value,
        resource: &str,
    ) -> Result<Option<Keyword>, String> {
        let keyword = match at.key {
            "type" => Keyword::Type(types(value, at)?),
            "const" => Keyword::Const(value.clone()),
            "enum" => Keyword::Enum(array(value, at)?.clone()),
            "minimum" => range(RangeKind::Minimum, value, at)?,
            "maximum" => range(RangeKind::Maximum, value, at)?,
            "exclusiveMinimum" => range(RangeKind::ExclusiveMinimum, value, at)?,
            "exclusiveMaximum" => range(RangeKind::ExclusiveMaximum, value, at)?,
            "multipleOf" => multiple_of(value, at)?,
            "minLength" => Keyword::MinLength(count(value, at)?),
            "maxLength" => Keyword::MaxLength(count(value, at)?),
            "pattern" => {
                let source = string(value, at)?;
                Keyword::Pattern { regex: regex(source)?, source: source.to_owned() }
            }
            "minItems" => Keyword::MinItems(count(value, at)?),
            "maxItems" => Keyword::MaxItems(count(value, at)?),
            "uniqueItems" => match value {
                Value::Bool(true) => Keyword::UniqueItems,
                Value::Bool(false) => return Ok(None),
                _ => return Err(at.malformed("a boolean")),
            },
            "prefixItems" => Keyword::PrefixItems(self.schema_list(value, at, resource)?),
            "items" => self.items(map, at, value, resource)?,
            "contains" => self.contains(map, at, value, resource)?,
            "minContains" | "maxContains" => {
                count(value, at)?; // read by `contains`, alone they do nothing
                return Ok(None);
            }
            "minProperties" => Keyword::MinProperties(count(value, at)?),
            "maxProperties" => Keyword::MaxProperties(count(value, at)?),
            "required" => Keyword::Required(strings(value, at)?),
            "dependentRequired" => {
                let object = object(value, at)?;
                let parent = at.pointer();
                let mut dependencies = Vec::with_capacity(object.len());
                for (name, required) in object {
                    let at = Location { parent: &parent, key: name };
                    dependencies.push((name.clone(), strings(required, &at)?));
                }
                Keyword::DependentRequired(dependencies)
            }
            "properties" => Keyword::Properties(self.schema_map(value, at, resource)?),
            "patternProperties" => {
                Keyword::PatternProperties(self.pattern_properties(value, at, resource)?)
            }
            "additionalProperties" => self.additional_properties(map, at, value, resource)?,
            "propertyNames" => {
                Keyword::PropertyNames(self.subschema(value, at.pointer(), resource)?)
            }
            "dependentSchemas" => Keyword::DependentSchemas(self.schema_map(value, at, resource)?),
            "allOf" => Keyword::AllOf(self.schema_list(value, at, resource)?),
            "anyOf" => Keyword::AnyOf(self.schema_list(value, at, resource)?),
            "oneOf" => Keyword::OneOf(self.schema_list(value, at, resource)?),
            "not" => Keyword::Not {
                schema: self.subschema(value, at.pointer(), resource)?,
                source: value.clone(),
            },
            "if" => self.conditional(map, at, value, resource)?,
            "$ref" => Keyword::Ref(self.reference(string(value, at)?, at, resource)?),
            _ => return Ok(None),
        };
        Ok(Some(keyword))
    }

    fn schema_list(
        &mut self,
        value: &'d Value,
        at: &Location<'_>,
        resource: &str,
    ) -> Result<Vec<NodeId>, String> {
        let list = array(value, at)?;
        if list.is_empty() {
            return Err(at.malformed("a non-empty array of schemas"));
        }
        let pointer = at.pointer();
        list.iter()
            .enumerate()
            .map(|(i, schema)| self.subschema(schema, format!("{pointer}/{i}"), resource))
            .collect()
    }

    fn schema_map(
        &mut self,
        value: &'d Value,
        at: &Location<'_>,
        resource: &str,
    ) -> Result<Vec<(String, NodeId)>, String> {
        self.schema_members(value, at, resource, |name| Ok(name.to_owned()))
    }

    fn pattern_properties(
        &mut self,
        value: &'d Value,
        at: &Location<'_>,
        resource: &str,
    ) -> Result<Vec<(Regex, NodeId)>, String> {
        self.schema_members(value, at, resource, regex)
    }

    /// Each member of the object `value`: its name made into a key by `key`, and its value
    /// compiled as a subschema.
    fn schema_members<K>(
        &mut self,
        value: &'d Value,
        at: &Location<'_>,
        resource: &str,
        key: impl Fn(&str) -> Result<K, String>,
    ) -> Result<Vec<(K, NodeId)>, String> {
        let mut compiled = Vec::new();
        for (name, schema) in object(value, at)? {
            compiled.push((key(name)?, self.subschema(schema, at.child(name), resource)?));
        }
        Ok(compiled)
    }

    fn additional_properties(
        &mut self,
        map: &'d Map<String, Value>,
        at: &Location<'_>,
        value: &'d Value,
        resource: &str,
    ) -> Result<Keyword, String> {
        let schema = self.subschema(value, at.pointer(), resource)?;
        let sibling = |key: &'static str| Location { parent: at.parent, key };
        let named = match map.get("properties") {
            Some(properties) => Names::new(object(properties, &sibling("properties"))?.keys()),
            None => Names::new([].iter()),
        };
        let mut patterns = Vec::new();
        if let Some(sources) = map.get("patternProperties") {
            for source in object(sources, &sibling("patternProperties"))?.keys() {
                patterns.push(regex(source)?);
            }
        }
        Ok(Keyword::AdditionalProperties { schema, named, patterns })
    }

    fn items(
        &mut self,
        map: &'d Map<String, Value>,
        at: &Location<'_>,
        value: &'d Value,
        resource: &str,
    ) -> Result<Keyword, String> {
        if value.is_array() {
            return Err(at.malformed(
                "a schema (the array form of drafts before 2020-12 is \"prefixItems\" now)",
            ));
        }
        let from = map.get("prefixItems").and_then(Value::as_array).map_or(0, Vec::len);
        Ok(Keyword::Items { schema: self.subschema(value, at.pointer(), resource)?, from })
    }

    fn contains(
        &mut self,
        map: &'d Map<String, Value>,
        at: &Location<'_>,
        value: &'d Value,
        resource: &str,
    ) -> Result<Keyword, String> {
        let bound = |key: &'static str| -> Result<Option<u64>, String> {
            let at = Location { parent: at.parent, key };
            map.get(key).map(|value| count(value, &at)).transpose()
        };
        let (min, max) = (bound("minContains")?.unwrap_or(1), bound("maxContains")?);
        Ok(Keyword::Contains { schema: self.subschema(value, at.pointer(), resource)?, min, max })
    }

    fn conditional(
        &mut self,
        map: &'d Map<String, Value>,
        at: &Location<'_>,
        value: &'d Value,
        resource: &str,
    ) -> Result<Keyword, String> {
        let condition = self.subschema(value, at.pointer(), resource)?;
        let mut branch = |key: &'static str| -> Result<Option<NodeId>, String> {
            let Some(schema) = map.get(key) else { return Ok(None) };
            let at = Location { parent: at.parent, key };
            self.subschema(schema, at.pointer(), resource).map(Some)
        };
        let (then, otherwise) = (branch("then")?, branch("else")?);
        Ok(Keyword::If { condition, then, otherwise })
    }

    /// The node a `$ref` names. Only fragments are followed: `#` (the resource itself) and
    /// `#/json/pointer` (inside it). The target is compiled later, from `pending`.
    fn reference(
        &mut self,
        reference: &str,
        at: &Location<'_>,
        resource: &str,
    ) -> Result<NodeId, String> {
        let Some(fragment) = reference.strip_prefix('#') else {
            return Err(format!(
                "{at} refers to \"{reference}\", another document (external documents are \
                 never fetched: put every definition the schema refers to under its own \
                 \"$defs\")"
            ));
        };
        let fragment = modelcontext_types::percent::decode(fragment.as_bytes())
            .map_err(|e| format!("{at} refers to \"{reference}\": {e}"))?;
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return Err(format!(
                "{at} refers to the anchor \"{reference}\": anchors are not supported, use a \
                 JSON pointer such as \"#/$defs/name\""
            ));
        }
        let target = format!("{resource}{fragment}");
        if let Some(&node) = self.located.get(&target) {
            return Ok(node);
        }
        if self.lookup(&target).is_none() {
            return Err(format!("Pointer '{fragment}' does not exist"));
        }
        let node = self.allocate(target.clone());
        self.pending.push((node, target));
        Ok(node)
    }

    /// The pointer of the innermost subschema with an `$id` that contains `pointer` (or is
    /// it): the base its `#...` references resolve against. The document is the outermost.
    fn resource_of(&self, pointer: &str) -> String {
        let mut resource = String::new();
        let mut prefix = String::new();
        for token in pointer.split('/').skip(1) {
            prefix.push('/');
            prefix.push_str(token);
            let Some(value) = self.lookup(&prefix) else { break };
            if value.get("$id").is_some_and(Value::is_string) {
                resource.clone_from(&prefix);
            }
        }
        resource
    }

    /// The value at a non-empty JSON `pointer` into the document (the empty one is the root,
    /// compiled first, which a lookup never needs).
    fn lookup(&self, pointer: &str) -> Option<&'d Value> {
        let rest = pointer.strip_prefix('/')?;
        let (first, rest) = rest.split_once('/').map_or((rest, ""), |(first, rest)| (first, rest));
        let member = self.document.get(&first.replace("~1", "/").replace("~0", "~"))?;
        if rest.is_empty() { Some(member) } else { member.pointer(&format!("/{rest}")) }
    }
}

/// Where a keyword is: its name, and the JSON pointer of the subschema holding it.
struct Location<'a> {
    parent: &'a str,
    key: &'a str,
}

impl Location<'_> {
    fn pointer(&self) -> String {
        child_pointer(self.parent, self.key)
    }

    /// The pointer of the member `name` of this keyword's value.
    fn child(&self, name: &str) -> String {
        child_pointer(&self.pointer(), name)
    }

    fn malformed(&self, expected: &str) -> String {
        format!("{self} must be {expected}")
    }
}

impl std::fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "\"{}\" at #{}", self.key, self.parent)
    }
}

/// `parent` extended by one reference token, escaped as RFC 6901 says.
fn child_pointer(parent: &str, token: &str) -> String {
    format!("{parent}/{}", token.replace('~', "~0").replace('/', "~1"))
}

fn regex(source: &str) -> Result<Regex, String> {
    pattern::compile(source).ok_or_else(|| format!("{} is not a \"regex\"", Value::from(source)))
}

fn types(value: &Value, at: &Location<'_>) -> Result<Types, String> {
    let expected = "a type name or an array of distinct type names";
    let names: Vec<&Value> = match value {
        Value::Array(names) if !names.is_empty() => names.iter().collect(),
        Value::String(_) => vec![value],
        _ => return Err(at.malformed(expected)),
    };
    let mut known = Vec::with_capacity(names.len());
    for name in names {
        let name = name.as_str().and_then(|name| TYPE_NAMES.iter().find(|known| **known == name));
        match name {
            Some(name) if !known.contains(name) => known.push(*name),
            _ => return Err(at.malformed(expected)),
        }
    }
    Ok(Types { names: known })
}

fn range(kind: RangeKind, value: &Value, at: &Location<'_>) -> Result<Keyword, String> {
    match value {
        Value::Number(limit) => Ok(Keyword::Range { kind, limit: limit.clone() }),
        _ => Err(at.malformed("a number")),
    }
}

fn multiple_of(value: &Value, at: &Location<'_>) -> Result<Keyword, String> {
    let shown = value.as_number().filter(|n| n.as_f64().is_some_and(|f| f > 0.0));
    match shown.and_then(|n| Decimal::of(n).map(|divisor| (n, divisor))) {
        Some((shown, divisor)) if !divisor.is_zero() => {
            Ok(Keyword::MultipleOf { divisor, shown: shown.clone() })
        }
        _ => Err(at.malformed("a number greater than 0")),
    }
}

fn count(value: &Value, at: &Location<'_>) -> Result<u64, String> {
    as_count(value).ok_or_else(|| at.malformed("a non-negative integer"))
}

fn string<'v>(value: &'v Value, at: &Location<'_>) -> Result<&'v str, String> {
    value.as_str().ok_or_else(|| at.malformed("a string"))
}

fn array<'v>(value: &'v Value, at: &Location<'_>) -> Result<&'v Vec<Value>, String> {
    value.as_array().ok_or_else(|| at.malformed("an array"))
}

fn object<'v>(value: &'v Value, at: &Location<'_>) -> Result<&'v Map<String, Value>, String> {
    value.as_object().ok_or_else(|| at.malformed("an object"))
}

fn strings(value: &Value, at: &Location<'_>) -> Result<Vec<String>, String> {
    let expected = "an array of distinct strings";
    let mut names: Vec<String> = Vec::new();
    for name in array(value, at).map_err(|_| at.malformed(expected))? {
        match name.as_str() {
            Some(name) if !names.iter().any(|seen| seen == name) => names.push(name.to_owned()),
            _ => return Err(at.malformed(expected)),
        }
    }
    Ok(names)
}

/// Refuses a schema where subschemas apply to one value in a cycle (`{"$ref": "#"}`: the
/// check would never end) or in a chain longer than `max_chain`. Iterative, like the rest
/// of the compiler, so a long chain of `$ref`s cannot exhaust the stack here either.
fn check_chains(
    nodes: &[Vec<Keyword>],
    pointers: &[String],
    max_chain: usize,
) -> Result<(), String> {
    const UNSEEN: usize = 0;
    const ON_PATH: usize = usize::MAX;
    // For each finished node, the longest chain of in-place subschemas that starts there.
    let mut chain = vec![UNSEEN; nodes.len()];
    let edges: Vec<Vec<NodeId>> =
        nodes.iter().map(|node| node.iter().flat_map(Keyword::in_place).collect()).collect();
    for start in 0..nodes.len() {
        if chain[start] != UNSEEN {
            continue;
        }
        let mut path: Vec<(NodeId, usize)> = vec![(start, 0)];
        chain[start] = ON_PATH;
        while let Some((node, next)) = path.last_mut() {
            let node = *node;
            if let Some(&target) = edges[node].get(*next) {
                *next += 1;
                match chain[target] {
                    ON_PATH => {
                        return Err(format!(
                            "the subschema at #{} applies to the value it checks through a \
                             cycle of \"$ref\" (or allOf, anyOf, oneOf, not, if, \
                             dependentSchemas) that never reaches a nested value, so a check \
                             would never end",
                            pointers[target]
                        ));
                    }
                    UNSEEN => {
                        chain[target] = ON_PATH;
                        path.push((target, 0));
                    }
                    _ => {}
                }
                continue;
            }
            let longest = edges[node].iter().map(|&target| chain[target]).max().unwrap_or(0) + 1;
            if longest > max_chain {
                return Err(format!(
                    "it applies more than {max_chain} subschemas in a row to one value through \
                     \"$ref\", allOf, anyOf, oneOf, not, if or dependentSchemas, starting at \
                     #{} (McpServer::max_schema_depth)",
                    pointers[node]
                ));
            }
            chain[node] = longest;
            path.pop();
        }
    }
    Ok(())
}
