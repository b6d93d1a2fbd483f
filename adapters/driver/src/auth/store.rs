//! Where tokens live between runs: the [`TokenStore`] trait, an in-memory store and a
//! JSON file store (mode 0600), one entry per (MCP server's canonical resource URL, client id).
//! An entry keeps what a later process needs to refresh the token
//! ([`SavedAuthorization`]) next to it.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use mcp_proto::auth::{SavedAuthorization, SecretString};

use super::store_fs;
use serde::{Deserialize, Serialize};

/// Which entry of a store: the MCP server's URL and the client id the token was issued to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TokenKey {
    /// The MCP server's canonical resource URL ([`TokenKey::for_server`] makes it from the
    /// configured URL, so `HTTPS://Host:443/mcp/` and `https://host/mcp` share an entry).
    pub mcp_url: String,
    /// The client id (a pre-registered id, a Client ID Metadata Document URL, or `dynamic`).
    pub client_id: String,
}

impl TokenKey {
    /// The key of `client_id`'s token for the server at `url`, under its canonical resource
    /// URL (RFC 8707: lower-case scheme and host, no default port, fragment, query or
    /// trailing slash).
    pub fn for_server(url: &url::Url, client_id: impl Into<String>) -> Self {
        Self::new(
            mcp_proto::auth::metadata::canonical_resource(url),
            client_id,
        )
    }

    /// The key of `client_id`'s token for `mcp_url`, taken as it is.
    pub fn new(mcp_url: impl Into<String>, client_id: impl Into<String>) -> Self {
        Self {
            mcp_url: mcp_url.into(),
            client_id: client_id.into(),
        }
    }
}

/// A token as stored: wall-clock expiry, so that it survives the process. `Debug` redacts.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredToken {
    /// The access token.
    pub access_token: SecretString,
    /// The refresh token, if one was issued.
    pub refresh_token: Option<SecretString>,
    /// When the access token expires, in seconds since the UNIX epoch (`None`: unknown).
    pub expires_at: Option<u64>,
    /// The granted scopes, space-separated, when the server said.
    pub scope: Option<String>,
    /// What a later process needs to refresh the token (token endpoint, client), when the
    /// token came from an authorization flow.
    pub grant: Option<SavedAuthorization>,
}

impl StoredToken {
    /// A token without refresh token, expiry or scope.
    pub fn new(access_token: impl Into<SecretString>) -> Self {
        Self {
            access_token: access_token.into(),
            refresh_token: None,
            expires_at: None,
            scope: None,
            grant: None,
        }
    }

    /// Whether it has expired by now (or will within `margin_secs`).
    #[must_use]
    pub fn is_expired(&self, margin_secs: u64) -> bool {
        self.expires_at
            .is_some_and(|at| unix_now().saturating_add(margin_secs) >= at)
    }
}

impl fmt::Debug for StoredToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredToken")
            .field("access_token", &"<redacted>")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .field("grant", &self.grant)
            .finish()
    }
}

/// Seconds since the UNIX epoch (0 on a clock before 1970).
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Keeps tokens per (MCP URL, client id). Implementations must not log token values.
pub trait TokenStore: Send + Sync {
    /// The token stored under `key`, if any.
    ///
    /// # Errors
    ///
    /// The store could not be read (a file store's file is unreadable or not valid JSON).
    fn load(&self, key: &TokenKey) -> io::Result<Option<StoredToken>>;
    /// Stores `token` under `key`, replacing what was there.
    ///
    /// # Errors
    ///
    /// The store could not be written.
    fn save(&self, key: &TokenKey, token: &StoredToken) -> io::Result<()>;
    /// Removes every entry for `mcp_url` (whatever the client id); how many there were.
    ///
    /// # Errors
    ///
    /// The store could not be written.
    fn remove_url(&self, mcp_url: &str) -> io::Result<usize>;
    /// The keys of every entry, in storage order (for `logout --all` and listings). The
    /// default says the store cannot list itself.
    ///
    /// # Errors
    ///
    /// The store could not be read, or cannot list its entries.
    fn keys(&self) -> io::Result<Vec<TokenKey>> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this token store cannot list its entries",
        ))
    }

    /// Tries to take the store's refresh lock without waiting; `Ok(None)` while another
    /// holder (another process using the same store) has it. A client holds the guard across
    /// reading a token, refreshing it and saving the result, so that parallel processes
    /// refreshing a rotating refresh token each start from the one the last refresh stored.
    /// The default (a store only this process uses) is always free.
    ///
    /// # Errors
    ///
    /// The lock could not be taken for another reason than another holder.
    fn try_lock_refresh(&self) -> io::Result<Option<RefreshGuard>> {
        Ok(Some(RefreshGuard::new(())))
    }
}

