//! Authorizing a person: [`BrowserAuthorizer`] opens the authorization URL in a browser
//! ([`BrowserOpener`]) and takes the redirect on a [`LoopbackListener`].

use std::fmt;
use std::process::{Command, Stdio};
use std::sync::Arc;

use url::Url;

use super::loopback::LoopbackListener;
use super::{AuthorizeFuture, Authorizer};
use crate::http::HttpClient;

/// The environment variable naming the browser command of [`BrowserOpener::from_env`].
pub const BROWSER_ENV: &str = "MCP_BROWSER";

/// How the authorization URL reaches a browser.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BrowserOpener {
    /// The desktop's opener: `open` on macOS, `xdg-open` elsewhere.
    System,
    /// A command of your own, run with the URL as its last argument (a program and its
    /// arguments, split on whitespace, no shell).
    Command(Vec<String>),
    /// No browser: the user is shown the URL ([`BrowserNotice::OpenYourself`]).
    Print,
}

impl BrowserOpener {
    /// `$MCP_BROWSER` when set and not empty (split on whitespace), else
    /// [`System`](Self::System).
    #[must_use]
    pub fn from_env() -> Self {
        match std::env::var(BROWSER_ENV) {
            Ok(v) if !v.trim().is_empty() => {
                Self::Command(v.split_whitespace().map(str::to_owned).collect())
            }
            _ => Self::System,
        }
    }

    fn argv(&self) -> Option<Vec<String>> {
        match self {
            Self::System if cfg!(target_os = "macos") => Some(vec!["open".into()]),
            Self::System => Some(vec!["xdg-open".into()]),
            Self::Command(argv) if !argv.is_empty() => Some(argv.clone()),
            Self::Command(_) | Self::Print => None,
        }
    }
}

/// What a [`BrowserAuthorizer`] tells the user, through its notice callback. The URL is the
/// authorization URL (it carries a PKCE challenge and the `state`, never a token).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BrowserNotice {
    /// The browser command was started with the URL.
    Opening {
        /// The authorization URL.
        url: Url,
        /// Where the redirect is awaited.
        redirect_uri: Url,
    },
    /// The browser could not be started, or its command failed: show the URL.
    OpenFailed {
        /// The authorization URL.
        url: Url,
        /// Why.
        reason: String,
    },
    /// [`BrowserOpener::Print`]: show the URL for the user to open.
    OpenYourself {
        /// The authorization URL.
        url: Url,
    },
}

/// The callback that shows [`BrowserNotice`]s (called from any thread).
pub type NoticeFn = Arc<dyn Fn(BrowserNotice) + Send + Sync>;

/// An [`Authorizer`] for a person at a desktop: opens the authorization URL in a browser and
/// waits on a [`LoopbackListener`] for the redirect. Use the listener's
/// [`redirect_uri`](LoopbackListener::redirect_uri) as the provider's redirect URI.
///
/// The user learns what happens through the notice callback: it is the application's job to
/// print the URL when the browser could not be opened (a library does not print).
#[derive(Clone)]
pub struct BrowserAuthorizer {
    listener: LoopbackListener,
    opener: BrowserOpener,
    notice: NoticeFn,
}

impl fmt::Debug for BrowserAuthorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BrowserAuthorizer")
            .field("listener", &self.listener)
            .field("opener", &self.opener)
            .finish_non_exhaustive()
    }
}

impl BrowserAuthorizer {
    /// Opens URLs with `opener`, takes redirects on `listener`, tells the user through
    /// `notice`.
    pub fn new(
        listener: LoopbackListener,
        opener: BrowserOpener,
        notice: impl Fn(BrowserNotice) + Send + Sync + 'static,
    ) -> Self {
        Self {
            listener,
            opener,
            notice: Arc::new(notice),
        }
    }

    /// The redirect URI to register and send.
    #[must_use]
    pub fn redirect_uri(&self) -> Url {
        self.listener.redirect_uri()
    }
}

