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
    /// `--tls-port` and the files it needs, for a server that only speaks TLS.
    tls: Vec<String>,
}

impl RedisServer {
    /// A fresh server, or `None` (after saying why) when `redis-server` is not installed and
    /// `CI` is not set.
    pub async fn start() -> Option<RedisServer> {
        RedisServer::start_with(&[]).await
    }

    /// A fresh server started with `extra` flags (`--replicaof HOST PORT`, say).
    #[cfg_attr(not(any(feature = "sentinel", feature = "cluster")), allow(dead_code))]
    pub async fn start_with(extra: &[&str]) -> Option<RedisServer> {
        let binary = find_binary()?;
        let (port, dir) = free_port_and_dir();
        let extra: Vec<String> = extra.iter().map(|flag| (*flag).to_owned()).collect();
        let child = launch(&binary, port, &dir, &extra).await;
        Some(RedisServer { child, port, dir, binary, tls: Vec::new() })
    }

    #[cfg_attr(not(any(feature = "sentinel", feature = "cluster")), allow(dead_code))]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A fresh server that speaks only TLS, with a certificate for 127.0.0.1 signed by a CA
    /// made here; also returns that CA's root (PEM), which clients must be told to trust.
    #[cfg(feature = "tls")]
    pub async fn start_tls() -> Option<(RedisServer, String)> {
        let mut server = RedisServer::start().await?;
        let _ = server.child.kill().await;
        let (root, files) = test_certificates(&server.dir);
        let port = server.port.to_string();
        server.tls = ["--port", "0", "--tls-port", &port, "--tls-auth-clients", "no"]
            .into_iter()
            .map(str::to_owned)
            .chain(files)
            .collect();
        server.child = launch(&server.binary, server.port, &server.dir, &server.tls).await;
        Some((server, root))
    }

    pub fn url(&self) -> String {
        let scheme = if self.tls.is_empty() { "redis" } else { "rediss" };
        format!("{scheme}://127.0.0.1:{}/", self.port)
    }

    /// A deployment named `name` on this server.
    pub fn deployment(&self, name: &str) -> Deployment {
        Deployment::new(&self.url(), name).expect("a valid deployment")
    }

    /// `ACL SETUSER name rules...`, the rules given as one line of words.
    pub async fn add_user(&self, name: &str, rules: &str) {
        let client = redis::Client::open(self.url()).expect("url");
        let mut admin = client.get_multiplexed_async_connection().await.expect("connected");
        let mut setuser = redis::cmd("ACL");
        setuser.arg("SETUSER").arg(name).arg(rules.split(' ').collect::<Vec<_>>());
        let () = setuser.query_async(&mut admin).await.expect("ACL SETUSER");
    }

    /// Kills the server (as a crash would) and waits for it to be gone.
    pub async fn kill(&mut self) {
        self.child.kill().await.expect("redis-server killed");
    }

