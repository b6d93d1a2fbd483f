//! `mcp login`, stored tokens and `mcp logout`, with the built binary against the local
//! OAuth-protected MCP server (`mcp_driver::testing::oauth_server`, on 127.0.0.1).
//!
//! The "browser" is `$MCP_BROWSER`: a bash script that GETs the authorization URL (the test
//! server approves at once with a 302) and then the `Location` it got, which is the CLI's
//! loopback listener. Every run has its own token file (`$MCP_TOKEN_STORE`).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::Ordering::SeqCst;

use mcp_driver::testing::oauth_server::OAuthServer;

/// A browser stand-in: GET the URL, then GET its `Location` (the loopback callback), and log
/// the callback's status line to `$BROWSER_LOG`. Pure bash (`/dev/tcp`), no curl needed.
const BROWSER: &str = r#"
get() {
  local rest="${1#http://}"; local hostport="${rest%%/*}"; local path="/${rest#*/}"
  exec 3<>"/dev/tcp/${hostport%%:*}/${hostport##*:}"
  printf 'GET %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$path" "$hostport" >&3
  local line status=""
  while IFS= read -r line <&3; do
    line="${line%$'\r'}"
    [ -z "$status" ] && status="$line"
    [ -z "$line" ] && break
    case "$line" in [Ll]ocation:*) LOCATION="${line#*: }";; esac
  done
  exec 3<&-
  STATUS="$status"
}
get "$1"
get "$LOCATION"
echo "$STATUS" >> "$BROWSER_LOG"
"#;

struct Env {
    dir: PathBuf,
    store: PathBuf,
    browser_log: PathBuf,
    browser: String,
}

