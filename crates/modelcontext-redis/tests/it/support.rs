//! A `redis-server` of the test's own: a free loopback port, no persistence, a temporary
//! folder, killed when dropped.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use modelcontext_redis::Deployment;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How long a starting `redis-server` may take to say it is ready.
const READY_DEADLINE: Duration = Duration::from_secs(10);

pub struct RedisServer {
    child: Child,
    port: u16,
    dir: PathBuf,
    binary: PathBuf,
}

impl RedisServer {
    /// A fresh server, or `None` (after saying why) when `redis-server` is not installed and
    /// `CI` is not set.
    pub async fn start() -> Option<RedisServer> {
        let binary = find_binary()?;
        let port = free_port();
        let dir =
            std::env::temp_dir().join(format!("modelcontext-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        let child = launch(&binary, port, &dir).await;
        Some(RedisServer { child, port, dir, binary })
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A deployment named `name` on this server.
    pub fn deployment(&self, name: &str) -> Deployment {
        Deployment::new(&self.url(), name).expect("a valid deployment")
    }

    /// Kills the server (as a crash would) and waits for it to be gone.
    pub async fn kill(&mut self) {
        self.child.kill().await.expect("redis-server killed");
    }

    /// Starts a new server on the same port, empty, as a restarted Redis would be.
    pub async fn start_again(&mut self) {
        self.child = launch(&self.binary, self.port, &self.dir).await;
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn find_binary() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths).map(|dir| dir.join("redis-server")).find(|p| p.is_file())
    });
    if found.is_none() {
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
        assert!(
            !ci,
            "redis-server is not installed and CI is set: `apt-get install -y redis-server`"
        );
        eprintln!(
            "SKIPPED: redis-server is not on PATH; install it (`apt-get install -y redis-server`) to run the Redis tests"
        );
    }
    found
}

/// A port nobody listens on right now (the OS picks it; the listener is closed at once).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.local_addr().expect("its address").port()
}

/// Starts `redis-server` and returns once it logged that it accepts connections.
async fn launch(binary: &PathBuf, port: u16, dir: &PathBuf) -> Child {
    let mut child = Command::new(binary)
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .arg("--dir")
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("redis-server starts");
    let stdout = child.stdout.take().expect("its stdout");
    let mut lines = BufReader::new(stdout).lines();
    let ready = async {
        while let Some(line) = lines.next_line().await.expect("its log") {
            if line.contains("Ready to accept connections") {
                return;
            }
        }
        panic!("redis-server on port {port} exited before it was ready");
    };
    tokio::time::timeout(READY_DEADLINE, ready).await.expect("redis-server ready in time");
    // Keep reading its log, or a full pipe would stall it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    child
}
