//! The validator keyword by keyword with the messages a model reads, then its bounds, then
//! against the official JSON Schema Test Suite (the draft 2020-12 files, vendored in
//! `testdata/JSON-Schema-Test-Suite`) and against the `jsonschema` crate as an oracle, on the
//! suite's schemas and on random ones.
//!
//! What the suite runs and what it skips is written down here, each with its reason:
//! [`REFUSED`] (groups the validator refuses to compile), [`OVERRULED`] (a verdict we give
//! differently on purpose) and [`OPTIONAL`] (the suite's optional files we claim; the others
//! are not vendored).

use std::path::{Path, PathBuf};

use expect_test::{Expect, expect};
use serde_json::{Map, Value, json};

use super::{SchemaLimits, Validator};

/// The suite's `tests/draft2020-12` folder, vendored at the root of the repository.
fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/JSON-Schema-Test-Suite/tests/draft2020-12")
}

/// Groups of the suite the validator refuses to compile, on purpose, by file and description:
/// they need another document (`$ref` to a URI, fetched or embedded by `$id`), an anchor
/// (`$anchor`, `$dynamicAnchor`) or `$dynamicRef`. A listed group that compiles fails too, so
/// the list stays true.
const REFUSED: &[(&str, &str)] = &[
    ("anchor", "Location-independent identifier"),
    ("anchor", "Location-independent identifier with absolute URI"),
    ("anchor", "Location-independent identifier with base URI change in subschema"),
    ("anchor", "same $anchor with different base uri"),
    ("defs", "validate definition against metaschema"),
    (
        "dynamicRef",
        "A $dynamicRef to a $dynamicAnchor in the same schema resource behaves like a normal $ref to an $anchor",
    ),
    (
        "dynamicRef",
        "A $dynamicRef to an $anchor in the same schema resource behaves like a normal $ref to an $anchor",
    ),
    (
        "dynamicRef",
        "A $ref to a $dynamicAnchor in the same schema resource behaves like a normal $ref to an $anchor",
    ),
    (
        "dynamicRef",
        "A $dynamicRef resolves to the first $dynamicAnchor still in scope that is encountered when the schema is evaluated",
    ),
    ("dynamicRef", "A $dynamicRef without anchor in fragment behaves identical to $ref"),
    (
        "dynamicRef",
        "A $dynamicRef with intermediate scopes that don't include a matching $dynamicAnchor does not affect dynamic scope resolution",
    ),
    (
        "dynamicRef",
        "An $anchor with the same name as a $dynamicAnchor is not used for dynamic scope resolution",
    ),
    (
        "dynamicRef",
        "A $dynamicRef without a matching $dynamicAnchor in the same schema resource behaves like a normal $ref to $anchor",
    ),
    (
        "dynamicRef",
        "A $dynamicRef with a non-matching $dynamicAnchor in the same schema resource behaves like a normal $ref to $anchor",
    ),
    (
        "dynamicRef",
        "A $dynamicRef that initially resolves to a schema with a matching $dynamicAnchor resolves to the first $dynamicAnchor in the dynamic scope",
    ),
    (
        "dynamicRef",
        "A $dynamicRef that initially resolves to a schema without a matching $dynamicAnchor behaves like a normal $ref to $anchor",
    ),
    ("dynamicRef", "multiple dynamic paths to the $dynamicRef keyword"),
    ("dynamicRef", "after leaving a dynamic scope, it is not used by a $dynamicRef"),
    ("dynamicRef", "strict-tree schema, guards against misspelled properties"),
    ("dynamicRef", "tests for implementation dynamic anchor and reference link"),
    ("dynamicRef", "$ref and $dynamicAnchor are independent of order - $defs first"),
    ("dynamicRef", "$ref and $dynamicAnchor are independent of order - $ref first"),
    ("dynamicRef", "$ref to $dynamicRef finds detached $dynamicAnchor"),
    ("dynamicRef", "$dynamicRef points to a boolean schema"),
    ("dynamicRef", "$dynamicRef skips over intermediate resources - direct reference"),
    ("dynamicRef", "$dynamicRef avoids the root of each schema, but scopes are still registered"),
    ("unknownKeyword", "$id inside an unknown keyword is not a real identifier"),
    ("ref", "remote ref, containing refs itself"),
    ("ref", "Recursive references between schemas"),
    ("ref", "refs with relative uris and defs"),
    ("ref", "relative refs with absolute uris and defs"),
    ("ref", "$id must be resolved against nearest parent, not just immediate parent"),
    ("ref", "order of evaluation: $id and $ref"),
    ("ref", "order of evaluation: $id and $anchor and $ref"),
    ("ref", "order of evaluation: $id and $ref on nested schema"),
    ("ref", "simple URN base URI with $ref via the URN"),
    ("ref", "URN base URI with URN and JSON pointer ref"),
    ("ref", "URN base URI with URN and anchor ref"),
    ("ref", "URN ref with nested pointer ref"),
    ("ref", "ref to if"),
    ("ref", "ref to then"),
    ("ref", "ref to else"),
    ("ref", "ref with absolute-path-reference"),
    ("refRemote", "remote ref"),
    ("refRemote", "fragment within remote ref"),
    ("refRemote", "anchor within remote ref"),
    ("refRemote", "ref within remote ref"),
    ("refRemote", "base URI change"),
    ("refRemote", "base URI change - change folder"),
    ("refRemote", "base URI change - change folder in subschema"),
    ("refRemote", "root ref in remote ref"),
    ("refRemote", "remote ref with ref to defs"),
    ("refRemote", "Location-independent identifier in remote ref"),
    ("refRemote", "retrieved nested refs resolve relative to their URI not $id"),
    ("refRemote", "remote HTTP ref with different $id"),
    ("refRemote", "remote HTTP ref with different URN $id"),
    ("refRemote", "remote HTTP ref with nested absolute ref"),
    ("refRemote", "$ref to $ref finds detached $anchor"),
    ("unevaluatedItems", "unevaluatedItems with $dynamicRef"),
    ("unevaluatedProperties", "unevaluatedProperties with $dynamicRef"),
];

