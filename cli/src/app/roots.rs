//! The roots the CLI offers a server (`--root DIR`): the `roots/list` answer and the
//! `roots.listChanged` capability.
//!
//! [`Roots::from_dirs`] checks and canonicalizes the directories once, before connecting, so a
//! typo is a usage error (exit 2) rather than a root the server cannot use. Each root is the
//! directory's `file://` URI (percent-encoded by the `url` crate) named after the directory.
//! The list lives behind a lock shared by every clone: [`Roots::replace`] swaps it and sends
//! `notifications/roots/list_changed`, which is why the capability declares `listChanged`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use mcp_proto::jsonrpc::ErrorObject;
use mcp_tokio::{Client, HandlerFuture, Root, RootsHandler};

/// The roots offered to the server; cheap to clone (the clones share one list).
#[derive(Debug, Clone, Default)]
pub struct Roots {
    list: Arc<Mutex<Vec<Root>>>,
}

/// Why a `--root` directory cannot be offered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--root {}: {reason}", .dir.display())]
pub struct RootError {
    /// The directory as given.
    pub dir: PathBuf,
    /// What is wrong with it.
    pub reason: String,
}

impl Roots {
    /// Canonicalizes every directory (which must exist and be a directory) and makes each a
    /// root; a directory given twice is offered once.
    pub fn from_dirs(dirs: &[PathBuf]) -> Result<Self, RootError> {
        let mut roots: Vec<Root> = Vec::with_capacity(dirs.len());
        for dir in dirs {
            let root = root_of(dir)?;
            if !roots.iter().any(|r| r.uri == root.uri) {
                roots.push(root);
            }
        }
        Ok(Roots {
            list: Arc::new(Mutex::new(roots)),
        })
    }

    /// The roots now, in the order given.
    pub fn list(&self) -> Vec<Root> {
        // A poisoned lock only means a panic elsewhere mid-swap; the list is still whole.
        self.list
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the roots and tells the server (`notifications/roots/list_changed`), which
    /// then asks `roots/list` again. Call it whenever the offered directories change.
    pub fn replace(&self, client: &Client, dirs: &[PathBuf]) -> Result<(), String> {
        let fresh = Roots::from_dirs(dirs).map_err(|e| e.to_string())?.list();
        *self.list.lock().unwrap_or_else(PoisonError::into_inner) = fresh;
        client
            .notify("notifications/roots/list_changed", ())
            .map_err(|e| e.to_string())
    }
}

impl RootsHandler for Roots {
    fn list_roots(&self) -> HandlerFuture<'_, Result<Vec<Root>, ErrorObject>> {
        let roots = self.list();
        Box::pin(async move { Ok(roots) })
    }

    fn list_changed(&self) -> bool {
        true
    }
}

/// The root for one directory: its canonical `file://` URI, named after its last component.
fn root_of(dir: &Path) -> Result<Root, RootError> {
    let error = |reason: String| RootError {
        dir: dir.to_owned(),
        reason,
    };
    let canonical = std::fs::canonicalize(dir).map_err(|e| error(e.to_string()))?;
    if !canonical.is_dir() {
        return Err(error("not a directory".into()));
    }
    // `from_directory_path` only refuses relative paths, and a canonical path is absolute.
    let uri = url::Url::from_directory_path(&canonical)
        .map_err(|()| error("cannot be written as a file:// URI".into()))?;
    // `/` has no last component: name it by its path.
    let name = canonical.file_name().map_or_else(
        || canonical.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok(Root::new(uri.as_str().trim_end_matches('/').to_owned()).with_name(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mcp-roots-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn directories_become_canonical_file_uris_named_after_the_directory() {
        let base = temp("canon");
        let spaced = base.join("my project");
        std::fs::create_dir_all(&spaced).unwrap();
        let dotted = spaced.join("..").join("my project");
        let roots = Roots::from_dirs(&[dotted, spaced.clone()]).unwrap().list();
        assert_eq!(roots.len(), 1, "the same directory twice is one root");
        let canonical = std::fs::canonicalize(&spaced).unwrap();
        assert_eq!(
            roots[0].uri,
            format!(
                "file://{}",
                canonical.display().to_string().replace(' ', "%20")
            )
        );
        assert_eq!(roots[0].name.as_deref(), Some("my project"));
    }

    #[tokio::test]
    async fn replacing_the_roots_tells_the_server_which_lists_them_again() {
        use mcp_tokio::mcp_driver::testing::FakeServer;
        use serde_json::{Value, json};

        let base = temp("replace");
        let (a, b) = (base.join("a"), base.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let rt = mcp_tokio::TokioRuntime::current();
        let (server, io) = FakeServer::start(&rt);
        let roots = Roots::from_dirs(std::slice::from_ref(&a)).unwrap();
        let client = mcp_tokio::ClientBuilder::new()
            .runtime(rt)
            .roots_handler(roots.clone())
            .over(io.reader, io.writer)
            .await
            .unwrap();
        let init = &server.received_method("initialize")[0];
        assert_eq!(
            init["params"]["capabilities"]["roots"],
            json!({ "listChanged": true })
        );
        let names = |reply: &Value| -> Vec<String> {
            reply["result"]["roots"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["name"].as_str().unwrap().to_owned())
                .collect()
        };
        server.request("roots/list", json!({}));
        assert_eq!(names(&server.recv_response().await.unwrap()), ["a"]);

        roots.replace(&client, &[b, a]).unwrap();
        server
            .recv_method("notifications/roots/list_changed")
            .await
            .unwrap();
        server.request("roots/list", json!({}));
        assert_eq!(names(&server.recv_response().await.unwrap()), ["b", "a"]);
        client.close().await;
    }

    #[test]
    fn missing_directories_and_files_are_refused() {
        let base = temp("bad");
        let e = Roots::from_dirs(&[base.join("nope")]).unwrap_err();
        assert!(e.to_string().starts_with("--root "), "{e}");
        let file = base.join("f.txt");
        std::fs::write(&file, "x").unwrap();
        let e = Roots::from_dirs(&[file]).unwrap_err();
        assert_eq!(e.reason, "not a directory");
    }
}