/// Held while a token is read, refreshed and saved ([`TokenStore::try_lock_refresh`]); the
/// lock is released when it is dropped.
pub struct RefreshGuard {
    _held: Box<dyn Send + Sync>,
}

impl RefreshGuard {
    /// A guard holding `lock` (a locked file, say) until it is dropped.
    pub fn new(lock: impl Send + Sync + 'static) -> Self {
        Self {
            _held: Box::new(lock),
        }
    }
}

impl fmt::Debug for RefreshGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RefreshGuard")
    }
}

/// Tokens in memory, for one process (the default store).
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    entries: Mutex<HashMap<TokenKey, StoredToken>>,
}

impl MemoryTokenStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, key: &TokenKey) -> io::Result<Option<StoredToken>> {
        let map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        Ok(map.get(key).cloned())
    }

    fn save(&self, key: &TokenKey, token: &StoredToken) -> io::Result<()> {
        let mut map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        map.insert(key.clone(), token.clone());
        Ok(())
    }

    fn remove_url(&self, mcp_url: &str) -> io::Result<usize> {
        let mut map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let before = map.len();
        map.retain(|k, _| k.mcp_url != mcp_url);
        Ok(before - map.len())
    }

    fn keys(&self) -> io::Result<Vec<TokenKey>> {
        let map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        Ok(map.keys().cloned().collect())
    }
}

#[derive(Serialize, Deserialize, Default)]
struct FileContents {
    #[serde(default)]
    entries: Vec<FileEntry>,
}

#[derive(Serialize, Deserialize)]
struct FileEntry {
    mcp_url: String,
    client_id: String,
    access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refresh_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    grant: Option<FileGrant>,
}

/// [`SavedAuthorization`] as the file keeps it.
#[derive(Serialize, Deserialize)]
struct FileGrant {
    issuer: String,
    token_endpoint: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token_endpoint_auth_methods_supported: Option<Vec<String>>,
    client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token_endpoint_auth_method: Option<String>,
    resource: String,
}

impl From<&SavedAuthorization> for FileGrant {
    fn from(g: &SavedAuthorization) -> Self {
        Self {
            issuer: g.issuer.clone(),
            token_endpoint: g.token_endpoint.clone(),
            token_endpoint_auth_methods_supported: g.token_endpoint_auth_methods_supported.clone(),
            client_id: g.client_id.clone(),
            client_secret: g.client_secret.as_ref().map(|s| s.expose().to_owned()),
            token_endpoint_auth_method: g.token_endpoint_auth_method.clone(),
            resource: g.resource.clone(),
        }
    }
}

impl From<FileGrant> for SavedAuthorization {
    fn from(g: FileGrant) -> Self {
        let mut saved =
            SavedAuthorization::new(g.issuer, g.token_endpoint, g.client_id, g.resource);
        saved.token_endpoint_auth_methods_supported = g.token_endpoint_auth_methods_supported;
        saved.client_secret = g.client_secret.map(Into::into);
        saved.token_endpoint_auth_method = g.token_endpoint_auth_method;
        saved
    }
}

/// Tokens in one JSON file, readable only by its owner: the file is written with mode 0600
/// through a temporary file created exclusively under a random name in the same directory
/// (never following a symlink) and a rename, so a crash never leaves half a file; its
/// directory is created with mode 0700. A missing file is an empty store.
///
/// Several processes may share the file: every write is a read-modify-write under an
/// advisory lock on `<file>.lock`, and a refresh holds `<file>.refresh.lock`
/// ([`TokenStore::try_lock_refresh`]) from reading the token to saving the new one (`flock`
/// on Unix; elsewhere only this process's own operations are serialised).
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    /// Serialises read-modify-write cycles within the process.
    lock: Mutex<()>,
}