/// Groups whose verdicts the validator overrules on purpose: it reads every schema as
/// 2020-12 with all its vocabularies, whatever its `$schema` (a meta-schema would have to be
/// fetched to learn otherwise).
const OVERRULED: &[(&str, &str)] =
    &[("vocabulary", "schema that uses custom metaschema with with no validation vocabulary")];

/// A root schema as a tool schema: `true` and `false` become an object that means the same.
fn root(schema: &Value) -> Map<String, Value> {
    match schema {
        Value::Object(map) => map.clone(),
        other => json!({"allOf": [other]}).as_object().cloned().unwrap_or_default(),
    }
}

/// The suite's optional files we claim, all vendored. The others are not vendored, because
/// they test what this validator does not do, on purpose:
/// - `format/*` and `format-assertion`: `format` is an annotation here, never asserted (a
///   model's `"date"` is checked by the tool, which knows what it accepts);
/// - `anchor`, `id`, `dynamicRef`, `cross-draft`: `$anchor`, `$id` as a base URI,
///   `$dynamicRef` and references to other documents, which the validator refuses when the
///   schema is registered (as [`REFUSED`] lists for the required files): a tool's schema is
///   one self-contained document;
/// - `dependencies-compatibility`: `dependencies`, a keyword of drafts before 2019-09.
const OPTIONAL: &[&str] = &[
    "bignum",
    "ecmascript-regex",
    "float-overflow",
    "no-schema",
    "non-bmp-regex",
    "refOfUnknownKeyword",
    "unknownKeyword",
];

fn suite_files() -> Vec<PathBuf> {
    let dir = suite_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.extend(OPTIONAL.iter().map(|name| dir.join("optional").join(format!("{name}.json"))));
    files.sort();
    files
}

