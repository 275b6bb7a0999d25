//! Evaluating a compiled schema against a value, and describing what failed: one sentence
//! per violation, naming the argument by its path and the rule it broke, in the words the
//! `jsonschema` crate used before this validator replaced it (models and tests read them).

use std::cmp::Ordering;
use std::collections::HashSet;
use std::fmt::Write;

use serde_json::{Map, Value};

use super::MAX_REPORTED_VIOLATIONS;
use super::compile::{CompiledSchema, Keyword, NodeId, RangeKind, Types};
use super::values::{Decimal, compare, equal, has_duplicates, is_integer};

/// The deepest the evaluator recurses, in nodes, before it gives up on a value. Arguments
/// off the wire nest at most 128 levels and each level costs a few nodes; this stops a value
/// built in process (a tool's structured output) from exhausting the stack.
const MAX_EVALUATION_DEPTH: usize = 512;

impl CompiledSchema {
    /// Checks `instance`; on failure, at most [`MAX_REPORTED_VIOLATIONS`] descriptions joined
    /// by `; `, and how many more violations there were.
    pub(crate) fn check(&self, instance: &Value) -> Result<(), String> {
        let mut run = Run::new(self, true, Report::new(MAX_REPORTED_VIOLATIONS));
        if run.node(0, instance, &mut Evaluated::default()) {
            return Ok(());
        }
        Err(run.report.into_message())
    }
}

/// The violations found so far: the first few described, all counted.
struct Report<'i> {
    described: Vec<Violation<'i>>,
    /// How many may be described.
    room: usize,
    total: usize,
}

/// One described violation. Its path is filled in on the way back up, innermost step first,
/// by each member that failed: a valid value costs no path at all.
struct Violation<'i> {
    path: Vec<Segment<'i>>,
    message: String,
}

impl<'i> Report<'i> {
    fn new(room: usize) -> Self {
        Report { described: Vec::new(), room, total: 0 }
    }

    fn into_message(self) -> String {
        let mut message = String::new();
        for violation in &self.described {
            if !message.is_empty() {
                message.push_str("; ");
            }
            violation.describe(&mut message);
        }
        let more = self.total - self.described.len();
        if more > 0 {
            let _ = write!(message, "; and {more} more");
        }
        message
    }
}

impl Violation<'_> {
    /// `argument 'a.0.b': message`, keys escaped as in a JSON pointer (`~0`, `~1`); the
    /// message alone for the arguments object itself.
    fn describe(&self, out: &mut String) {
        if !self.path.is_empty() {
            out.push_str("argument '");
            for (i, step) in self.path.iter().rev().enumerate() {
                if i > 0 {
                    out.push('.');
                }
                match step {
                    Segment::Key(key) => out.push_str(&key.replace('~', "~0").replace('/', "~1")),
                    Segment::Index(index) => {
                        let _ = write!(out, "{index}");
                    }
                }
            }
            out.push_str("': ");
        }
        out.push_str(&self.message);
    }
}

/// A step from a value to one of its members, in the path an error names.
#[derive(Clone, Copy)]
enum Segment<'i> {
    Key(&'i str),
    Index(usize),
}

/// What one subschema and the subschemas it applied to the same value looked at: the
/// value's properties, its items below `items`, and the items `contains` matched; its
/// `unevaluated*` keywords check the rest. Recorded only when the schema has such a keyword
/// (the sets are created on first use, so an unused record costs nothing).
#[derive(Default)]
struct Evaluated<'i> {
    properties: Option<HashSet<&'i str>>,
    items: usize,
    indices: Option<HashSet<usize>>,
}

impl<'i> Evaluated<'i> {
    /// Takes in what a subschema applied to the same value evaluated.
    fn absorb(&mut self, other: Evaluated<'i>) {
        if let Some(properties) = other.properties {
            self.properties.get_or_insert_default().extend(properties);
        }
        self.items = self.items.max(other.items);
        if let Some(indices) = other.indices {
            self.indices.get_or_insert_default().extend(indices);
        }
    }

    fn add_property(&mut self, name: &'i str) {
        self.properties.get_or_insert_default().insert(name);
    }

