//! Tools whose input schemas go beyond flat strings and numbers, as servers write them: a
//! struct argument (`$ref` into `$defs`, as schemars derives it), a struct that holds itself,
//! and a schema that forbids keys it does not list. `mcp tools` shows them, `mcp call`
//! fills them with dotted keys and refuses a misspelt key before anything is sent.

use std::collections::BTreeMap;

use modelcontext::schemars::JsonSchema;
use modelcontext::{McpServer, ToolDef};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{HttpServer, mcp};

/// One line of an order.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
struct Order {
    /// The book's title.
    book: String,
    #[schemars(range(min = 1, max = 10))]
    quantity: u32,
    gift: Option<Gift>,
}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
struct Gift {
    #[schemars(length(max = 80))]
    note: String,
}

/// The arguments of `place_order(cx: Context, order: Order)` as `#[tool]` writes them.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
struct PlaceOrder {
    order: Order,
}

/// A shelf inside a shelf: a schema that refers to itself.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
struct Shelf {
    name: String,
    parent: Option<Box<Shelf>>,
}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
struct FileUnder {
    shelf: Shelf,
}

/// The server: `place_order`, `file_under` and `lookup` (whose schema is closed).
pub fn start() -> HttpServer {
    HttpServer::start(|| {
        let place_order = ToolDef::new("place_order", |args: PlaceOrder| async move {
            let gift = args.order.gift.map(|g| format!(" with the note {:?}", g.note));
            format!("{} x {}{}", args.order.quantity, args.order.book, gift.unwrap_or_default())
        })
        .description("Order copies of a book.");
        let file_under = ToolDef::new("file_under", |args: FileUnder| async move {
            let mut path = vec![args.shelf.name];
            let mut parent = args.shelf.parent;
            while let Some(shelf) = parent {
                path.push(shelf.name);
                parent = shelf.parent;
            }
            path.join(" < ")
        });
        let closed = json!({
            "type": "object",
            "properties": {"title": {"type": "string"}, "edition": {"type": "integer"}},
            "required": ["title"],
            "additionalProperties": false
        });
        let Value::Object(closed) = closed else { unreachable!("an object") };
        let lookup = ToolDef::new("lookup", |args: BTreeMap<String, Value>| async move {
            format!("looked up {}", Value::Object(args.into_iter().collect()))
        })
        .input_schema(closed);
        McpServer::new("schemas")
            .tool(place_order)
            .and_then(|server| server.tool(file_under))
            .and_then(|server| server.tool(lookup))
            .expect("tools")
    })
}

#[test]
fn a_struct_argument_is_listed_with_its_fields_and_constraints() {
    let server = start();
    let run = mcp(&["tools", &server.url]).code(0);
    expect_test::expect![[r#"
        place_order(order: {book: string, quantity: integer (1..=10), gift?: {note: string (length <= 80)} | null})
            Order copies of a book.
        file_under(shelf: {name: string, parent?: Shelf | null})
        lookup(title: string, edition?: integer)
    "#]]
    .assert_eq(&run.stdout);
}

#[test]
fn dotted_keys_fill_a_struct_argument() {
    let server = start();
    let url = server.url.as_str();
    let run = mcp(&["call", "place_order", "order.book=Dune", "order.quantity=2", url]);
    assert_eq!(run.code(0).stdout, "2 x Dune\n");
    let run = mcp(&[
        "call",
        "place_order",
        "order.book=Dune",
        "order.quantity=1",
        "order.gift.note=Enjoy",
        url,
    ]);
    assert_eq!(run.code(0).stdout, "1 x Dune with the note \"Enjoy\"\n");
    let whole = r#"order={"book":"Emma","quantity":3}"#;
    assert_eq!(mcp(&["call", "place_order", whole, url]).code(0).stdout, "3 x Emma\n");
    let run = mcp(&["call", "file_under", "shelf.name=Dune", r#"shelf.parent={"name":"SF"}"#, url]);
    assert_eq!(run.code(0).stdout, "Dune < SF\n");
}

#[test]
fn a_misspelt_key_is_caught_before_anything_is_sent() {
    let server = start();
    let url = server.url.as_str();
    // `--verbose` shows every message sent: no tools/call goes out.
    let run = mcp(&["--verbose", "call", "lookup", "tittle=Dune", url]).code(64);
    assert!(
        run.stderr.contains("mcp: unknown argument `tittle` (did you mean `title`?)"),
        "{run:#?}"
    );
    assert!(!run.stderr.contains("tools/call"), "{run:#?}");
    mcp(&["call", "lookup", "title=Dune", "colour=red", url])
        .code(64)
        .stderr_has("unknown argument `colour` (the tool takes `title`, `edition`)");
    let run = mcp(&["call", "lookup", "title=Dune", "edition=2", url]).code(0);
    assert_eq!(run.stdout, "looked up {\"edition\":2,\"title\":\"Dune\"}\n");
    // schemars leaves `additionalProperties` out (other keys allowed), but `book` is required:
    // without it the call could only fail, so the near miss is refused all the same.
    mcp(&["call", "place_order", "order.bok=Dune", "order.quantity=1", url])
        .code(64)
        .stderr_has("unknown argument `order.bok` (did you mean `order.book`?)");
    // A near miss of a key that is not required is a warning, and the server has the last word.
    let run =
        mcp(&["call", "place_order", "order.book=Dune", "order.quantity=1", "order.gif=x", url]);
    let run = run
        .code(0)
        .stderr_has("`order.gif` is not among the tool's arguments (did you mean `order.gift`?)");
    assert_eq!(run.stdout, "1 x Dune\n");
}

#[test]
fn the_shell_catches_a_misspelt_key_too() {
    let server = start();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(["shell", &server.url])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all(b"call lookup tittle=Dune\ncall lookup title=Dune\n")?;
            drop(stdin);
            child.wait_with_output()
        })
        .expect("mcp shell runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("mcp: unknown argument `tittle` (did you mean `title`?)"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "looked up {\"title\":\"Dune\"}\n");
}
