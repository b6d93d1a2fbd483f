"""A 2026-07-28 MCP server on PyPI `mcp` 2.3.0 (`MCPServer`), for the era interop tests.

usage: py2_server.py stdio
       py2_server.py http PORT        (streamable HTTP on 127.0.0.1:PORT/mcp, stateless)

Tools: `add {a, b}` (the sum as text), `echo {message}`, and `confirm {}`, which asks the
client through a resolver (`Elicit`): on 2026-07-28 the SDK answers `input_required` and
resumes on the retry; the tool returns `confirmed: <name>` with the elicited name.
"""

import sys
from typing import Annotated

from pydantic import BaseModel

from mcp.server.mcpserver import Elicit, MCPServer, Resolve

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
