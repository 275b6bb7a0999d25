//! `mcp shell` at a terminal against a server whose tool list grows while the shell runs: Tab
//! completes the new tool once the server said its list changed, and the tool list crosses
//! the wire once at the start and once per change, never once per line.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::process::{Child, ChildStdin};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use modelcontext::server::NoArgs;
use modelcontext::{McpServer, ToolDef};
use serde_json::json;

use super::{HttpServer, temp_dir};

/// How long anything here may take: everything is local, so reaching it is a bug.
const WAIT: Duration = Duration::from_secs(20);

/// A server with the tools `grow` (which adds `fresh_tool`) and `noop`, over HTTP on a
/// runtime of its own.
pub fn growing_server() -> HttpServer {
    HttpServer::start(|| {
        let server = McpServer::new("growing")
            .tool(ToolDef::new("noop", |_: NoArgs| async { "nothing done".to_owned() }))
            .expect("noop");
        let grower = server.clone();
        let grow = ToolDef::new("grow", move |_: NoArgs| {
            let server = grower.clone();
            async move {
                match server.add_tool(fresh_tool()) {
                    Ok(()) => "grown".to_owned(),
                    Err(err) => format!("not grown: {err}"),
                }
            }
        });
        server.add_tool(grow).expect("grow");
        server
    })
}

fn fresh_tool() -> ToolDef {
    let schema = json!({"type": "object", "properties": {"color": {"type": "string"}}});
    let serde_json::Value::Object(schema) = schema else { unreachable!("an object") };
    ToolDef::new("fresh_tool", |args: HashMap<String, String>| async move {
        format!("fresh and {}", args.get("color").map_or("plain", String::as_str))
    })
    .input_schema(schema)
}

/// `mcp ARGS` at a pseudo-terminal (util-linux `script`), typed into a piece at a time.
struct Terminal {
    child: Child,
    input: ChildStdin,
    output: mpsc::Receiver<Vec<u8>>,
    screen: String,
}

impl Terminal {
    /// `None` where `script` is not installed.
    fn start(args: &[&str], env: &[(&str, &str)]) -> Option<Terminal> {
        let mut child = crate::spawn_at_terminal(args, env)?;
        let input = child.stdin.take().expect("stdin");
        let mut stdout = child.stdout.take().expect("stdout");
        let (sender, output) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buffer = [0; 4096];
            while let Ok(read @ 1..) = stdout.read(&mut buffer) {
                if sender.send(buffer[..read].to_vec()).is_err() {
                    break;
                }
            }
        });
        Some(Terminal { child, input, output, screen: String::new() })
    }

    fn type_in(&mut self, keys: &str) {
        self.input.write_all(keys.as_bytes()).expect("typed");
        self.input.flush().expect("typed");
    }

    /// Reads the screen until `text` is on it `times` times.
    #[track_caller]
    fn wait_for(&mut self, text: &str, times: usize) {
        let deadline = Instant::now() + WAIT;
        while self.screen.matches(text).count() < times {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.output.recv_timeout(left) {
                Ok(bytes) => self.screen.push_str(&String::from_utf8_lossy(&bytes)),
                Err(_) => panic!("{text:?} x{times} never showed:\n{}", self.screen),
            }
        }
    }

    /// Everything shown until the program ended (bounded: the process is killed at the
    /// deadline, which fails the test).
    #[track_caller]
    fn finish(mut self) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.output.recv_timeout(left) {
                Ok(bytes) => self.screen.push_str(&String::from_utf8_lossy(&bytes)),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let _ = self.child.kill();
                    panic!("the shell did not end:\n{}", self.screen);
                }
            }
        }
        let _ = self.child.wait();
        self.screen.replace('\r', "")
    }
}

#[test]
fn the_shell_follows_list_changed_instead_of_listing_before_every_line() {
    let state = temp_dir("shell-changes");
    let env = [("XDG_STATE_HOME", state.to_str().expect("utf-8")), ("TERM", "xterm")];
    let listed = r#""method":"tools/list""#;
    for era in ["handshake", "modern"] {
        let server = growing_server();
        let args = ["--verbose", "--era", era, &server.url, "shell"];
        let Some(mut terminal) = Terminal::start(&args, &env) else {
            eprintln!("`script` (util-linux) is not installed: the terminal path is not tested");
            return;
        };
        // A line at a time, each once the one before printed its result (on a line of its
        // own, unlike the `--verbose` copy): the editor drops lines typed ahead in one go.
        terminal.wait_for("mcp> ", 1);
        terminal.type_in("call grow\n");
        terminal.wait_for("\ngrown", 1);
        terminal.wait_for("notifications/tools/list_changed", 1);
        // `noop` crosses the wire after the notification did, so once it answered the shell
        // has the change; Tab then completes the new tool and its argument.
        terminal.type_in("call noop\n");
        terminal.wait_for("\nnothing done", 1);
        terminal.type_in("call fresh\t co\tred\n");
        terminal.wait_for("\nfresh and red", 1);
        for done in 2..=3 {
            terminal.type_in("call noop\n");
            terminal.wait_for("\nnothing done", done);
        }
        terminal.type_in("exit\n");
        let screen = terminal.finish();
        // Once at the start, once after the change: not once per line (seven lines).
        assert_eq!(screen.matches(listed).count(), 2, "{era}: {screen}");
    }
}
