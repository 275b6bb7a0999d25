use expect_test::{Expect, expect};
use serde_json::Value as Json;

use super::{UriTemplate, Value};

/// The RFC 6570 suite (uri-templates/uritemplate-test), vendored in `testdata/`.
const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/uritemplate-test/");

fn testdata(name: &str) -> Json {
    let path = format!("{TESTDATA}{name}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{path}: {err}"));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{path}: {err}"))
}

/// The suite's variables: numbers become strings, `null` is undefined.
fn to_value(json: &Json) -> Option<Value> {
    let scalar = |json: &Json| match json {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    };
    match json {
        Json::Null => None,
        Json::Array(items) => Some(Value::List(items.iter().map(scalar).collect())),
        Json::Object(map) => {
            Some(Value::Map(map.iter().map(|(k, v)| (k.clone(), scalar(v))).collect()))
        }
        other => Some(Value::String(scalar(other))),
    }
}

/// Runs every case of one suite file; returns (passed, total, failures).
fn run_suite(name: &str) -> (usize, usize, Vec<String>) {
    let (mut passed, mut total, mut failures) = (0, 0, Vec::new());
    let suite = testdata(name);
    for (group, body) in suite.as_object().into_iter().flatten() {
        let vars = &body["variables"];
        for case in body["testcases"].as_array().into_iter().flatten() {
            total += 1;
            match run_case(vars, &case[0], &case[1]) {
                Ok(()) => passed += 1,
                Err(why) => failures.push(format!("{group}: {case}: {why}")),
            }
        }
    }
    (passed, total, failures)
}

/// `expected` is a string, a list of acceptable strings, or `false` (must fail).
fn run_case(vars: &Json, template: &Json, expected: &Json) -> Result<(), String> {
    let template = template.as_str().ok_or("template is not a string")?;
    let lookup = |name: &str| to_value(&vars[name]);
    let result = UriTemplate::parse(template).and_then(|t| t.try_expand(&lookup));
    let ok = match (&result, expected) {
        (Err(_), Json::Bool(false)) => true,
        (Ok(got), Json::String(want)) => got == want,
        (Ok(got), Json::Array(wants)) => wants.iter().any(|want| want == got),
        _ => false,
    };
    if ok { Ok(()) } else { Err(format!("got {result:?}")) }
}

#[track_caller]
fn check_suite(name: &str, expect: Expect) {
    let (passed, total, failures) = run_suite(name);
    eprintln!("{name}: {passed}/{total} passed");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    expect.assert_eq(&format!("{passed}/{total}"));
}

#[test]
fn spec_examples() {
    check_suite("spec-examples.json", expect!["64/64"]);
}

#[test]
fn spec_examples_by_section() {
    check_suite("spec-examples-by-section.json", expect!["117/117"]);
}

#[test]
fn extended_tests() {
    check_suite("extended-tests.json", expect!["53/53"]);
}

#[test]
fn negative_tests() {
    check_suite("negative-tests.json", expect!["36/36"]);
}

#[track_caller]
fn check_parse_error(template: &str, expect: Expect) {
    match UriTemplate::parse(template) {
        Ok(_) => panic!("{template:?} parsed"),
        Err(err) => expect.assert_eq(&err.to_string()),
    }
}

