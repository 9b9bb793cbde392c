"""Run the configured MCP servers: start, list, call, restart, stop.

:class:`McpManager` runs each server of ``mcp_servers`` in its own asyncio task, inside
which the SDK's transport (a subprocess over stdio, or streamable HTTP) and its
``ClientSession`` live in their own task group. :meth:`McpManager.start` returns at once;
the servers start in parallel. A ready server's tools are registered in the tool
registry (:mod:`smith_tui.mcp.adapter`); a server that fails to start, does not answer
within ``timeout_s`` or dies later is reported once through ``notify`` and its tools
are withdrawn, while the rest of the session goes on. :meth:`McpManager.restart`
starts it again with the configuration as it is now.

A stdio server's environment is ours without the API key variables
(:func:`~smith_tui.config.secrets.scrubbed_environ`) plus its configured ``env``; its
stderr goes to a temporary file whose last lines explain a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO, TypeVar

import anyio
from anyio.abc import TaskGroup
from mcp import ClientSession, StdioServerParameters, stdio_client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from smith_tui.config.schema import McpServerConfig
from smith_tui.config.secrets import scrubbed_environ
from smith_tui.mcp.adapter import prompt_text, resource_text, tool_spec
from smith_tui.tools.cancellable import until_cancelled
from smith_tui.tools.registry import ToolRegistry
from smith_tui.tools.spec import ToolContext, ToolError

log = logging.getLogger(__name__)

Status = Literal["disabled", "starting", "ready", "failed", "stopped"]

Notify = Callable[[str, Status, str], None]
"""``(server, status, notice)``: called on every change; ``notice`` is set once per failure."""

_T = TypeVar("_T")

STDERR_TAIL_CHARS = 400
"""How much of a failed server's stderr its notice quotes."""


class _Died(Exception):
    """The server closed the connection (its process exited)."""


