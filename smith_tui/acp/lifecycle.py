"""The session lifecycle beyond new and load: ``session/list``, ``session/resume``,
``session/close`` and ``session/fork`` (unstable), and what every bound session gets
(its model list, its title and usage reporters).

A mixin of :class:`~smith_tui.acp.agent.SmithAgent`: it uses the agent's ``_open``,
``_bind``, ``_session``, ``_open_runtime`` and ``sessions``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp.schema import (
    CloseSessionResponse,
    ForkSessionResponse,
    ListSessionsResponse,
    ResumeSessionResponse,
)

from smith_tui.acp import options
from smith_tui.errors import error_text

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

log = logging.getLogger(__name__)


class SessionLifecycle:
    """``session/list``, ``resume``, ``close`` and ``fork`` on the agent's sessions."""

    sessions: dict[str, Any]
    _open_runtime: Callable[[Path, Mapping[str, Any]], Runtime]

    async def _open(self, cwd: str, mcp_servers: list[Any] | None) -> Any:
        raise NotImplementedError

    async def _bind(self, runtime: Runtime, session_id: str) -> Any:
        raise NotImplementedError

    async def _bound(self, runtime: Runtime, conversation_id: str) -> Any:
        """Bind a stored conversation as ``session/load`` does (the agent's)."""
        raise NotImplementedError

    async def _attach(self, session: Any) -> None:
        """What a bound session gets: the server's models for the model option, and the
        reporters of its title (``session_info_update``) and usage (``usage_update``)."""
        from smith_tui.acp.session_list import TitleReporter
        from smith_tui.acp.usage_updates import UsageReporter

        session.models = await options.load_models(session.runtime)
        titles = TitleReporter(session.runtime, session.send)
        session.runtime.bus.subscribe(titles)
        session.runtime.bus.subscribe(UsageReporter(session.send))
        reporter = options.OptionsReporter(session)
        reporter.mode = session.runtime.permission_mode
        session.runtime.bus.subscribe(reporter)
        titles.announce()  # a stored conversation is named at once (one small read)

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """The conversations of ``cwd``'s project (the agent's folder when not given),
        newest first, with their titles and last activity; TUI conversations included."""
        from smith_tui.acp.session_list import list_page

        folder = cwd or os.getcwd()
        if not Path(folder).is_absolute() or not await asyncio.to_thread(Path(folder).is_dir):
            raise RequestError.invalid_params({"cwd": f"not an existing absolute folder: {cwd}"})
        open_here: Runtime | None = next(
            (s.runtime for s in self.sessions.values() if str(s.cwd) == folder), None
        )
        if open_here is not None:
            runtime = open_here
        else:
            try:
                runtime = await asyncio.to_thread(self._open_runtime, Path(folder), {})
            except Exception as exc:
                raise RequestError.internal_error(
                    {"details": f"smith: {error_text(exc)}"}
                ) from None
        try:
            return await asyncio.to_thread(
                list_page, runtime.store, runtime.project_id, folder, cursor
            )
        except ValueError as exc:
            raise RequestError.invalid_params({"cursor": str(exc)}) from None
        finally:
            if open_here is None:
                await runtime.aclose()

    async def _reopen(self, cwd: str, session_id: str, mcp_servers: list[Any] | None) -> Any:
        runtime = await self._open(cwd, mcp_servers)
        try:
            stored = runtime.store.conversations.get(session_id)
            if stored is not None and stored.project_id != runtime.project_id:
                raise ValueError(
                    f"session {session_id!r} belongs to another project than {cwd}; "
                    "open it with that project's folder"
                )
            conversation = runtime.conversations.load(session_id)
        except Exception as exc:
            await runtime.aclose()
            raise RequestError.invalid_params({"sessionId": error_text(exc)}) from None
        return await self._bound(runtime, conversation)

    async def resume_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> ResumeSessionResponse:
        """Continue a stored conversation without replaying it (the client has it)."""
        session = await self._reopen(cwd, session_id, mcp_servers)
        return ResumeSessionResponse(modes=session.modes(), config_options=session.config_options())

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Close an open session: its running turn is cancelled and its runtime closed;
        the conversation stays stored (list, load and resume find it)."""
        session = self.sessions.pop(session_id, None)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"no open session {session_id!r}"})
        await session.aclose()
        return CloseSessionResponse()

    async def fork_session(
        self, session_id: str, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> ForkSessionResponse:
        """A new session holding a copy of ``session_id``'s conversation, and with
        ``_meta.smith.beforePrompt`` (N, from 1) or ``_meta.smith.beforeTurn`` (a turn id)
        only what came before that prompt (a replayed prompt's ``messageId`` is its turn id):
        the fork asks again from there. The original session and the project's files stay as
        they are."""
        from smith_tui.acp.session_list import fork_conversation

        given = kwargs.get("smith")
        meta: dict[str, Any] = given if isinstance(given, dict) else {}
        before_prompt = meta.get("beforePrompt")
        before_turn = meta.get("beforeTurn")
        if before_prompt is not None and (
            not isinstance(before_prompt, int) or isinstance(before_prompt, bool)
        ):
            raise RequestError.invalid_params({"beforePrompt": "a prompt number, from 1"})
        if before_turn is not None and not isinstance(before_turn, str):
            raise RequestError.invalid_params({"beforeTurn": "a turn id"})
        source = self.sessions.get(session_id)
        if source is not None and source.runtime.busy:
            raise RequestError.invalid_request(
                {"details": "a turn is running in that session; cancel it or wait first"}
            )
        runtime = await self._open(cwd, mcp_servers)
        try:
            stored = runtime.store.conversations.get(session_id)
            if stored is None or stored.project_id != runtime.project_id:
                raise ValueError(f"no conversation {session_id!r} in the project of {cwd}")
            fork_id = await asyncio.to_thread(
                fork_conversation,
                runtime.store,
                session_id,
                before_turn=before_turn,
                before_prompt=before_prompt,
            )
            runtime.conversations.load(fork_id)
        except Exception as exc:
            await runtime.aclose()
            raise RequestError.invalid_params({"sessionId": error_text(exc)}) from None
        session = await self._bound(runtime, fork_id)
        return ForkSessionResponse(
            session_id=fork_id, modes=session.modes(), config_options=session.config_options()
        )
