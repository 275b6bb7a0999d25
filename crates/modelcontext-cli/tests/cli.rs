//! The built `mcp` binary against the `bookshop` example, over stdio and over HTTP: outputs,
//! exit codes, and the messages a misbehaving server earns.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use expect_test::{Expect, expect};
use serde_json::Value;

mod install;
mod login;
mod schemas;
mod serve;
mod shell;
mod skills;
mod ui;

/// `cargo test --workspace` builds the examples into `target/<profile>/examples`, next to the
/// `deps/` folder this test binary runs from.
fn bookshop() -> PathBuf {
    example("bookshop")
}

/// The built example `name` (bookshop, progress, confirm).
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().and_then(|deps| deps.parent()).expect("target dir");
    let path = dir.join("examples").join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: run `cargo test --workspace` or `cargo build -p modelcontext --example {name}`",
        path.display()
    );
    path
}

/// `--stdio` for an example that serves over stdio when given `--stdio`.
fn example_stdio(name: &str) -> String {
    format!("'{}' --stdio", example(name).display())
}

/// `--stdio` for the bookshop, quoted in case the path has spaces.
fn bookshop_stdio() -> String {
    format!("'{}'", bookshop().display())
}

/// What one run of `mcp` did.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// Checks the exit code, showing everything the run printed when it is wrong.
    #[track_caller]
    fn code(self, expected: i32) -> Run {
        assert_eq!(self.code, expected, "exit code of {self:#?}");
        self
    }

    #[track_caller]
    fn stderr_has(self, fragment: &str) -> Run {
        assert!(self.stderr.contains(fragment), "stderr lacks {fragment:?}: {self:#?}");
        self
    }

    #[track_caller]
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {self:#?}"))
    }
}

fn mcp(args: &[&str]) -> Run {
    run_mcp(Command::new(env!("CARGO_BIN_EXE_mcp")).args(args))
}