    fn has_property(&self, name: &str) -> bool {
        self.properties.as_ref().is_some_and(|properties| properties.contains(name))
    }

    fn add_index(&mut self, index: usize) {
        self.indices.get_or_insert_default().insert(index);
    }

    fn has_item(&self, index: usize) -> bool {
        index < self.items || self.indices.as_ref().is_some_and(|indices| indices.contains(&index))
    }
}

/// One evaluation. Collecting, it goes on after a violation to describe them all; probing
/// (the branches of `anyOf`, `oneOf`, `not`, `if`, `contains`), it stops at the first and
/// describes nothing.
struct Run<'c, 'i> {
    schema: &'c CompiledSchema,
    collecting: bool,
    report: Report<'i>,
    depth: usize,
}

impl<'c, 'i> Run<'c, 'i> {
    fn new(schema: &'c CompiledSchema, collecting: bool, report: Report<'i>) -> Self {
        Run { schema, collecting, report, depth: 0 }
    }

    /// Whether `instance` is valid against `node`; `seen` gets what the node evaluated.
    fn node(&mut self, node: NodeId, instance: &'i Value, seen: &mut Evaluated<'i>) -> bool {
        if self.depth >= MAX_EVALUATION_DEPTH {
            return self.fail(|| {
                format!("the value nests too deeply to check ({MAX_EVALUATION_DEPTH} subschemas)")
            });
        }
        self.depth += 1;
        let schema = self.schema;
        let valid =
            self.every(&schema.nodes[node], |run, keyword| run.keyword(keyword, instance, seen));
        self.depth -= 1;
        valid
    }

    /// Whether `check` passes for each of `items`: it runs on all of them while collecting,
    /// so every violation is described, and stops at the first failure while probing.
    fn every<T>(
        &mut self,
        items: impl IntoIterator<Item = T>,
        mut check: impl FnMut(&mut Self, T) -> bool,
    ) -> bool {
        let mut valid = true;
        for item in items {
            if !check(self, item) {
                valid = false;
                if !self.collecting {
                    break;
                }
            }
        }
        valid
    }

    /// `node` against a member of the current value, one step down the path.
    fn member(&mut self, step: Segment<'i>, node: NodeId, member: &'i Value) -> bool {
        let before = self.report.described.len();
        let valid = self.node(node, member, &mut Evaluated::default());
        for violation in &mut self.report.described[before..] {
            violation.path.push(step);
        }
        valid
    }

    /// `node` applied to the same value by an applicator: the node's own `unevaluated*` see
    /// only what it and its subschemas evaluated, and then the applicator's node sees it too.
    /// (Also when the node fails: the whole fails then, and the violations already found
    /// need no echo from an `unevaluated*` above.)
    fn applied(&mut self, node: NodeId, instance: &'i Value, seen: &mut Evaluated<'i>) -> bool {
        let mut branch = Evaluated::default();
        let valid = self.node(node, instance, &mut branch);
        seen.absorb(branch);
        valid
    }

    /// Whether `instance` is valid against `node`, without describing why not.
    fn probe(&mut self, node: NodeId, instance: &'i Value, seen: &mut Evaluated<'i>) -> bool {
        let collecting = std::mem::replace(&mut self.collecting, false);
        let valid = self.node(node, instance, seen);
        self.collecting = collecting;
        valid
    }

    /// Records a violation of the current value; always `false`, to return.
    fn fail(&mut self, message: impl FnOnce() -> String) -> bool {
        if self.collecting {
            if self.report.described.len() < self.report.room {
                self.report.described.push(Violation { path: Vec::new(), message: message() });
            }
            self.report.total += 1;
        }
        false
    }

    fn mark_property(&self, seen: &mut Evaluated<'i>, name: &'i str) {
        if self.schema.tracks_annotations {
            seen.add_property(name);
        }
    }

