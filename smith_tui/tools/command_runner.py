"""Where ``bash`` runs its command instead of a local subprocess: a front end's terminals.

An editor front end (ACP) may offer terminals: the command then runs there, so the editor
shows it. :class:`CommandRunner` starts a command and :class:`RunningCommand` is the handle
``bash`` polls for output, waits on, kills and releases; the timeout, the budget and the
result stay ``bash``'s. The permission gate and checkpoints run before the tool, as always.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class RunnerOutput:
    """What a running command printed so far (stdout and stderr together)."""

    text: str
    truncated: bool = False
    """The runner dropped the start of the output to stay under its byte limit."""
    exited: bool = False
    exit_code: int | None = None
    signal: str | None = None


@dataclass(frozen=True)
class CommandExit:
    """How a command ended: its exit code, or the signal that ended it."""

    exit_code: int | None
    signal: str | None = None


class RunningCommand(Protocol):
    """A command started by a :class:`CommandRunner`."""

    id: str
    """The runner's id of the command (the editor's terminal id)."""

    async def output(self) -> RunnerOutput:
        """Everything kept of the output so far."""
        ...

    async def wait(self) -> CommandExit:
        """Wait until the command exits."""
        ...

    async def kill(self) -> None:
        """Kill the command (the handle stays valid for ``output`` and ``release``)."""
        ...

    async def release(self) -> None:
        """Free the command's resources (killing it if it still runs)."""
        ...


class CommandRunner(Protocol):
    """Runs ``bash``'s commands somewhere else than a local subprocess."""

    async def start(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        output_byte_limit: int,
        call_id: str | None,
        job_id: str | None,
    ) -> RunningCommand | None:
        """Start ``argv``; ``None`` when it cannot (``bash`` then runs it locally).

        ``call_id`` and ``job_id`` name the tool call, so the front end can show the
        command inside it.
        """
        ...
