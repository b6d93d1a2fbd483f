"""Interop peer: a FastMCP server on PyPI `mcp` 1.30.0 (an implementation independent of ours).

Usage (run with the venv python from `.peers/env.sh`, i.e. `$MCP_PEER_PYTHON`):

    py_server.py stdio
    py_server.py http --port N [--stateless] [--json]   # Streamable HTTP at http://127.0.0.1:N/mcp
    py_server.py sse --port N                           # legacy HTTP+SSE: GET /sse, POST /messages/

HTTP modes bind 127.0.0.1 only. Features (see tests/peers/README.md for observed wire behaviour):

- tools: echo(text), add(a, b), slow(steps, delay_ms) with progress per step, sleep(ms),
  log(level, message), fail() (isError result), expire_session() (HTTP stateful only: the server
  forgets the session, so the next request carrying its id gets 404), notify_resource_updated(uri),
  notify_list_changed();
- resources: demo://greeting (subscribable), template demo://item/{id};
- prompt greet(name) with completions for `name` (and for the template's `id`);
- logging/setLevel, resources/subscribe and resources/unsubscribe.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from pydantic import AnyUrl

GREETING_URI = "demo://greeting"
NAMES = ["Alice", "Albert", "Bob", "Carol", "Dave"]
LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


def build(port: int = 8765, stateless: bool = False, json_response: bool = False) -> FastMCP:
    mcp = FastMCP(
        "py-peer",
        instructions="Interop peer for mcp-rs tests (PyPI mcp 1.30.0 FastMCP).",
        host="127.0.0.1",
        port=port,
        stateless_http=stateless,
        json_response=json_response,
        log_level="WARNING",
    )
    lowlevel = mcp._mcp_server
    # Subscriptions per session object; only meaningful for the life of this process.
    subscriptions: dict[int, set[str]] = {}
    # Background terminations started by expire_session (kept so they are not garbage-collected).
    pending: set[asyncio.Task[None]] = set()
    state: dict[str, Any] = {"log_level": "debug"}

    @mcp.tool(description="Returns its argument unchanged.")
    def echo(text: str) -> str:
        return text

    @mcp.tool(description="Adds two numbers.")
    def add(a: float, b: float) -> float:
        return a + b

    @mcp.tool(description="Runs `steps` steps of `delay_ms` each, reporting progress after each.")
    async def slow(steps: int, delay_ms: int, ctx: Context) -> str:
        for i in range(steps):
            await asyncio.sleep(delay_ms / 1000)
            await ctx.report_progress(i + 1, total=steps, message=f"step {i + 1}/{steps}")
        return f"done {steps} steps"

    @mcp.tool(description="Sleeps `ms` milliseconds, then answers (cancellable).")
    async def sleep(ms: int) -> str:
        await asyncio.sleep(ms / 1000)
        return f"slept {ms} ms"

    @mcp.tool(description="Emits one notifications/message at `level` (RFC 5424 name), then answers.")
    async def log(level: str, message: str, ctx: Context) -> str:
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown level {level!r}; expected one of {LOG_LEVELS}")
        await ctx.request_context.session.send_log_message(
            level=level,  # type: ignore[arg-type]
            data=message,
            logger="py-peer",
            related_request_id=ctx.request_id,
        )
        return f"logged at {level}"

    @mcp.tool(description="Always fails: the result has isError=true.")
    def fail() -> str:
        raise RuntimeError("fail() was called")

    @mcp.tool(
        description="Streamable HTTP (stateful) only: forget the current session, so the next "
        "request with its Mcp-Session-Id gets 404. The session's streams are closed 1 s later."
    )
    async def expire_session(ctx: Context) -> str:
        request = ctx.request_context.request
        session_id = request.headers.get("mcp-session-id") if request is not None else None
        if session_id is None:
            raise RuntimeError("no HTTP session (stdio, sse or stateless mode)")
        manager = mcp.session_manager
        # mcp 1.30.0 keeps live sessions in this dict; a missing id answers 404 "Session not found".
        transport = manager._server_instances.pop(session_id, None)
        manager._session_owners.pop(session_id, None)
        if transport is None:
            raise RuntimeError(f"session {session_id} is not tracked")

        async def close_later() -> None:
            # Let this very response reach the client first, then drop the session's streams
            # (an open GET stream ends), as a restarted server would.
            await asyncio.sleep(1.0)
            if not transport.is_terminated:
                await transport.terminate()

        task = asyncio.get_running_loop().create_task(close_later())
        pending.add(task)
        task.add_done_callback(pending.discard)
        return f"session {session_id} expired"

    @mcp.tool(description="Sends notifications/resources/updated for `uri` if this session subscribed.")
    async def notify_resource_updated(uri: str, ctx: Context) -> str:
        session = ctx.request_context.session
        if uri not in subscriptions.get(id(session), set()):
            return f"not subscribed to {uri}"
        await session.send_resource_updated(AnyUrl(uri))
        return f"sent update for {uri}"

    @mcp.tool(description="Sends tools, prompts and resources list_changed notifications.")
    async def notify_list_changed(ctx: Context) -> str:
        session = ctx.request_context.session
        await session.send_tool_list_changed()
        await session.send_prompt_list_changed()
        await session.send_resource_list_changed()
        return "sent 3 list_changed notifications"

    @mcp.resource(GREETING_URI, name="greeting", mime_type="text/plain")
    def greeting() -> str:
        return "Hello from py-peer"

    @mcp.resource("demo://item/{id}", name="item", mime_type="text/plain")
    def item(id: str) -> str:
        return f"item {id}"

    @mcp.prompt(description="Greets someone by name.")
    def greet(name: str) -> str:
        return f"Please greet {name} warmly."

    @mcp.completion()
    async def complete(
        ref: types.PromptReference | types.ResourceTemplateReference,
        argument: types.CompletionArgument,
        context: types.CompletionContext | None,
    ) -> types.Completion | None:
        if isinstance(ref, types.PromptReference) and ref.name == "greet" and argument.name == "name":
            values = [n for n in NAMES if n.lower().startswith(argument.value.lower())]
            return types.Completion(values=values, total=len(values), hasMore=False)
        if isinstance(ref, types.ResourceTemplateReference) and argument.name == "id":
            values = [str(i) for i in range(1, 4) if str(i).startswith(argument.value)]
            return types.Completion(values=values, total=len(values), hasMore=False)
        return None

    @lowlevel.subscribe_resource()
    async def subscribe(uri: AnyUrl) -> None:
        session = lowlevel.request_context.session
        subscriptions.setdefault(id(session), set()).add(str(uri))

    @lowlevel.unsubscribe_resource()
    async def unsubscribe(uri: AnyUrl) -> None:
        session = lowlevel.request_context.session
        subscriptions.get(id(session), set()).discard(str(uri))

    @lowlevel.set_logging_level()
    async def set_level(level: types.LoggingLevel) -> None:
        state["log_level"] = level

    # mcp 1.30.0 hard-codes resources.subscribe=false in the advertised capabilities even when a
    # subscribe handler exists; advertise what we implement.
    original_caps = lowlevel.get_capabilities

    def get_capabilities(*args: Any, **kwargs: Any) -> types.ServerCapabilities:
        caps = original_caps(*args, **kwargs)
        if caps.resources is not None:
            caps.resources.subscribe = True
        return caps

    lowlevel.get_capabilities = get_capabilities  # type: ignore[method-assign]
    return mcp


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    sub.add_parser("stdio", help="newline-delimited JSON-RPC on stdin/stdout")
    http = sub.add_parser("http", help="Streamable HTTP on 127.0.0.1:PORT/mcp")
    http.add_argument("--port", type=int, required=True)
    http.add_argument("--stateless", action="store_true", help="no sessions (no Mcp-Session-Id)")
    http.add_argument("--json", action="store_true", help="application/json bodies instead of SSE")
    sse = sub.add_parser("sse", help="legacy HTTP+SSE on 127.0.0.1:PORT (/sse, /messages/)")
    sse.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)

    if args.mode == "stdio":
        build().run("stdio")
    elif args.mode == "http":
        build(port=args.port, stateless=args.stateless, json_response=args.json).run("streamable-http")
    else:
        build(port=args.port).run("sse")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