    fn keyword(
        &mut self,
        keyword: &'c Keyword,
        instance: &'i Value,
        seen: &mut Evaluated<'i>,
    ) -> bool {
        match keyword {
            Keyword::False => self.fail(|| format!("False schema does not allow {instance}")),
            Keyword::Type(types) => types.admit(instance) || self.fail(|| types.refusal(instance)),
            Keyword::Const(expected) => {
                equal(expected, instance) || self.fail(|| format!("{expected} was expected"))
            }
            Keyword::Enum(options) => {
                options.iter().any(|option| equal(option, instance))
                    || self.fail(|| not_one_of(instance, options))
            }
            Keyword::Range { kind, limit } => self.range(*kind, limit, instance),
            Keyword::MultipleOf { divisor, shown } => {
                let Value::Number(number) = instance else { return true };
                let multiple = Decimal::of(number).is_none_or(|n| n.is_multiple_of(*divisor));
                multiple || self.fail(|| format!("{instance} is not a multiple of {shown}"))
            }
            Keyword::MinLength(_) | Keyword::MaxLength(_) | Keyword::Pattern { .. } => {
                self.string(keyword, instance)
            }
            Keyword::MinItems(_)
            | Keyword::MaxItems(_)
            | Keyword::UniqueItems
            | Keyword::PrefixItems(_)
            | Keyword::Items { .. }
            | Keyword::Contains { .. }
            | Keyword::UnevaluatedItems(_) => match instance {
                Value::Array(items) => self.array(keyword, instance, items, seen),
                _ => true,
            },
            Keyword::AllOf(_)
            | Keyword::AnyOf(_)
            | Keyword::OneOf(_)
            | Keyword::Not { .. }
            | Keyword::If { .. }
            | Keyword::Ref(_) => self.in_place(keyword, instance, seen),
            _ => match instance {
                Value::Object(map) => self.object(keyword, instance, map, seen),
                _ => true,
            },
        }
    }

    fn range(&mut self, kind: RangeKind, limit: &serde_json::Number, instance: &Value) -> bool {
        let Value::Number(number) = instance else { return true };
        let ordering = compare(number, limit);
        let within = match kind {
            RangeKind::Minimum => ordering != Some(Ordering::Less),
            RangeKind::Maximum => ordering != Some(Ordering::Greater),
            RangeKind::ExclusiveMinimum => ordering == Some(Ordering::Greater),
            RangeKind::ExclusiveMaximum => ordering == Some(Ordering::Less),
        };
        within
            || self.fail(|| match kind {
                RangeKind::Minimum => format!("{instance} is less than the minimum of {limit}"),
                RangeKind::Maximum => format!("{instance} is greater than the maximum of {limit}"),
                RangeKind::ExclusiveMinimum => {
                    format!("{instance} is less than or equal to the minimum of {limit}")
                }
                RangeKind::ExclusiveMaximum => {
                    format!("{instance} is greater than or equal to the maximum of {limit}")
                }
            })
    }

    fn string(&mut self, keyword: &'c Keyword, instance: &'i Value) -> bool {
        let Value::String(text) = instance else { return true };
        // Lengths are in Unicode code points, as JSON Schema counts them.
        let length = || text.chars().count() as u64;
        match keyword {
            Keyword::MinLength(limit) => {
                length() >= *limit
                    || self.fail(|| {
                        format!("{instance} is shorter than {}", plural(*limit, "character"))
                    })
            }
            Keyword::MaxLength(limit) => {
                length() <= *limit
                    || self.fail(|| {
                        format!("{instance} is longer than {}", plural(*limit, "character"))
                    })
            }
            Keyword::Pattern { regex, source } => {
                regex.is_match(text)
                    || self.fail(|| format!("{instance} does not match \"{source}\""))
            }
            _ => true,
        }
    }