impl Authorizer for BrowserAuthorizer {
    fn authorize(&self, url: Url, _http: Arc<dyn HttpClient>) -> AuthorizeFuture {
        let Some(state) = url
            .query_pairs()
            .find(|(k, _)| k == "state")
            .map(|(_, v)| v.into_owned())
        else {
            return Box::pin(async { Err("the authorization URL has no state".to_owned()) });
        };
        // Listen first, so that a fast browser finds the port open.
        let redirect = self.listener.wait(state);
        open(
            &self.opener,
            url,
            self.listener.redirect_uri(),
            &self.notice,
        );
        redirect
    }
}

/// Starts the browser; its failure (to start, or its exit status) becomes a notice. The
/// command is not waited for here: a browser may run as long as it likes.
fn open(opener: &BrowserOpener, url: Url, redirect_uri: Url, notice: &NoticeFn) {
    let Some(argv) = opener.argv() else {
        return notice(BrowserNotice::OpenYourself { url });
    };
    let (program, args) = argv
        .split_first()
        .unwrap_or_else(|| unreachable!("argv() is never empty"));
    let spawned = Command::new(program)
        .args(args)
        .arg(url.as_str())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            return notice(BrowserNotice::OpenFailed {
                url,
                reason: format!("cannot run `{program}`: {e}"),
            });
        }
    };
    notice(BrowserNotice::Opening {
        url: url.clone(),
        redirect_uri,
    });
    let (notice, program) = (notice.clone(), program.clone());
    // Reap the opener (no zombie) and report a failing one, on a thread: it may take as long
    // as the browser does.
    let waiter = std::thread::Builder::new()
        .name("mcp-browser-opener".into())
        .spawn(move || match child.wait() {
            Ok(status) if status.success() => {}
            Ok(status) => notice(BrowserNotice::OpenFailed {
                url,
                reason: format!("`{program}` {status}"),
            }),
            Err(e) => notice(BrowserNotice::OpenFailed {
                url,
                reason: format!("`{program}`: {e}"),
            }),
        });
    if let Err(e) = waiter {
        tracing::debug!(error = %e, "cannot watch the browser command");
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    fn collect() -> (NoticeFn, Arc<Mutex<Vec<BrowserNotice>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let notice: NoticeFn = Arc::new(move |n| s.lock().unwrap().push(n));
        (notice, seen)
    }

    fn urls() -> (Url, Url) {
        (
            Url::parse("http://127.0.0.1:1/authorize?state=s").unwrap(),
            Url::parse("http://127.0.0.1:2/callback").unwrap(),
        )
    }

    #[test]
    fn print_shows_the_url_and_a_missing_browser_says_why() {
        let (notice, seen) = collect();
        let (url, redirect) = urls();
        open(
            &BrowserOpener::Print,
            url.clone(),
            redirect.clone(),
            &notice,
        );
        let missing = BrowserOpener::Command(vec!["/nonexistent/mcp-browser".into()]);
        open(&missing, url.clone(), redirect, &notice);
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0], BrowserNotice::OpenYourself { url: url.clone() });
        match &seen[1] {
            BrowserNotice::OpenFailed { url: u, reason } => {
                assert_eq!(u, &url);
                assert!(
                    reason.contains("cannot run `/nonexistent/mcp-browser`"),
                    "{reason}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_browser_command_gets_the_url_and_its_failure_is_reported() {
        let (notice, seen) = collect();
        let (url, redirect) = urls();
        let failing = BrowserOpener::Command(vec!["sh".into(), "-c".into(), "exit 3".into()]);
        open(&failing, url.clone(), redirect.clone(), &notice);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while seen.lock().unwrap().len() < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let seen = seen.lock().unwrap();
        assert_eq!(
            seen[0],
            BrowserNotice::Opening {
                url: url.clone(),
                redirect_uri: redirect
            }
        );
        assert!(
            matches!(&seen[1], BrowserNotice::OpenFailed { reason, .. } if reason.contains("exit status: 3")),
            "{seen:?}"
        );
        assert_eq!(BrowserOpener::Print.argv(), None);
        assert_eq!(BrowserOpener::Command(Vec::new()).argv(), None);
    }
}
