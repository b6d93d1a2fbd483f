"""Drive a scripted stdio MCP session against a peer and record the raw server->client lines.

    stdio_session.py [--capture FILE] [--caps JSON] [--show] -- SERVER_CMD...

Stdlib only. Unlike piping a file into the server, it behaves like a conforming client: it waits
for each response (matched by id) before sending the next message, so `notifications/initialized`
only goes out after the initialize result (server-everything registers its capability-dependent
tools in its `initialized` handler and gets them wrong when the two arrive together). Server
requests are answered: roots/list -> no roots, sampling/createMessage -> a canned text, anything
else -> -32601. The script is read from stdin, one JSON-RPC message per line; `"id"` is filled in
for requests that lack it. `--capture` writes every line the server printed, verbatim.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import queue
import time

DEFAULT_CAPS = {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {"form": {}}}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--capture", help="write raw server stdout lines here")
    ap.add_argument("--caps", default=json.dumps(DEFAULT_CAPS), help="client capabilities JSON")
    ap.add_argument("--protocol", default="2025-11-25")
    ap.add_argument("--timeout", type=float, default=15.0, help="per-response timeout, seconds")
    ap.add_argument("--show", action="store_true", help="print each server line (truncated)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("missing SERVER_CMD")

    script = [json.loads(line) for line in sys.stdin if line.strip()]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    lines: "queue.Queue[str | None]" = queue.Queue()
    raw: list[str] = []

    def reader() -> None:
        assert proc.stdout is not None  # Popen(stdout=PIPE)
        for line in proc.stdout:
            raw.append(line)
            lines.put(line)
        lines.put(None)

    threading.Thread(target=reader, daemon=True).start()

    def send(msg: dict) -> None:
        assert proc.stdin is not None  # Popen(stdin=PIPE)
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()

    def wait_for(msg_id: int) -> dict:
        deadline = time.monotonic() + args.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SystemExit(f"timeout waiting for response {msg_id}")
            try:
                line = lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise SystemExit(f"server exited before answering {msg_id}")
            msg = json.loads(line)
            if args.show:
                print("<-", line.rstrip()[:300])
            if "method" in msg and "id" in msg:
                answer_server_request(msg)
            elif msg.get("id") == msg_id and "method" not in msg:
                return msg

    def answer_server_request(msg: dict) -> None:
        method = msg["method"]
        if method == "roots/list":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"roots": []}})
        elif method == "sampling/createMessage":
            result = {"role": "assistant", "model": "canned",
                      "content": {"type": "text", "text": "canned sample"}}
            send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        elif method == "elicitation/create":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"action": "decline"}})
        else:
            send({"jsonrpc": "2.0", "id": msg["id"],
                  "error": {"code": -32601, "message": f"client has no {method}"}})

    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": args.protocol, "capabilities": json.loads(args.caps),
        "clientInfo": {"name": "stdio_session.py", "version": "0"}}}
    next_id = 1000
    try:
        send(init)
        wait_for(0)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for msg in script:
            msg.setdefault("jsonrpc", "2.0")
            if "sleep" in msg:
                time.sleep(msg["sleep"])
                continue
            if "method" in msg and "id" not in msg and not msg["method"].startswith("notifications/"):
                msg["id"] = next_id
                next_id += 1
            send(msg)
            if "id" in msg:
                resp = wait_for(msg["id"])
                print(json.dumps(resp)[:2000] if not args.show else "", file=sys.stderr)
    finally:
        assert proc.stdin is not None  # Popen(stdin=PIPE)
        proc.stdin.close()
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            proc.terminate()
            proc.wait(timeout=3)
        time.sleep(0.1)
        if args.capture:
            with open(args.capture, "w") as f:
                f.writelines(raw)
    return 0


if __name__ == "__main__":
    sys.exit(main())
