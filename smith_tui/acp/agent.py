"""The ACP agent: sessions, prompts, modes and cancellation over one client connection.

Each session opens its own :class:`~smith_tui.engine.runtime.Runtime` in the session's
working directory on the same store the TUI uses; the session id is the conversation id.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionForkCapabilities,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from smith_tui.acp import extensions, options
from smith_tui.acp.image_blocks import prompt_images
from smith_tui.acp.lifecycle import SessionLifecycle
from smith_tui.errors import error_text

if TYPE_CHECKING:
    from smith_tui.acp.session import AcpSession
    from smith_tui.engine.runtime import Runtime

# The engine (and smith_tui.acp.session with it) loads after `initialize` was answered
# (smith_tui.acp.preload): the handshake waits for the protocol SDK alone.

log = logging.getLogger(__name__)

STOP_REASONS = {
    "completed": "end_turn",
    "cancelled": "cancelled",
    "budget_exhausted": "max_tokens",
    "error": "end_turn",
}
"""Smith's turn endings as ACP stop reasons (an error fails ``session/prompt``, see
:func:`turn_failed`; its message is also said in the answer)."""
TURN_FAILED = -32603
"""The JSON-RPC error code of a failed turn (internal error: the agent could not do it)."""

RuntimeOpener = Callable[[Path, Mapping[str, Any]], "Runtime"]
"""Opens a runtime in the given folder with extra session settings (blocking)."""


class SmithAgent(SessionLifecycle):
    """Implements the ``acp.Agent`` protocol on Smith runtimes."""

    def __init__(self, open_runtime: RuntimeOpener, version: str) -> None:
        self._open_runtime = open_runtime
        self._version = version
        self._conn: Any = None
        self._caps = ClientCapabilities()
        self.sessions: dict[str, AcpSession] = {}

    def on_connect(self, conn: Any) -> None:
        """Keep the connection to the client (session updates, permission, fs)."""
        self._conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """What Smith can do: load sessions, take embedded files and file links, start the
        client's MCP servers (stdio and streamable HTTP; not SSE)."""
        self._caps = client_capabilities or ClientCapabilities()
        log.info("client %s, capabilities %s", client_info, self._caps)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                # Images go when the session's model takes them (its catalog entry's input
                # modalities); a prompt with one for a model without is refused, saying so.
                prompt_capabilities=PromptCapabilities(embedded_context=True, image=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                    fork=SessionForkCapabilities(),
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                field_meta=extensions.capabilities_meta(),  # _smith/pause, step, resume
            ),
            agent_info=Implementation(name="smith", title="Agent Smith", version=self._version),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        """Nothing to authenticate: the LLM server is configured in Smith's config."""
        return None

    async def _open(self, cwd: str, mcp_servers: list[Any] | None) -> Any:
        folder = Path(cwd)
        if not folder.is_absolute() or not await asyncio.to_thread(folder.is_dir):
            raise RequestError.invalid_params({"cwd": f"not an existing absolute folder: {cwd}"})
        try:
            extra = {"mcp_servers": mcp_config(mcp_servers)} if mcp_servers else {}
            runtime = await asyncio.to_thread(self._open_runtime, folder, extra)
        except Exception as exc:  # config or store errors carry a message for the user
            message = error_text(exc)
            raise RequestError.internal_error({"details": f"smith: {message}"}) from None
        runtime.start_session()
        return runtime

    async def _bind(self, runtime: Runtime, session_id: str) -> AcpSession:
        old = self.sessions.pop(session_id, None)
        if old is not None:
            await old.aclose()
        from smith_tui.acp.session import AcpSession

        session = AcpSession(self._conn, runtime, session_id, self._caps)
        self.sessions[session_id] = session
        await self._attach(session)
        extensions.follow(session)
        return session

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        """A new conversation in the project of ``cwd``."""
        runtime = await self._open(cwd, mcp_servers)
        session = await self._bind(runtime, runtime.conversations.new())
        await _advertise(session)  # queued now, sent after this answer
        return NewSessionResponse(
            session_id=session.session_id,
            modes=session.modes(),
            config_options=session.config_options(),
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        """Continue a stored conversation: its history is replayed as updates first."""
        runtime = await self._open(cwd, mcp_servers)
        try:
            conversation = runtime.conversations.load(session_id)
        except Exception as exc:
            await runtime.aclose()
            message = error_text(exc)
            raise RequestError.invalid_params({"sessionId": message}) from None
        _restore_mode(runtime)
        session = await self._bind(runtime, conversation)
        await session.replay()
        await _advertise(session)
        return LoadSessionResponse(modes=session.modes(), config_options=session.config_options())

    async def _bound(self, runtime: Runtime, conversation_id: str) -> AcpSession:
        """Bind a stored conversation as load does (resume, fork): in the permission mode
        it was left in, with the commands advertised."""
        _restore_mode(runtime)
        session = await self._bind(runtime, conversation_id)
        await _advertise(session)
        return session

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params(
                {"sessionId": f"no open session {session_id!r}; create or load it first"}
            )
        return session

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        """Switch the permission mode (the client hears back as a current-mode update)."""
        session = self._session(session_id)
        try:
            session.runtime.set_permission_mode(mode_id)
        except Exception as exc:
            raise RequestError.invalid_params({"modeId": error_text(exc)}) from None
        await session.flush()
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """``role`` (direct or orchestrator), ``model`` (pinned to the conversation, or
        ``auto``) and ``mode`` (the permission mode): smith_tui.acp.options."""
        session = self._session(session_id)
        try:
            options.apply(session.runtime, config_id, str(value), session.models)
        except KeyError:
            raise RequestError.invalid_params(
                {"configId": f"unknown option {config_id!r}"}
            ) from None
        except Exception as exc:
            raise RequestError.invalid_params({"value": error_text(exc)}) from None
        await session.flush()
        return SetSessionConfigOptionResponse(config_options=session.config_options())

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        """Run one turn (or a ``/command``) and stream it as session updates."""
        session = self._session(session_id)
        runtime = session.runtime
        text = prompt_text(prompt, session.cwd)
        images = await prompt_images(session, prompt)
        if not text.strip() and not images:
            raise RequestError.invalid_params({"prompt": "the prompt is empty"})
        if runtime.busy:
            raise RequestError.invalid_request({"details": "a turn is running; cancel it first"})
        if text.lstrip().startswith("/"):
            from smith_tui.acp import editor_commands

            result = await editor_commands.run(session, text.strip())
        else:
            try:
                result = await runtime.run_turn(text, images=images)
            except Exception as exc:
                message = error_text(exc)
                session.send(update_agent_message_text(f"\n\nsmith: {message}\n"))
                result = None
        await _advertise(session)  # a command file may have come or gone
        if result is None:
            await session.flush()
            return PromptResponse(stop_reason="end_turn")
        failed = result.stop_reason == "error" and result.error is not None
        if result.stop_reason in ("error", "budget_exhausted") and result.error is not None:
            session.send(
                update_agent_message_text(f"\n\nsmith: turn ended: {result.error.message}\n")
            )
        await session.flush()
        if failed:
            # Zed shows a failed session/prompt's message as the turn's error; a refusal
            # it would show as the model declining and Toad as the agent refusing.
            raise turn_failed(result.error.message)
        return PromptResponse(stop_reason=STOP_REASONS.get(result.stop_reason, "end_turn"))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Cancel the session's running turn (tools and sub-agents with it)."""
        session = self.sessions.get(session_id)
        if session is not None:
            session.runtime.cancel_turn("cancelled in the editor")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """``_smith/pause``, ``_smith/step``, ``_smith/resume`` (smith_tui.acp.extensions)."""
        if extensions.handles(method):
            return extensions.call(self.sessions, method, params)
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Extension notifications are ignored."""

    async def aclose(self) -> None:
        """Close every session's runtime."""
        for session in list(self.sessions.values()):
            try:
                await session.aclose()
            except Exception:
                log.exception("closing session %s failed", session.session_id)
        self.sessions.clear()


def turn_failed(message: str) -> RequestError:
    """The error ``session/prompt`` answers when the turn failed (the LLM server's error):
    the message is the error's message (Zed shows it) and its ``details`` (Toad's)."""
    return RequestError(TURN_FAILED, f"smith: the turn failed: {message}", {"details": message})


async def _advertise(session: Any) -> None:
    from smith_tui.acp import editor_commands

    try:
        await editor_commands.advertise(session)
    except Exception:  # the editor's command menu is not worth failing the request for
        log.exception("listing the commands failed")


def _restore_mode(runtime: Runtime) -> None:
    """A loaded session goes on in the permission mode it was switched to."""
    from smith_tui.acp.session_record import stored_mode

    mode = stored_mode(runtime)
    if mode and mode != runtime.permission_mode:
        try:
            runtime.set_permission_mode(mode)
        except Exception:  # a mode that no longer exists: the configured one stays
            log.warning("the stored permission mode %r is not known", mode)


def prompt_text(blocks: list[Any], cwd: Path) -> str:
    """The prompt as Smith's input line: text as is, a file link as an ``@path``
    attachment, an embedded file's text in a fenced block under its name."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(_mention(block.uri, cwd))
        elif kind == "resource":
            resource = block.resource
            body = getattr(resource, "text", None)
            if isinstance(body, str):
                parts.append(f"\n{_shown(resource.uri, cwd)}:\n```\n{body}\n```\n")
    return " ".join(part for part in parts if part)


def _shown(uri: str, cwd: Path) -> str:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return uri
    path = Path(unquote(parsed.path))
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return str(path)


def _mention(uri: str, cwd: Path) -> str:
    shown = _shown(uri, cwd)
    return f"@{shown}" if urlparse(uri).scheme == "file" and " " not in shown else shown


def mcp_config(servers: list[Any]) -> dict[str, dict[str, Any]]:
    """The client's MCP servers as ``mcp_servers`` entries (stdio and HTTP; SSE ones are
    skipped: Smith's MCP client speaks streamable HTTP). Names are made valid and unique."""
    table: dict[str, dict[str, Any]] = {}
    for server in servers:
        kind = getattr(server, "type", None)
        if kind in (None, "stdio") and getattr(server, "command", None):
            entry: dict[str, Any] = {
                "command": server.command,
                "args": list(server.args or []),
                "env": {item.name: item.value for item in server.env or []},
            }
        elif kind == "http":
            entry = {"url": server.url, "headers": {h.name: h.value for h in server.headers or []}}
        else:
            log.warning("MCP server %s (%s) skipped: not supported", server.name, kind)
            continue
        name = _server_name(str(server.name), table)
        table[name] = entry
    return table


def _server_name(raw: str, taken: Mapping[str, Any]) -> str:
    base = re.sub(r"[^A-Za-z0-9-]+", "-", raw).strip("-")[:28] or "server"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name
