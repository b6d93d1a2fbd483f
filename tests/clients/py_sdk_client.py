#!/usr/bin/env python3
"""An MCP client written with the PyPI `mcp` SDK (1.x, pinned in tests/peers/requirements-mcp1.txt),
run against npm server-everything (directly, or through a bridge in front of it). It plays a host
nobody in this repository wrote: tools listed, a call with progress, a sampling request and an
elicitation answered by its own callbacks, a resource subscription, a cancelled call. See
tests/clients/README.md.

    python py_sdk_client.py --stdio CMD [ARGS...]
    python py_sdk_client.py --url http://127.0.0.1:PORT/mcp
    python py_sdk_client.py --demo --url http://127.0.0.1:PORT/mcp

With --demo the same steps run against `mcp demo-server` (its tools slow, model, ask, echo and
the resource demo://clock) instead of server-everything.

Prints one JSON object per step on stdout ({"step", "ok", "detail"}); exits 0 when every step
passed, 1 when one failed, 2 on bad arguments. Every wait is bounded; a guard ends the run (exit 1)
if it takes longer than MCP_CLIENT_GUARD_SECS (default 45).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.message import SessionMessage

USAGE = "usage: py_sdk_client.py [--demo] (--stdio CMD [ARGS...] | --url URL)"

NEEDED_TOOLS = [
    "echo",
    "trigger-long-running-operation",
    "trigger-sampling-request",
    "trigger-elicitation-request",
    "toggle-subscriber-updates",
]

# The same steps against `mcp demo-server` (set by --demo).
DEMO = False
DEMO_TOOLS = ["echo", "slow", "model", "ask"]


def parse_args(argv: list[str]) -> dict[str, Any] | None:
    """The target: {"url": URL} or {"command": CMD, "args": [...]}; a leading --demo sets DEMO."""
    global DEMO
    if argv and argv[0] == "--demo":
        DEMO = True
        argv = argv[1:]
    if len(argv) == 2 and argv[0] == "--url":
        return {"url": argv[1]}
    if len(argv) >= 2 and argv[0] == "--stdio":
        return {"command": argv[1], "args": argv[2:]}
    return None


# ---- output --------------------------------------------------------------------------------------

failures = 0


def report(step: str, ok: bool, detail: Any) -> None:
    global failures
    if not ok:
        failures += 1
    sys.stdout.write(json.dumps({"step": step, "ok": ok, "detail": detail}) + "\n")
    sys.stdout.flush()


class CheckFailed(Exception):
    """A step's expectation did not hold."""


def check(cond: Any, message: str) -> None:
    if not cond:
        raise CheckFailed(message)


def describe(error: BaseException) -> str:
    """An error as one line; the errors inside a task group's ExceptionGroup, each named."""
    # A task group's ExceptionGroup (builtin from Python 3.11, a backport on 3.10).
    inner = getattr(error, "exceptions", None)
    if isinstance(inner, tuple) and inner:
        return "; ".join(describe(e) for e in inner)
    return f"{type(error).__name__}: {error}"


async def step(name: str, seconds: float, body: Callable[[], Awaitable[Any]]) -> bool:
    """Runs one step: `body` returns the detail or raises; bounded by `seconds`."""
    try:
        with anyio.fail_after(seconds):
            detail = await body()
    except TimeoutError:
        report(name, False, {"error": f"{name}: no outcome within {seconds} s"})
        return False
    except Exception as error:  # any failure of a step is reported, and the run goes on
        report(name, False, {"error": describe(error)})
        return False
    report(name, True, detail)
    return True


# ---- the wire tap: every message in both directions, in order ------------------------------------