    fn array(
        &mut self,
        keyword: &'c Keyword,
        instance: &'i Value,
        items: &'i [Value],
        seen: &mut Evaluated<'i>,
    ) -> bool {
        let len = items.len() as u64;
        match keyword {
            Keyword::MinItems(limit) => {
                len >= *limit
                    || self.fail(|| format!("{instance} has less than {}", plural(*limit, "item")))
            }
            Keyword::MaxItems(limit) => {
                len <= *limit
                    || self.fail(|| format!("{instance} has more than {}", plural(*limit, "item")))
            }
            Keyword::UniqueItems => {
                !has_duplicates(items)
                    || self.fail(|| format!("{instance} has non-unique elements"))
            }
            Keyword::PrefixItems(schemas) => {
                seen.items = seen.items.max(schemas.len().min(items.len()));
                self.each_item(
                    items.iter().enumerate().zip(schemas).map(|((i, item), s)| (i, item, *s)),
                )
            }
            Keyword::Items { schema, from } => {
                seen.items = items.len();
                self.each_item(
                    items.iter().enumerate().skip(*from).map(|(i, item)| (i, item, *schema)),
                )
            }
            Keyword::Contains { schema, min, max } => {
                self.contains(*schema, *min, *max, instance, items, seen)
            }
            Keyword::UnevaluatedItems(schema) => {
                let rest = items.iter().enumerate().filter(|(i, _)| !seen.has_item(*i));
                let valid = if self.schema.is_false(*schema) {
                    let unexpected: Vec<String> = rest.map(|(_, item)| item.to_string()).collect();
                    unexpected.is_empty()
                        || self.fail(|| unexpected_list("Unevaluated items", &unexpected))
                } else {
                    let rest: Vec<(usize, &'i Value)> = rest.collect();
                    self.each_item(rest.into_iter().map(|(i, item)| (i, item, *schema)))
                };
                seen.items = items.len();
                valid
            }
            _ => true,
        }
    }

    /// Each `(index, item, schema)`; all of them while collecting, up to a failure probing.
    fn each_item(&mut self, checks: impl Iterator<Item = (usize, &'i Value, NodeId)>) -> bool {
        self.every(checks, |run, (index, item, schema)| {
            run.member(Segment::Index(index), schema, item)
        })
    }

    fn contains(
        &mut self,
        schema: NodeId,
        min: u64,
        max: Option<u64>,
        instance: &'i Value,
        items: &'i [Value],
        seen: &mut Evaluated<'i>,
    ) -> bool {
        // Every item is looked at only when the count or the annotation needs it.
        let exhaustive = max.is_some() || self.schema.tracks_annotations;
        let mut matched = 0u64;
        for (index, item) in items.iter().enumerate() {
            if self.probe(schema, item, &mut Evaluated::default()) {
                matched += 1;
                if self.schema.tracks_annotations {
                    seen.add_index(index);
                }
                if !exhaustive && matched >= min {
                    break;
                }
            }
        }
        if matched < min {
            return self.fail(|| match min {
                1 => format!("None of {instance} are valid under the given schema"),
                _ => format!(
                    "{instance} has fewer than {} valid under the 'contains' schema",
                    plural(min, "item")
                ),
            });
        }
        match max {
            Some(max) if matched > max => self.fail(|| {
                format!(
                    "{instance} has more than {} valid under the 'contains' schema",
                    plural(max, "item")
                )
            }),
            _ => true,
        }
    }

    fn object(
        &mut self,
        keyword: &'c Keyword,
        instance: &'i Value,
        map: &'i Map<String, Value>,
        seen: &mut Evaluated<'i>,
    ) -> bool {
        let len = map.len() as u64;
        match keyword {
            Keyword::MinProperties(limit) => {
                len >= *limit
                    || self.fail(|| format!("{instance} has less than {}", properties(*limit)))
            }
            Keyword::MaxProperties(limit) => {
                len <= *limit
                    || self.fail(|| format!("{instance} has more than {}", properties(*limit)))
            }
            Keyword::Required(names) => self.required(names, map),
            Keyword::DependentRequired(dependencies) => self
                .every(dependencies, |run, (name, required)| {
                    find(map, name).is_none() || run.required(required, map)
                }),
            Keyword::Properties(schemas) => {
                let present = schemas.iter().filter_map(|(name, schema)| {
                    find(map, name).map(|(key, value)| (key.as_str(), value, *schema))
                });
                self.each_property(present, seen)
            }
            Keyword::PatternProperties(patterns) => {
                let matched = map.iter().flat_map(|(key, value)| {
                    patterns
                        .iter()
                        .filter(|(regex, _)| regex.is_match(key))
                        .map(move |(_, schema)| (key.as_str(), value, *schema))
                });
                self.each_property(matched, seen)
            }
            Keyword::AdditionalProperties { schema, named, patterns } => {
                let additional = map.iter().filter(|(key, _)| {
                    !named.contains(key.as_str())
                        && !patterns.iter().any(|regex| regex.is_match(key))
                });
                self.rest_of_properties(*schema, "Additional properties", additional, seen)
            }
            Keyword::UnevaluatedProperties(schema) => {
                let before: Vec<(&'i String, &'i Value)> =
                    map.iter().filter(|(key, _)| !seen.has_property(key)).collect();
                self.rest_of_properties(*schema, "Unevaluated properties", before.into_iter(), seen)
            }
            Keyword::PropertyNames(schema) => self.property_names(*schema, map),
            Keyword::DependentSchemas(schemas) => self.every(schemas, |run, (name, schema)| {
                find(map, name).is_none() || run.applied(*schema, instance, seen)
            }),
            _ => true,
        }
    }

    fn required(&mut self, names: &[String], map: &Map<String, Value>) -> bool {
        self.every(names, |run, name| {
            find(map, name).is_some()
                || run.fail(|| format!("{} is a required property", Value::from(name.as_str())))
        })
    }

    /// Each `(name, value, schema)`, marking the names evaluated.
    fn each_property(
        &mut self,
        checks: impl Iterator<Item = (&'i str, &'i Value, NodeId)>,
        seen: &mut Evaluated<'i>,
    ) -> bool {
        self.every(checks, |run, (name, value, schema)| {
            run.mark_property(seen, name);
            run.member(Segment::Key(name), schema, value)
        })
    }

    /// `additionalProperties` or `unevaluatedProperties` over the properties they apply to:
    /// `false` is one violation listing the names, any other schema checks each value.
    fn rest_of_properties(
        &mut self,
        schema: NodeId,
        what: &str,
        rest: impl Iterator<Item = (&'i String, &'i Value)>,
        seen: &mut Evaluated<'i>,
    ) -> bool {
        if self.schema.is_false(schema) {
            let unexpected: Vec<&'i String> = rest.map(|(name, _)| name).collect();
            for name in &unexpected {
                self.mark_property(seen, name);
            }
            return unexpected.is_empty() || self.fail(|| unexpected_list(what, &unexpected));
        }
        self.each_property(rest.map(|(key, value)| (key.as_str(), value, schema)), seen)
    }

    /// Each property name, as a string value of its own, against `schema`.
    fn property_names(&mut self, schema: NodeId, map: &Map<String, Value>) -> bool {
        self.every(map.keys(), |run, name| {
            let name = Value::String(name.clone());
            let room = run.report.room - run.report.described.len();
            let mut names = Run::new(run.schema, run.collecting, Report::new(room));
            names.depth = run.depth;
            let named = names.node(schema, &name, &mut Evaluated::default());
            // A string has no members: its violations are the object's, path and all.
            let described = names.report.described.into_iter();
            run.report.described.extend(
                described
                    .map(|violation| Violation { path: Vec::new(), message: violation.message }),
            );
            run.report.total += names.report.total;
            named
        })
    }

    /// The applicators that apply subschemas to this same value.
    fn in_place(
        &mut self,
        keyword: &'c Keyword,
        instance: &'i Value,
        seen: &mut Evaluated<'i>,
    ) -> bool {
        match keyword {
            Keyword::AllOf(schemas) => {
                self.every(schemas, |run, schema| run.applied(*schema, instance, seen))
            }
            Keyword::AnyOf(schemas) => {
                self.count_valid(schemas, instance, seen, 1) > 0
                    || self.fail(|| {
                        format!("{instance} is not valid under any of {}", listed("anyOf"))
                    })
            }
            Keyword::OneOf(schemas) => match self.count_valid(schemas, instance, seen, 2) {
                1 => true,
                0 => self
                    .fail(|| format!("{instance} is not valid under any of {}", listed("oneOf"))),
                _ => self.fail(|| {
                    format!("{instance} is valid under more than one of {}", listed("oneOf"))
                }),
            },
            Keyword::Not { schema, source } => {
                !self.probe(*schema, instance, &mut Evaluated::default())
                    || self.fail(|| format!("{source} is not allowed for {instance}"))
            }
            Keyword::If { condition, then, otherwise } => {
                let mut branch = Evaluated::default();
                let consequence = if self.probe(*condition, instance, &mut branch) {
                    seen.absorb(branch);
                    then
                } else {
                    otherwise
                };
                consequence.is_none_or(|schema| self.applied(schema, instance, seen))
            }
            Keyword::Ref(schema) => self.applied(*schema, instance, seen),
            _ => true,
        }
    }

    /// How many of `schemas` `instance` is valid against, counting up to `enough` (all of
    /// them when annotations are recorded: every valid branch's annotations count).
    fn count_valid(
        &mut self,
        schemas: &[NodeId],
        instance: &'i Value,
        seen: &mut Evaluated<'i>,
        enough: usize,
    ) -> usize {
        let mut valid = 0;
        for schema in schemas {
            let mut branch = Evaluated::default();
            if self.probe(*schema, instance, &mut branch) {
                valid += 1;
                seen.absorb(branch);
                if valid >= enough && !self.schema.tracks_annotations {
                    break;
                }
            }
        }
        valid
    }
}

impl Types {
    fn admit(&self, instance: &Value) -> bool {
        self.names.iter().any(|name| match (*name, instance) {
            ("null", Value::Null)
            | ("boolean", Value::Bool(_))
            | ("object", Value::Object(_))
            | ("array", Value::Array(_))
            | ("number", Value::Number(_))
            | ("string", Value::String(_)) => true,
            ("integer", Value::Number(number)) => is_integer(number),
            _ => false,
        })
    }

    fn refusal(&self, instance: &Value) -> String {
        match self.names.as_slice() {
            [name] => format!("{instance} is not of type \"{name}\""),
            names => {
                let quoted: Vec<String> = names.iter().map(|name| format!("\"{name}\"")).collect();
                format!("{instance} is not of types {}", quoted.join(", "))
            }
        }
    }
}

/// The member `name` of `map`. A small object (arguments usually are) is scanned, which is
/// faster than hashing the name.
fn find<'m>(map: &'m Map<String, Value>, name: &str) -> Option<(&'m String, &'m Value)> {
    const SCANNED: usize = 8;
    if map.len() <= SCANNED {
        map.iter().find(|(key, _)| *key == name)
    } else {
        map.get_key_value(name)
    }
}

/// `-1 is not one of 0, 1 or 2`; past three options, the first two and how many others.
fn not_one_of(instance: &Value, options: &[Value]) -> String {
    const SHOWN: usize = 3;
    let listed: Vec<String> = options.iter().take(SHOWN).map(Value::to_string).collect();
    match (options.len(), listed.split_last()) {
        (_, None) => format!("{instance} is not one of the empty list of options"),
        (n, Some((last, first))) if n <= SHOWN => match first {
            [] => format!("{instance} is not one of {last}"),
            first => format!("{instance} is not one of {} or {last}", first.join(", ")),
        },
        (n, _) => format!(
            "{instance} is not one of {} or {} other candidates",
            listed[..SHOWN - 1].join(", "),
            n - (SHOWN - 1)
        ),
    }
}

/// `Additional properties are not allowed ('x', 'y' were unexpected)`.
fn unexpected_list(what: &str, names: &[impl std::fmt::Display]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("'{name}'")).collect();
    let verb = if names.len() == 1 { "was" } else { "were" };
    format!("{what} are not allowed ({} {verb} unexpected)", quoted.join(", "))
}

/// `the schemas listed in the 'anyOf' keyword`, as the messages of combinators say it.
fn listed(keyword: &str) -> String {
    format!("the schemas listed in the '{keyword}' keyword")
}

fn plural(count: u64, noun: &str) -> String {
    format!("{count} {noun}{}", if count == 1 { "" } else { "s" })
}

fn properties(count: u64) -> String {
    format!("{count} propert{}", if count == 1 { "y" } else { "ies" })
}
