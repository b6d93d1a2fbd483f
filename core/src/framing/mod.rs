//! Message framing: newline-delimited JSON for stdio and the EventSource grammar for HTTP.

pub mod lines;
pub mod sse;