    /// Starts a new server on the same port, empty, as a restarted Redis would be.
    pub async fn start_again(&mut self) {
        self.child = launch(&self.binary, self.port, &self.dir, &self.tls).await;
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A free loopback port, and a new temporary folder named after it.
fn free_port_and_dir() -> (u16, PathBuf) {
    let port = free_port();
    let dir =
        std::env::temp_dir().join(format!("modelcontext-redis-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    (port, dir)
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

/// A root CA and a certificate for 127.0.0.1 it signed, written into `dir`: the root's PEM,
/// and the `redis-server` flags that name the files.
#[cfg(feature = "tls")]
fn test_certificates(dir: &std::path::Path) -> (String, Vec<String>) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let mut root = CertificateParams::new(Vec::<String>::new()).expect("no names");
    root.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let root_key = KeyPair::generate().expect("a key");
    let root = root.self_signed(&root_key).expect("a root");
    let leaf_key = KeyPair::generate().expect("a key");
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .expect("an IP address name")
        .signed_by(&leaf_key, &root, &root_key)
        .expect("signed");
    let mut flags = Vec::new();
    for (flag, file, pem) in [
        ("--tls-cert-file", "cert.pem", leaf.pem()),
        ("--tls-key-file", "key.pem", leaf_key.serialize_pem()),
        ("--tls-ca-cert-file", "ca.pem", root.pem()),
    ] {
        let path = dir.join(file);
        std::fs::write(&path, pem).expect("a certificate file");
        flags.extend([flag.to_owned(), path.display().to_string()]);
    }
    (root.pem(), flags)
}

/// Starts `redis-server` (with `extra` flags) and returns once it logged that it accepts
/// connections.
async fn launch(binary: &PathBuf, port: u16, dir: &PathBuf, extra: &[String]) -> Child {
    launch_logging(binary, None, port, dir, extra, "Ready to accept connections").await
}

/// A Redis Sentinel of the test's own on a free loopback port, with `config` as its
/// configuration file (in a temporary folder: the sentinel rewrites it), killed when dropped.
#[cfg(feature = "sentinel")]
pub struct SentinelServer {
    _child: Child,
    port: u16,
    dir: PathBuf,
}

#[cfg(feature = "sentinel")]
impl SentinelServer {
    /// Returns once the sentinel monitors its first master.
    pub async fn start(config: &str) -> Option<SentinelServer> {
        let binary = find_binary()?;
        let (port, dir) = free_port_and_dir();
        let file = dir.join("sentinel.conf");
        std::fs::write(&file, config).expect("sentinel.conf written");
        let sentinel = ["--sentinel".to_owned()];
        let child = launch_logging(&binary, Some(&file), port, &dir, &sentinel, "+monitor").await;
        Some(SentinelServer { _child: child, port, dir })
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

#[cfg(feature = "sentinel")]
impl Drop for SentinelServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts `redis-server` (on `config` if given, with `extra` flags) and returns once it
/// logged a line with `ready` in it.
async fn launch_logging(
    binary: &PathBuf,
    config: Option<&std::path::Path>,
    port: u16,
    dir: &PathBuf,
    extra: &[String],
    ready: &str,
) -> Child {
    let mut child = Command::new(binary)
        .args(config)
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
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("redis-server starts");
    let stdout = child.stdout.take().expect("its stdout");
    let mut lines = BufReader::new(stdout).lines();
    let ready = async {
        while let Some(line) = lines.next_line().await.expect("its log") {
            if line.contains(ready) {
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

/// Commands that a connection's set-up and the count itself make, not the code under test.
pub const BOOKKEEPING: [&str; 3] = ["info", "hello", "client|setinfo"];

/// Every command Redis has run so far, by name, from `INFO commandstats`, less `ignored`.
pub async fn commands_run(
    connection: &mut redis::aio::MultiplexedConnection,
    ignored: &[&str],
) -> Result<std::collections::BTreeMap<String, u64>, redis::RedisError> {
    let info: String = redis::cmd("INFO").arg("commandstats").query_async(connection).await?;
    Ok(info
        .lines()
        .filter_map(|line| {
            let (name, stats) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = stats.strip_prefix("calls=")?.split(',').next()?.parse().ok()?;
            Some((name.to_owned(), calls))
        })
        .filter(|(name, _)| !ignored.contains(&name.as_str()))
        .collect())
}

impl RedisServer {
    /// Every command this server has run so far, by name, less the [`BOOKKEEPING`] ones.
    pub async fn commands_run(&self) -> std::collections::BTreeMap<String, u64> {
        let client = redis::Client::open(self.url()).expect("url");
        let mut connection = client.get_multiplexed_async_connection().await.expect("connected");
        commands_run(&mut connection, &BOOKKEEPING).await.expect("INFO commandstats")
    }
}

/// A connection of the test's own to the server at `url`.
#[cfg(any(feature = "sentinel", feature = "cluster"))]
pub async fn connect(url: &str) -> redis::aio::MultiplexedConnection {
    let client = redis::Client::open(url).expect("url");
    client.get_multiplexed_async_connection().await.expect("connected")
}

/// The bound of a polling loop: [`Deadline::next`] waits 10 ms, and fails the test past it.
#[cfg(any(feature = "sentinel", feature = "cluster"))]
pub struct Deadline {
    what: &'static str,
    bound: Duration,
    at: std::time::Instant,
}

#[cfg(any(feature = "sentinel", feature = "cluster"))]
impl Deadline {
    pub fn new(what: &'static str, bound: Duration) -> Deadline {
        Deadline { what, bound, at: std::time::Instant::now() + bound }
    }

    pub async fn next(&self) {
        let late = std::time::Instant::now() >= self.at;
        assert!(!late, "{}: not within {:?}", self.what, self.bound);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
