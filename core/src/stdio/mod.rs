//! The stdio transport: line framing around a session and the child-process policy.

pub mod shutdown;