class Wire:
    """What the session sent and received, as JSON-RPC dicts, and a way to wait on it."""

    def __init__(self) -> None:
        self.log: list[tuple[str, dict[str, Any]]] = []
        self.changed = anyio.Event()

    def tap(self, direction: str, item: Any) -> None:
        if isinstance(item, SessionMessage):
            message = item.message.model_dump(by_alias=True, mode="json", exclude_none=True)
            self.log.append((direction, message))
            self.changed.set()
            self.changed = anyio.Event()

    def outgoing(self, pred: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        return [m for d, m in self.log if d == "out" and pred(m)]

    def incoming(self, pred: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        return [m for d, m in self.log if d == "in" and pred(m)]

    async def wait_for(self, seconds: float, cond: Callable[[], bool]) -> bool:
        """Whether `cond()` held within `seconds` (checked after every message)."""
        with anyio.move_on_after(seconds):
            while not cond():
                await self.changed.wait()
            return True
        return cond()


class TappedSend:
    """The session's write stream, shown to the tap on the way out; otherwise unchanged."""

    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner = inner
        self._wire = wire

    async def send(self, item: SessionMessage) -> None:
        self._wire.tap("out", item)
        await self._inner.send(item)

    async def __aenter__(self) -> TappedSend:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class TappedReceive:
    """The session's read stream, shown to the tap on the way in; otherwise unchanged."""

    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner = inner
        self._wire = wire

    def __aiter__(self) -> TappedReceive:
        return self

    async def __anext__(self) -> Any:
        item = await self._inner.__anext__()
        self._wire.tap("in", item)
        return item

    async def receive(self) -> Any:
        item = await self._inner.receive()
        self._wire.tap("in", item)
        return item

    async def __aenter__(self) -> TappedReceive:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


# ---- the scenario --------------------------------------------------------------------------------


async def scenario(target: dict[str, Any]) -> None:
    wire = Wire()
    nonce = f"n{os.getpid()}x{int(time.time() * 1000):x}"
    sampling_requests: list[types.CreateMessageRequestParams] = []
    elicitations: list[Any] = []
    elicited_name = f"Ada {nonce}"
    resource_updates: list[str] = []
    other_events: list[str] = []

    async def on_sampling(_context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        sampling_requests.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"sampled answer {nonce}"),
            model="mcp-rs-test-model",
            stopReason="endTurn",
        )

    async def on_elicitation(_context: Any, params: Any) -> types.ElicitResult:
        elicitations.append(params)
        if DEMO:
            return types.ElicitResult(action="accept", content={"answer": elicited_name})
        return types.ElicitResult(
            action="accept",
            content={"name": elicited_name, "check": True, "email": "ada@example.com", "integer": 7},
        )

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root, types.ResourceUpdatedNotification
        ):
            resource_updates.append(str(message.root.params.uri))
        elif isinstance(message, Exception):
            other_events.append(f"{type(message).__name__}: {message}")

    http_exchanges: list[dict[str, Any]] = []

    async def record_exchange(response: Any) -> None:
        request = response.request
        http_exchanges.append(
            {
                "method": request.method,
                "status": response.status_code,
                "content_type": response.headers.get("content-type"),
                "protocol_version": request.headers.get("mcp-protocol-version"),
                "last_event_id": request.headers.get("last-event-id"),
            }
        )

    stack = AsyncExitStack()
    get_session_id: Callable[[], str | None] | None = None
    try:
        # Entered outside any step: the transports hold task groups, whose cancel scopes must
        # not interleave with a step's deadline. Neither blocks: the child is spawned, or the
        # HTTP client made; the first exchange is `initialize`, inside the connect step.
        if "url" in target:
            # The SDK's own default client, with a hook that records every exchange (method,
            # headers that matter, status), to show how this client uses the transport.
            http_client = create_mcp_http_client()
            http_client.event_hooks["response"].append(record_exchange)
            await stack.enter_async_context(http_client)
            read, write, get_session_id = await stack.enter_async_context(
                streamable_http_client(target["url"], http_client=http_client)
            )
        else:
            # The whole environment: the server (or bridge) sees what the test gave this script.
            params = StdioServerParameters(command=target["command"], args=target["args"], env=dict(os.environ))
            read, write = await stack.enter_async_context(stdio_client(params))
        session = await stack.enter_async_context(
            ClientSession(
                TappedReceive(read, wire),
                TappedSend(write, wire),
                sampling_callback=on_sampling,
                elicitation_callback=on_elicitation,
                message_handler=on_message,
                client_info=types.Implementation(name="mcp-rs-py-sdk-client", version="1.0.0"),
            )
        )
    except Exception as error:
        report("connect", False, {"error": describe(error)})
        await stack.aclose()
        return

    closing_since = 0.0
    try:
        async with stack:

            async def connect() -> dict[str, Any]:
                result = await session.initialize()
                init = wire.outgoing(lambda m: m.get("method") == "initialize")[0]
                caps = result.capabilities
                check(caps.resources is not None and caps.resources.subscribe, "the server does not offer resources.subscribe")
                return {
                    "sdk": "mcp (PyPI)",
                    "transport": "streamable-http" if "url" in target else "stdio",
                    "offered_version": init["params"]["protocolVersion"],
                    "negotiated_version": result.protocolVersion,
                    "offered_capabilities": init["params"]["capabilities"],
                    "server": result.serverInfo.model_dump(exclude_none=True),
                    "session_id": get_session_id() if get_session_id else None,
                }

            if await step("connect", 20, connect):
                await exercise(session, wire, nonce, sampling_requests, elicitations, elicited_name, resource_updates)
            closing_since = time.monotonic()
    except Exception as error:  # the transport failed while closing, or under a step
        report("close", False, {"error": describe(error), "session_events": other_events})
        return
    # Leaving the contexts ended the session: stdio closed stdin and reaped the process (the SDK
    # bounds that: 2 s, then it terminates the process); HTTP sent DELETE for the session.
    detail: dict[str, Any] = {"seconds": round(time.monotonic() - closing_since, 3), "session_events": other_events}
    if "url" in target:
        detail["http"] = {
            "posts": sum(e["method"] == "POST" for e in http_exchanges),
            "gets": [
                {k: e[k] for k in ("status", "content_type", "last_event_id")}
                for e in http_exchanges
                if e["method"] == "GET"
            ],
            "deletes": sum(e["method"] == "DELETE" for e in http_exchanges),
            "protocol_version_headers": sorted({e["protocol_version"] or "" for e in http_exchanges}),
        }
    report("close", True, detail)


