//! Streamable HTTP and legacy HTTP+SSE decisions. Being written.
