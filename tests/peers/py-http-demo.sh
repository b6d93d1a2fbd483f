#!/usr/bin/env bash
# py_server.py over Streamable HTTP (stateful SSE, then stateless JSON), driven with curl.
#   scripts/netns-run bash tests/peers/py-http-demo.sh     (the server binds 127.0.0.1 only, so
#   running it outside the namespace is safe too)
set -euo pipefail
. "$(dirname "$0")/../../.peers/env.sh"
H=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}'
wait_port() { for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$1/" && return; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }
code() { curl -sS -o /dev/null -w '%{http_code}' "$@"; }

echo "== stateful (SSE) on :18765"
$MCP_PEER_PYTHON "$MCP_PEER_PY_SERVER" http --port 18765 >/tmp/py-http.log 2>&1 &
pid=$!
wait_port 18765
U=http://127.0.0.1:18765/mcp
curl -sS -D /tmp/py-h "${H[@]}" "$U" -d "$INIT" -o /dev/null
SID=$(grep -i '^mcp-session-id' /tmp/py-h | cut -d' ' -f2 | tr -d '\r')
echo "initialize -> $(head -1 /tmp/py-h | tr -d '\r'), $(grep -i '^content-type' /tmp/py-h | tr -d '\r'), session $SID"
S=("${H[@]}" -H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25')
echo "initialized -> $(code "${S[@]}" "$U" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}')"
echo "--- slow(2, 50) with progressToken:"
curl -sS "${S[@]}" "$U" -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"steps":2,"delay_ms":50},"_meta":{"progressToken":"t"}}}'
echo "--- expire_session:"
curl -sS "${S[@]}" "$U" -d '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"expire_session","arguments":{}}}'
echo "--- next POST with the same session id:"
curl -sS -w ' -> HTTP %{http_code}\n' "${S[@]}" "$U" -d '{"jsonrpc":"2.0","id":4,"method":"ping"}'
echo "GET with the expired id -> $(code -H 'Accept: text/event-stream' -H "Mcp-Session-Id: $SID" "$U")"
echo "re-initialize (no session id) -> $(code "${H[@]}" "$U" -d "$INIT")"
echo "unknown session -> $(code "${H[@]}" -H 'Mcp-Session-Id: 0000' "$U" -d '{"jsonrpc":"2.0","id":5,"method":"ping"}')"
echo "Origin: http://evil.example -> $(code "${H[@]}" -H 'Origin: http://evil.example' "$U" -d "$INIT")"
kill $pid; wait $pid 2>/dev/null || true

echo "== stateless + JSON on :18766"
$MCP_PEER_PYTHON "$MCP_PEER_PY_SERVER" http --port 18766 --stateless --json >/tmp/py-http2.log 2>&1 &
pid=$!
wait_port 18766
U=http://127.0.0.1:18766/mcp
curl -sS -D /tmp/py-h2 "${H[@]}" "$U" -d "$INIT" -o /tmp/py-init2.json
echo "initialize -> $(head -1 /tmp/py-h2 | tr -d '\r'), $(grep -i '^content-type' /tmp/py-h2 | tr -d '\r'), session header: $(grep -ci '^mcp-session-id' /tmp/py-h2 || true)"
echo "--- tools/call add(2, 40) without any session:"
curl -sS -w ' -> HTTP %{http_code}\n' "${H[@]}" -H 'MCP-Protocol-Version: 2025-11-25' "$U" -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40}}}'
echo "--- expire_session in stateless mode:"
curl -sS -w ' -> HTTP %{http_code}\n' "${H[@]}" "$U" -d '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"expire_session","arguments":{}}}'
echo "DELETE -> $(code -X DELETE "$U")"
kill $pid; wait $pid 2>/dev/null || true
