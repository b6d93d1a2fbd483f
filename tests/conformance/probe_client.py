"""Stdlib-only MCP Streamable HTTP client: a test aid for tests/conformance/run, not a product.

    probe_client.py SERVER_URL        (the conformance harness appends the URL as the last argument)

Does initialize -> notifications/initialized -> tools/list and, when MCP_CONFORMANCE_SCENARIO is
`tools_call`, calls `add_numbers` {a: 2, b: 3}. Sends both Accept types, echoes Mcp-Session-Id
and sends MCP-Protocol-Version after initialization; reads JSON or SSE bodies. Exits 1 on error.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request

PROTOCOL = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")


class Probe:
    def __init__(self, url: str) -> None:
        self.url = url
        self.session_id: str | None = None
        self.protocol: str | None = None
        self.next_id = 1

    def post(self, message: dict) -> dict | None:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol:
            headers["MCP-Protocol-Version"] = self.protocol
        req = urllib.request.Request(self.url, data=json.dumps(message).encode(), headers=headers)
        with urllib.request.urlopen(req, timeout=20) as resp:
            sid = resp.headers.get("Mcp-Session-Id")
            if sid:
                self.session_id = sid
            ctype = resp.headers.get("Content-Type", "")
            if "id" not in message:
                resp.read()
                return None
            if ctype.startswith("text/event-stream"):
                return self.read_sse(resp, message["id"])
            body = resp.read()
            return json.loads(body) if body else None

    @staticmethod
    def read_sse(resp, want_id: int) -> dict:
        data: list[str] = []
        for raw in resp:
            line = raw.decode().rstrip("\r\n")
            if line.startswith("data:"):
                data.append(line[5:].lstrip(" ") if line[5:6] == " " else line[5:])
            elif line == "":
                payload = "\n".join(data)
                data = []
                if not payload:
                    continue  # priming event
                msg = json.loads(payload)
                if msg.get("id") == want_id and "method" not in msg:
                    return msg
        raise RuntimeError(f"SSE stream ended without response {want_id}")

    def request(self, method: str, params: dict | None = None) -> dict:
        msg: dict = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        self.next_id += 1
        if params is not None:
            msg["params"] = params
        resp = self.post(msg)
        if resp is None or "error" in resp:
            raise RuntimeError(f"{method} failed: {resp}")
        return resp["result"]


def main() -> int:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    probe = Probe(url)
    init = probe.request("initialize", {
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "probe_client.py", "version": "0.0.1"},
    })
    probe.protocol = init.get("protocolVersion", PROTOCOL)
    probe.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = probe.request("tools/list", {})
    print("tools:", [t["name"] for t in tools.get("tools", [])])
    if scenario == "tools_call":
        result = probe.request("tools/call", {"name": "add_numbers", "arguments": {"a": 2, "b": 3}})
        print("add_numbers:", json.dumps(result))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, RuntimeError, ValueError, urllib.error.URLError) as e:
        print(f"probe_client: {e}", file=sys.stderr)
        sys.exit(1)
