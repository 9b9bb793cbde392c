"""Run one hook command: JSON on stdin, bounded output, never past its time or its turn.

The command runs through ``/bin/sh -c`` as the user, outside the sandbox (a hook is the
user's own program), in its own process group: a timeout or a cancelled turn kills the
whole group (:func:`smith_tui.tools.process.signal_group`), and so does the hook's own
exit, so nothing it left running in the background outlives it. Its environment is ours
without the API-key variables (:func:`smith_tui.config.secrets.scrubbed_environ`).
Each stream keeps at most :data:`OUTPUT_CAP` bytes; the rest is read and dropped, so a
hook that prints without end neither fills memory nor blocks on a full pipe.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from smith_tui.cancel import CancelToken
from smith_tui.config.secrets import scrubbed_environ
from smith_tui.tools.process import signal_group

OUTPUT_CAP = 1 << 20
"""Bytes kept of each of a hook's stdout and stderr."""
_CHUNK = 64 * 1024
_DRAIN_GRACE_S = 1.0
"""How long the pipes may stay open after the hook exited (a child that left its own
process group still holds them); then they are abandoned."""


@dataclass(frozen=True)
class HookProcess:
    """What one run of a hook command produced."""

    exit_code: int | None
    """The exit status (a signal: negative); ``None`` when it could not start."""
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    cancelled: bool = False
    truncated: bool = False
    """Some output went past :data:`OUTPUT_CAP` and was dropped."""
    start_error: str = ""


class _Capped:
    """Reads a stream to its end, keeping the first ``cap`` bytes."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.dropped = 0

    async def read(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            room = self.cap - len(self.data)
            if room > 0:
                self.data.extend(chunk[:room])
            self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


async def _feed(proc: asyncio.subprocess.Process, payload: bytes) -> None:
    """Write the input and close stdin; a hook that does not read it is fine."""
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
        proc.stdin.write(payload)
        await proc.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
        proc.stdin.close()


async def run_hook_command(
    command: str,
    payload: bytes,
    *,
    cwd: Path,
    timeout_s: float,
    cancel: CancelToken | None = None,
    env: Mapping[str, str] | None = None,
    cap: int = OUTPUT_CAP,
) -> HookProcess:
    """Run ``command`` with ``payload`` on stdin; never raises for the hook's own faults.

    ``env`` adds variables to the scrubbed environment (``SMITH_PROJECT_DIR``...).
    """
    started = time.monotonic()
    environ = scrubbed_environ()
    environ.update(env or {})
    if cancel is not None and cancel.is_cancelled():
        return HookProcess(None, "", "", 0.0, cancelled=True)
    try:
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            command,
            cwd=str(cwd),
            env=environ,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return HookProcess(
            None, "", "", time.monotonic() - started, start_error=exc.strerror or str(exc)
        )
    pgid = proc.pid
    out, err = _Capped(cap), _Capped(cap)
    assert proc.stdout is not None and proc.stderr is not None
    readers = [
        asyncio.ensure_future(out.read(proc.stdout)),
        asyncio.ensure_future(err.read(proc.stderr)),
    ]
    feeder = asyncio.ensure_future(_feed(proc, payload))
    why: list[str] = []

    def stop(reason: str) -> None:
        if not why:
            why.append(reason)
        signal_group(pgid, signal.SIGKILL)

    unsubscribe = cancel.on_cancel(lambda _r: stop("cancelled")) if cancel else (lambda: None)
    waiter = asyncio.ensure_future(proc.wait())
    try:
        try:
            await asyncio.wait_for(asyncio.shield(waiter), timeout_s)
        except TimeoutError:
            stop("timeout")
            await waiter
        # The hook is done: whatever it left in its group goes with it.
        signal_group(pgid, signal.SIGKILL)
        _done, pending = await asyncio.wait(readers, timeout=_DRAIN_GRACE_S)
        for task in pending:
            task.cancel()
    except asyncio.CancelledError:
        stop("cancelled")
        raise
    finally:
        unsubscribe()
        feeder.cancel()
        for task in readers:
            task.cancel()
        if proc.returncode is None:
            signal_group(pgid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                await asyncio.shield(waiter)
    return HookProcess(
        exit_code=proc.returncode,
        stdout=out.text(),
        stderr=err.text(),
        duration_s=time.monotonic() - started,
        timed_out=why[:1] == ["timeout"],
        cancelled=why[:1] == ["cancelled"],
        truncated=bool(out.dropped or err.dropped),
    )


def hook_environment(project_dir: Path | None) -> dict[str, str]:
    """The variables a hook gets on top of the scrubbed environment: the project folder,
    under Smith's name and Claude Code's (scripts written for it use the latter)."""
    if project_dir is None:
        return {}
    folder = os.fspath(project_dir)
    return {"SMITH_PROJECT_DIR": folder, "CLAUDE_PROJECT_DIR": folder}
