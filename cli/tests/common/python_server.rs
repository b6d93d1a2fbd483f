//! Small stdio MCP servers in Python for tests that need a server to list tools the demo
//! server does not have: one script shape, the tools and the call's result given.

use std::path::{Path, PathBuf};

/// A stdio server script named `name` (its `serverInfo.name`): it answers `initialize` with
/// the client's own protocol version and the tools capability, `tools/list` with `tools` (a
/// Python expression: the list, as it is sent), `tools/call` with `call_result` (a Python
/// expression over `msg`, the request) when there is one, and any other request with
/// -32601. Notifications are ignored.
pub fn tools_server(name: &str, tools: &str, call_result: Option<&str>) -> String {
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
    if "id" not in msg:
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
