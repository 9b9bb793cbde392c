"""A small MCP server over streamable HTTP for the tests: ``python http_server.py PORT``.

It listens on 127.0.0.1:PORT at ``/mcp``. Tools: ``add`` (two numbers) and ``header``
(the value of one header of the HTTP request that carried the call).
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("web")


@server.tool()
def add(a: float, b: float) -> str:
    """Add ``a`` and ``b``."""
    return f"{a:g} + {b:g} = {a + b:g}"


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of request header ``name`` ("<absent>" when the request had none)."""
    request = ctx.request_context.request
    headers = getattr(request, "headers", None)
    return (headers.get(name) if headers is not None else None) or "<absent>"


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
