#!/usr/bin/env python3
"""A protocol 2026-07-28 client written with the PyPI `mcp` SDK (2.3.0, `.peers/venv2`), run
against a stdio server that speaks that revision (`mcp demo-server --modern`): the handshake by
`server/discover`, the tool list, a tool call, and a call with progress, each request carrying the
SDK's own per-request `_meta` envelope.

    python py_modern_client.py CMD [ARGS...]

Prints one JSON object per step on stdout ({"step", "ok", "detail"}); exits 0 when every step
passed, 1 when one failed, 2 on bad arguments. Every wait is bounded (MCP_CLIENT_GUARD_SECS,
default 30).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

failures = 0


def report(step: str, ok: bool, detail: Any) -> None:
    global failures
    if not ok:
        failures += 1
    print(json.dumps({"step": step, "ok": ok, "detail": detail}, default=str), flush=True)


async def scenario(command: str, args: list[str]) -> None:
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            discovered = await session.discover()
            report(
                "discover",
                "2026-07-28" in discovered.supported_versions,
                {
                    "supported": discovered.supported_versions,
                    "negotiated": getattr(session, "_negotiated_version", None),
                    "server": session._discover_server_info.name
                    if session._discover_server_info
                    else None,
                    "tools": discovered.capabilities.tools is not None,
                },
            )
            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            report("list_tools", "echo" in names and "slow" in names, {"names": names})
            echoed = await session.call_tool("echo", {"text": "from python"})
            text = echoed.content[0].text if echoed.content else None
            report("echo", text == "from python" and not echoed.is_error, {"text": text})
            seen: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append(progress)

            slow = await session.call_tool(
                "slow", {"steps": 3, "delay_ms": 1}, progress_callback=on_progress
            )
            slow_text = slow.content[0].text if slow.content else None
            report(
                "progress",
                slow_text == "finished 3 steps" and seen == sorted(seen) and len(seen) == 3,
                {"text": slow_text, "progress": seen},
            )


async def main(argv: list[str]) -> int:
    if not argv:
        print("usage: py_modern_client.py CMD [ARGS...]", file=sys.stderr)
        return 2
    guard = float(os.environ.get("MCP_CLIENT_GUARD_SECS", "30"))
    try:
        with anyio.fail_after(guard):
            await scenario(argv[0], argv[1:])
    except Exception as e:  # noqa: BLE001 - every failure is a reported step
        report("error", False, {"error": repr(e)})
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