@dataclass
class McpServer:
    """One configured server and what is known of it now."""

    name: str
    config: McpServerConfig
    status: Status = "stopped"
    error: str | None = None
    tools: list[types.Tool] = field(default_factory=list)
    prompts: list[types.Prompt] = field(default_factory=list)
    resources: list[types.Resource] = field(default_factory=list)
    tool_names: dict[str, str] = field(default_factory=dict)
    """Our name (``mcp__server__tool``) → the server's tool name."""
    session: ClientSession | None = None
    task: asyncio.Task[None] | None = None
    started: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once starting is over (ready or failed)."""
    wake: anyio.Event | None = None
    stopping: bool = False

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "http" if self.config.url else "stdio"


class McpManager:
    """The session's MCP servers.

    ``servers`` returns the configured servers as they are now (read again by
    :meth:`start` and :meth:`restart`); ``root`` is the folder a command runs in by
    default (the project root); ``registry`` receives the tools of ready servers.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        servers: Callable[[], Mapping[str, McpServerConfig]],
        root: Callable[[], Path],
        notify: Notify | None = None,
    ) -> None:
        self.registry = registry
        self._configured = servers
        self._root = root
        self._notify = notify or (lambda server, status, notice: None)
        self._servers: dict[str, McpServer] = {}
        self._started = False

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Start every enabled server in the background (once; needs a running loop)."""
        if self._started:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop yet: the first turn starts them
        self._started = True
        for name, config in self._configured().items():
            self._launch(McpServer(name, config))

    async def wait_started(self) -> None:
        """Wait until no server is still starting (each is bounded by its ``timeout_s``)."""
        pending = [s.started.wait() for s in self._servers.values() if s.status == "starting"]
        if pending:
            await asyncio.gather(*pending)

    async def restart(self, name: str) -> McpServer:
        """Stop ``name`` if it runs, start it with its configuration as it is now, await it."""
        config = self._configured().get(name)
        if config is None:
            known = ", ".join(sorted(self._configured())) or "none"
            raise ToolError(f"no MCP server named {name!r} in mcp_servers (configured: {known})")
        await self.stop(name)
        server = McpServer(name, config.model_copy(update={"enabled": True}))
        self._launch(server)
        await server.started.wait()
        return server

    async def stop(self, name: str) -> None:
        """Stop one server and withdraw its tools."""
        server = self._servers.get(name)
        if server is None or server.task is None:
            return
        server.stopping = True
        if server.wake is not None:
            server.wake.set()
        if not server.task.done():
            if server.status == "starting":
                server.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await server.task

    async def aclose(self) -> None:
        """Stop every server (the session ends)."""
        await asyncio.gather(*(self.stop(name) for name in list(self._servers)))

    def servers(self) -> list[McpServer]:
        """Every configured server (those not started show as disabled or stopped)."""
        known = dict(self._servers)
        for name, config in self._configured().items():
            if name not in known:
                status: Status = "stopped" if config.enabled else "disabled"
                known[name] = McpServer(name, config, status=status)
        return [known[name] for name in sorted(known)]

    def get(self, name: str) -> McpServer | None:
        """The server called ``name``, if it was started."""
        return self._servers.get(name)

    # -- calls ----------------------------------------------------------------------------
    async def call_tool(
        self, name: str, tool: str, arguments: dict[str, Any], ctx: ToolContext
    ) -> types.CallToolResult:
        """Call ``tool`` of server ``name``; cancelled with ``ctx``, bounded by ``timeout_s``."""
        session = self._session(name)
        return await self._ask(
            name, f"did not answer {tool}", until_cancelled(ctx, session.call_tool(tool, arguments))
        )

    def resource_servers(self) -> list[str]:
        """The names of the configured servers (``@name:uri`` names one of their resources)."""
        return sorted(self._configured())

    async def read_resource(self, name: str, uri: str) -> str:
        """The text of resource ``uri`` of server ``name`` (binary parts become a note)."""
        session = self._session(name)
        result = await self._ask(name, f"did not send {uri}", session.read_resource(uri))
        if not isinstance(result, types.ReadResourceResult):
            raise ToolError(f"MCP server {name!r} asked for input to read {uri}; not supported")
        return resource_text(result)

    async def get_prompt(self, name: str, prompt: str, arguments: dict[str, str]) -> str:
        """The messages of prompt ``prompt`` of server ``name``, as one text."""
        session = self._session(name)
        result = await self._ask(
            name, f"did not send prompt {prompt}", session.get_prompt(prompt, arguments)
        )
        if not isinstance(result, types.GetPromptResult):
            raise ToolError(
                f"MCP server {name!r} asked for input for prompt {prompt}; not supported"
            )
        return prompt_text(result)

    def _session(self, name: str) -> ClientSession:
        """The session of the ready server ``name`` (a :class:`ToolError` saying why not)."""
        server = self._servers.get(name)
        session = server.session if server is not None else None
        if server is None or session is None or server.status != "ready":
            if name not in self._configured():
                known = ", ".join(sorted(self._configured())) or "none"
                raise ToolError(
                    f"no MCP server named {name!r} in mcp_servers (configured: {known})",
                    code="mcp_unavailable",
                )
            state = "not started" if server is None else server.status
            why = f": {server.error}" if server is not None and server.error else ""
            raise ToolError(
                f"MCP server {name!r} is not running ({state}{why}); the user can start it "
                f"again with /mcp restart {name}",
                code="mcp_unavailable",
            )
        return session

    async def _ask(self, name: str, failed: str, request: Awaitable[_T]) -> _T:
        """Await ``request`` to server ``name`` within its ``timeout_s``; errors as ToolError."""
        server = self._servers[name]
        timeout = server.config.timeout_s
        try:
            async with asyncio.timeout(timeout):
                return await request
        except TimeoutError:
            raise ToolError(
                f"MCP server {name!r} {failed} within {timeout:g} s (mcp_servers.{name}.timeout_s)",
                code="timeout",
            ) from None
        except MCPError as exc:
            raise ToolError(f"MCP server {name!r}: {exc.error.message}", code="mcp_error") from None

    # -- one server -----------------------------------------------------------------------
    def _launch(self, server: McpServer) -> None:
        self._servers[server.name] = server
        if not server.config.enabled:
            server.status = "disabled"
            server.started.set()
            return
        self._set(server, "starting")
        server.task = asyncio.create_task(self._run(server), name=f"mcp-{server.name}")

    def _set(self, server: McpServer, status: Status, notice: str = "") -> None:
        server.status = status
        try:
            self._notify(server.name, status, notice)
        except Exception:
            log.exception("MCP status subscriber failed")

    async def _run(self, server: McpServer) -> None:
        errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        try:
            await self._serve(server, errlog)
            if server.stopping:
                self._withdraw(server)
                self._set(server, "stopped")
        except asyncio.CancelledError:
            self._withdraw(server)
            self._set(server, "stopped")
            if not server.stopping:
                raise
        except Exception as exc:
            if server.status != "failed":  # a failed start-up was said already
                self._fail(server, exc, errlog)
        finally:
            server.session = None
            server.started.set()
            errlog.close()

    async def _serve(self, server: McpServer, errlog: TextIO) -> None:
        config = server.config
        async with contextlib.AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(self._transport(config, errlog))
            wake = server.wake = anyio.Event()
            closed = anyio.Event()
            group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(group.cancel_scope.cancel)
            watched = _watch(group, read, closed, wake)
            session = await stack.enter_async_context(ClientSession(watched, write))
            try:
                with anyio.fail_after(config.timeout_s):
                    await session.initialize()
                    tools = await _all_tools(session)
                    capabilities = session.server_capabilities
                    if capabilities is not None and capabilities.prompts is not None:
                        server.prompts = (await session.list_prompts()).prompts
                    if capabilities is not None and capabilities.resources is not None:
                        server.resources = (await session.list_resources()).resources
            except Exception as exc:
                # Said now, so a waiting turn goes on while the process is being stopped.
                self._fail(server, exc, errlog)
                server.started.set()
                raise
            server.session = session
            server.tools = tools
            self._offer(server)
            server.error = None
            self._set(server, "ready")
            server.started.set()
            await wake.wait()
            if closed.is_set() and not server.stopping:
                raise _Died

    @contextlib.asynccontextmanager
    async def _transport(self, config: McpServerConfig, errlog: TextIO) -> AsyncIterator[Any]:
        if config.url is not None:
            headers = dict(config.headers)
            for header, variable in config.headers_env.items():
                value = os.environ.get(variable)
                if not value:
                    raise ToolError(f"environment variable {variable} (for {header}) is not set")
                headers[header] = value
            client = create_mcp_http_client(headers=headers)
            async with client, streamable_http_client(config.url, http_client=client) as streams:
                yield streams
            return
        assert config.command is not None
        root = self._root()
        cwd = root / config.cwd if config.cwd else root
        params = StdioServerParameters(
            command=config.command,
            args=list(config.args),
            env={**scrubbed_environ(), **config.env},
            cwd=cwd,
        )
        async with stdio_client(params, errlog=errlog) as streams:
            yield streams

    def _offer(self, server: McpServer) -> None:
        self._withdraw(server)
        taken = {spec.name for spec in self.registry.list()}
        for tool in server.tools:
            spec = tool_spec(
                server.name, tool, roles=server.config.roles, call=self.call_tool, taken=taken
            )
            taken.add(spec.name)
            server.tool_names[spec.name] = tool.name
            self.registry.register(spec)

    def _withdraw(self, server: McpServer) -> None:
        for name in server.tool_names:
            self.registry.unregister(name)
        server.tool_names = {}

    def _fail(self, server: McpServer, exc: BaseException, errlog: TextIO) -> None:
        was_ready = server.status == "ready"
        self._withdraw(server)
        reason = _reason(server, exc, was_ready)
        tail = _tail(errlog)
        notice = f"MCP server {server.name} {reason}"
        if tail:
            notice += f"\n{tail}"
            reason += f" ({tail.splitlines()[-1][:120]})"
        server.error = reason
        notice += f"\nThe session goes on without it; /mcp restart {server.name} tries again."
        self._set(server, "failed", notice)


def _watch(group: TaskGroup, read: Any, closed: anyio.Event, wake: anyio.Event) -> Any:
    """Pass the server's messages on, and note when the connection ends (the server died)."""
    send, receive = anyio.create_memory_object_stream[Any](0)

    async def forward() -> None:
        async with send:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async for message in read:
                    await send.send(message)
        closed.set()
        wake.set()

    group.start_soon(forward)
    return receive