async def exercise(
    session: ClientSession,
    wire: Wire,
    nonce: str,
    sampling_requests: list[types.CreateMessageRequestParams],
    elicitations: list[Any],
    elicited_name: str,
    resource_updates: list[str],
) -> None:
    """The steps after the handshake, in order; each reports itself."""

    async def list_all_tools() -> list[str]:
        names: list[str] = []
        cursor = None
        for _ in range(100):
            page = await session.list_tools(cursor=cursor)
            names.extend(t.name for t in page.tools)
            cursor = page.nextCursor
            if not cursor:
                break
        return names

    def list_changed_count() -> int:
        return len(wire.incoming(lambda m: m.get("method") == "notifications/tools/list_changed"))

    async def list_tools() -> dict[str, Any]:
        names = await list_all_tools()
        # The server registers capability-dependent tools when it sees `initialized`; a bridge
        # may only learn them afterwards and announce them with list_changed: list again then.
        needed = DEMO_TOOLS if DEMO else NEEDED_TOOLS
        if not all(n in names for n in needed):
            seen = list_changed_count()
            await wire.wait_for(3, lambda: list_changed_count() > seen)
            names = await list_all_tools()
        missing = [n for n in needed if n not in names]
        check(not missing, f"tools missing: {', '.join(missing)} (listed: {', '.join(names)})")
        return {"count": len(names), "tools": names}

    await step("list_tools", 10, list_tools)

    def call_of(pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        calls = wire.outgoing(lambda m: m.get("method") == "tools/call" and pred(m["params"]))
        check(calls, "the tools/call request is not on the wire")
        return calls[-1]

    def progress_of(token: Any) -> list[dict[str, Any]]:
        return [
            m["params"]
            for m in wire.incoming(
                lambda m: m.get("method") == "notifications/progress" and m["params"].get("progressToken") == token
            )
        ]

    async def progress() -> dict[str, Any]:
        updates: list[tuple[float, float | None]] = []

        async def on_progress(value: float, total: float | None, _message: str | None) -> None:
            updates.append((value, total))

        tool, args = ("slow", {"steps": 4, "delay_ms": 50}) if DEMO else (
            "trigger-long-running-operation", {"duration": 1, "steps": 4})
        result = await session.call_tool(tool, args, progress_callback=on_progress)
        call = call_of(lambda p: p.get("name") == tool)
        token = call["params"].get("_meta", {}).get("progressToken")
        check(token is not None, "the call carried no progressToken")
        on_wire = progress_of(token)
        check(len(on_wire) == 4, f"expected 4 progress notifications on the wire, got {on_wire}")
        for i, p in enumerate(on_wire):
            check(p["progress"] == i + 1 and p.get("total") == 4, f"progress {i}: {p}")
        check(
            [v for v, _ in updates] == [p["progress"] for p in on_wire],
            f"progress_callback saw {updates}, the wire had {on_wire}",
        )
        done = "finished 4 steps" if DEMO else "Long running operation completed"
        check(done in text_of(result), f"result: {text_of(result)}")
        return {"progress_token": token, "notifications": len(updates), "values": [v for v, _ in updates]}

    await step("progress", 15, progress)

    async def sampling() -> dict[str, Any]:
        prompt = f"say hello {nonce}"
        if DEMO:
            result = await session.call_tool("model", {"prompt": prompt, "max_tokens": 64})
        else:
            result = await session.call_tool("trigger-sampling-request", {"prompt": prompt, "maxTokens": 64})
        check(len(sampling_requests) == 1, f"the sampling callback ran {len(sampling_requests)} times")
        asked = sampling_requests[0]
        check(asked.maxTokens == 64, f"maxTokens {asked.maxTokens}")
        check(prompt in json.dumps([m.model_dump(mode="json") for m in asked.messages]), f"messages: {asked.messages}")
        text = text_of(result)
        check(not result.isError, f"tool error: {text}")
        check(f"sampled answer {nonce}" in text and "mcp-rs-test-model" in text, f"the server did not get the answer: {text}")
        return {
            "request": {"maxTokens": asked.maxTokens, "systemPrompt": asked.systemPrompt},
            "result_excerpt": text[:200],
        }

    await step("sampling", 15, sampling)

    async def elicitation() -> dict[str, Any]:
        if DEMO:
            result = await session.call_tool("ask", {"question": f"who are you? {nonce}"})
        else:
            result = await session.call_tool("trigger-elicitation-request", {})
        check(len(elicitations) == 1, f"the elicitation callback ran {len(elicitations)} times")
        asked = elicitations[0]
        schema = getattr(asked, "requestedSchema", None) or {}
        field = "answer" if DEMO else "name"
        check(field in schema.get("properties", {}), f"schema: {schema}")
        text = text_of(result)
        check(not result.isError, f"tool error: {text}")
        if DEMO:
            check(f"The user said: {elicited_name}" in text, f"the server did not get the answer: {text}")
        else:
            check(
                f"- Name: {elicited_name}" in text and "- Favorite Integer: 7" in text,
                f"the server did not get the answer: {text}",
            )
        return {"message": asked.message, "fields": len(schema["properties"]), "accepted_name": elicited_name}

    await step("elicitation", 15, elicitation)

    async def subscribe() -> dict[str, Any]:
        listed = await session.list_resources()
        uris = [str(r.uri) for r in listed.resources]
        if DEMO:
            uri = "demo://clock" if "demo://clock" in uris else None
        else:
            uri = next((u for u in uris if u.startswith("demo://resource/static/")), uris[0] if uris else None)
        check(uri, f"the server lists no resource to subscribe to: {uris}")
        await session.subscribe_resource(uri)
        # The demo's clock changes every second while subscribed: nothing to switch on.
        toggled = "Started" if DEMO else text_of(await session.call_tool("toggle-subscriber-updates", {}))
        check(toggled.startswith("Started"), f"toggle-subscriber-updates: {toggled}")
        started = time.monotonic()
        # The server sends one update at once and then every 5 s.
        got = await wire.wait_for(12, lambda: uri in resource_updates)
        waited_ms = int((time.monotonic() - started) * 1000)
        # message_handler runs after the tap saw the notification: give it its turn.
        with anyio.move_on_after(1):
            while uri not in resource_updates:
                await anyio.sleep(0.01)
        # Leave the server as we found it: updates off, subscription gone.
        stopped = "Stopped" if DEMO else text_of(await session.call_tool("toggle-subscriber-updates", {}))
        await session.unsubscribe_resource(uri)
        check(got and uri in resource_updates, f"no notifications/resources/updated for {uri} within 12 s ({resource_updates})")
        check(stopped.startswith("Stopped"), f"second toggle-subscriber-updates: {stopped}")
        return {"uri": uri, "updates": resource_updates.count(uri), "waited_ms": waited_ms}

    await step("subscribe", 20, subscribe)

    async def cancel() -> dict[str, Any]:
        duration, steps = 3, 6
        reason = f"mcp-rs client test: cancelled after the first progress ({nonce})"
        first_progress = anyio.Event()
        # Set by the first progress or by the end of the call, whichever comes first.
        turn = anyio.Event()
        outcome: dict[str, Any] = {}
        started = time.monotonic()

        async def on_progress(_value: float, _total: float | None, _message: str | None) -> None:
            first_progress.set()
            turn.set()

        async def run_call(scope: anyio.CancelScope) -> None:
            try:
                with scope:
                    tool, args = ("slow", {"steps": steps, "delay_ms": duration * 1000 // steps}) if DEMO else (
                        "trigger-long-running-operation", {"duration": duration, "steps": steps})
                    result = await session.call_tool(tool, args, progress_callback=on_progress)
                    outcome["resolved"] = text_of(result)
                if scope.cancelled_caught:
                    outcome["cancelled"] = True
            finally:
                turn.set()

        scope = anyio.CancelScope()
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_call, scope)
            with anyio.move_on_after(10):
                await turn.wait()
            check(first_progress.is_set(), f"no progress before the call ended or within 10 s: {outcome}")
            request = call_of(
                lambda p: (p.get("arguments") or {}).get("delay_ms" if DEMO else "duration")
                == (duration * 1000 // steps if DEMO else duration)
            )
            # mcp 1.x sends no notifications/cancelled when a call is abandoned: a host
            # tells the server itself, then stops waiting.
            await session.send_notification(
                types.ClientNotification(
                    types.CancelledNotification(
                        params=types.CancelledNotificationParams(requestId=request["id"], reason=reason)
                    )
                )
            )
            scope.cancel()
        check(outcome.get("cancelled") and "resolved" not in outcome, f"the call was not cancelled: {outcome}")
        cancelled = wire.outgoing(
            lambda m: m.get("method") == "notifications/cancelled" and m["params"].get("requestId") == request["id"]
        )
        check(len(cancelled) == 1, f"notifications/cancelled for request {request['id']} sent {len(cancelled)} times")
        token = request["params"].get("_meta", {}).get("progressToken")
        # The server keeps running the handler and drops its answer: wait until its last
        # progress (or, should something on the way drop progress for a cancelled call, until
        # the handler must have ended), then a round trip behind it.
        saw_last = await wire.wait_for(
            max(0.0, started + duration + 2 - time.monotonic()),
            lambda: any(p.get("progress") == steps for p in progress_of(token)),
        )
        echo = text_of(await session.call_tool("echo", {"text" if DEMO else "message": nonce}))
        check(nonce in echo, f"echo after cancel: {echo}")
        late = wire.incoming(lambda m: m.get("id") == request["id"] and ("result" in m or "error" in m))
        check(not late, f"the server answered the cancelled request: {late}")
        return {
            "request_id": request["id"],
            "cancelled_notification": cancelled[0]["params"],
            "call_outcome": "cancelled (anyio cancel scope)",
            "server_finished_handler": saw_last,
            "progress_after_cancel": len(progress_of(token)) - 1,
            "late_answer": False,
        }

    await step("cancel", 20, cancel)


async def main() -> int:
    target = parse_args(sys.argv[1:])
    if target is None:
        print(USAGE, file=sys.stderr)
        return 2
    guard = float(os.environ.get("MCP_CLIENT_GUARD_SECS", "45"))
    with anyio.move_on_after(guard) as scope:
        await scenario(target)
    if scope.cancelled_caught:
        report("guard", False, {"error": f"the whole run took longer than {guard} s"})
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
