"""A 2026-07-28 MCP server on PyPI `mcp` 2.3.0 (`MCPServer`), for the era interop tests.

usage: py2_server.py stdio
       py2_server.py http PORT        (streamable HTTP on 127.0.0.1:PORT/mcp, stateless)

Tools: `add {a, b}` (the sum as text), `echo {message}`, and `confirm {}`, which asks the
client through a resolver (`Elicit`): on 2026-07-28 the SDK answers `input_required` and
resumes on the retry; the tool returns `confirmed: <name>` with the elicited name.

Subscriptions (`subscriptions/listen`, served by the SDK's `ListenHandler`): `touch {uri}`
publishes `notifications/resources/updated` for `uri`, `change_tools {}` publishes
`notifications/tools/list_changed`, `listens {}` returns how many listen streams are open,
and `end_listens {}` ends every open listen gracefully (each gets its closing result).
"""

import sys
from typing import Annotated

from pydantic import BaseModel

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve

server = MCPServer("py2-peer")


class Name(BaseModel):
    name: str = "nobody"


def ask_name() -> Elicit[Name]:
    return Elicit("Who are you?", Name)


@server.tool()
def add(a: int, b: int) -> str:
    """Adds two integers."""
    return str(a + b)


@server.tool()
def echo(message: str) -> str:
    """Returns the message."""
    return message


@server.tool()
def confirm(who: Annotated[Name, Resolve(ask_name)]) -> str:
    """Asks the client for a name (multi-round on 2026-07-28)."""
    return f"confirmed: {who.name}"


@server.tool()
async def touch(uri: str, ctx: Context) -> str:
    """Publishes an update of `uri` to the listen streams that asked for it."""
    await ctx.notify_resource_updated(uri)
    return "touched"


@server.tool()
async def change_tools(ctx: Context) -> str:
    """Publishes a tools list change to the listen streams that asked for it."""
    await ctx.notify_tools_changed()
    return "changed"


def _listen_handler():
    # MCPServer registers the SDK's ListenHandler on its lowlevel server.
    return server._lowlevel_server.get_request_handler("subscriptions/listen").handler


@server.tool()
def listens() -> str:
    """How many listen streams are open."""
    return str(len(_listen_handler()._streams))


@server.tool()
def end_listens() -> str:
    """Ends every open listen stream gracefully."""
    _listen_handler().close()
    return "ended"


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run("stdio")
    elif mode == "http":
        port = int(sys.argv[2])
        server.run("streamable-http", host="127.0.0.1", port=port, stateless_http=True)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
