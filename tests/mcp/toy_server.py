"""A small MCP server for the tests, run as a script over stdio (``python toy_server.py``).

Tools: ``slow`` (sleeps), ``picture`` (an image, a resource link and an embedded text
resource), ``die`` (the process exits at once), ``env``. Prompts ``review`` (one required
argument) and ``plan`` (two messages); resources ``memo://readme`` and ``memo://big``
(longer than a read budget), and ``memo://broken`` which fails to read.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp.types import (
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

server = MCPServer("toy")


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep for ``seconds``, then say so."""
    started = os.environ.get("TOY_STARTED_FILE")
    if started:
        await asyncio.to_thread(Path(started).write_text, "started")  # the call is running
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def picture() -> list:
    """Return an image, a link to a resource and an embedded text resource."""
    return [
        TextContent(text="here is the chart"),
        ImageContent(
            data=base64.b64encode(b"\x89PNG" + b"0" * 2048).decode(), mime_type="image/png"
        ),
        ResourceLink(uri="file:///reports/chart.csv", name="chart data", mime_type="text/csv"),
        EmbeddedResource(
            resource=TextResourceContents(uri="memo://note", text="embedded note text")
        ),
    ]


@server.tool()
def die() -> str:
    """Exit the server process at once."""
    os._exit(1)


@server.tool()
def env(name: str) -> str:
    """The value of environment variable ``name`` in the server ("<unset>" when unset)."""
    return os.environ.get(name, "<unset>")


@server.prompt()
def review(path: str) -> str:
    """Ask for a review of ``path``."""
    return f"Please review {path} carefully."


@server.resource("memo://readme", name="readme", mime_type="text/plain")
def readme() -> str:
    """The toy readme."""
    return "toy readme"


@server.prompt()
def plan(goal: str, style: str = "short") -> list[Message]:
    """Plan the work for ``goal``."""
    return [UserMessage(f"Goal: {goal}"), UserMessage(f"Write a {style} plan.")]


@server.resource("memo://big", name="big", mime_type="text/plain")
def big() -> str:
    """A long memo."""
    return "line of the big memo\n" * 2_000


@server.resource("memo://broken", name="broken", mime_type="text/plain")
def broken() -> str:
    """A memo that cannot be read."""
    raise RuntimeError("the memo store is offline")


if __name__ == "__main__":
    sys.stderr.write("toy server starting\n")
    server.run("stdio")
