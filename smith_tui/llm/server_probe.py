"""Find Chat-Completions servers answering on this machine's usual ports.

Used by the welcome screen to offer a server URL. Each candidate is asked at the same
time, with a short timeout, only on the loopback address: ``GET /v1/models`` (every
OpenAI-compatible server), then ``GET /api/tags`` (Ollama's own list) when the first
gives no list.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

#: The usual local servers: (name, port).
LOCAL_SERVERS: tuple[tuple[str, int], ...] = (
    ("Ollama", 11434),
    ("llama.cpp", 8080),
    ("LM Studio", 1234),
    ("vLLM", 8000),
)

USUAL_SERVERS = LOCAL_SERVERS
"""The usual servers, as named to the user (``LOCAL_SERVERS`` is what is asked)."""

#: Seconds each request may take: a local server answers at once or not at all.
PROBE_TIMEOUT_S = 0.6


@dataclass(frozen=True)
class FoundServer:
    """A server that answered: its usual name, the base URL to use, its model count."""

    name: str
    url: str
    models: int

    def describe(self) -> str:
        """``llama.cpp at http://127.0.0.1:8080/v1 (2 models)``."""
        count = f"{self.models} model{'s' if self.models != 1 else ''}"
        return f"{self.name} at {self.url} ({count})"


def _count_models(body: Any) -> int | None:
    """How many models a list body names (``data`` or ``models``), or None if it is none."""
    if isinstance(body, dict):
        for key in ("data", "models"):
            items = body.get(key)
            if isinstance(items, list):
                return len(items)
    if isinstance(body, list):
        return len(body)
    return None


async def _probe_one(client: Any, name: str, port: int, host: str) -> FoundServer | None:
    base = f"http://{host}:{port}"
    for path in ("/v1/models", "/api/tags"):
        try:
            response = await client.get(base + path)
        except Exception:  # refused or timed out: nothing listens there
            return None
        try:
            count = _count_models(response.json()) if response.status_code == 200 else None
        except ValueError:  # not JSON: some other program on that port
            count = None
        if count is not None:
            return FoundServer(name, base + "/v1", count)
    return None


async def probe_local_servers(
    servers: tuple[tuple[str, int], ...] = LOCAL_SERVERS,
    *,
    host: str = "127.0.0.1",
    timeout_s: float | None = None,
) -> list[FoundServer]:
    """The servers of ``servers`` that answer on ``host``, in the order given (each request
    within ``timeout_s``, by default :data:`PROBE_TIMEOUT_S` as it is at the call)."""
    if not servers:
        return []
    import httpx

    limits = httpx.Timeout(PROBE_TIMEOUT_S if timeout_s is None else timeout_s)
    async with httpx.AsyncClient(timeout=limits, trust_env=False) as client:
        found = await asyncio.gather(
            *(_probe_one(client, name, port, host) for name, port in servers)
        )
    return [server for server in found if server is not None]


def probe_local_servers_sync(
    servers: tuple[tuple[str, int], ...] = LOCAL_SERVERS, **kwargs: Any
) -> list[FoundServer]:
    """:func:`probe_local_servers` for a thread without an event loop."""
    return asyncio.run(probe_local_servers(servers, **kwargs))
