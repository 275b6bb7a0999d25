//! [`FileTokenStore`]: tokens and client registrations kept in one JSON file, so that a
//! command run later (another process) can use and refresh what an earlier one obtained.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::{AuthError, ClientCredentials, StoredTokens, TokenStore};

/// The file format's version; a file with another one is refused rather than misread.
const FORMAT_VERSION: u32 = 1;

/// A [`TokenStore`] in one JSON file: the tokens of each MCP server (keyed by the server's
/// URL, each naming the issuer that issued them) and this client's registration with each
/// authorization server (keyed by issuer), so a later process can refresh a token without
/// registering again.
///
/// - **Private:** on Unix the file is created with mode `0600` (never wider, not even for a
///   moment: the mode is set when the file is created, not after) and a missing parent
///   folder with `0700`. The file holds bearer and refresh tokens and client secrets.
/// - **Atomic:** every change writes a whole new file next to the old one (same folder, so
///   the same file system), flushes it to disk, then renames it over the old one. A reader,
///   in this process or another, sees the old file or the new one, never a torn one, and a
///   crash mid-write leaves the old file intact.
/// - **Concurrency:** changes within one process are serialized. Two processes writing at
///   once each read, change and replace the whole file, so the last writer wins: the file is
///   never corrupt, but one process's change can be lost (it will then log in or refresh
///   again). There is no cross-process lock, which keeps the store free of platform locking
///   APIs and of stale lock files.
/// - **Errors:** a file that cannot be read, is not JSON, or has another format version is an
///   error naming the path ([`FileTokenStore::check`], [`FileTokenStore::load`]), never a
///   panic. The [`TokenStore`] methods cannot return errors: they treat such a file as empty,
///   log a warning, and keep the error for [`FileTokenStore::last_error`].
///
/// ```no_run
/// # fn run() -> Result<(), modelcontext::auth::client::AuthError> {
/// use modelcontext::auth::client::{FileTokenStore, OAuthClient};
/// let store = FileTokenStore::new("/home/me/.config/my-app/tokens.json");
/// store.check()?; // a corrupt file is reported now, with its path
/// let oauth = OAuthClient::authorization_code("my-app", "http://127.0.0.1:8765/callback", |url| async move {
///     Err::<String, String>(format!("log in first: {url}"))
/// })
/// .token_store(store);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    /// Serializes read-change-replace within this process.
    lock: Mutex<()>,
    last_error: Mutex<Option<AuthError>>,
}

/// The whole file.
#[derive(Default, Serialize, Deserialize)]
struct Contents {
    version: u32,
    /// MCP server URL → its tokens.
    #[serde(default)]
    servers: BTreeMap<String, TokensEntry>,
    /// Authorization server issuer → this client's registration there.
    #[serde(default)]
    clients: BTreeMap<String, ClientEntry>,
}

#[derive(Serialize, Deserialize)]
struct TokensEntry {
    issuer: String,
    resource: String,
    access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refresh_token: Option<String>,
    /// Seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct ClientEntry {
    client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token_endpoint_auth_method: Option<String>,
}

