//! The EventSource (SSE) grammar. Being written.