impl Env {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mcp-cli-oauth-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("browser.sh");
        std::fs::write(&script, BROWSER).unwrap();
        Self {
            store: dir.join("config").join("tokens.json"),
            browser_log: dir.join("browser.log"),
            browser: format!("bash {}", script.display()),
            dir,
        }
    }

    fn mcp(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_mcp"));
        c.args(args)
            .env("MCP_TOKEN_STORE", &self.store)
            .env("MCP_BROWSER", &self.browser)
            .env("BROWSER_LOG", &self.browser_log)
            .stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.mcp(args).output().expect("run mcp")
    }

    fn browser_visits(&self) -> Vec<String> {
        std::fs::read_to_string(&self.browser_log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn tokens(&self) -> String {
        std::fs::read_to_string(&self.store).unwrap_or_default()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// No token value (the test server issues `access-N` / `refresh-N`) on either stream.
fn assert_no_token(o: &Output) {
    let (out, err) = text(o);
    for s in [&out, &err] {
        assert!(
            !s.contains("access-") && !s.contains("refresh-"),
            "a token was printed:\n{out}\n{err}"
        );
    }
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn login_stores_a_private_token_later_commands_use_it_and_logout_removes_it() {
    let server = OAuthServer::start(3600);
    let url = server.mcp_url();
    let env = Env::new("cycle");

    let login = env.run(&["login", "--url", &url]);
    let (out, err) = text(&login);
    assert_eq!(login.status.code(), Some(0), "{out}\n{err}");
    assert!(out.contains(&format!("logged in to {url}")), "{out}");
    assert!(err.contains("opened the browser"), "{err}");
    assert_no_token(&login);
    assert_eq!(env.browser_visits().len(), 1);
    assert!(
        env.browser_visits()[0].contains(" 200 "),
        "{:?}",
        env.browser_visits()
    );
    assert_eq!(mode(&env.store), 0o600);
    assert_eq!(mode(env.store.parent().unwrap()), 0o700);
    let stored = env.tokens();
    assert!(
        stored.contains(&url) && stored.contains("access-1"),
        "{stored}"
    );
    assert!(
        stored.contains(&format!("{}/token", server.base)),
        "the grant is kept"
    );
    assert_eq!(server.state.authorizations.load(SeqCst), 1);
    let refused = server.state.unauthorized.load(SeqCst);

    // A later process sends the stored token from the start: no 401, no browser.
    let tools = env.run(&["tools", "--url", &url]);
    let (out, err) = text(&tools);
    assert_eq!(tools.status.code(), Some(0), "{out}\n{err}");
    assert!(out.contains("echo"), "{out}");
    let traced = env.run(&["-v", "call", "echo", "--url", &url]);
    let (out, err) = text(&traced);
    assert_eq!(traced.status.code(), Some(0), "{out}\n{err}");
    assert!(err.contains("using the stored OAuth token"), "{err}");
    assert_no_token(&traced);
    let config = env.dir.join("servers.json");
    std::fs::write(
        &config,
        format!(r#"{{"mcpServers": {{"prot": {{"url": "{url}"}}}}}}"#),
    )
    .unwrap();
    let by_config = env.run(&[
        "--config",
        config.to_str().unwrap(),
        "--server",
        "prot",
        "tools",
    ]);
    assert_eq!(by_config.status.code(), Some(0), "{:?}", text(&by_config));
    let all = env.run(&["--config", config.to_str().unwrap(), "tools", "--all"]);
    assert_eq!(all.status.code(), Some(0), "{:?}", text(&all));
    assert!(text(&all).0.contains("prot__echo"), "{:?}", text(&all));
    assert_eq!(server.state.unauthorized.load(SeqCst), refused);
    assert_eq!(server.state.tool_calls.load(SeqCst), 1);

    // A refused (revoked) access token is refreshed too, after the 401, still without a
    // browser.
    server.revoke_access_tokens();
    let (refreshed, refused) = (
        server.state.refresh_grants.load(SeqCst),
        server.state.unauthorized.load(SeqCst),
    );
    let call = env.run(&["--timeout", "20s", "tools", "--url", &url]);
    assert_eq!(call.status.code(), Some(0), "{:?}", text(&call));
    assert!(
        server.state.unauthorized.load(SeqCst) > refused,
        "the revoked token was refused"
    );
    assert!(server.state.refresh_grants.load(SeqCst) > refreshed);
    assert_eq!(server.state.authorizations.load(SeqCst), 1);
    assert_eq!(env.browser_visits().len(), 1);

    let logout = env.run(&["logout", "--url", &url]);
    let (out, err) = text(&logout);
    assert_eq!(logout.status.code(), Some(0), "{out}\n{err}");
    assert_eq!(out, format!("removed the stored tokens of {url}\n"));
    assert!(!env.tokens().contains("access-"), "{}", env.tokens());

    // Without a token: exit 3 with the hint, and no browser opened unasked.
    let after = env.run(&["tools", "--url", &url]);
    let (out, err) = text(&after);
    assert_eq!(after.status.code(), Some(3), "{out}\n{err}");
    assert!(
        err.contains(&format!("hint: run: mcp login --url {url}")),
        "{err}"
    );
    assert_eq!(env.browser_visits().len(), 1, "no browser after login");
    assert_eq!(server.state.authorizations.load(SeqCst), 1);
    assert!(!server.state.token_in_url.load(SeqCst));

    let again = env.run(&["logout", "--url", &url]);
    assert_eq!(again.status.code(), Some(0));
    assert!(
        text(&again).0.starts_with("no stored tokens to remove"),
        "{:?}",
        text(&again)
    );
}

#[test]
fn an_expired_access_token_is_refreshed_by_a_later_process() {
    // Tokens live 5 s, inside the client's 30 s refresh margin: the next process refreshes.
    let server = OAuthServer::start(5);
    let url = server.mcp_url();
    let env = Env::new("refresh");
    let login = env.run(&["login", "--url", &url]);
    assert_eq!(login.status.code(), Some(0), "{:?}", text(&login));
    let s = &server.state;
    let (refreshed, stored) = (s.refresh_grants.load(SeqCst), env.tokens());
    assert!(stored.contains("refresh-"), "{stored}");

    let call = env.run(&["call", "echo", "--url", &url]);
    let (out, err) = text(&call);
    assert_eq!(call.status.code(), Some(0), "{out}\n{err}");
    assert_no_token(&call);
    assert!(
        s.refresh_grants.load(SeqCst) > refreshed,
        "the new process refreshed"
    );
    assert_eq!(
        s.authorizations.load(SeqCst),
        1,
        "refreshed, not authorized"
    );
    assert_eq!(s.tool_calls.load(SeqCst), 1);
    assert_eq!(env.browser_visits().len(), 1);
    assert_ne!(
        env.tokens(),
        stored,
        "the refreshed token replaced the old one"
    );
    assert!(
        env.tokens().contains("registered-client"),
        "the grant is kept"
    );
    assert_eq!(mode(&env.store), 0o600);
}

/// GETs `url` on 127.0.0.1 and returns the status and the `Location`, reading only the head
/// (the test server keeps connections open).
fn get(url: &str) -> (u16, Option<String>) {
    let rest = url.strip_prefix("http://").unwrap();
    let (hostport, path) = rest.split_at(rest.find('/').unwrap());
    let mut s = TcpStream::connect(hostport).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nhost: {hostport}\r\n\r\n").unwrap();
    let mut r = BufReader::new(s);
    let (mut status, mut location, mut line) = (0, None, String::new());
    while r.read_line(&mut line).unwrap() > 0 {
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if status == 0 {
            status = l.split(' ').nth(1).unwrap().parse().unwrap();
        }
        if let Some(v) = l.strip_prefix("location: ") {
            location = Some(v.to_owned());
        }
        line.clear();
    }
    (status, location)
}

#[test]
fn a_failing_browser_or_no_browser_prints_the_url_to_open() {
    let server = OAuthServer::start(3600);
    let url = server.mcp_url();
    let env = Env::new("print");
    for (browser, flag, says) in [
        ("false", None, "could not open a browser"),
        ("unused", Some("--no-browser"), "open this URL in a browser"),
    ] {
        let mut args = vec!["login", "--url", &url];
        args.extend(flag);
        let mut child = env
            .mcp(&args)
            .env("MCP_BROWSER", browser)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut shown = String::new();
        let mut line = String::new();
        let authorize = loop {
            line.clear();
            assert!(
                stderr.read_line(&mut line).unwrap() > 0,
                "no URL in: {shown}"
            );
            shown.push_str(&line);
            if let Some(u) = line.trim().strip_prefix("http://") {
                break format!("http://{u}");
            }
        };
        assert!(shown.contains(says), "{shown}");
        assert!(authorize.contains("code_challenge=") && authorize.contains("state="));
        let (status, location) = get(&authorize);
        assert_eq!(status, 302);
        let callback = location.unwrap();
        assert!(callback.starts_with("http://127.0.0.1:"), "{callback}");
        assert_eq!(get(&callback).0, 200);
        let mut rest = String::new();
        stderr.read_to_string(&mut rest).unwrap();
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}\n{shown}{rest}");
        assert!(stdout.contains("logged in"), "{stdout}");
        assert!(!format!("{stdout}{shown}{rest}").contains("access-"));
    }
    assert_eq!(
        server.state.authorizations.load(SeqCst),
        2,
        "login always authorizes"
    );
}

#[test]
fn login_gives_up_after_its_wait_and_stores_nothing() {
    let server = OAuthServer::start(3600);
    let url = server.mcp_url();
    let env = Env::new("timeout");
    let out = env.run(&["login", "--url", &url, "--no-browser", "--wait", "300ms"]);
    let (stdout, err) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{err}");
    assert!(err.contains("error: OAuth: authorization failed"), "{err}");
    assert!(
        err.contains("no authorization redirect reached") && err.contains("within 300ms"),
        "{err}"
    );
    assert!(err.contains("hint: "), "{err}");
    assert!(!env.store.exists());

    // The `--json` error object carries the same words: the masking takes secrets out of
    // the message, never the message itself.
    let out = env.run(&[
        "--json",
        "login",
        "--url",
        &url,
        "--no-browser",
        "--wait",
        "300ms",
    ]);
    let (stdout, err) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{err}");
    let error: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(error["error"]["code"], "auth_failed", "{stdout}");
    assert!(
        message.starts_with("OAuth: authorization failed: no authorization redirect reached")
            && message.ends_with("within 300ms"),
        "{stdout}"
    );
    assert!(!env.store.exists());
}

#[test]
fn logout_all_names_every_server_it_removes() {
    let (a, b) = (OAuthServer::start(3600), OAuthServer::start(3600));
    let env = Env::new("all");
    for s in [&a, &b] {
        let login = env.run(&["login", "--url", &s.mcp_url()]);
        assert_eq!(login.status.code(), Some(0), "{:?}", text(&login));
    }
    let both = env.run(&["logout", "--all", "--url", &a.mcp_url()]);
    assert_eq!(both.status.code(), Some(2), "--all and --url conflict");
    let out = env.run(&["logout", "--all"]);
    let (stdout, err) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{err}");
    assert_eq!(
        stdout,
        format!(
            "removed the stored tokens of {}\nremoved the stored tokens of {}\n",
            a.mcp_url(),
            b.mcp_url()
        )
    );
    assert!(!env.tokens().contains("access-"));
    let json = env.run(&["--json", "logout", "--all"]);
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&json.stdout).unwrap()["removed"],
        serde_json::json!([])
    );
}

#[test]
fn login_reports_a_token_file_it_cannot_write() {
    let server = OAuthServer::start(3600);
    let env = Env::new("corrupt");
    std::fs::create_dir_all(env.store.parent().unwrap()).unwrap();
    std::fs::write(&env.store, b"{not json").unwrap();
    let out = env.run(&["login", "--url", &server.mcp_url()]);
    let (stdout, err) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{err}");
    assert!(
        err.contains(&format!("error: {}", env.store.display())),
        "{err}"
    );
    assert!(!stdout.contains("logged in"), "{stdout}");
    assert_no_token(&out);
    assert_eq!(
        std::fs::read(&env.store).unwrap(),
        b"{not json",
        "left as it was"
    );
}

/// Parallel `mcp` processes refreshing the same server's token, against a server that rotates
/// refresh tokens (each works once): every process refreshes under the store's lock from the
/// token the previous one stored, so no refresh token is ever presented twice, nobody has to
/// log in again, and the token left in the store still refreshes.
#[test]
fn parallel_processes_refreshing_keep_every_rotated_refresh_token() {
    // Tokens live 5 s, inside the client's 30 s refresh margin: every process refreshes.
    let server = OAuthServer::start(5);
    server.state.rotate_refresh_tokens.store(true, SeqCst);
    let url = server.mcp_url();
    let env = Env::new("parallel");
    let login = env.run(&["login", "--url", &url]);
    assert_eq!(login.status.code(), Some(0), "{:?}", text(&login));
    let s = &server.state;
    for round in 0..3 {
        let children: Vec<_> = (0..8)
            .map(|_| {
                env.mcp(&["call", "echo", "--url", &url])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("spawn mcp")
            })
            .collect();
        for child in children {
            let o = child.wait_with_output().expect("wait for mcp");
            let (out, err) = text(&o);
            assert_eq!(o.status.code(), Some(0), "round {round}:\n{out}\n{err}");
            assert_no_token(&o);
        }
        assert_eq!(
            s.stale_refreshes.load(SeqCst),
            0,
            "round {round}: a used refresh token was presented again"
        );
    }
    assert_eq!(
        s.authorizations.load(SeqCst),
        1,
        "nobody had to log in again"
    );
    assert!(
        s.refresh_grants.load(SeqCst) >= 24,
        "every process refreshed"
    );
    assert_eq!(s.tool_calls.load(SeqCst), 24);
    // What is stored is the latest refresh token: one more process refreshes with it.
    let last = env.run(&["call", "echo", "--url", &url]);
    assert_eq!(last.status.code(), Some(0), "{:?}", text(&last));
    assert_eq!(s.stale_refreshes.load(SeqCst), 0);
    assert_eq!(s.authorizations.load(SeqCst), 1);
}