impl FileTokenStore {
    /// A store in the file at `path`. Nothing is read or created until it is used; a missing
    /// file is an empty store.
    pub fn new(path: impl Into<PathBuf>) -> FileTokenStore {
        FileTokenStore { path: path.into(), lock: Mutex::new(()), last_error: Mutex::new(None) }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the file to check it: `Ok` when it is missing or readable, an error naming the
    /// path when it cannot be read or is not a token file.
    pub fn check(&self) -> Result<(), AuthError> {
        self.read().map(drop)
    }

    /// The tokens for the MCP server at `server_url`, or why the file cannot be read.
    pub fn load(&self, server_url: &str) -> Result<Option<StoredTokens>, AuthError> {
        Ok(self.read()?.servers.remove(server_url).map(TokensEntry::into_tokens))
    }

    /// The URLs of the MCP servers that have tokens in the file.
    pub fn servers(&self) -> Result<Vec<String>, AuthError> {
        Ok(self.read()?.servers.into_keys().collect())
    }

    /// Forgets the tokens for `server_url`, and the registration with their issuer when no
    /// other server's tokens come from it. Returns the tokens removed, if there were any.
    pub fn remove(&self, server_url: &str) -> Result<Option<StoredTokens>, AuthError> {
        let mut removed = None;
        self.update(|contents| {
            removed = contents.servers.remove(server_url);
            if let Some(entry) = &removed {
                let issuer_in_use = contents.servers.values().any(|e| e.issuer == entry.issuer);
                if !issuer_in_use {
                    contents.clients.remove(&entry.issuer);
                }
            }
        })?;
        Ok(removed.map(TokensEntry::into_tokens))
    }

    /// The last error a [`TokenStore`] method met (they cannot return one), taken.
    pub fn last_error(&self) -> Option<AuthError> {
        self.last_error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    fn read(&self) -> Result<Contents, AuthError> {
        let text = match fs::read(&self.path) {
            Ok(text) => text,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Contents::default()),
            Err(err) => return Err(self.error("cannot read", &err)),
        };
        let contents: Contents = serde_json::from_slice(&text)
            .map_err(|err| self.error("is not a valid token file", &err))?;
        if contents.version != FORMAT_VERSION {
            return Err(AuthError::new(format!(
                "{}: token file format version {} (this program reads version {FORMAT_VERSION})",
                self.path.display(),
                contents.version
            )));
        }
        Ok(contents)
    }

    /// Reads the file, changes it and replaces it, all under the in-process lock.
    fn update(&self, change: impl FnOnce(&mut Contents)) -> Result<(), AuthError> {
        let _serialized = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut contents = self.read()?;
        contents.version = FORMAT_VERSION;
        change(&mut contents);
        let text = serde_json::to_vec_pretty(&contents)
            .map_err(|err| self.error("cannot be encoded", &err))?;
        self.replace(&text).map_err(|err| self.error("cannot be written", &err))
    }

    /// Writes `text` to a new private file in the same folder, flushes it, and renames it
    /// over the store's file (atomic on POSIX and, for files, on Windows).
    fn replace(&self, text: &[u8]) -> io::Result<()> {
        let folder = match self.path.parent() {
            Some(folder) if !folder.as_os_str().is_empty() => folder,
            _ => Path::new("."),
        };
        create_private_folder(folder)?;
        let temporary = folder.join(temporary_name(&self.path));
        let written = (|| {
            let mut file = create_private_file(&temporary)?;
            file.write_all(text)?;
            file.sync_all()?;
            fs::rename(&temporary, &self.path)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&temporary);
        }
        written?;
        sync_folder(folder);
        Ok(())
    }

    fn error(&self, what: &str, err: &dyn std::fmt::Display) -> AuthError {
        AuthError::new(format!("{}: token file {what}: {err}", self.path.display()))
    }

    /// Keeps `err` for [`FileTokenStore::last_error`] and logs it.
    fn remember(&self, err: AuthError) {
        tracing::warn!(%err, "token store");
        *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(err);
    }
}

impl TokenStore for FileTokenStore {
    fn tokens(&self, server_url: &str) -> Option<StoredTokens> {
        self.load(server_url).unwrap_or_else(|err| {
            self.remember(err);
            None
        })
    }

    fn save_tokens(&self, server_url: &str, tokens: StoredTokens) {
        let entry = TokensEntry::from_tokens(tokens);
        if let Err(err) = self.update(|c| drop(c.servers.insert(server_url.to_owned(), entry))) {
            self.remember(err);
        }
    }

    fn client(&self, issuer: &str) -> Option<ClientCredentials> {
        match self.read() {
            Ok(mut contents) => contents.clients.remove(issuer).map(ClientEntry::into_credentials),
            Err(err) => {
                self.remember(err);
                None
            }
        }
    }

    fn save_client(&self, issuer: &str, client: ClientCredentials) {
        let entry = ClientEntry::from_credentials(client);
        if let Err(err) = self.update(|c| drop(c.clients.insert(issuer.to_owned(), entry))) {
            self.remember(err);
        }
    }
}

impl TokensEntry {
    fn from_tokens(tokens: StoredTokens) -> TokensEntry {
        let expires_at = tokens
            .expires_at
            .map(|at| at.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0));
        TokensEntry {
            issuer: tokens.issuer,
            resource: tokens.resource,
            access_token: tokens.access_token,
            refresh_token: tokens.refresh_token,
            expires_at,
            scope: tokens.scope,
        }
    }

