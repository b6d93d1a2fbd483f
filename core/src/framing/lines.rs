//! Newline-delimited JSON framing (stdio). Being written.
