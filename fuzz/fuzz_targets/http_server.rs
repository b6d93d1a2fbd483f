//! Fuzz target for `mcp_proto::fuzzing::http_server_ops`; the invariants it checks are documented there.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_proto::fuzzing::http_server_ops(data));