    fn into_tokens(self) -> StoredTokens {
        StoredTokens {
            access_token: self.access_token,
            refresh_token: self.refresh_token,
            // A time past what `SystemTime` holds is as good as never.
            expires_at: self
                .expires_at
                .and_then(|secs| UNIX_EPOCH.checked_add(Duration::from_secs(secs))),
            scope: self.scope,
            issuer: self.issuer,
            resource: self.resource,
        }
    }
}

impl ClientEntry {
    fn from_credentials(client: ClientCredentials) -> ClientEntry {
        ClientEntry {
            client_id: client.client_id,
            client_secret: client.client_secret,
            token_endpoint_auth_method: client.token_endpoint_auth_method,
        }
    }

    fn into_credentials(self) -> ClientCredentials {
        ClientCredentials {
            client_id: self.client_id,
            client_secret: self.client_secret,
            token_endpoint_auth_method: self.token_endpoint_auth_method,
        }
    }
}

/// `.tokens.json.<pid>.<n>.tmp`: unique per process and write, and hidden.
fn temporary_name(path: &Path) -> String {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    format!(".{name}.{}.{n}.tmp", std::process::id())
}

#[cfg(unix)]
fn create_private_file(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)
}

#[cfg(not(unix))]
fn create_private_file(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

#[cfg(unix)]
fn create_private_folder(folder: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new().recursive(true).mode(0o700).create(folder)
}

#[cfg(not(unix))]
fn create_private_folder(folder: &Path) -> io::Result<()> {
    fs::create_dir_all(folder)
}

/// Makes the rename durable (POSIX records it in the folder). Best effort: the new file is
/// already complete, and not every file system lets a folder be synced.
fn sync_folder(folder: &Path) {
    #[cfg(unix)]
    if let Ok(folder) = File::open(folder) {
        let _ = folder.sync_all();
    }
    #[cfg(not(unix))]
    let _ = folder;
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;

    /// A fresh folder under the system's temporary folder, removed at the end.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let nanos = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_nanos();
            let dir = std::env::temp_dir()
                .join(format!("modelcontext-{name}-{}-{nanos}", std::process::id()));
            Scratch(dir)
        }

        fn file(&self) -> PathBuf {
            self.0.join("mcp").join("tokens.json")
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn tokens(access: &str) -> StoredTokens {
        StoredTokens {
            access_token: access.into(),
            refresh_token: Some("refresh".into()),
            expires_at: Some(UNIX_EPOCH + Duration::from_secs(2_000_000_000)),
            scope: Some("files:read offline_access".into()),
            issuer: "http://127.0.0.1:1".into(),
            resource: "http://127.0.0.1:2/mcp".into(),
        }
    }

    fn client() -> ClientCredentials {
        ClientCredentials {
            client_id: "dyn-client".into(),
            client_secret: Some("secret".into()),
            token_endpoint_auth_method: Some("client_secret_basic".into()),
        }
    }

    #[test]
    fn tokens_and_clients_round_trip_through_the_file() {
        let scratch = Scratch::new("round-trip");
        let store = FileTokenStore::new(scratch.file());
        assert_eq!(store.tokens("http://127.0.0.1:2/mcp"), None, "a missing file is empty");
        store.save_tokens("http://127.0.0.1:2/mcp", tokens("a1"));
        store.save_client("http://127.0.0.1:1", client());
        assert_eq!(store.last_error(), None);

        // Another store on the same file: what another process would see.
        let other = FileTokenStore::new(scratch.file());
        assert_eq!(other.tokens("http://127.0.0.1:2/mcp"), Some(tokens("a1")));
        assert_eq!(other.client("http://127.0.0.1:1"), Some(client()));
        assert_eq!(other.servers(), Ok(vec!["http://127.0.0.1:2/mcp".to_owned()]));

        assert_eq!(other.remove("http://127.0.0.1:2/mcp"), Ok(Some(tokens("a1"))));
        assert_eq!(store.tokens("http://127.0.0.1:2/mcp"), None);
        assert_eq!(store.client("http://127.0.0.1:1"), None, "no server uses that issuer now");
        assert_eq!(store.remove("http://127.0.0.1:2/mcp"), Ok(None));
    }

    #[cfg(unix)]
    #[test]
    fn the_file_and_its_folder_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let scratch = Scratch::new("mode");
        let store = FileTokenStore::new(scratch.file());
        store.save_tokens("http://127.0.0.1:2/mcp", tokens("a1"));
        let mode = |p: &Path| fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
        assert_eq!(mode(&scratch.file()), 0o600);
        assert_eq!(mode(scratch.file().parent().expect("folder")), 0o700);
        // A file someone widened is replaced by a private one on the next write.
        fs::set_permissions(scratch.file(), fs::Permissions::from_mode(0o644)).expect("chmod");
        store.save_tokens("http://127.0.0.1:2/mcp", tokens("a2"));
        assert_eq!(mode(&scratch.file()), 0o600);
    }

    #[test]
    fn a_write_replaces_the_file_and_leaves_no_temporary_behind() {
        let scratch = Scratch::new("atomic");
        let store = FileTokenStore::new(scratch.file());
        store.save_tokens("http://127.0.0.1:2/mcp", tokens("a1"));
        let before = fs::read(scratch.file()).expect("read");
        // A reader holding the old file keeps reading the old file: it was replaced, not
        // rewritten in place.
        let mut held = File::open(scratch.file()).expect("open");
        store.save_tokens("http://127.0.0.1:2/mcp", tokens("a2"));
        let mut old = Vec::new();
        io::Read::read_to_end(&mut held, &mut old).expect("read held");
        assert_eq!(old, before);
        assert_eq!(store.tokens("http://127.0.0.1:2/mcp"), Some(tokens("a2")));
        let names: Vec<_> = fs::read_dir(scratch.file().parent().expect("folder"))
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["tokens.json"]);
    }

    #[test]
    fn concurrent_writers_never_leave_a_torn_file() {
        let scratch = Scratch::new("concurrent");
        let path = scratch.file();
        // One store per thread, as two processes would have: no shared in-process lock.
        let writers: Vec<_> = (0..4)
            .map(|n| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let store = FileTokenStore::new(path);
                    for i in 0..25 {
                        let url = format!("http://127.0.0.1:2/mcp{n}");
                        store.save_tokens(&url, tokens(&format!("{n}-{i}")));
                        store.check().expect("the file always parses");
                        assert_eq!(store.last_error(), None, "every write succeeded");
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().expect("writer");
        }
        // Last writer wins: every server's last write may have been lost to another
        // process's, but the file is whole and holds some writer's last state.
        let store = FileTokenStore::new(path);
        assert!(!store.servers().expect("readable").is_empty());
    }

    #[test]
    fn a_corrupt_file_is_an_error_naming_it_not_a_panic() {
        let scratch = Scratch::new("corrupt");
        let store = FileTokenStore::new(scratch.file());
        store.save_tokens("http://127.0.0.1:2/mcp", tokens("a1"));
        fs::write(scratch.file(), b"{\"version\": 1, \"servers\": [").expect("corrupt it");
        let path = scratch.file().display().to_string();
        let err = store.check().expect_err("corrupt");
        assert!(err.to_string().starts_with(&path), "{err}");
        assert!(err.to_string().contains("not a valid token file"), "{err}");
        assert_eq!(store.tokens("http://127.0.0.1:2/mcp"), None);
        assert!(store.last_error().is_some_and(|e| e.to_string().contains(&path)));
        // A write does not overwrite what it could not read.
        store.save_tokens("http://127.0.0.1:2/mcp", tokens("a2"));
        assert!(store.last_error().is_some());
        assert_eq!(fs::read(scratch.file()).expect("read"), b"{\"version\": 1, \"servers\": [");

        fs::write(scratch.file(), b"{\"version\": 9}").expect("future format");
        let err = store.check().expect_err("unknown version");
        assert!(err.to_string().contains("version 9"), "{err}");
    }
}
