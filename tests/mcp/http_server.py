"""A small MCP server over streamable HTTP for the tests: ``python http_server.py FD``.

It serves ``/mcp`` on the listening socket it inherits as file descriptor FD (the test
binds it to a free port of 127.0.0.1 and keeps it, so no other process can take the port
between choosing it and listening on it). Tools: ``add`` (two numbers) and ``header``
(the value of one header of the HTTP request that carried the call).
"""

from __future__ import annotations

import asyncio
import socket
import sys

import uvicorn
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


async def _serve(fd: int) -> None:
    listening = socket.socket(fileno=fd)
    app = server.streamable_http_app(host="127.0.0.1")
    await uvicorn.Server(uvicorn.Config(app, log_level="warning")).serve(sockets=[listening])


if __name__ == "__main__":
    asyncio.run(_serve(int(sys.argv[1])))