async def _all_tools(session: ClientSession) -> list[types.Tool]:
    result = await session.list_tools()
    tools = list(result.tools)
    while result.next_cursor:
        result = await session.list_tools(
            params=types.PaginatedRequestParams(cursor=result.next_cursor)
        )
        tools.extend(result.tools)
    return tools


def _reason(server: McpServer, exc: BaseException, was_ready: bool) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]  # a task group's: the first failure says why
    timeout = f"{server.config.timeout_s:g} s"
    if isinstance(exc, _Died):
        return "stopped: its connection closed (the process exited)"
    if isinstance(exc, TimeoutError):
        return f"did not start: no answer within {timeout} (mcp_servers.{server.name}.timeout_s)"
    if isinstance(exc, MCPError) and exc.code == types.CONNECTION_CLOSED:
        if was_ready:
            return "stopped: its connection closed (the process exited)"
        return "did not start: the process exited before answering"
    if isinstance(exc, MCPError):
        where = "failed" if was_ready else "did not start"
        return f"{where}: {exc.error.message}"
    if isinstance(exc, ToolError):
        return f"did not start: {exc.message}"
    if isinstance(exc, OSError):
        what = server.config.command or server.config.url
        return f"did not start: cannot run {what!r}: {exc.strerror or exc}"
    message = str(exc) or type(exc).__name__
    return f"did not start: {type(exc).__name__}: {message}"


def _tail(errlog: TextIO) -> str:
    try:
        errlog.seek(0)
        text = errlog.read()
    except (OSError, ValueError):
        return ""
    text = text.strip()
    if len(text) > STDERR_TAIL_CHARS:
        text = "…" + text[-STDERR_TAIL_CHARS:]
    return text
