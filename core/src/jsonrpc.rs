//! JSON-RPC 2.0 envelopes. Being written.
