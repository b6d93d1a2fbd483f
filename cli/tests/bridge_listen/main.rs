//! `mcp bridge --listen 127.0.0.1:0 -- cmd` as hosts use it over Streamable HTTP: the built
//! binary in front of `mcp demo-server` started through `sh`, which records every child's
//! process group id and what the bridge sent it. Driven by our own client (`mcp --url`) and
//! by raw HTTP/1.1 requests: each session gets its own child, DELETE ends it (its running
//! call cancelled upstream), a child's death closes only its session, the bearer token and
//! the Origin check hold, and the stateless mode shares one upstream.
//!
//! `harness` starts the bridge (recording its children) and `common::raw_http` speaks
//! HTTP/1.1 to it; the tests are by subject: `sessions` (a session's child, its version and
//! identity), `access` (the bearer token, the Origin check), `stateless`, and `lifecycle`
//! (starting and stopping the listener).

#[path = "../common/mod.rs"]
mod common;
mod harness;

mod access;
mod lifecycle;
mod sessions;
mod stateless;
