#!/usr/bin/env bash
# Run INSIDE scripts/netns-run (server-everything binds all interfaces):
#   scripts/netns-run bash tests/peers/everything-http-demo.sh [SSE_CAPTURE_FILE]
# Starts server-everything in streamableHttp and sse modes on loopback and talks to it with curl.
set -euo pipefail
. "$(dirname "$0")/../../.peers/env.sh"
cap="${1:-/dev/null}"
H=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}'
wait_port() { for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$1/" && return; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }

echo "== streamableHttp on :3101"
PORT=3101 $MCP_PEER_EVERYTHING streamableHttp >/tmp/ev-http.log 2>&1 &
http_pid=$!
wait_port 3101
U=http://127.0.0.1:3101/mcp
curl -sS -D /tmp/ev-h "${H[@]}" "$U" -d "$INIT" -o /tmp/ev-init.sse
echo "initialize -> $(head -1 /tmp/ev-h | tr -d '\r'); $(grep -i '^content-type' /tmp/ev-h | tr -d '\r')"
SID=$(grep -i '^mcp-session-id' /tmp/ev-h | cut -d' ' -f2 | tr -d '\r')
echo "session id: $SID"
S=("${H[@]}" -H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25')
echo "initialized -> $(curl -sS -o /dev/null -w '%{http_code}' "${S[@]}" "$U" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}')"
curl -sS "${S[@]}" "$U" -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}' -o /tmp/ev-echo.sse
curl -sS "${S[@]}" "$U" -d '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":1,"steps":3},"_meta":{"progressToken":7}}}' -o /tmp/ev-lro.sse
echo "--- echo response body:"; cat /tmp/ev-echo.sse
echo "--- long-running response body:"; cat /tmp/ev-lro.sse
cat /tmp/ev-init.sse /tmp/ev-echo.sse /tmp/ev-lro.sse >"$cap"
echo "Accept json only -> $(curl -sS -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -H 'Accept: application/json' -H "Mcp-Session-Id: $SID" "$U" -d '{"jsonrpc":"2.0","id":4,"method":"ping"}')"
echo "bad MCP-Protocol-Version -> $(curl -sS -o /dev/null -w '%{http_code}' "${H[@]}" -H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 1999-01-01' "$U" -d '{"jsonrpc":"2.0","id":5,"method":"ping"}')"
echo "unknown session -> $(curl -sS -w ' %{http_code}' "${H[@]}" -H 'Mcp-Session-Id: nope' "$U" -d '{"jsonrpc":"2.0","id":6,"method":"ping"}')"
echo "DELETE -> $(curl -sS -o /dev/null -w '%{http_code}' -X DELETE -H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25' "$U")"
echo "after DELETE -> $(curl -sS -w ' %{http_code}' "${S[@]}" "$U" -d '{"jsonrpc":"2.0","id":7,"method":"ping"}')"
kill $http_pid

echo "== sse (legacy HTTP+SSE) on :3102"
PORT=3102 $MCP_PEER_EVERYTHING sse >/tmp/ev-sse.log 2>&1 &
sse_pid=$!
wait_port 3102
curl -sS -N -m 3 http://127.0.0.1:3102/sse -o /tmp/ev-sse.stream &
get_pid=$!
sleep 0.5
EP=$(sed -n 's/^data: //p' /tmp/ev-sse.stream | head -1 | tr -d '\r')
echo "endpoint event data: $EP"
P="http://127.0.0.1:3102$EP"
echo "POST initialize -> $(curl -sS -w ' %{http_code}' -H 'Content-Type: application/json' "$P" -d "$INIT")"
echo "POST initialized -> $(curl -sS -w ' %{http_code}' -H 'Content-Type: application/json' "$P" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}')"
echo "POST tools/call get-sum -> $(curl -sS -w ' %{http_code}' -H 'Content-Type: application/json' "$P" -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":2}}}')"
wait $get_pid || true  # curl -m 3 ends the GET with exit 28 by design
echo "--- GET /sse stream (truncated lines):"; cut -c1-160 /tmp/ev-sse.stream
kill $sse_pid