#[test]
fn official_test_suite() {
    let (mut checked, mut failures) = (0, Vec::new());
    let mut refused_seen = Vec::new();
    for path in suite_files() {
        let file = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
        let text = std::fs::read_to_string(&path).expect("read");
        let groups: Vec<Value> = serde_json::from_str(&text).expect("suite JSON");
        for group in groups {
            let description = group["description"].as_str().unwrap_or_default();
            if OVERRULED.contains(&(file.as_str(), description)) {
                continue;
            }
            let listed = REFUSED.contains(&(file.as_str(), description));
            match (Validator::compile(&root(&group["schema"])), listed) {
                (Err(_), true) => refused_seen.push((file.clone(), description.to_owned())),
                (Err(e), false) => failures.push(format!("{file}: {description}: {e}")),
                (Ok(_), true) => failures.push(format!("{file}: {description}: compiles")),
                (Ok(validator), false) => {
                    for test in group["tests"].as_array().expect("tests") {
                        let valid = validator.check(&test["data"]).is_ok();
                        checked += 1;
                        if Some(valid) != test["valid"].as_bool() {
                            failures.push(format!(
                                "{file}: {description}: {}: {} should be {}",
                                test["description"], test["data"], test["valid"]
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(refused_seen.len(), REFUSED.len(), "every refused group is in the suite");
    assert!(checked > 1000, "the suite ran ({checked} instances)");
}

/// What a tool's caller would read: `valid`, the violations, or why the schema is refused.
fn outcome(schema: Value, instance: Value) -> String {
    let Value::Object(schema) = schema else { panic!("a schema object") };
    match Validator::compile(&schema) {
        Ok(validator) => match validator.check(&instance) {
            Ok(()) => "valid".to_owned(),
            Err(violations) => violations,
        },
        Err(refusal) => format!("refused: {refusal}"),
    }
}

#[track_caller]
fn check(schema: Value, instance: Value, expected: Expect) {
    expected.assert_eq(&outcome(schema, instance));
}

#[test]
fn type_names_one_or_several_types() {
    let integer = json!({"type": "integer"});
    check(integer.clone(), json!(3), expect!["valid"]);
    check(integer.clone(), json!(3.0), expect!["valid"]);
    check(integer.clone(), json!(3.5), expect![[r#"3.5 is not of type "integer""#]]);
    check(integer, json!("3"), expect![[r#""3" is not of type "integer""#]]);
    let several = json!({"type": ["string", "null"]});
    check(several.clone(), json!(null), expect!["valid"]);
    check(several, json!(1), expect![[r#"1 is not of types "string", "null""#]]);
    check(json!({"type": "number"}), json!(1e300), expect!["valid"]);
    check(json!({"type": "object"}), json!([]), expect![[r#"[] is not of type "object""#]]);
    check(json!({"type": "array"}), json!({}), expect![[r#"{} is not of type "array""#]]);
    check(json!({"type": "boolean"}), json!(0), expect![[r#"0 is not of type "boolean""#]]);
}

#[test]
fn const_and_enum_compare_by_value() {
    check(json!({"const": {"a": [1]}}), json!({"a": [1.0]}), expect!["valid"]);
    check(json!({"const": "x"}), json!("y"), expect![[r#""x" was expected"#]]);
    check(json!({"enum": [1, "a", null]}), json!(1.0), expect!["valid"]);
    check(json!({"enum": ["a"]}), json!("b"), expect![[r#""b" is not one of "a""#]]);
    check(json!({"enum": ["a", "b"]}), json!("c"), expect![[r#""c" is not one of "a" or "b""#]]);
    check(json!({"enum": [1, 2, 3]}), json!(4), expect!["4 is not one of 1, 2 or 3"]);
    check(
        json!({"enum": [1, 2, 3, 4, 5]}),
        json!(6),
        expect!["6 is not one of 1, 2 or 3 other candidates"],
    );
}

#[test]
fn numeric_bounds_are_exact() {
    let range = json!({"minimum": 1, "maximum": 50});
    check(range.clone(), json!(1), expect!["valid"]);
    check(range.clone(), json!(50.0), expect!["valid"]);
    check(range.clone(), json!(0.5), expect!["0.5 is less than the minimum of 1"]);
    check(range.clone(), json!(999), expect!["999 is greater than the maximum of 50"]);
    check(range, json!("999"), expect!["valid"]);
    let exclusive = json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1.5});
    check(exclusive.clone(), json!(1), expect!["valid"]);
    check(exclusive.clone(), json!(0), expect!["0 is less than or equal to the minimum of 0"]);
    check(exclusive, json!(1.5), expect!["1.5 is greater than or equal to the maximum of 1.5"]);
    // Beyond f64's 2^53: a cast to f64 would call these equal.
    let big = json!({"maximum": 9007199254740992_u64});
    check(big.clone(), json!(9007199254740992_u64), expect!["valid"]);
    check(
        big,
        json!(9007199254740993_u64),
        expect!["9007199254740993 is greater than the maximum of 9007199254740992"],
    );
}

#[test]
fn multiple_of_is_decimal() {
    check(json!({"multipleOf": 0.1}), json!(0.3), expect!["valid"]);
    check(json!({"multipleOf": 2}), json!(7), expect!["7 is not a multiple of 2"]);
    check(json!({"multipleOf": 0.01}), json!(1.005), expect!["1.005 is not a multiple of 0.01"]);
    check(json!({"multipleOf": 1e-300}), json!(1e300), expect!["valid"]);
}

#[test]
fn string_lengths_count_code_points() {
    let length = json!({"minLength": 2, "maxLength": 3});
    check(length.clone(), json!("été"), expect!["valid"]);
    check(length.clone(), json!("😀😀"), expect!["valid"]);
    check(length.clone(), json!("a"), expect![[r#""a" is shorter than 2 characters"#]]);
    check(length.clone(), json!("abcd"), expect![[r#""abcd" is longer than 3 characters"#]]);
    check(length, json!(12345), expect!["valid"]);
    check(json!({"minLength": 1}), json!(""), expect![[r#""" is shorter than 1 character"#]]);
}

#[test]
fn pattern_searches_the_string() {
    let code = json!({"pattern": "^[A-Z]{3}-\\d+$"});
    check(code.clone(), json!("ABC-12"), expect!["valid"]);
    check(code.clone(), json!("abc-12"), expect![[r#""abc-12" does not match "^[A-Z]{3}-\d+$""#]]);
    check(code, json!(12), expect!["valid"]);
    check(json!({"pattern": "b"}), json!("abc"), expect!["valid"]);
}

#[test]
fn array_keywords() {
    let sized = json!({"minItems": 1, "maxItems": 2});
    check(sized.clone(), json!([1]), expect!["valid"]);
    check(sized.clone(), json!([]), expect!["[] has less than 1 item"]);
    check(sized, json!([1, 2, 3]), expect!["[1,2,3] has more than 2 items"]);
    let unique = json!({"uniqueItems": true});
    check(unique.clone(), json!([1, "1", [1]]), expect!["valid"]);
    check(
        unique.clone(),
        json!([{"a": 1, "b": 2}, {"b": 2, "a": 1.0}]),
        expect![[r#"[{"a":1,"b":2},{"b":2,"a":1.0}] has non-unique elements"#]],
    );
    check(json!({"uniqueItems": false}), json!([1, 1]), expect!["valid"]);
    let items = json!({"items": {"type": "integer"}});
    check(items.clone(), json!([1, 2]), expect!["valid"]);
    check(
        items,
        json!([1, "x", 3, "y"]),
        expect![[
            r#"argument '1': "x" is not of type "integer"; argument '3': "y" is not of type "integer""#
        ]],
    );
    let tuple = json!({"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false});
    check(tuple.clone(), json!(["a", 1]), expect!["valid"]);
    check(tuple.clone(), json!(["a"]), expect!["valid"]);
    check(tuple.clone(), json!([1, 1]), expect![[r#"argument '0': 1 is not of type "string""#]]);
    check(tuple, json!(["a", 1, true]), expect!["argument '2': False schema does not allow true"]);
}

#[test]
fn contains_counts_matches() {
    let contains = json!({"contains": {"type": "integer"}});
    check(contains.clone(), json!(["a", 1]), expect!["valid"]);
    check(
        contains.clone(),
        json!(["a"]),
        expect![[r#"None of ["a"] are valid under the given schema"#]],
    );
    check(contains, json!([]), expect!["None of [] are valid under the given schema"]);
    let bounded = json!({"contains": {"const": 1}, "minContains": 2, "maxContains": 3});
    check(bounded.clone(), json!([1, 1, 2]), expect!["valid"]);
    check(
        bounded.clone(),
        json!([1, 2]),
        expect!["[1,2] has fewer than 2 items valid under the 'contains' schema"],
    );
    check(
        bounded,
        json!([1, 1, 1, 1]),
        expect!["[1,1,1,1] has more than 3 items valid under the 'contains' schema"],
    );
    check(json!({"contains": false, "minContains": 0}), json!([1]), expect!["valid"]);
}

#[test]
fn object_keywords() {
    let sized = json!({"minProperties": 1, "maxProperties": 2});
    check(sized.clone(), json!({"a": 1}), expect!["valid"]);
    check(sized.clone(), json!({}), expect!["{} has less than 1 property"]);
    check(
        sized,
        json!({"a": 1, "b": 2, "c": 3}),
        expect![[r#"{"a":1,"b":2,"c":3} has more than 2 properties"#]],
    );
    let required = json!({"required": ["query", "limit"]});
    check(required.clone(), json!({"query": "x", "limit": 1}), expect!["valid"]);
    check(
        required,
        json!({}),
        expect![[r#""query" is a required property; "limit" is a required property"#]],
    );
    let dependent = json!({"dependentRequired": {"card": ["billing"]}});
    check(dependent.clone(), json!({"name": "x"}), expect!["valid"]);
    check(dependent, json!({"card": 1}), expect![[r#""billing" is a required property"#]]);
}

#[test]
fn properties_and_their_kin() {
    let schema = json!({
        "properties": {"a": {"type": "string"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": false
    });
    check(schema.clone(), json!({"a": "s", "x-b": 1}), expect!["valid"]);
    check(
        schema.clone(),
        json!({"a": 1, "x-b": "s"}),
        expect![[
            r#"argument 'a': 1 is not of type "string"; argument 'x-b': "s" is not of type "integer""#
        ]],
    );
    check(
        schema,
        json!({"b": 1, "c": 2}),
        expect![["Additional properties are not allowed ('b', 'c' were unexpected)"]],
    );
    let typed_rest =
        json!({"properties": {"a": true}, "additionalProperties": {"type": "boolean"}});
    check(typed_rest.clone(), json!({"a": 1, "b": true}), expect!["valid"]);
    check(typed_rest, json!({"b": 1}), expect![[r#"argument 'b': 1 is not of type "boolean""#]]);
    let names = json!({"propertyNames": {"maxLength": 3}});
    check(names.clone(), json!({"abc": 1}), expect!["valid"]);
    check(names, json!({"abcd": 1}), expect![[r#""abcd" is longer than 3 characters"#]]);
    let nested_names = json!({"properties": {"o": {"propertyNames": {"pattern": "^[a-z]+$"}}}});
    check(
        nested_names,
        json!({"o": {"A": 1}}),
        expect![[r#"argument 'o': "A" does not match "^[a-z]+$""#]],
    );
    let dependent = json!({"dependentSchemas": {"card": {"required": ["billing"]}}});
    check(dependent.clone(), json!({"card": 1, "billing": 2}), expect!["valid"]);
    check(dependent, json!({"card": 1}), expect![[r#""billing" is a required property"#]]);
}

#[test]
fn many_properties_are_looked_up_like_few() {
    // Past eight names, members and names are hashed instead of scanned.
    let names: Vec<String> = (0..12).map(|i| format!("p{i}")).collect();
    let properties: Map<String, Value> =
        names.iter().map(|name| (name.clone(), json!({"type": "integer"}))).collect();
    let schema =
        json!({"properties": properties, "required": names, "additionalProperties": false});
    let mut value: Map<String, Value> = names.iter().map(|name| (name.clone(), json!(1))).collect();
    check(schema.clone(), Value::Object(value.clone()), expect!["valid"]);
    value.insert("p3".into(), json!("x"));
    value.insert("extra".into(), json!(1));
    value.remove("p11");
    check(
        schema,
        Value::Object(value),
        expect![[
            r#"argument 'p3': "x" is not of type "integer"; "p11" is a required property; Additional properties are not allowed ('extra' was unexpected)"#
        ]],
    );
}

#[test]
fn combinators() {
    let any = json!({"anyOf": [{"type": "string"}, {"minimum": 10}]});
    check(any.clone(), json!(12), expect!["valid"]);
    check(
        any,
        json!(5),
        expect![["5 is not valid under any of the schemas listed in the 'anyOf' keyword"]],
    );
    let one = json!({"oneOf": [{"type": "integer"}, {"minimum": 10}]});
    check(one.clone(), json!(5), expect!["valid"]);
    check(
        one.clone(),
        json!(12),
        expect![["12 is valid under more than one of the schemas listed in the 'oneOf' keyword"]],
    );
    check(
        one,
        json!(5.5),
        expect![["5.5 is not valid under any of the schemas listed in the 'oneOf' keyword"]],
    );
    let all = json!({"allOf": [{"type": "integer"}, {"minimum": 10}]});
    check(all.clone(), json!(10), expect!["valid"]);
    check(
        all,
        json!(5.5),
        expect![[r#"5.5 is not of type "integer"; 5.5 is less than the minimum of 10"#]],
    );
    check(json!({"not": {"type": "string"}}), json!(1), expect!["valid"]);
    check(
        json!({"not": {"type": "string"}}),
        json!("s"),
        expect![[r#"{"type":"string"} is not allowed for "s""#]],
    );
}

#[test]
fn conditionals() {
    let schema = json!({
        "if": {"properties": {"kind": {"const": "card"}}},
        "then": {"required": ["number"]},
        "else": {"required": ["iban"]}
    });
    check(schema.clone(), json!({"kind": "card", "number": "1"}), expect!["valid"]);
    check(schema.clone(), json!({"kind": "card"}), expect![[r#""number" is a required property"#]]);
    check(schema.clone(), json!({"kind": "bank", "iban": "x"}), expect!["valid"]);
    check(schema, json!({"kind": "bank"}), expect![[r#""iban" is a required property"#]]);
    check(json!({"then": false}), json!(1), expect!["valid"]);
    check(json!({"if": false, "then": false}), json!(1), expect!["valid"]);
}

#[test]
fn references_within_the_schema() {
    let schema = json!({
        "type": "object",
        "properties": {"tag": {"$ref": "#/$defs/Tag"}, "tree": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Tag": {"type": "string", "maxLength": 3},
            "Node": {"type": "object", "properties": {"children": {
                "type": "array", "items": {"$ref": "#/$defs/Node"}
            }}}
        }
    });
    check(
        schema.clone(),
        json!({"tag": "abc", "tree": {"children": [{"children": []}]}}),
        expect!["valid"],
    );
    check(
        schema,
        json!({"tag": "abcd", "tree": {"children": [{"children": [1]}]}}),
        expect![[
            r#"argument 'tag': "abcd" is longer than 3 characters; argument 'tree.children.0.children.0': 1 is not of type "object""#
        ]],
    );
    // schemars' older spelling, `definitions`, is just a place a pointer can reach.
    let definitions = json!({"$ref": "#/definitions/A", "definitions": {"A": {"type": "object"}}});
    check(definitions, json!([]), expect![[r#"[] is not of type "object""#]]);
    let escaped = json!({"$ref": "#/$defs/a~1b%20c", "$defs": {"a/b c": {"type": "string"}}});
    check(escaped, json!(1), expect![[r#"1 is not of type "string""#]]);
    let root = json!({"properties": {"again": {"$ref": "#"}}, "required": ["x"]});
    check(
        root,
        json!({"x": 1, "again": {}}),
        expect![[r#"argument 'again': "x" is a required property"#]],
    );
}

#[test]
fn unevaluated_properties_see_through_applicators() {
    // What schemars emits for a flattened enum in a `deny_unknown_fields` struct.
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "oneOf": [
            {"properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}, "required": ["kind"]},
            {"properties": {"kind": {"const": "b"}, "y": {"type": "integer"}}, "required": ["kind"]}
        ],
        "unevaluatedProperties": false
    });
    check(schema.clone(), json!({"name": "n", "kind": "a", "x": 1}), expect!["valid"]);
    check(
        schema,
        json!({"name": "n", "kind": "a", "y": 1}),
        expect![["Unevaluated properties are not allowed ('y' was unexpected)"]],
    );
    let items =
        json!({"prefixItems": [true], "contains": {"type": "string"}, "unevaluatedItems": false});
    check(items.clone(), json!([1, "a", "b"]), expect!["valid"]);
    check(
        items,
        json!([1, "a", 2]),
        expect!["Unevaluated items are not allowed ('2' was unexpected)"],
    );
}

#[test]
fn boolean_subschemas_and_unknown_keywords() {
    check(
        json!({"properties": {"a": false}}),
        json!({"a": 1}),
        expect!["argument 'a': False schema does not allow 1"],
    );
    check(json!({"properties": {"a": true}}), json!({"a": 1}), expect!["valid"]);
    let ignored = json!({
        "x-vendor": {"type": "integer"}, "format": "email", "contentMediaType": "image/png",
        "title": "t", "description": "d", "default": 1, "examples": [1], "deprecated": true,
        "$comment": "c", "$anchor": "top", "$schema": "http://json-schema.org/draft-07/schema#"
    });
    check(ignored, json!("not an email"), expect!["valid"]);
    // schemars marks Rust integer widths with `format`; the bounds it also emits are checked.
    check(
        json!({"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}),
        json!(256),
        expect!["256 is greater than the maximum of 255"],
    );
}

#[test]
fn paths_name_nested_arguments() {
    let schema =
        json!({"properties": {"a/b": {"properties": {"c~d": {"items": {"type": "string"}}}}}});
    check(
        schema,
        json!({"a/b": {"c~d": ["s", 1]}}),
        expect![[r#"argument 'a~1b.c~0d.1': 1 is not of type "string""#]],
    );
}

#[test]
fn at_most_ten_violations_are_described() {
    let schema = json!({"items": {"type": "integer"}});
    let message = outcome(schema, json!(vec!["x"; 25]));
    assert_eq!(message.matches("is not of type").count(), 10, "{message}");
    assert!(message.ends_with("; and 15 more"), "{message}");
    let exactly = outcome(json!({"items": {"type": "integer"}}), json!(vec!["x"; 10]));
    assert!(!exactly.contains("more"), "{exactly}");
}

#[test]
fn malformed_schemas_are_refused_with_the_keyword_and_its_place() {
    let cases = [
        (
            json!({"type": "text"}),
            expect![[
                r#"refused: "type" at # must be a type name or an array of distinct type names"#
            ]],
        ),
        (
            json!({"properties": {"a": {"minimum": "1"}}}),
            expect![[r#"refused: "minimum" at #/properties/a must be a number"#]],
        ),
        (
            json!({"minLength": -1}),
            expect![[r#"refused: "minLength" at # must be a non-negative integer"#]],
        ),
        (
            json!({"multipleOf": 0}),
            expect![[r#"refused: "multipleOf" at # must be a number greater than 0"#]],
        ),
        (
            json!({"required": ["a", "a"]}),
            expect![[r#"refused: "required" at # must be an array of distinct strings"#]],
        ),
        (
            json!({"anyOf": []}),
            expect![[r#"refused: "anyOf" at # must be a non-empty array of schemas"#]],
        ),
        (
            json!({"items": [{"type": "string"}]}),
            expect![[
                r#"refused: "items" at # must be a schema (the array form of drafts before 2020-12 is "prefixItems" now)"#
            ]],
        ),
        (
            json!({"not": 3}),
            expect!["refused: the subschema at #/not is not an object or a boolean"],
        ),
        (json!({"pattern": "("}), expect![[r#"refused: "(" is not a "regex""#]]),
        (
            json!({"uniqueItems": "yes"}),
            expect![[r#"refused: "uniqueItems" at # must be a boolean"#]],
        ),
        (
            json!({"$defs": {"unused": {"type": 1}}}),
            expect![[
                r#"refused: "type" at #/$defs/unused must be a type name or an array of distinct type names"#
            ]],
        ),
    ];
    for (schema, expected) in cases {
        check(schema, json!(null), expected);
    }
}

#[test]
fn nothing_is_fetched_or_resolved_elsewhere() {
    let cases = [
        (
            json!({"$ref": "https://example.com/a.json"}),
            expect![[
                r#"refused: "$ref" at # refers to "https://example.com/a.json", another document (external documents are never fetched: put every definition the schema refers to under its own "$defs")"#
            ]],
        ),
        (
            json!({"$id": "https://example.com/root.json", "items": {"$ref": "other.json#/a"}}),
            expect![[
                r#"refused: "$ref" at #/items refers to "other.json#/a", another document (external documents are never fetched: put every definition the schema refers to under its own "$defs")"#
            ]],
        ),
        (
            json!({"$ref": "#/$defs/missing"}),
            expect!["refused: Pointer '/$defs/missing' does not exist"],
        ),
        (
            json!({"$ref": "#anchor"}),
            expect![[
                r##"refused: "$ref" at # refers to the anchor "#anchor": anchors are not supported, use a JSON pointer such as "#/$defs/name""##
            ]],
        ),
        (
            json!({"$dynamicRef": "#/$defs/a", "$defs": {"a": true}}),
            expect![[
                r#"refused: "$dynamicRef" at # is not supported: use "$ref" to a definition under "$defs""#
            ]],
        ),
    ];
    for (schema, expected) in cases {
        check(schema, json!(null), expected);
    }
    // A remote `$schema` or `$id` is a name, never a place to go.
    check(
        json!({"$schema": "http://127.0.0.1:9/meta", "$id": "http://127.0.0.1:9/s"}),
        json!(1),
        expect!["valid"],
    );
    // `#` inside a subschema with its own `$id` is that subschema.
    let nested = json!({"properties": {"a": {"$id": "http://x/a", "properties": {"self": {"$ref": "#"}}, "type": "object"}}});
    check(
        nested,
        json!({"a": {"self": 1}}),
        expect![[r#"argument 'a.self': 1 is not of type "object""#]],
    );
}

#[test]
fn cycles_and_long_chains_of_subschemas_are_refused() {
    check(
        json!({"$ref": "#"}),
        json!(1),
        expect![[
            r#"refused: the subschema at # applies to the value it checks through a cycle of "$ref" (or allOf, anyOf, oneOf, not, if, dependentSchemas) that never reaches a nested value, so a check would never end"#
        ]],
    );
    let mutual = json!({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}]}, "b": {"not": {"$ref": "#/$defs/a"}}}});
    assert!(outcome(mutual, json!(1)).contains("through a cycle"));
    // 200 definitions, each referring to the next: each is shallow, the chain is not.
    let mut defs = Map::new();
    for i in 0..200 {
        defs.insert(format!("d{i}"), json!({"$ref": format!("#/$defs/d{}", i + 1)}));
    }
    defs.insert("d200".into(), json!({"type": "string"}));
    let chain = json!({"$ref": "#/$defs/d0", "$defs": defs});
    expect![[
        r#"refused: it applies more than 64 subschemas in a row to one value through "$ref", allOf, anyOf, oneOf, not, if or dependentSchemas, starting at #/$defs/d136 (McpServer::max_schema_depth)"#
    ]]
    .assert_eq(&outcome(chain, json!(1)));
    // A recursive schema is no cycle: each step goes one level into the value.
    check(
        json!({"properties": {"next": {"$ref": "#"}}}),
        json!({"next": {"next": {}}}),
        expect!["valid"],
    );
}

#[test]
fn limits_are_checked_before_compiling() {
    let limits = SchemaLimits { max_depth: 3, max_bytes: 1000 };
    let deep = json!({"properties": {"a": {"items": {}}}});
    let Value::Object(deep) = deep else { unreachable!() };
    assert!(Validator::compile_with(&deep, limits).is_err());
    let shallow = json!({"properties": {"a": {}}});
    let Value::Object(shallow) = shallow else { unreachable!() };
    assert!(Validator::compile_with(&shallow, limits).is_ok());
}

#[test]
fn values_deeper_than_the_evaluator_follows_fail_instead_of_overflowing() {
    let recursive = json!({"items": {"$ref": "#"}});
    let Value::Object(recursive) = recursive else { unreachable!() };
    let validator = Validator::compile(&recursive).expect("compiles");
    let mut value = json!([]);
    // 600 levels, 1200 subschemas deep: past the bound, and not so deep that serde_json's
    // recursive drop of the value overflows the test's own thread.
    for _ in 0..600 {
        value = json!([value]);
    }
    // On a thread with a tokio worker's stack (2 MiB), which the bound fits in, even in a
    // debug build.
    let message = std::thread::scope(|scope| {
        let check = || validator.check(&value);
        let thread = std::thread::Builder::new().stack_size(2 << 20).spawn_scoped(scope, check);
        thread.expect("spawn").join().expect("no overflow")
    });
    let message = message.expect_err("too deep");
    assert!(message.contains("the value nests too deeply to check"), "{message}");
}

#[test]
fn hostile_inputs_take_linear_time() {
    let started = std::time::Instant::now();
    let pattern = json!({"pattern": "^(a+)+$"});
    let long = "a".repeat(100_000) + "!";
    assert!(outcome(pattern, json!(long)).contains("does not match"));
    let unique = json!({"uniqueItems": true});
    let distinct: Vec<Value> = (0..20_000).map(|i| json!({"n": i})).collect();
    assert_eq!(outcome(unique, Value::Array(distinct)), "valid");
    let names: Map<String, Value> = (0..20_000).map(|i| (format!("p{i}"), json!(i))).collect();
    let unevaluated = json!({"patternProperties": {"^p": true}, "unevaluatedProperties": false});
    assert_eq!(outcome(unevaluated, Value::Object(names)), "valid");
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
}

/// The `jsonschema` crate, which validated tool arguments before, as an oracle: every schema
/// of the suite that both compile, against every instance of its file (not only its own
/// group's), must get the same verdict. `multipleOf` is left out: we divide the decimals as
/// written (`0.3` is a multiple of `0.1`), it divides the binary floats they round to.
#[test]
fn agrees_with_the_jsonschema_crate_across_each_suite_file() {
    let (mut compared, mut disagreements) = (0, Vec::new());
    for path in suite_files() {
        let file = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("JSON");
        let instances: Vec<&Value> = groups
            .iter()
            .flat_map(|group| group["tests"].as_array().into_iter().flatten())
            .map(|test| &test["data"])
            .collect();
        for group in &groups {
            let schema = root(&group["schema"]);
            if file == "vocabulary" || group["schema"].to_string().contains("multipleOf") {
                continue;
            }
            let Ok(ours) = Validator::compile(&schema) else { continue };
            let Ok(theirs) = reference_validator(&schema) else { continue };
            for instance in &instances {
                compared += 1;
                let (our_verdict, their_verdict) =
                    (ours.check(instance).is_ok(), theirs.is_valid(instance));
                if our_verdict != their_verdict {
                    disagreements.push(format!(
                        "{file}: {}: {instance}: ours {our_verdict}, jsonschema {their_verdict}",
                        group["description"]
                    ));
                }
            }
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    assert!(compared > 10_000, "{compared} comparisons");
}

/// The reference validator, configured as this module's validator used to configure it.
fn reference_validator(schema: &Map<String, Value>) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .offline()
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(&Value::Object(schema.clone()))
        .map_err(|e| e.to_string())
}

/// Random schemas over the keywords this validator implements, and random values, from a
/// fixed seed: both validators must agree on every pair they both compile.
#[test]
fn agrees_with_the_jsonschema_crate_on_random_schemas_and_values() {
    let mut random = Random(0x5eed_cafe_f00d_1234);
    let (mut compared, mut disagreements) = (0, Vec::new());
    for _ in 0..3000 {
        let Value::Object(schema) = random_schema(&mut random, 3) else { continue };
        let (Ok(ours), Ok(theirs)) = (Validator::compile(&schema), reference_validator(&schema))
        else {
            continue;
        };
        for _ in 0..20 {
            let value = random_value(&mut random, 3);
            compared += 1;
            let (our_verdict, their_verdict) =
                (ours.check(&value).is_ok(), theirs.is_valid(&value));
            if our_verdict != their_verdict {
                disagreements.push(format!(
                    "{}\n  {value}: ours {our_verdict}, jsonschema {their_verdict}",
                    Value::Object(schema.clone())
                ));
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "{}",
        disagreements[..disagreements.len().min(20)].join("\n")
    );
    assert!(compared > 20_000, "{compared} comparisons");
}

/// xorshift64*: enough randomness for test data, and the same data on every run.
struct Random(u64);

impl Random {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const NAMES: [&str; 4] = ["a", "b", "xa", "é"];

fn random_value(random: &mut Random, depth: usize) -> Value {
    let leaf = depth == 0;
    match random.below(if leaf { 6 } else { 8 }) {
        0 => Value::Null,
        1 => Value::Bool(random.below(2) == 1),
        2 => json!(random.below(7) as i64 - 3),
        3 => json!(*random.pick(&[0.5, -1.5, 2.0, 1e300, 3.25, 0.1])),
        4 | 5 => json!(*random.pick(&["", "a", "ab", "abc", "été", "x-1", "12", " "])),
        6 => Value::Array((0..random.below(4)).map(|_| random_value(random, depth - 1)).collect()),
        _ => Value::Object(
            (0..random.below(4))
                .map(|_| (random.pick(&NAMES).to_string(), random_value(random, depth - 1)))
                .collect(),
        ),
    }
}

fn random_schema(random: &mut Random, depth: usize) -> Value {
    if depth == 0 || random.below(8) == 0 {
        return match random.below(3) {
            0 => json!(true),
            1 => json!(false),
            _ => {
                json!({"type": *random.pick(&["string", "integer", "number", "object", "array", "null", "boolean"])})
            }
        };
    }
    let mut schema = Map::new();
    for _ in 0..1 + random.below(3) {
        let (key, value) = random_keyword(random, depth);
        schema.insert(key.to_owned(), value);
    }
    Value::Object(schema)
}

fn random_keyword(random: &mut Random, depth: usize) -> (&'static str, Value) {
    let sub = |random: &mut Random| random_schema(random, depth - 1);
    let count = |random: &mut Random| json!(random.below(4));
    let number = |random: &mut Random| json!(*random.pick(&[0, 1, 2, -1]) as f64 / 2.0 + 1.0);
    match random.below(30) {
        0 => ("type", json!(["string", "integer", "null", "array", "object"][random.below(5)])),
        1 => ("type", json!(["number", "boolean"])),
        2 => ("const", random_value(random, 1)),
        3 => ("enum", json!([random_value(random, 1), random_value(random, 1), 1])),
        4 => (*random.pick(&["minimum", "maximum"]), number(random)),
        5 => (*random.pick(&["exclusiveMinimum", "exclusiveMaximum"]), number(random)),
        6 => (*random.pick(&["minLength", "maxLength"]), count(random)),
        7 => (
            "pattern",
            json!(*random.pick(&["^a", "b$", "\\d", "^[a-z]+$", "é", ".", "\\s", "^$"])),
        ),
        8 => (
            *random.pick(&["minItems", "maxItems", "minProperties", "maxProperties"]),
            count(random),
        ),
        9 => ("uniqueItems", json!(true)),
        10 => ("prefixItems", json!([sub(random), sub(random)])),
        11 => ("items", sub(random)),
        12 => ("contains", sub(random)),
        13 => (*random.pick(&["minContains", "maxContains"]), count(random)),
        14 => ("required", json!([random.pick(&NAMES)])),
        15 => ("dependentRequired", json!({*random.pick(&NAMES): [random.pick(&NAMES)]})),
        16 => (
            "properties",
            json!({*random.pick(&NAMES): sub(random), *random.pick(&NAMES): sub(random)}),
        ),
        17 => ("patternProperties", json!({*random.pick(&["^x", "a", "é"]): sub(random)})),
        18 => ("additionalProperties", sub(random)),
        19 => ("propertyNames", sub(random)),
        20 => ("dependentSchemas", json!({*random.pick(&NAMES): sub(random)})),
        21 => ("unevaluatedProperties", sub(random)),
        22 => ("unevaluatedItems", sub(random)),
        23 => ("allOf", json!([sub(random), sub(random)])),
        24 => ("anyOf", json!([sub(random), sub(random)])),
        25 => ("oneOf", json!([sub(random), sub(random)])),
        26 => ("not", sub(random)),
        27 => ("if", sub(random)),
        28 => (*random.pick(&["then", "else"]), sub(random)),
        _ => ("$ref", json!("#")),
    }
}