impl FileTokenStore {
    /// The store in `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            lock: Mutex::new(()),
        }
    }

    /// The default location: `$XDG_CONFIG_HOME/mcp-rs/tokens.json`, else
    /// `~/.config/mcp-rs/tokens.json`; `None` when neither variable is set.
    #[must_use]
    pub fn default_path() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| Path::new(&h).join(".config"))
            })?;
        Some(base.join("mcp-rs").join("tokens.json"))
    }

    /// Where the file is.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> io::Result<FileContents> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(FileContents::default()),
            Err(e) => Err(e),
        }
    }

    fn write(&self, contents: &FileContents) -> io::Result<()> {
        use std::io::Write as _;
        let dir = self.path.parent().unwrap_or(Path::new("."));
        store_fs::create_private_dir(dir)?;
        let bytes = serde_json::to_vec_pretty(contents).map_err(io::Error::other)?;
        let (tmp, mut f) = store_fs::create_temp(dir, &self.path)?;
        let written = f
            .write_all(&bytes)
            .and_then(|()| f.sync_all())
            .and_then(|()| {
                drop(f);
                std::fs::rename(&tmp, &self.path)
            });
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }

    /// Runs a read-modify-write of the file under the in-process mutex and the cross-process
    /// lock `<file>.lock`, so that parallel processes never lose each other's entries.
    fn modify<T>(&self, f: impl FnOnce(&mut FileContents) -> (T, bool)) -> io::Result<T> {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let _file_lock = store_fs::lock(&self.path, ".lock")?;
        let mut contents = self.read()?;
        let (out, changed) = f(&mut contents);
        if changed {
            self.write(&contents)?;
        }
        Ok(out)
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self, key: &TokenKey) -> io::Result<Option<StoredToken>> {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let contents = self.read()?;
        Ok(contents
            .entries
            .into_iter()
            .find(|e| e.mcp_url == key.mcp_url && e.client_id == key.client_id)
            .map(|e| StoredToken {
                access_token: e.access_token.into(),
                refresh_token: e.refresh_token.map(Into::into),
                expires_at: e.expires_at,
                scope: e.scope,
                grant: e.grant.map(Into::into),
            }))
    }

    fn save(&self, key: &TokenKey, token: &StoredToken) -> io::Result<()> {
        self.modify(|contents| {
            contents
                .entries
                .retain(|e| !(e.mcp_url == key.mcp_url && e.client_id == key.client_id));
            contents.entries.push(FileEntry {
                mcp_url: key.mcp_url.clone(),
                client_id: key.client_id.clone(),
                access_token: token.access_token.expose().to_owned(),
                refresh_token: token.refresh_token.as_ref().map(|t| t.expose().to_owned()),
                expires_at: token.expires_at,
                scope: token.scope.clone(),
                grant: token.grant.as_ref().map(Into::into),
            });
            ((), true)
        })
    }

    fn remove_url(&self, mcp_url: &str) -> io::Result<usize> {
        self.modify(|contents| {
            let before = contents.entries.len();
            contents.entries.retain(|e| e.mcp_url != mcp_url);
            let removed = before - contents.entries.len();
            (removed, removed > 0)
        })
    }

    fn try_lock_refresh(&self) -> io::Result<Option<RefreshGuard>> {
        Ok(store_fs::try_lock(&self.path, ".refresh.lock")?.map(RefreshGuard::new))
    }

    fn keys(&self) -> io::Result<Vec<TokenKey>> {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        Ok(self
            .read()?
            .entries
            .into_iter()
            .map(|e| TokenKey::new(e.mcp_url, e.client_id))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mcp-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn file_store_round_trips_one_entry_per_key_with_mode_0600() {
        let dir = temp_dir("rt");
        let store = FileTokenStore::new(dir.join("sub").join("tokens.json"));
        let a = TokenKey::new("http://127.0.0.1:1/mcp", "client-a");
        let b = TokenKey::new("http://127.0.0.1:1/mcp", "client-b");
        assert_eq!(store.load(&a).unwrap(), None);
        let mut t = StoredToken::new("tok-1");
        t.refresh_token = Some("ref-1".into());
        t.expires_at = Some(unix_now() + 3600);
        store.save(&a, &t).unwrap();
        let mut t2 = StoredToken::new("tok-2");
        let mut grant = SavedAuthorization::new("http://as", "http://as/token", "dyn", "http://r");
        grant.client_secret = Some("cs".into());
        t2.grant = Some(grant);
        store.save(&a, &t2).unwrap();
        store.save(&b, &StoredToken::new("tok-b")).unwrap();
        let again = FileTokenStore::new(store.path());
        let loaded = again.load(&a).unwrap().unwrap();
        assert_eq!(loaded, t2, "the grant survives the file");
        assert_eq!(again.keys().unwrap(), [a.clone(), b.clone()]);
        assert_eq!(
            again.load(&b).unwrap().unwrap().access_token.expose(),
            "tok-b"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(store.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(store.remove_url("http://127.0.0.1:1/mcp").unwrap(), 2);
        assert_eq!(store.load(&a).unwrap(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn writes_never_follow_a_planted_symlink_and_leave_no_temporary_file() {
        let dir = temp_dir("link");
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, b"keep me").unwrap();
        let path = dir.join("tokens.json");
        // The names an attacker could predict before: the old temporary file's, and a few.
        for name in [
            format!(".tokens.json.tmp{}", std::process::id()),
            ".tokens.json.tmp".to_owned(),
        ] {
            std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
        }
        let store = FileTokenStore::new(&path);
        let key = TokenKey::new("u", "c");
        store.save(&key, &StoredToken::new("tok")).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
        let tmp_files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp") && !n.starts_with(".tokens.json.tmp"))
            .collect();
        assert!(tmp_files.is_empty(), "{tmp_files:?}");
        // A symlink where the lock file goes is not followed either: the write fails.
        std::fs::remove_file(dir.join("tokens.json.lock")).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("tokens.json.lock")).unwrap();
        assert!(store.save(&key, &StoredToken::new("tok2")).is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn the_refresh_lock_excludes_other_store_objects_until_dropped() {
        let dir = temp_dir("lock");
        let path = dir.join("tokens.json");
        // Separate objects open the lock file separately, as separate processes do.
        let (a, b) = (FileTokenStore::new(&path), FileTokenStore::new(&path));
        let held = a.try_lock_refresh().unwrap().expect("free at first");
        assert!(b.try_lock_refresh().unwrap().is_none(), "held by a");
        drop(held);
        assert!(b.try_lock_refresh().unwrap().is_some(), "free again");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn parallel_writers_lose_no_entry() {
        let dir = temp_dir("parallel");
        let path = dir.join("tokens.json");
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let store = FileTokenStore::new(path);
                    for i in 0..20 {
                        let key = TokenKey::new(format!("http://s{t}/mcp"), format!("c{i}"));
                        store
                            .save(&key, &StoredToken::new(format!("t{t}-{i}")))
                            .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(FileTokenStore::new(&path).keys().unwrap().len(), 160);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn stored_token_debug_redacts_and_expiry_uses_the_wall_clock() {
        let mut t = StoredToken::new("very-secret");
        t.refresh_token = Some("also-secret".into());
        let d = format!("{t:?}");
        assert!(!d.contains("secret"), "{d}");
        assert!(!t.is_expired(0));
        t.expires_at = Some(unix_now() + 10);
        assert!(!t.is_expired(0));
        assert!(t.is_expired(60));
    }

    #[test]
    fn a_corrupt_file_is_an_error_not_an_empty_store() {
        let dir = temp_dir("bad");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tokens.json");
        std::fs::write(&path, b"{not json").unwrap();
        let store = FileTokenStore::new(&path);
        let key = TokenKey::new("u", "c");
        assert_eq!(
            store.load(&key).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
