//! `--listen` (of `mcp bridge` or `mcp demo-server`) on an address another program holds.

use std::net::TcpListener;
use std::process::Output;

/// A port of 127.0.0.1 held for as long as the listener lives, and its address.
pub fn taken_address() -> (TcpListener, String) {
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind a port");
    let addr = taken.local_addr().expect("its address").to_string();
    (taken, addr)
}

/// Asserts that `out` is the refusal of `--listen ADDR` (`mcp bridge`, `mcp demo-server`) on
/// `addr` held by another program: exit 3 (the environment's failure, not the options'), one error naming the address, the hint to pick another port.
/// Returns its stderr for the caller's own checks.
pub fn assert_port_in_use(out: &Output, addr: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: cannot listen on {addr}: ")),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "hint: another program listens on this port: pick another, or 127.0.0.1:0 for any free one"
        ),
        "{stderr}"
    );
    stderr
}
