"""Run a helper program (rg, git) as a cancellable asyncio subprocess.

Each child gets its own process group, so cancelling the turn or hitting the
timeout kills it together with anything it spawned. Without an explicit ``env``
it inherits our environment minus the API keys (``smith_tui.config.secrets``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from smith_tui.cancel import Cancelled, CancelToken
from smith_tui.config.secrets import scrubbed_environ
from smith_tui.tools.spec import ToolError

_READ_CHUNK = 1 << 20
_STDERR_LIMIT = 64 * 1024


@dataclass
class ProcessResult:
    """What a finished child produced."""

    returncode: int
    stdout: bytes
    stderr: bytes
    truncated: bool = False


def signal_group(pgid: int, sig: signal.Signals) -> None:
    """Send ``sig`` to process group ``pgid``; a group that is gone or not ours is ignored."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    signal_group(proc.pid, signal.SIGKILL)


class RunningProcess:
    """A started child whose stdout is read in chunks by the caller."""

    def __init__(self, proc: asyncio.subprocess.Process, name: str) -> None:
        self.proc = proc
        self.name = name
        self._stderr = bytearray()
        self._stderr_task = asyncio.ensure_future(self._drain_stderr())

    async def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(_READ_CHUNK):
            if len(self._stderr) < _STDERR_LIMIT:
                self._stderr.extend(chunk[: _STDERR_LIMIT - len(self._stderr)])

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        """Yield stdout as it arrives, in chunks of up to a megabyte."""
        assert self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(_READ_CHUNK):
            yield chunk

    def kill(self) -> None:
        """Kill the child's whole process group (idempotent)."""
        _kill_group(self.proc)

    async def finish(self) -> tuple[int, bytes]:
        """Wait for exit; return the exit code and (at most 64 KiB of) stderr."""
        returncode = await self.proc.wait()
        await self._stderr_task
        return returncode, bytes(self._stderr)


@contextlib.asynccontextmanager
async def spawn(
    argv: Sequence[str],
    *,
    cwd: Path,
    cancel: CancelToken,
    env: Mapping[str, str] | None = None,
    time_limit: float = 60.0,
) -> AsyncIterator[RunningProcess]:
    """Start ``argv`` in its own process group and yield it.

    On leaving the block the child is killed if it still runs. Cancellation of
    ``cancel`` kills it and raises :class:`Cancelled`; running past ``time_limit``
    seconds kills it and raises a :class:`ToolError`.
    """
    cancel.check()
    name = Path(argv[0]).name
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            env=dict(env) if env is not None else scrubbed_environ(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            limit=_READ_CHUNK,
        )
    except OSError as exc:
        raise ToolError(f"could not start {name}: {exc}", code="spawn_failed") from exc
    running = RunningProcess(proc, name)
    timed_out = False

    def on_timeout() -> None:
        nonlocal timed_out
        timed_out = True
        running.kill()

    unsubscribe = cancel.on_cancel(lambda _reason: running.kill())
    timer = asyncio.get_running_loop().call_later(time_limit, on_timeout)
    try:
        yield running
    finally:
        timer.cancel()
        unsubscribe()
        running.kill()
        with contextlib.suppress(Exception):
            await asyncio.shield(running.finish())
    if cancel.is_cancelled():
        raise Cancelled(cancel.reason or "cancelled")
    if timed_out:
        raise ToolError(
            f"{name} was stopped after {time_limit:g} s; narrow the request (a smaller path or a "
            "more specific pattern)",
            code="timeout",
        )


async def run_capture(
    argv: Sequence[str],
    *,
    cwd: Path,
    cancel: CancelToken,
    env: Mapping[str, str] | None = None,
    time_limit: float = 60.0,
    max_bytes: int = 32 * 1024 * 1024,
) -> ProcessResult:
    """Run ``argv`` to completion and return its output.

    Stdout beyond ``max_bytes`` is dropped (``truncated`` is set) and the child
    is stopped, so a runaway command cannot exhaust memory.
    """
    out = bytearray()
    truncated = False
    async with spawn(argv, cwd=cwd, cancel=cancel, env=env, time_limit=time_limit) as running:
        async for chunk in running.chunks():
            room = max_bytes - len(out)
            if len(chunk) > room:
                out.extend(chunk[:room])
                truncated = True
                running.kill()
                break
            out.extend(chunk)
        returncode, stderr = await running.finish()
    return ProcessResult(returncode, bytes(out), stderr, truncated)
