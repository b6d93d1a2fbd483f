//! Fuzz target for `mcp_proto::fuzzing::server_ops`; the invariants it checks are documented there.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_proto::fuzzing::server_ops(data));