/// Runs `command` (the built `mcp`, set up by the caller) with no stdin, to its end.
fn run_mcp(command: &mut Command) -> Run {
    let output = command.stdin(Stdio::null()).output().expect("mcp runs");
    Run {
        code: output.status.code().expect("mcp exited, not killed by a signal"),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `mcp --stdio bookshop ARGS`.
fn stdio(args: &[&str]) -> Run {
    let server = bookshop_stdio();
    mcp(&[&["--stdio", server.as_str()], args].concat())
}

#[track_caller]
fn check_stdout(run: Run, expect: Expect) {
    let run = run.code(0);
    expect.assert_eq(&run.stdout);
}

#[test]
fn tools_are_listed_with_their_parameters() {
    check_stdout(
        stdio(&["tools"]),
        expect![[r#"
            get_author(title: string)
                Look up the author of a book in the catalog.
            get_author_strict(title: string)
                Look up the author of a book in the catalog (fails the whole request on a miss).
            search_books(query: string, limit?: integer (1..=50) = 10)
                Search the catalog by title or author.
        "#]],
    );
}

#[test]
fn a_call_prints_the_tools_text() {
    check_stdout(
        stdio(&["call", "get_author", "title=Dune"]),
        expect![[r#"
        Frank Herbert
    "#]],
    );
    check_stdout(
        stdio(&["call", "get_author", "--args", r#"{"title":"Neuromancer"}"#]),
        expect![[r#"
        William Gibson
    "#]],
    );
}

#[test]
fn a_tool_error_exits_2_and_shows_the_message() {
    let run = stdio(&["call", "get_author", "title=Nothing"]).code(2);
    assert_eq!(run.stdout, "");
    run.stderr_has("No book titled 'Nothing' in the catalog.");
}

#[test]
fn a_protocol_error_exits_3_and_shows_the_code() {
    stdio(&["call", "get_author_strict", "title=Nothing"])
        .code(3)
        .stderr_has("-32602")
        .stderr_has("No book titled 'Nothing' in the catalog.");
}

#[test]
fn arguments_are_typed_by_the_schema_and_validated_by_the_server() {
    // `limit` is an integer in the schema, so 999 goes out as a number and fails the maximum.
    stdio(&["call", "search_books", "query=dune", "limit=999"])
        .code(2)
        .stderr_has("limit")
        .stderr_has("maximum of 50");
    check_stdout(
        stdio(&["call", "search_books", "query=e", "limit=1"]),
        expect![[r#"
        Dune
    "#]],
    );
    stdio(&["call", "search_books", "query=dune", "limit=many"])
        .code(64)
        .stderr_has("limit=many: the schema expects integer");
}

#[test]
fn resources_templates_and_prompts() {
    check_stdout(
        stdio(&["read", "books://Dune"]),
        expect![[r#"
        Dune by Frank Herbert
    "#]],
    );
    stdio(&["read", "books://Nothing"]).code(3).stderr_has("No book titled 'Nothing'");
    check_stdout(
        stdio(&["templates"]),
        expect![[r#"
        books://{title}  book
            The catalog entry for one book.
    "#]],
    );
    check_stdout(
        stdio(&["prompts"]),
        expect![[r#"
        review(title)
            Ask for a short review of a book.
    "#]],
    );
    check_stdout(
        stdio(&["get", "review", "title=Dune"]),
        expect![[r#"
        user: Write a two-sentence review of Dune.
    "#]],
    );
}

#[test]
fn discover_and_ping_in_both_eras() {
    check_stdout(
        stdio(&["discover"]),
        expect![[r#"
        server: Bookshop 0.1.0
        protocol: 2026-07-28 (modern era)
        capabilities: logging, prompts, resources, tools
        instructions: Use search_books to find titles, get_author to look one up.
    "#]],
    );
    let run = stdio(&["--era", "handshake", "discover"]).code(0);
    assert!(run.stdout.contains("protocol: 2025-11-25 (handshake era)"), "{run:#?}");
    let run = stdio(&["--era", "handshake", "ping"]).code(0);
    assert!(run.stdout.starts_with("ok: ping answered in "), "{run:#?}");
    let run = stdio(&["ping"]).code(0);
    assert!(run.stdout.starts_with("ok: server/discover answered in "), "{run:#?}");
}

#[test]
fn json_output_is_json() {
    let result = stdio(&["--json", "call", "get_author", "title=Dune"]).code(0).json();
    assert_eq!(result["content"][0]["text"], "Frank Herbert");
    let result = stdio(&["call", "get_author", "title=Nothing", "--json"]).code(2).json();
    assert_eq!(result["isError"], true);
    let error = stdio(&["call", "get_author_strict", "title=Nothing", "--json"]).code(3).json();
    assert_eq!(error["error"]["code"], -32602);
    let tools = stdio(&["tools", "--json"]).code(0).json();
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["get_author", "get_author_strict", "search_books"]);
    let contents = stdio(&["read", "books://Dune", "--json"]).code(0).json();
    assert_eq!(contents["contents"][0]["text"], "Dune by Frank Herbert");
}

#[test]
fn a_missing_server_binary_is_a_connection_failure() {
    mcp(&["--stdio", "/nonexistent/mcp-server --flag", "tools"])
        .code(4)
        .stderr_has("cannot start the server \"/nonexistent/mcp-server\"");
}

#[cfg(unix)]
#[test]
fn a_server_that_exits_is_a_connection_failure() {
    mcp(&["--stdio", "sh -c 'echo about to crash >&2; exit 7'", "tools"])
        .code(4)
        .stderr_has("about to crash")
        .stderr_has("the server (sh) closed the connection");
}

#[cfg(unix)]
#[test]
fn stray_stdout_is_reported_and_the_call_still_works() {
    let command = format!("sh -c 'echo starting up; exec {}'", bookshop_stdio().replace('\'', ""));
    let run = mcp(&["--stdio", &command, "call", "get_author", "title=Dune"]).code(0);
    assert_eq!(run.stdout, "Frank Herbert\n");
    run.stderr_has("not JSON-RPC on its stdout").stderr_has("logs belong on stderr");
}

#[cfg(unix)]
#[test]
fn a_silent_server_times_out() {
    let started = Instant::now();
    mcp(&["--timeout", "300ms", "--era", "handshake", "--stdio", "sleep 30", "tools"])
        .code(4)
        .stderr_has("Timed out after 300ms waiting for 'initialize'");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
}

#[test]
fn usage_errors_exit_64() {
    mcp(&["tools"]).code(64).stderr_has("say which server");
    stdio(&["call", "get_author", "title"]).code(64).stderr_has("expected KEY=VALUE");
    mcp(&["--stdio", "x", "--era", "ancient", "tools"]).code(64);
    let help = mcp(&["--help"]).code(0);
    assert!(help.stdout.contains("Exit codes:"), "{help:#?}");
}

/// `bookshop --http 127.0.0.1:PORT`, killed when dropped.
struct HttpBookshop {
    child: Child,
    url: String,
}

impl HttpBookshop {
    fn start() -> HttpBookshop {
        HttpBookshop::start_with("http", &[])
    }

    /// `bookshop --http ADDR --tls-cert .. --tls-key ..`, at `https://127.0.0.1:PORT/mcp`.
    fn start_tls(cert: &std::path::Path, key: &std::path::Path) -> HttpBookshop {
        let (cert, key) = (cert.to_str().expect("utf-8"), key.to_str().expect("utf-8"));
        HttpBookshop::start_with("https", &["--tls-cert", cert, "--tls-key", key])
    }

    fn start_with(scheme: &str, args: &[&str]) -> HttpBookshop {
        let port =
            TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("port").port();
        let address = format!("127.0.0.1:{port}");
        let child = Command::new(bookshop())
            .args(["--http", &address])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("bookshop starts");
        let url = format!("{scheme}://{address}/mcp");
        let server = HttpBookshop { child, url };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(&address).is_err() {
            assert!(Instant::now() < deadline, "bookshop did not listen on {address}");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    fn mcp(&self, args: &[&str]) -> Run {
        mcp(&[&[self.url.as_str()], args].concat())
    }
}

impl Drop for HttpBookshop {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn over_http_in_both_eras() {
    let server = HttpBookshop::start();
    for era in ["auto", "handshake", "modern"] {
        let run = server.mcp(&["--era", era, "tools"]).code(0);
        assert!(
            run.stdout.contains("search_books(query: string, limit?: integer (1..=50) = 10)"),
            "{run:#?}"
        );
        let run = server.mcp(&["--era", era, "call", "get_author", "title=Dune"]).code(0);
        assert_eq!(run.stdout, "Frank Herbert\n");
        server
            .mcp(&["--era", era, "call", "get_author", "title=Nothing"])
            .code(2)
            .stderr_has("No book titled 'Nothing'");
        server
            .mcp(&["--era", era, "call", "get_author_strict", "title=Nothing"])
            .code(3)
            .stderr_has("-32602");
        server
            .mcp(&["--era", era, "call", "search_books", "query=x", "limit=999"])
            .code(2)
            .stderr_has("limit");
        let run = server.mcp(&["--era", era, "read", "books://Dune"]).code(0);
        assert_eq!(run.stdout, "Dune by Frank Herbert\n");
    }
    let run = server.mcp(&["--verbose", "tools"]).code(0);
    assert!(run.stderr.contains(r#""method":"tools/list""#), "{run:#?}");
    assert!(run.stderr.lines().any(|l| l.starts_with("mcp: <-- ")), "{run:#?}");
    let result = server.mcp(&[
        "-H",
        "X-Request-Source: cli-test",
        "--json",
        "call",
        "get_author",
        "title=Dune",
    ]);
    assert_eq!(result.code(0).json()["content"][0]["text"], "Frank Herbert");
    server.mcp(&["-H", "no colon", "tools"]).code(64).stderr_has("expected 'Name: value'");
}

/// An SDK server made by `make`, over HTTP on 127.0.0.1 on a runtime of its own; it stops
/// when dropped.
struct HttpServer {
    _runtime: tokio::runtime::Runtime,
    url: String,
}

impl HttpServer {
    fn start(make: impl FnOnce() -> modelcontext::McpServer) -> HttpServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let url = runtime.block_on(async {
            let endpoint = make().http_endpoint();
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
            tokio::spawn(async move { endpoint.serve(listener).await });
            url
        });
        HttpServer { _runtime: runtime, url }
    }
}

#[test]
fn the_server_may_follow_the_subcommand() {
    let server = HttpBookshop::start();
    let url = server.url.as_str();
    let listed = mcp(&["tools", url]).code(0);
    assert!(listed.stdout.contains("get_author(title: string)"), "{listed:#?}");
    assert_eq!(mcp(&["call", "get_author", "title=Dune", url]).code(0).stdout, "Frank Herbert\n");
    assert_eq!(mcp(&["call", "get_author", url, "title=Dune"]).code(0).stdout, "Frank Herbert\n");
    let contents = mcp(&["read", "books://Dune", url, "--json"]).code(0).json();
    assert_eq!(contents["contents"][0]["text"], "Dune by Frank Herbert");
    let prompt = mcp(&["get", "review", "title=Dune", url]).code(0);
    assert_eq!(prompt.stdout, "user: Write a two-sentence review of Dune.\n");
    assert!(mcp(&["ping", url]).code(0).stdout.starts_with("ok: "));
    // The old order still works, and the same URL in both places is no conflict.
    assert_eq!(
        mcp(&[url, "call", "get_author", "title=Dune", url]).code(0).stdout,
        "Frank Herbert\n"
    );
    mcp(&["http://127.0.0.1:1/mcp", "tools", url])
        .code(64)
        .stderr_has("two different URLs given: http://127.0.0.1:1/mcp and");
    // A value that is a URL stays a value: the bookshop is asked for that title.
    mcp(&["call", "get_author", "title=http://x/y", url])
        .code(2)
        .stderr_has("No book titled 'http://x/y'");
    // --stdio and --config come after the subcommand as well.
    let command = bookshop_stdio();
    assert_eq!(mcp(&["tools", "--stdio", &command]).code(0).stdout, listed.stdout);
    let dir = temp_dir("config-after");
    let file = dir.join("mcp.json");
    let config = serde_json::json!({"servers": {"books": {"type": "http", "url": url}}});
    std::fs::write(&file, config.to_string()).expect("config written");
    let file = file.to_str().expect("utf-8");
    let run = mcp(&["call", "get_author", "title=Dune", "--config", file, "--server", "books"]);
    assert_eq!(run.code(0).stdout, "Frank Herbert\n");
}

#[test]
fn the_bookshop_catches_a_misspelt_title() {
    // get_author's schema allows other keys, but `title` is required and missing.
    stdio(&["call", "get_author", "tittle=Dune"])
        .code(64)
        .stderr_has("mcp: unknown argument `tittle` (did you mean `title`?)");
    let server = HttpBookshop::start();
    // `--verbose` shows every message sent: no tools/call goes out.
    let run = mcp(&["--verbose", "call", "get_author", "tittle=Dune", &server.url]).code(64);
    assert!(!run.stderr.contains("tools/call"), "{run:#?}");
}

/// A root CA and a certificate it signs for `127.0.0.1`, written as PEM files into `dir`:
/// `(ca.pem, cert.pem, key.pem)`.
fn test_ca(dir: &std::path::Path) -> (PathBuf, PathBuf, PathBuf) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let mut root = CertificateParams::new(Vec::<String>::new()).expect("no names");
    root.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let root_key = KeyPair::generate().expect("a key");
    let root = root.self_signed(&root_key).expect("a root");
    let leaf_key = KeyPair::generate().expect("a key");
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .expect("a name")
        .signed_by(&leaf_key, &root, &root_key)
        .expect("signed");
    let paths = (dir.join("ca.pem"), dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&paths.0, root.pem()).expect("write ca.pem");
    std::fs::write(&paths.1, leaf.pem()).expect("write cert.pem");
    std::fs::write(&paths.2, leaf_key.serialize_pem()).expect("write key.pem");
    paths
}

#[test]
fn https_with_a_private_ca_named_by_cacert() {
    let dir = std::env::temp_dir().join(format!("mcp-cli-cacert-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (ca, cert, key) = test_ca(&dir);
    let server = HttpBookshop::start_tls(&cert, &key);
    let ca = ca.to_str().expect("utf-8");
    let run = server.mcp(&["--cacert", ca, "call", "get_author", "title=Dune"]).code(0);
    assert_eq!(run.stdout, "Frank Herbert\n");
    server.mcp(&["--era", "handshake", "--cacert", ca, "tools"]).code(0);
    // Without it, the system's roots do not know the CA, and the error says so.
    server.mcp(&["tools"]).code(4).stderr_has("unknown issuer");
    let missing = dir.join("missing.pem");
    let missing = missing.to_str().expect("utf-8");
    server.mcp(&["--cacert", missing, "tools"]).code(64).stderr_has("cannot read it");
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_url_that_is_not_http_is_a_usage_error_that_says_why() {
    let run = mcp(&["ftp://example.com/mcp", "tools"]);
    let run = run
        .code(64)
        .stderr_has("ftp://example.com/mcp: expected an http:// or https:// URL with a host");
    assert!(!run.stderr.contains("I/O error"), "the SDK's layer is not news to a user: {run:#?}");
}

#[test]
fn an_http_server_that_is_not_there_is_a_connection_failure() {
    let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("port").port();
    mcp(&["--timeout", "5s", &format!("http://127.0.0.1:{port}/mcp"), "tools"])
        .code(4)
        .stderr_has("no connection to the server");
}

/// `mcp` started with its outputs piped, for tests that read it while it runs.
fn spawn_mcp(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcp starts")
}

/// The first line `reader` gives, waiting for it.
fn first_line(reader: impl std::io::Read) -> String {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(reader).read_line(&mut line).expect("a line");
    line
}

#[test]
fn a_closed_stderr_does_not_stop_the_call() {
    // `mcp ... 2>&1 | head -1`: progress lines keep coming after stderr's reader has gone.
    let server = example_stdio("progress");
    let mut child = spawn_mcp(&["--stdio", &server, "call", "index", "files=15"]);
    let line = first_line(child.stderr.take().expect("stderr"));
    assert!(line.contains("progress"), "{line:?}");
    let output = child.wait_with_output().expect("mcp ends");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "indexed 15 documents\n");
}

#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    // `mcp tools | head -0`: the reader is gone before the first line is written.
    let mut child = spawn_mcp(&["--stdio", &bookshop_stdio(), "tools"]);
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("mcp ends");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

/// A directory of this test's own under the system's temporary directory.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A shell that checks `$SHELF` and its working directory, then becomes the bookshop: the
/// call succeeds only if `-e`/`env` and `--cwd`/`cwd` reached the child.
fn checked_bookshop(dir: &std::path::Path) -> Vec<String> {
    let script = format!(
        r#"test "$SHELF" = fiction && test "$(pwd -P)" = '{}' && exec "$0""#,
        dir.canonicalize().expect("dir").display()
    );
    vec!["sh".into(), "-c".into(), script, bookshop().display().to_string()]
}

#[test]
fn the_stdio_command_trails_the_line_with_its_environment_and_directory() {
    let run = mcp(&[
        "call",
        "get_author",
        "title=Dune",
        "--stdio",
        "--",
        &bookshop().display().to_string(),
    ]);
    assert_eq!(run.code(0).stdout, "Frank Herbert\n");
    let dir = temp_dir("cwd");
    let words = checked_bookshop(&dir);
    let mut line = vec!["-e", "SHELF=fiction", "--cwd", dir.to_str().expect("utf-8")];
    line.extend(["call", "get_author", "title=Dune", "--stdio", "--"]);
    line.extend(words.iter().map(String::as_str));
    assert_eq!(mcp(&line).code(0).stdout, "Frank Herbert\n");
    // Without the variable the shell exits before the bookshop starts.
    mcp(&line[2..]).code(4).stderr_has("closed the connection");
    mcp(&["-e", "SHELF", "--stdio", "x", "tools"]).code(64).stderr_has("-e: expected KEY=VALUE");
    mcp(&["--stdio", "--", "npx", "server", "tools"])
        .code(64)
        .stderr_has("the subcommand goes before it");
}

#[test]
fn a_server_from_a_claude_desktop_config() {
    let dir = temp_dir("config");
    let server = HttpBookshop::start();
    let words = checked_bookshop(&dir);
    let config = serde_json::json!({"mcpServers": {
        "books": {"command": "sh", "args": &words[1..], "env": {"SHELF": "fiction"}, "cwd": dir},
        "remote": {"type": "http", "url": server.url, "headers": {"X-Shelf": "fiction"}}
    }});
    let file = dir.join("claude_desktop_config.json");
    std::fs::write(&file, config.to_string()).expect("config written");
    let file = file.to_str().expect("utf-8");
    for name in ["books", "remote"] {
        let run = mcp(&["--config", file, "--server", name, "call", "get_author", "title=Dune"]);
        assert_eq!(run.code(0).stdout, "Frank Herbert\n", "{name}");
    }
    mcp(&["--config", file, "tools"]).code(64).stderr_has("--server NAME (it has: books, remote)");
    mcp(&["--config", file, "--server", "nope", "tools"])
        .code(64)
        .stderr_has("no server named \"nope\"");
    mcp(&["--config", file, "--stdio", "x", "tools"])
        .code(64)
        .stderr_has("one of --stdio, --config");
    // login and logout take the URL of an HTTP entry.
    mcp(&["--config", file, "--server", "books", "login"]).code(64).stderr_has("is a command");
    let logout = Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(["logout", "--config", file, "--server", "remote"])
        .env("XDG_CONFIG_HOME", &dir)
        .stdin(Stdio::null())
        .output()
        .expect("mcp runs");
    let stderr = String::from_utf8_lossy(&logout.stderr);
    assert_eq!(logout.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(&format!("no stored login for {}", server.url)), "{stderr}");
}

/// VS Code's `${env:..}`, `${input:..}` (answered by its environment variable, as under a
/// supervisor), `${workspaceFolder}` and `envFile` reach the server's arguments, environment
/// and folder.
#[test]
fn a_vs_code_file_s_variables_reach_the_server() {
    let dir = temp_dir("vscode-vars");
    let script = format!(
        r#"test "$SHELF" = fiction && test "$1" = s3cret && test "$(pwd -P)" = '{}' && test "$KEY" = 'abc$def' && exec "$0""#,
        dir.canonicalize().expect("dir").display()
    );
    std::fs::write(dir.join(".env"), "# the shop\nKEY=abc$def\nSHELF=ignored\n").expect("env");
    let config = serde_json::json!({
        "inputs": [{"type": "promptString", "id": "shelf-name", "description": "Shelf", "password": true}],
        "servers": {"books": {
            "type": "stdio",
            "command": "sh",
            "args": ["-c", script, bookshop(), "${env:MCP_TEST_TOKEN}"],
            "env": {"SHELF": "${input:shelf-name}"},
            "envFile": "${workspaceFolder}/.env",
            "cwd": "${workspaceFolder}"
        }}
    });
    std::fs::create_dir_all(dir.join(".vscode")).expect("dir");
    let file = dir.join(".vscode").join("mcp.json");
    std::fs::write(&file, config.to_string()).expect("config written");
    let line = ["--config", file.to_str().expect("utf-8"), "call", "get_author", "title=Dune"];
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp"));
    command.args(line).env("MCP_TEST_TOKEN", "s3cret").env("MCP_INPUT_SHELF_NAME", "fiction");
    assert_eq!(run_mcp(&mut command).code(0).stdout, "Frank Herbert\n");
    command.env_remove("MCP_INPUT_SHELF_NAME");
    run_mcp(&mut command).code(64).stderr_has(
        "server \"books\": ${input:shelf-name} (Shelf): set MCP_INPUT_SHELF_NAME, or run at a terminal to be asked",
    );
}

#[test]
fn verbose_prints_every_message_both_ways() {
    let run = stdio(&["--verbose", "call", "get_author", "title=Dune"]).code(0);
    assert_eq!(run.stdout, "Frank Herbert\n");
    let sent = run.stderr.lines().filter(|l| l.starts_with("mcp: --> ")).collect::<Vec<_>>();
    let received = run.stderr.lines().filter(|l| l.starts_with("mcp: <-- ")).collect::<Vec<_>>();
    assert!(sent.iter().any(|l| l.contains(r#""method":"tools/call""#)), "{run:#?}");
    assert!(received.iter().any(|l| l.contains("Frank Herbert")), "{run:#?}");
    for line in sent.iter().chain(&received) {
        let json: Value = serde_json::from_str(&line[9..]).expect("each message is JSON");
        assert_eq!(json["jsonrpc"], "2.0");
    }
}

#[test]
fn server_logs_at_the_level_asked_for_in_both_eras() {
    let server = example_stdio("progress");
    for era in ["handshake", "modern"] {
        let line = ["--stdio", &server, "--era", era, "call", "index", "files=2"];
        let run = mcp(&[&line[..], &["--log-level", "info"]].concat()).code(0);
        assert!(run.stderr.contains("mcp: [info] indexing 2 documents"), "{era}: {run:#?}");
        let run = mcp(&[&line[..], &["--log-level", "warning"]].concat()).code(0);
        assert!(!run.stderr.contains("indexing 2 documents"), "{era}: {run:#?}");
    }
    mcp(&["--log-level", "loud", "--stdio", "x", "tools"]).code(64).stderr_has("not a level");
}

#[test]
fn progress_is_plain_lines_when_stderr_is_not_a_terminal() {
    let run = mcp(&["--stdio", &example_stdio("progress"), "call", "index", "files=3"]).code(0);
    assert_eq!(run.stdout, "indexed 3 documents\n");
    let progress: Vec<&str> = run.stderr.lines().filter(|l| l.contains("progress")).collect();
    assert_eq!(
        progress,
        [
            "mcp: progress 1/3 (33%) indexing",
            "mcp: progress 2/3 (67%) indexing",
            "mcp: progress 3/3 (100%) indexing"
        ]
    );
    assert!(!run.stderr.contains('\r'), "{run:#?}");
}

#[test]
fn ctrl_c_cancels_the_call_at_the_server() {
    use std::io::BufRead;
    let server = example_stdio("progress");
    // 1000 files take 20 s: long enough that only the interrupt can end it early.
    let mut child = spawn_mcp(&["--verbose", "--stdio", &server, "call", "index", "files=1000"]);
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut seen = String::new();
    while !seen.contains("mcp: progress") {
        assert!(stderr.read_line(&mut seen).expect("stderr") > 0, "mcp ended early: {seen}");
    }
    let started = Instant::now();
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    assert!(status.expect("kill runs").success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).expect("stderr");
    let output = child.wait_with_output().expect("mcp ends");
    assert_eq!(output.status.code(), Some(130), "{rest}");
    assert!(started.elapsed() < Duration::from_secs(10), "the call was not cut short");
    assert!(rest.contains("interrupted; the request was cancelled at the server"), "{rest}");
    let cancelled = rest.lines().find(|l| l.contains(r#""method":"notifications/cancelled""#));
    assert!(cancelled.is_some_and(|l| l.starts_with("mcp: --> ")), "{rest}");
}

#[test]
fn call_args_is_the_arguments_object_and_json_only_output() {
    let run =
        stdio(&["call", "search_books", "--args", r#"{"query":"dune"}"#, "limit=1", "--json"]);
    let result = run.code(0).json();
    assert!(result["content"][0]["text"].as_str().is_some_and(|t| t.contains("Dune")), "{result}");
    stdio(&["call", "get_author", "--args", "[1]"])
        .code(64)
        .stderr_has("--args must be a JSON object");
    // `--json` takes no value any more: an object after it is a stray argument.
    stdio(&["call", "get_author", "--json", r#"{"title":"Dune"}"#])
        .code(64)
        .stderr_has("KEY=VALUE");
}

#[test]
fn mistyped_subcommands_get_a_suggestion_and_shells_get_completions() {
    mcp(&["toools"]).code(64).stderr_has("tip: a similar subcommand exists: 'tools'");
    let url = "http://127.0.0.1:9/mcp";
    mcp(&[url, "lsten"]).code(64).stderr_has("tip: a similar subcommand exists: 'listen'");
    mcp(&[url, "tools", "--jsn"]).code(64).stderr_has("tip: a similar argument exists: '--json'");
    for shell in ["bash", "zsh", "fish"] {
        let run = mcp(&["completions", shell]).code(0);
        assert!(
            run.stdout.contains("listen") && run.stdout.contains("--stdio"),
            "{shell}: {run:#?}"
        );
    }
}

#[test]
fn listen_waits_for_changes_until_interrupted_in_both_eras() {
    use std::io::BufRead;
    for (era, request) in [("handshake", "resources/subscribe"), ("modern", "subscriptions/listen")]
    {
        let server = bookshop_stdio();
        let line =
            ["--verbose", "--era", era, "--stdio", &server, "listen", "--resource", "books://Dune"];
        let mut child = spawn_mcp(&line);
        let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
        let mut seen = String::new();
        while !seen.contains("mcp: listening for") {
            assert!(stderr.read_line(&mut seen).expect("stderr") > 0, "{era}: ended early: {seen}");
        }
        assert!(seen.contains(&format!(r#""method":"{request}""#)), "{era}: {seen}");
        assert!(seen.contains("books://Dune"), "{era}: {seen}");
        let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
        assert!(status.expect("kill runs").success());
        let output = child.wait_with_output().expect("mcp ends");
        assert_eq!(output.status.code(), Some(0), "{era}: {output:?}");
    }
}

#[test]
fn without_a_terminal_elicitation_is_declined_in_both_eras() {
    for era in ["handshake", "modern"] {
        let server = example_stdio("confirm");
        let run = mcp(&["--era", era, "--stdio", &server, "call", "delete_file", "path=notes.txt"]);
        assert_eq!(run.code(0).stdout, "kept notes.txt\n", "{era}");
        let run = mcp(&["--era", era, "--stdio", &server, "call", "delete_file", "path=a"]);
        assert!(run.stderr.contains("mcp: the server asks: Delete a?"), "{era}: {run:#?}");
        assert!(run.stderr.contains("declined: stdin is not a terminal"), "{era}: {run:#?}");
    }
}

#[test]
fn sampling_is_answered_by_the_sampling_command_or_refused() {
    let server = example_stdio("ask_client");
    // The command reads the request on stdin: the answer quotes the server's question.
    let sampler = r#"sh -c 'grep -o "Summarize in one line: [a-z]*"'"#;
    for era in ["handshake", "modern"] {
        let line = ["--era", era, "--stdio", &server, "call", "summarize", "text=hello"];
        let run = mcp(&[&line[..], &["--sampling-cmd", sampler]].concat()).code(0);
        assert_eq!(run.stdout, "Summarize in one line: hello (by sh)\n", "{era}");
        // The server may report the refusal as a tool error (2) or fail the request with
        // the client's error (3); either way the message says why.
        for (extra, why) in [
            (&[][..], "declined the sampling request: stdin is not a terminal"),
            (&["--sampling-cmd", "false"][..], "exited with"),
        ] {
            let run = mcp(&[&line[..], extra].concat());
            assert!(matches!(run.code, 2 | 3), "{era}: {run:#?}");
            run.stderr_has(why);
        }
    }
}

#[test]
fn roots_come_from_root_paths() {
    let dir = temp_dir("roots");
    let server = example_stdio("ask_client");
    for era in ["handshake", "modern"] {
        let line = ["--era", era, "--stdio", &server, "--root", dir.to_str().expect("utf-8")];
        let run = mcp(&[&line[..], &["call", "workspace"]].concat()).code(0);
        let uri = format!("file://{}\n", dir.canonicalize().expect("dir").display());
        assert_eq!(run.stdout, uri, "{era}");
    }
}

/// `mcp ARGS` at a pseudo-terminal (util-linux `script`), typing `input`; `None` where
/// `script` is not installed.
fn mcp_at_terminal(args: &[&str], input: &str) -> Option<String> {
    mcp_at_terminal_with(args, input, &[])
}

/// `mcp ARGS` started at a pseudo-terminal (util-linux `script`) with `env` set, its input and
/// output piped; `None` where `script` is not installed.
fn spawn_at_terminal(args: &[&str], env: &[(&str, &str)]) -> Option<std::process::Child> {
    let quote = |word: &str| format!("'{}'", word.replace('\'', r"'\''"));
    let line: Vec<String> =
        std::iter::once(env!("CARGO_BIN_EXE_mcp")).chain(args.iter().copied()).map(quote).collect();
    Command::new("script")
        .args(["-qec", &line.join(" "), "/dev/null"])
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()
}

/// `mcp_at_terminal` with `env` set for `mcp`.
fn mcp_at_terminal_with(args: &[&str], input: &str, env: &[(&str, &str)]) -> Option<String> {
    use std::io::Write;
    let mut child = spawn_at_terminal(args, env)?;
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("typed");
    let output = child.wait_with_output().expect("script ends");
    Some(String::from_utf8_lossy(&output.stdout).replace('\r', ""))
}

#[test]
fn at_a_terminal_elicitation_is_a_form_with_validation_decline_and_cancel() {
    let server = example_stdio("confirm");
    let line = ["--stdio", &server, "call", "delete_file", "path=a"];
    let cases = [
        ("y\ny\n", "deleted a"),
        ("n\n", "kept a"),
        ("c\n", "the user dismissed the question"),
        ("y\nmaybe\nno\n", "answer yes or no"),
        ("y\nmaybe\nno\n", "kept a"),
    ];
    for (typed, expected) in cases {
        let Some(screen) = mcp_at_terminal(&line, typed) else {
            eprintln!("`script` (util-linux) is not installed: the terminal path is not tested");
            return;
        };
        assert!(screen.contains("mcp: the server asks: Delete a?"), "{screen}");
        assert!(screen.contains(expected), "{typed:?} should show {expected:?}: {screen}");
    }
}

#[test]
fn at_a_terminal_sampling_is_approved_and_typed() {
    let server = example_stdio("ask_client");
    let line = ["--stdio", &server, "call", "summarize", "text=hello"];
    let Some(screen) = mcp_at_terminal(&line, "y\nit is short\n\n") else { return };
    assert!(screen.contains("user: Summarize in one line: hello"), "{screen}");
    assert!(screen.contains("it is short (by the person at the terminal)"), "{screen}");
    let screen = mcp_at_terminal(&line, "n\n").expect("script ran before");
    assert!(screen.contains("the user declined the sampling request"), "{screen}");
}

#[test]
fn listen_prints_changes_as_they_arrive_in_both_eras() {
    use std::io::BufRead;
    let server = format!("'{}' --changes", example("ask_client").display());
    for era in ["handshake", "modern"] {
        let line = ["--era", era, "--stdio", &server, "listen", "--resource", "notes://today"];
        let mut child = spawn_mcp(&line);
        let pid = child.id().to_string();
        // A bound on the test: the server announces every 100 ms, so 10 s means a bug. The
        // watchdog stands down as soon as the lines came (before the process is reaped, so
        // it never signals a reused pid).
        let (done, stand_down) = std::sync::mpsc::channel::<()>();
        let watchdog = std::thread::spawn({
            let pid = pid.clone();
            move || {
                let waited = stand_down.recv_timeout(Duration::from_secs(10));
                if waited == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                    let _ = Command::new("kill").args(["-KILL", &pid]).status();
                }
            }
        });
        let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut seen = Vec::new();
        for line in stdout.lines().map_while(Result::ok) {
            seen.push(line);
            let has = |text: &str| seen.iter().any(|l| l == text);
            if has("tools changed (mcp tools lists them)") && has("updated: notes://today") {
                break;
            }
        }
        drop(done);
        watchdog.join().expect("watchdog");
        let status = Command::new("kill").args(["-INT", &pid]).status();
        assert!(status.expect("kill runs").success());
        let output = child.wait_with_output().expect("mcp ends");
        assert_eq!(output.status.code(), Some(0), "{era}: {seen:?} {output:?}");
        assert!(seen.iter().any(|l| l == "updated: notes://today"), "{era}: {seen:?}");
    }
}

#[test]
fn the_shell_runs_one_command_a_line_on_one_connection() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(["--verbose", "--stdio", &bookshop_stdio(), "shell"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcp starts");
    let typed = "call get_author title=Dune\nbogus\ncall get_author title=Nothing\n\
                 call 'get_author' \"title=Dune\"\nread 'books://Dune\nread books://Dune\nexit\n";
    child.stdin.take().expect("stdin").write_all(typed.as_bytes()).expect("typed");
    let output = child.wait_with_output().expect("mcp ends");
    let (stdout, stderr) =
        (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "Frank Herbert\nFrank Herbert\nDune by Frank Herbert\n");
    assert!(stderr.contains("unrecognized subcommand 'bogus'"), "{stderr}");
    assert!(stderr.contains("mcp: unclosed ' quote"), "{stderr}");
    assert!(stderr.contains("No book titled 'Nothing'"), "{stderr}");
    // The two calls type their arguments by one listing of the tools, not one each.
    assert_eq!(stderr.matches(r#""method":"tools/list""#).count(), 1, "{stderr}");
}

#[test]
fn at_a_terminal_the_shell_completes_with_tab_and_keeps_a_history() {
    let state = temp_dir("history");
    let env = [("XDG_STATE_HOME", state.to_str().expect("utf-8")), ("TERM", "xterm")];
    let line = ["--stdio", &bookshop_stdio(), "shell"];
    // Tab completes the tool's name, then its argument's key.
    let typed = "call get_author_s\t ti\tDune\nexit\n";
    let Some(screen) = mcp_at_terminal_with(&line, typed, &env) else {
        eprintln!("`script` (util-linux) is not installed: the terminal path is not tested");
        return;
    };
    assert!(screen.contains("Frank Herbert"), "{screen}");
    let file = state.join("mcp").join("history");
    let history = std::fs::read_to_string(&file).expect("history file");
    assert!(history.contains("call get_author_strict title=Dune\n"), "{history}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).expect("history file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // A new session: the up arrow, twice (past `exit`), brings the call back.
    let screen =
        mcp_at_terminal_with(&line, "\x1b[A\x1b[A\nexit\n", &env).expect("script ran before");
    assert_eq!(screen.matches("Frank Herbert").count(), 1, "{screen}");
}
