//! A small OAuth-protected MCP server for tests, on 127.0.0.1 with std threads: an
//! authorization server (RFC 8414 metadata, `/register`, an `/authorize` that approves at once
//! with a 302, `/token` for `authorization_code` and `refresh_token`) and a protected resource
//! (RFC 9728 metadata, `/mcp` answering JSON-RPC only with a bearer token it issued, 401 with a
//! `WWW-Authenticate` challenge otherwise). Counters tell the test what the client did.

use std::collections::HashSet;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// What the server saw, and how it behaves.
#[derive(Default)]
pub struct OAuthState {
    /// `expires_in` of issued access tokens (seconds).
    pub expires_in: AtomicU32,
    /// Requests to `/mcp` refused with 401.
    pub unauthorized: AtomicU32,
    /// GETs of `/authorize`.
    pub authorizations: AtomicU32,
    /// `authorization_code` grants.
    pub code_grants: AtomicU32,
    /// `refresh_token` grants.
    pub refresh_grants: AtomicU32,
    /// Dynamic registrations.
    pub registrations: AtomicU32,
    /// Tool calls answered.
    pub tool_calls: AtomicU32,
    /// Whether any request carried a token in its URL (must never happen).
    pub token_in_url: AtomicBool,
    /// Whether refresh tokens rotate: each one works once, and a used (or unknown) one gets
    /// `400 invalid_grant`, as servers following the OAuth 2.1 advice for public clients do.
    pub rotate_refresh_tokens: AtomicBool,
    /// `refresh_token` grants refused because the refresh token was already used (rotating).
    pub stale_refreshes: AtomicU32,
    issued: Mutex<HashSet<String>>,
    /// Refresh tokens not used yet (rotating).
    live_refresh: Mutex<HashSet<String>>,
    next: AtomicU32,
}

/// A running server; it stops with the process (its threads are detached and idle-blocking).
pub struct OAuthServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The counters.
    pub state: Arc<OAuthState>,
}

impl OAuthServer {
    /// Starts the server on a free port; tokens live `expires_in` seconds.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound.
    #[must_use]
    pub fn start(expires_in: u32) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let base = format!("http://{}", listener.local_addr().expect("local addr"));
        let state = Arc::new(OAuthState::default());
        state.expires_in.store(expires_in, Ordering::SeqCst);
        let (s, b) = (state.clone(), base.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (s, b) = (s.clone(), b.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &s, &b);
                });
            }
        });
        Self { base, state }
    }

    /// The MCP endpoint.
    #[must_use]
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// Forgets every access token issued so far (refresh tokens stay valid), as a server
    /// restart or a revocation would: the next request with one of them gets a 401.
    pub fn revoke_access_tokens(&self) {
        self.state
            .issued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn read_request(reader: &mut BufReader<TcpStream>) -> std::io::Result<Option<Request>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_owned();
    let target = parts.next().unwrap_or("").to_owned();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((n, v)) = h.split_once(':') {
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let len = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0usize);
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    Ok(Some(Request {
        method,
        target,
        headers,
        body,
    }))
}

fn respond(
    out: &mut TcpStream,
    status: u16,
    headers: &[(&str, String)],
    body: &[u8],
) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\n", body.len());
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    out.write_all(head.as_bytes())?;
    out.write_all(body)?;
    out.flush()
}

fn json_response(out: &mut TcpStream, status: u16, v: &Value) -> std::io::Result<()> {
    respond(
        out,
        status,
        &[("content-type", "application/json".into())],
        v.to_string().as_bytes(),
    )
}

