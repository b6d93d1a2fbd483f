//! Small stdio MCP servers in Python for tests that need a server to list tools the demo
//! server does not have: one script shape, the tools and the call's result given.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::bridge_host::MCP;

/// A stdio server script named `name` (its `serverInfo.name`): it answers `initialize` with
/// the client's own protocol version and the tools capability, `tools/list` with `tools` (a
/// Python expression: the list, as it is sent), `tools/call` with `call_result` (a Python
/// expression over `msg`, the request) when there is one, and any other request with
/// -32601. Notifications are ignored.
pub fn tools_server(name: &str, tools: &str, call_result: Option<&str>) -> String {
    script(name, tools, call_result, "")
}

/// [`tools_server`] (no `tools/call`) for a server that knows nothing of `method`: it exits
/// (status 1) on reading it, request or notification, saying `unknown method METHOD` on
/// stderr, as old servers do on a method they never heard of.
pub fn tools_server_exiting_on(name: &str, tools: &str, method: &str) -> String {
    let exit = format!(
        "    if msg.get(\"method\") == \"{method}\":\n        \
         sys.stderr.write(\"unknown method {method}\\n\")\n        sys.exit(1)\n"
    );
    script(name, tools, None, &exit)
}

/// The script: `on_each` (Python lines, indented for the loop) runs for each message first.
fn script(name: &str, tools: &str, call_result: Option<&str>, on_each: &str) -> String {
    let call = call_result
        .map(|result| format!("    elif m == \"tools/call\":\n        r = {result}\n"))
        .unwrap_or_default();
    format!(
        r#"
import json, sys
for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
{on_each}    if "id" not in msg:
        continue
    m, i = msg.get("method"), msg["id"]
    if m == "initialize":
        r = {{"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {{"tools": {{}}}},
             "serverInfo": {{"name": "{name}", "version": "1"}}}}
    elif m == "tools/list":
        r = {{"tools": {tools}}}
{call}    else:
        print(json.dumps({{"jsonrpc": "2.0", "id": i, "error": {{"code": -32601, "message": "no"}}}}), flush=True)
        continue
    print(json.dumps({{"jsonrpc": "2.0", "id": i, "result": r}}), flush=True)
"#
    )
}

/// Writes `script` as `dir/FILE` and returns its path (run it with `python3 PATH`).
pub fn write_script(dir: &Path, file: &str, script: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("a directory for the script");
    let path = dir.join(file);
    std::fs::write(&path, script).expect("write the server script");
    path
}

/// `mcp ARGS -- python3 SCRIPT`, without a terminal: its exit status and output.
pub fn mcp_over_script(args: &[&str], script: &Path) -> Output {
    Command::new(MCP)
        .args(args)
        .arg("--")
        .arg("python3")
        .arg(script)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp")
}
