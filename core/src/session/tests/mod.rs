//! Deterministic session scenarios: a virtual clock and a scripted server, one scenario each.

use serde_json::{Value, json};

use super::*;
use crate::types::{ClientCapabilities, ElicitationCapability, RootsCapability};

mod admission;
mod backlog;
mod compact_input;
mod detached;
mod era;
mod harness;
mod listen;
mod mrtr;
mod scenarios;
mod tasks;
mod undecodable;

use harness::Harness;

fn config() -> SessionConfig {
    SessionConfig::new(Implementation::new("test-client", "1.0.0"))
}

fn caps_roots_elicitation() -> ClientCapabilities {
    ClientCapabilities {
        roots: Some(RootsCapability::default()),
        elicitation: Some(ElicitationCapability::default()),
        ..ClientCapabilities::default()
    }
}

fn init_result(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": true}, "logging": {}},
        "serverInfo": {"name": "fake", "version": "0.1"},
        "instructions": "be nice"
    })
}
