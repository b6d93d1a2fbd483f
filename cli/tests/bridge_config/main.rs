//! `mcp bridge --config FILE` as a host runs it: the built binary on piped stdin/stdout, in
//! front of an mcpServers file of two `mcp demo-server` entries (`alpha`, `beta`) and one
//! whose program does not exist (`broken`). What the host sees: every server's tools under
//! the names `mcp tools --all` shows, calls routed to their server, progress, prompts and
//! resources under host-visible names, a subscription, a sampling request passed to the
//! host, `--allow` / `--deny`, a killed server reconnected with `list_changed`.
//!
//! [`host`] is the harness (a host on the bridge's stdio, the config file) and [`listening`]
//! that of `--listen`; [`stdio`] the tests of stdio serving, [`listen`] of `--listen`,
//! [`tasks`] of tasks, [`host_tasks`] of the host's own tasks made of the servers' requests,
//! [`listen_tasks`] of the servers' task-augmented requests with `--listen`. The task tests
//! (and one of `--listen`) run npm server-everything, whose command comes from
//! `.peers/env.sh` (`MCP_PEER_EVERYTHING`; `MCP_SKIP_INTEROP=1` skips them).

#[path = "../common/mod.rs"]
mod common;
mod host;
mod host_tasks;
mod listen;
mod listen_tasks;
mod listening;
mod startup;
mod stdio;
mod tasks;
