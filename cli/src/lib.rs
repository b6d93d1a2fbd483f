//! The `mcp` command-line client and its embedded demo server.
//!
//! The binary lives in `main.rs`; this library holds the pieces it is made of, so tests and
//! other crates can use them: [`demo_server`] (the server behind `mcp demo-server`).

#![warn(missing_docs)]

pub mod args;
pub mod demo_server;
pub mod lint;
pub mod render;