#[test]
fn parse_errors_say_what_and_where() {
    check_parse_error("{/id*", expect![["unclosed expression: `{` has no matching `}` at byte 0"]]);
    check_parse_error("/id*}", expect![["`}` without a matching `{` at byte 4"]]);
    check_parse_error(
        "a{b{c}}",
        expect![["`{` inside an expression (expressions do not nest) at byte 3"]],
    );
    check_parse_error("x{}", expect![["empty expression `{}` at byte 1"]]);
    check_parse_error(
        "{!hello}",
        expect![["operator `!` is reserved for future extensions (RFC 6570 §2.2) at byte 1"]],
    );
    check_parse_error(
        "{with space}",
        expect![["invalid character ` ` in variable name at byte 5"]],
    );
    check_parse_error("{a,}", expect![["empty variable name at byte 3"]]);
    check_parse_error(
        "{x..y}",
        expect![["a variable name cannot contain `..` or start with `.` at byte 3"]],
    );
    check_parse_error("{x.}", expect![["a variable name cannot end with `.` at byte 3"]]);
    check_parse_error(
        "{%2x}",
        expect![["`%` in a variable name must start a `%XX` escape at byte 1"]],
    );
    check_parse_error("{var:0}", expect![["prefix length must be 1 to 9999, not `0` at byte 5"]]);
    check_parse_error(
        "{var:10000}",
        expect![["prefix length must be 1 to 9999, not `10000` at byte 5"]],
    );
    check_parse_error(
        "{hello:2*}",
        expect![["a variable cannot have both a prefix and `*` (RFC 6570 §2.4) at byte 6"]],
    );
    check_parse_error(
        "a b{x}",
        expect![[r#"character ' ' is not allowed in a URI template; percent-encode it at byte 1"#]],
    );
    check_parse_error("100%{x}", expect![["`%` must start a `%XX` escape at byte 3"]]);
}

#[test]
fn expansion_errors_point_at_the_variable() {
    let template = UriTemplate::parse("x{?keys:1}").expect("valid template");
    let vars = |_: &str| Some(Value::Map(vec![("a".into(), "b".into())]));
    let err = template.try_expand(&vars).expect_err("prefix on a map");
    expect![["prefix `:1` applies only to strings, but `keys` is a list or map (RFC 6570 §2.4.1) at byte 3"]]
        .assert_eq(&err.to_string());
    // `expand` keeps going and leaves the broken expression as written (RFC 6570 §3).
    assert_eq!(template.expand(&vars), "x{?keys:1}");
}

#[test]
fn accessors() {
    let template = UriTemplate::parse("users/{id}/posts/{post}{?id,q}").expect("valid template");
    assert_eq!(template.as_str(), "users/{id}/posts/{post}{?id,q}");
    assert_eq!(template.variables().collect::<Vec<_>>(), ["id", "post", "q"]);
    assert!(template.is_template());
    assert!(!UriTemplate::parse("config://app").expect("valid template").is_template());
}

#[test]
fn check_variables_explains_mismatches() {
    let template = UriTemplate::parse("x://{a}/{b}").expect("valid template");
    assert_eq!(template.check_variables(&["b", "a"]), Ok(()));
    let err = template.check_variables(&["a", "c"]).expect_err("mismatch");
    expect![["template variables {a, b} do not match handler parameters {a, c} (not a parameter: {b}; not in the template: {c})"]]
        .assert_eq(&err.to_string());
}

/// Formats a match as `name=value` pairs, or `no match`.
#[track_caller]
fn check_match(template: &str, uri: &str, expect: Expect) {
    let template = UriTemplate::parse(template).expect("valid template");
    let actual = match template.matches(uri) {
        None => "no match".to_owned(),
        Some(found) => found
            .iter()
            .map(|(name, value)| format!("{name}={value:?}"))
            .collect::<Vec<_>>()
            .join(" "),
    };
    expect.assert_eq(&actual);
}

#[test]
fn match_simple() {
    check_match("books://{title}", "books://Dune", expect![[r#"title="Dune""#]]);
    check_match("books://{title}", "books://Dune%20Messiah", expect![[r#"title="Dune Messiah""#]]);
    check_match("books://{title}", "books://a/b", expect!["no match"]);
    check_match("books://{title}", "books://", expect!["no match"]);
    check_match("books://{title}", "movies://Dune", expect!["no match"]);
    check_match("books://{title}", "books://Dune?x=1", expect!["no match"]);
    check_match("books://{title}", "books://caf%C3%A9", expect![[r#"title="café""#]]);
    check_match("books://{title}", "books://%C3%28", expect!["no match"]);
    check_match("books://{title}", "books://100%", expect!["no match"]);
    // A sign is not a hex digit: `%+1` is no escape of 0x01.
    check_match("books://{title}", "books://a%+1", expect!["no match"]);
    check_match("books://{title}", "books://v1.0..v2.0", expect![[r#"title="v1.0..v2.0""#]]);
    // The first `.txt` ends the value: no backtracking.
    check_match("files://{name}.txt", "files://a.b.txt", expect![[r#"name="a.b""#]]);
    check_match("files://{name}.txt", "files://a.txt.txt", expect!["no match"]);
    check_match("files://{name}.txt", "files://notes.txt", expect![[r#"name="notes""#]]);
}

#[test]
fn match_rejects_unsafe_paths() {
    check_match("books://{title}", "books://..%2Fetc", expect!["no match"]);
    check_match("books://{title}", "books://a%2Fb", expect!["no match"]);
    check_match("books://{title}", "books://..", expect!["no match"]);
    check_match("books://{title}", "books://..%5Cetc", expect!["no match"]);
    check_match("books://{title}", "books://C:%5Cwin", expect!["no match"]);
    check_match("books://{title}", "books://a%00b", expect!["no match"]);
    check_match("file:///{+path}", "file:///a/b/c.txt", expect![[r#"path="a/b/c.txt""#]]);
    check_match("file:///{+path}", "file:///a/../etc", expect!["no match"]);
    check_match("file:///{+path}", "file:///a/%2E%2E/etc", expect!["no match"]);
    check_match("file:///{+path}", "file:////etc/passwd", expect!["no match"]);
    check_match("file:///{+path}", "file:///C:/Windows", expect!["no match"]);
    check_match("file:///{+path}", "file:///a%00.txt", expect!["no match"]);
    check_match("file:///{+path}", "file:///a/..b/c", expect![[r#"path="a/..b/c""#]]);
    check_match("q://x{?path}", "q://x?path=../etc", expect!["no match"]);
    // The opt-out hands back exactly what was sent.
    let template = UriTemplate::parse("books://{title}").expect("valid template");
    assert_eq!(
        template.matches_unchecked("books://..%2Fetc"),
        Some(vec![("title".into(), "../etc".into())])
    );
}

#[test]
fn match_query() {
    check_match("search://{?q,limit}", "search://?limit=5&q=x", expect![[r#"q="x" limit="5""#]]);
    check_match("search://{?q,limit}", "search://?q=dune", expect![[r#"q="dune""#]]);
    check_match("search://{?q,limit}", "search://", expect![""]);
    check_match("search://{?q,limit}", "search://?page=2&q=a%26b", expect![[r#"q="a&b""#]]);
    check_match("search://{?q}", "search://?q=", expect![[r#"q="""#]]);
    check_match("search://{?tag*}", "search://?tag=a&tag=b", expect![[r#"tag="a,b""#]]);
    check_match("s://{?a}{&b}", "s://?b=2&a=1", expect![[r#"a="1" b="2""#]]);
    check_match("s://x?fixed=1{&b}", "s://x?fixed=1&b=2", expect![[r#"b="2""#]]);
    check_match("s://{?q}#top", "s://?q=x#top", expect![[r#"q="x""#]]);
    check_match("s://m{;a,b}", "s://m;b=2;a", expect![[r#"a="" b="2""#]]);
}

#[test]
fn match_multiple_variables() {
    check_match("users/{id}/posts/{post}", "users/42/posts/7", expect![[r#"id="42" post="7""#]]);
    check_match("users/{id}/posts/{post}", "users/42/posts/", expect!["no match"]);
    check_match("users/{id}/posts/{post}", "users/42/comments/7", expect!["no match"]);
    check_match("users/{id}{?fields}", "users/42?fields=a,b", expect![[r#"id="42" fields="a,b""#]]);
    check_match("x://{a}-{b}", "x://x-y-z", expect![[r#"a="x" b="y-z""#]]);
    check_match("x://{a,b}", "x://1,2", expect![[r#"a="1" b="2""#]]);
    check_match("x://{a}/{a}", "x://1/1", expect![[r#"a="1""#]]);
    check_match("x://{a}/{a}", "x://1/2", expect!["no match"]);
    check_match("x://{a}{.ext}", "x://notes.tar.gz", expect![[r#"a="notes" ext="tar.gz""#]]);
    check_match("x://{#frag}", "x://#a/b", expect![[r#"frag="a/b""#]]);
}

#[test]
fn match_path_segments() {
    check_match("repo://r{/path*}", "repo://r/src/lib.rs", expect![[r#"path="src/lib.rs""#]]);
    check_match("repo://r{/path*}", "repo://r", expect![""]);
    check_match("repo://r{/path*}", "repo://r/src/../../x", expect!["no match"]);
    check_match(
        "repo://r{/path*}{?rev}",
        "repo://r/a/b?rev=main",
        expect![[r#"path="a/b" rev="main""#]],
    );
    check_match("repo://r{/path*}/edit", "repo://r/a/b/edit", expect![[r#"path="a/b""#]]);
    check_match("repo://r{/path*}/edit", "repo://r/edit", expect![""]);
    check_match("repo://r{/a}", "repo://r/x/y", expect!["no match"]);
    check_match("repo://r{/a,b}", "repo://r/x/y", expect![[r#"a="x" b="y""#]]);
    check_match("repo://r{/a}{/b}", "repo://r/x/y", expect![[r#"a="x" b="y""#]]);
    check_match("repo://r{/a}", "repo://r/x%2Fy", expect!["no match"]);
}

/// Matching scans left to right without backtracking, so a long URI costs one pass per
/// expression at most; this would take minutes with a backtracking regex.
#[test]
fn match_is_linear_in_the_uri() {
    let template = UriTemplate::parse("x://{a}-{b}-{c}/{+rest}{?q,r}").expect("valid template");
    let long = "a".repeat(64 * 1024);
    let uri = format!("x://{long}-{long}-{long}/{long}?r={long}&q=1");
    let found = template.matches(&uri).expect("matches");
    assert_eq!(found.len(), 6);
    // Near misses are the worst case for a backtracking matcher.
    let near_miss = format!("x://{}", "-".repeat(64 * 1024));
    assert_eq!(template.matches(&near_miss), None);
    let no_dash = format!("x://{long}");
    assert_eq!(template.matches(&no_dash), None);
}

#[test]
fn match_inverts_expand() {
    let template =
        UriTemplate::parse("db://{table}/rows{/id}{?columns,limit}").expect("valid template");
    let vars = |name: &str| match name {
        "table" => Some(Value::from("my table")),
        "id" => Some(Value::from("ü7")),
        "columns" => Some(Value::List(vec!["a".into(), "b".into()])),
        _ => None,
    };
    let uri = template.expand(&vars);
    assert_eq!(uri, "db://my%20table/rows/%C3%BC7?columns=a,b");
    check_match(template.as_str(), &uri, expect![[r#"table="my table" id="ü7" columns="a,b""#]]);
}
