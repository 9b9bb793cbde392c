"""The editor's terminals as where ``bash`` runs its commands (``terminal/*``).

:class:`EditorTerminals` is a :class:`smith_tui.tools.command_runner.CommandRunner`: it creates
a terminal running the command line, tells the session which tool call it belongs to (so
the call embeds it and the editor shows it), and gives ``bash`` a handle over
``terminal/output``, ``terminal/wait_for_exit``, ``terminal/kill`` and ``terminal/release``.
The requests run on the connection's event loop whichever thread asks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from acp.schema import EnvVariable

from smith_tui.acp.terminal_launcher import terminal_command
from smith_tui.tools.command_runner import CommandExit, RunnerOutput

log = logging.getLogger(__name__)

T = TypeVar("T")


class EditorTerminal:
    """One terminal of the editor running one command (a ``RunningCommand``)."""

    def __init__(self, owner: EditorTerminals, terminal_id: str) -> None:
        self.owner = owner
        self.id = terminal_id

    async def output(self) -> RunnerOutput:
        """``terminal/output``: the output so far, and the exit once there is one."""
        response = await self.owner.call(
            self.owner.conn.terminal_output(session_id=self.owner.session_id, terminal_id=self.id)
        )
        status = response.exit_status
        return RunnerOutput(
            text=response.output,
            truncated=bool(response.truncated),
            exited=status is not None,
            exit_code=status.exit_code if status is not None else None,
            signal=status.signal if status is not None else None,
        )

    async def wait(self) -> CommandExit:
        """``terminal/wait_for_exit``."""
        response = await self.owner.call(
            self.owner.conn.wait_for_terminal_exit(
                session_id=self.owner.session_id, terminal_id=self.id
            )
        )
        return CommandExit(response.exit_code, response.signal)

    async def kill(self) -> None:
        """``terminal/kill`` (the terminal stays until released)."""
        await self.owner.call(
            self.owner.conn.kill_terminal(session_id=self.owner.session_id, terminal_id=self.id)
        )

    async def release(self) -> None:
        """``terminal/release``: the editor frees it (and keeps showing its output)."""
        await self.owner.call(
            self.owner.conn.release_terminal(session_id=self.owner.session_id, terminal_id=self.id)
        )


class EditorTerminals:
    """A :class:`smith_tui.tools.command_runner.CommandRunner` over the client's ``terminal/*``."""

    def __init__(
        self,
        conn: Any,
        session_id: str,
        loop: asyncio.AbstractEventLoop,
        on_created: Callable[[str | None, str | None, str], None],
    ) -> None:
        self.conn = conn
        self.session_id = session_id
        self.loop = loop
        self.on_created = on_created
        """Called on the loop with (job id, call id, terminal id) once a terminal exists."""

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` on the connection's loop (from this loop or another thread's)."""
        if asyncio.get_running_loop() is self.loop:
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    async def start(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        output_byte_limit: int,
        call_id: str | None,
        job_id: str | None,
    ) -> EditorTerminal | None:
        """``terminal/create`` running ``argv``; ``None`` when the editor refuses."""
        command, args, env = await asyncio.to_thread(terminal_command, argv, env)
        try:
            response = await self.call(
                self.conn.create_terminal(
                    session_id=self.session_id,
                    command=command,
                    args=args,
                    env=[EnvVariable(name=name, value=value) for name, value in env.items()],
                    cwd=str(cwd),
                    output_byte_limit=output_byte_limit,
                )
            )
        except Exception as exc:  # refused or failed: bash runs the command locally
            log.info("terminal/create declined, running the command locally: %s", exc)
            return None
        terminal = EditorTerminal(self, response.terminal_id)
        if asyncio.get_running_loop() is self.loop:  # before any output of the call is shown
            self.on_created(job_id, call_id, terminal.id)
        else:
            self.loop.call_soon_threadsafe(self.on_created, job_id, call_id, terminal.id)
        return terminal
