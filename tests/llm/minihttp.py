"""A tiny JSON-over-HTTP server on 127.0.0.1 for catalog shapes the scripted server lacks
(``/props``, paginated ``/models``). Runs on the test's own event loop."""

from __future__ import annotations

import asyncio
import json
from typing import Any


class MiniJSONServer:
    """Serves ``routes[path] = (status, json_body)`` for GET requests; 404 otherwise."""

    def __init__(self, routes: dict[str, tuple[int, Any]]) -> None:
        self.routes = routes
        self.hits: list[str] = []
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> MiniJSONServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        target = head.split(b" ")[1].decode()
        self.hits.append(target)
        status, body = self.routes.get(target, (404, {"error": {"message": "not found"}}))
        data = json.dumps(body).encode()
        writer.write(
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
            + data
        )
        await writer.drain()
        writer.close()