fn form(body: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

fn issue(state: &OAuthState, out: &mut TcpStream) -> std::io::Result<()> {
    let n = state.next.fetch_add(1, Ordering::SeqCst) + 1;
    let (access, refresh) = (format!("access-{n}"), format!("refresh-{n}"));
    state
        .issued
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(access.clone());
    state
        .live_refresh
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(refresh.clone());
    json_response(
        out,
        200,
        &json!({"access_token": access, "token_type": "Bearer",
                "expires_in": state.expires_in.load(Ordering::SeqCst),
                "refresh_token": refresh, "scope": "mcp offline_access"}),
    )
}

fn serve(stream: TcpStream, state: &OAuthState, base: &str) -> std::io::Result<()> {
    let mut out = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    while let Some(req) = read_request(&mut reader)? {
        if req.target.contains("access-") || req.target.contains("refresh-") {
            state.token_in_url.store(true, Ordering::SeqCst);
        }
        let path = req.target.split('?').next().unwrap_or("").to_owned();
        match (req.method.as_str(), path.as_str()) {
            ("GET", "/.well-known/oauth-protected-resource/mcp") => json_response(
                &mut out,
                200,
                &json!({"resource": format!("{base}/mcp"), "authorization_servers": [base],
                        "scopes_supported": ["mcp"]}),
            )?,
            ("GET", "/.well-known/oauth-authorization-server") => json_response(
                &mut out,
                200,
                &json!({"issuer": base, "authorization_endpoint": format!("{base}/authorize"),
                        "token_endpoint": format!("{base}/token"),
                        "registration_endpoint": format!("{base}/register"),
                        "response_types_supported": ["code"],
                        "grant_types_supported": ["authorization_code", "refresh_token"],
                        "code_challenge_methods_supported": ["S256"],
                        "scopes_supported": ["mcp", "offline_access"],
                        "token_endpoint_auth_methods_supported": ["none"]}),
            )?,
            ("POST", "/register") => {
                state.registrations.fetch_add(1, Ordering::SeqCst);
                json_response(&mut out, 201, &json!({"client_id": "registered-client"}))?;
            }
            ("GET", "/authorize") => {
                state.authorizations.fetch_add(1, Ordering::SeqCst);
                let query: Vec<(String, String)> = url::form_urlencoded::parse(
                    req.target.split_once('?').map_or("", |(_, q)| q).as_bytes(),
                )
                .into_owned()
                .collect();
                let get = |k: &str| {
                    query
                        .iter()
                        .find(|(n, _)| n == k)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default()
                };
                let mut to = url::Url::parse(&get("redirect_uri")).expect("redirect_uri");
                to.query_pairs_mut()
                    .append_pair("code", "the-code")
                    .append_pair("state", &get("state"));
                respond(&mut out, 302, &[("location", to.to_string())], b"")?;
            }
            ("POST", "/token") => {
                let f = form(&req.body);
                let grant = f
                    .iter()
                    .find(|(n, _)| n == "grant_type")
                    .map(|(_, v)| v.as_str());
                match grant {
                    Some("authorization_code") => {
                        state.code_grants.fetch_add(1, Ordering::SeqCst);
                        issue(state, &mut out)?;
                    }
                    Some("refresh_token") => {
                        state.refresh_grants.fetch_add(1, Ordering::SeqCst);
                        let presented = f
                            .iter()
                            .find(|(n, _)| n == "refresh_token")
                            .map(|(_, v)| v.as_str())
                            .unwrap_or("");
                        let used_up = state.rotate_refresh_tokens.load(Ordering::SeqCst)
                            && !state
                                .live_refresh
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .remove(presented);
                        if used_up {
                            state.stale_refreshes.fetch_add(1, Ordering::SeqCst);
                            json_response(&mut out, 400, &json!({"error": "invalid_grant"}))?;
                        } else {
                            issue(state, &mut out)?;
                        }
                    }
                    _ => json_response(&mut out, 400, &json!({"error": "unsupported_grant_type"}))?,
                }
            }
            (_, "/mcp") => mcp(&mut out, state, base, &req)?,
            _ => respond(&mut out, 404, &[], b"")?,
        }
    }
    Ok(())
}

fn mcp(out: &mut TcpStream, state: &OAuthState, base: &str, req: &Request) -> std::io::Result<()> {
    let token = req
        .headers
        .iter()
        .find(|(n, _)| n == "authorization")
        .and_then(|(_, v)| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let valid = token.is_some_and(|t| {
        state
            .issued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&t)
    });
    if !valid {
        state.unauthorized.fetch_add(1, Ordering::SeqCst);
        return respond(
            out,
            401,
            &[(
                "www-authenticate",
                format!(
                    "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\""
                ),
            )],
            b"",
        );
    }
    if req.method != "POST" {
        return respond(out, 405, &[], b"");
    }
    let msg: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let Some(id) = msg.get("id").cloned() else {
        return respond(out, 202, &[], b"");
    };
    let result = match msg["method"].as_str().unwrap_or("") {
        "initialize" => json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                               "serverInfo": {"name": "oauth-test", "version": "1"}}),
        "tools/list" => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        "tools/call" => {
            state.tool_calls.fetch_add(1, Ordering::SeqCst);
            json!({"content": [{"type": "text", "text": "ok"}]})
        }
        "ping" => json!({}),
        // As the 2025 SDKs answer a request before `initialize` (the 2026 probe included).
        "server/discover" => {
            let error = json!({"code": -32000, "message": "Bad Request: Server not initialized"});
            return json_response(
                out,
                400,
                &json!({"jsonrpc": "2.0", "id": null, "error": error}),
            );
        }
        // Everything else (`server/discover` of a 2026 probe included) is unknown here.
        other => {
            let error = json!({"code": -32601, "message": format!("method not found: {other}")});
            return json_response(
                out,
                200,
                &json!({"jsonrpc": "2.0", "id": id, "error": error}),
            );
        }
    };
    json_response(
        out,
        200,
        &json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}
