//! Pure parts of the multi-server manager: server configuration parsing. Being written.
