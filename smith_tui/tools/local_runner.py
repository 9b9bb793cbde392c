"""Where ``bash`` runs a command when no front end offers a terminal: a local subprocess.

:class:`LocalCommandRunner` is a :class:`~smith_tui.tools.command_runner.CommandRunner`,
as the editor's terminals are, so ``bash`` drives both the same way (wait, kill, output,
release).
The command runs with stdin from /dev/null in its own session, so in its own process group;
:meth:`LocalCommand.kill` ends the whole group (SIGTERM, then SIGKILL after a short grace).
Our own pipes (not asyncio's ``PIPE``) carry stdout and stderr, so the read ends can be
closed even while a background grandchild still holds the write ends; each stream is kept
in a :class:`~smith_tui.tools.stream_capture.StreamCapture` (redacted as it arrives) and
streamed to ``on_output``.

Nothing outlives its command. A sandboxed command line (from
:func:`~smith_tui.tools.sandbox.bwrap_argv`) gets bwrap's ``--info-fd`` report of the
namespace's pid 1, and once the command has exited the namespace is made to end (see
:func:`_end_namespace`); unsandboxed, what is left of the process group is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from smith_tui.tools.command_runner import CommandExit, RunnerOutput
from smith_tui.tools.process import signal_group
from smith_tui.tools.sandbox import NamespaceInit, with_info_fd
from smith_tui.tools.spec import ToolError
from smith_tui.tools.stream_capture import StreamCapture

TERM_GRACE_S = 0.3
# After SIGKILL, how long to wait for the members to finish exiting.
KILL_WAIT_S = 0.2
# After the shell exits, background children may still hold the pipes open.
PIPE_DRAIN_S = 0.5
# The same wait after a kill (timeout or cancel): shorter, nobody waits for that output.
KILLED_DRAIN_S = 0.2
# After the drain, how long the command's own exit is waited for.
EXIT_WAIT_S = 1.0
# After bwrap exits, how long the kernel gets to end the sandbox's namespace on its own.
NAMESPACE_EXIT_S = 0.5
READ_CHUNK = 65536
STREAMS = ("stdout", "stderr")

log = logging.getLogger(__name__)


class LocalCommandRunner:
    """Runs ``bash``'s command line as a local subprocess (a ``CommandRunner``).

    ``keep`` is how many characters of head and of tail each stream keeps, ``secrets`` the
    values redacted from it, ``on_output`` receives the text as it arrives. ``sandboxed``
    says the command lines are bubblewrap's, so their namespace is watched until it ends.
    """

    def __init__(
        self,
        *,
        keep: int,
        secrets: tuple[str, ...] = (),
        on_output: Callable[[str], None] | None = None,
        sandboxed: bool = False,
    ) -> None:
        self.keep = keep
        self.secrets = secrets
        self.on_output = on_output
        self.sandboxed = sandboxed

    async def start(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        output_byte_limit: int,
        call_id: str | None,
        job_id: str | None,
    ) -> LocalCommand:
        """Start ``argv`` (never declines). The streams keep ``keep`` characters each, not
        ``output_byte_limit`` bytes; ``call_id`` and ``job_id`` are for front ends."""
        del output_byte_limit, call_id, job_id
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        unowned = [out_r, err_r]  # read ends not yet handed to a transport
        child_ends = [out_w, err_w]
        info_r: int | None = None
        if self.sandboxed:
            # bwrap reports the host pid of the sandbox's pid 1 here, to check it is gone.
            info_r, info_w = os.pipe()
            unowned.append(info_r)
            child_ends.append(info_w)
            try:
                argv = with_info_fd(argv, info_w)
            except ValueError:
                _close_fds(unowned)
                _close_fds(child_ends)
                raise
        proc = await _spawn(argv, cwd, env, unowned, child_ends)
        info: asyncio.Future[NamespaceInit | None] | None = None
        if info_r is not None:
            unowned.remove(info_r)  # from here the reader owns it
            info = asyncio.ensure_future(_read_info(info_r))
        command = LocalCommand(proc, info, unowned, self)
        try:
            await command.read_streams(out_r, err_r)
        except BaseException:
            await asyncio.shield(command.kill())
            await asyncio.shield(command.release())
            raise
        return command


async def _spawn(
    argv: list[str], cwd: Path, env: dict[str, str], unowned: list[int], child_ends: list[int]
) -> asyncio.subprocess.Process:
    """Start ``argv`` in a session of its own writing to ``child_ends`` (stdout, stderr, and
    any more ends it keeps open), which are closed here; on failure ``unowned`` is too."""
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=child_ends[0],
            stderr=child_ends[1],
            start_new_session=True,
            pass_fds=tuple(child_ends[2:]),
        )
    )
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        # The shell may already be running: let the spawn finish, then kill its group.
        with contextlib.suppress(Exception):
            await kill_group((await spawn).pid)
        _close_fds(unowned)
        raise
    except OSError as exc:
        _close_fds(unowned)
        raise ToolError(
            f"could not start {Path(argv[0]).name}: {exc.strerror or exc}.", code="spawn_failed"
        ) from None
    finally:
        _close_fds(child_ends)


class LocalCommand:
    """A command a :class:`LocalCommandRunner` started (a ``RunningCommand``)."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        info: asyncio.Future[NamespaceInit | None] | None,
        unowned: list[int],
        runner: LocalCommandRunner,
    ) -> None:
        self.proc = proc
        # start_new_session makes the shell (or bwrap) its group (and session) leader
        self.pgid = proc.pid
        self.id = str(proc.pid)
        # One capture (and redactor) per stream: a key split across two reads of stdout is
        # still caught when a piece of stderr arrives in between.
        self.streams = {name: StreamCapture(runner.keep, runner.secrets) for name in STREAMS}
        self.pipes_left_open = False
        """Background processes still held the output pipes when the drain ran out."""
        self._info = info
        self._unowned = unowned
        self._on_output = runner.on_output
        self._readers: list[asyncio.Future[None]] = []
        self._transports: list[asyncio.BaseTransport] = []
        self._killed = False
        self._settled = False
        self._namespace_ended = False
        """The sandbox's pid 1 was seen gone (so was everything in its namespace)."""

    async def read_streams(self, out_r: int, err_r: int) -> None:
        """Start reading stdout and stderr from the read ends of their pipes."""
        for name, fd in zip(STREAMS, (out_r, err_r), strict=True):
            self._unowned.remove(fd)  # from here the pipe file object owns the fd
            reader, transport = await _open_reader(fd)
            self._transports.append(transport)
            self._readers.append(asyncio.ensure_future(self._pump(name, reader)))

    async def _pump(self, name: str, reader: asyncio.StreamReader) -> None:
        capture = self.streams[name]
        try:
            while chunk := await reader.read(READ_CHUNK):
                self._emit(capture.feed(chunk))
        finally:
            self._emit(capture.finish())

    def _emit(self, text: str) -> None:
        if text and self._on_output is not None:
            with contextlib.suppress(Exception):  # a UI bug must not break the tool
                self._on_output(text)

    async def output(self) -> RunnerOutput:
        """What the streams kept; once the command has exited (or was killed), first
        whatever it left behind is ended and the pipes get a moment to drain."""
        if self.proc.returncode is not None or self._killed:
            await self._settle()
        kept = "".join(c.head + "".join(c.tail) for c in self.streams.values())
        code = self.proc.returncode
        truncated = any(c.dropped_chars for c in self.streams.values())
        return RunnerOutput(kept, truncated, exited=code is not None, exit_code=code)

    async def wait(self) -> CommandExit:
        """Wait for the shell (or bwrap) to exit; a signal's death is a negative code."""
        return CommandExit(await self.proc.wait())

    async def kill(self) -> None:
        """SIGTERM the whole process group, SIGKILL what is left after a short grace."""
        self._killed = True
        await kill_group(self.pgid)

    async def release(self) -> None:
        """End what the command left behind, stop reading and close every pipe."""
        if not self._settled:
            await self._end_everything()
        for task in self._readers:
            task.cancel()
        await asyncio.gather(*self._readers, return_exceptions=True)
        for transport in self._transports:
            transport.close()
        _close_fds(self._unowned)
        if self.proc.returncode is None:
            signal_group(self.pgid, signal.SIGKILL)
        if self._info is not None and not self._namespace_ended:
            info = self._info
            if info.done() and not info.cancelled() and info.exception() is None:
                if (init := info.result()) is not None:
                    init.kill()
            else:
                info.cancel()

    async def _settle(self) -> None:
        if self._settled:
            return
        self._settled = True
        await self._end_everything()
        # Let the readers drain; background children may keep the pipes open.
        drain = KILLED_DRAIN_S if self._killed else PIPE_DRAIN_S
        if self._readers:
            _, pending = await asyncio.wait(self._readers, timeout=drain)
            self.pipes_left_open = bool(pending)
        with contextlib.suppress(ProcessLookupError, asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.proc.wait()), timeout=EXIT_WAIT_S)

    async def _end_everything(self) -> None:
        """Nothing the command started outlives it: the sandbox's namespace ends, or
        (unsandboxed) what is left of the process group is killed."""
        if self._info is not None:
            self._namespace_ended = await _end_namespace(self._info)
        elif _group_alive(self.pgid):
            await kill_group(self.pgid)


def _group_alive(pgid: int) -> bool:
    """Whether any non-zombie process is left in process group ``pgid``."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the parenthesised command name: state ppid pgrp ...
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) >= 3 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


async def kill_group(pgid: int, grace: float = TERM_GRACE_S) -> None:
    """SIGTERM the process group, then SIGKILL whatever is still alive after ``grace``.

    Returns once no live member is left (or a short wait after SIGKILL ran out),
    so the whole call stays well under a second.
    """
    signal_group(pgid, signal.SIGTERM)
    if await _wait_group_gone(pgid, grace):
        return
    signal_group(pgid, signal.SIGKILL)
    await _wait_group_gone(pgid, KILL_WAIT_S)


async def _wait_group_gone(pgid: int, limit_s: float) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        await asyncio.sleep(0.02)
        if not _group_alive(pgid):
            return True
    return False


async def _open_reader(fd: int) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    """Wrap the read end of a pipe in a stream reader; the transport owns the fd."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    protocol = asyncio.StreamReaderProtocol(reader)
    transport, _ = await loop.connect_read_pipe(lambda: protocol, os.fdopen(fd, "rb", buffering=0))
    return reader, transport


def _close_fds(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    fds.clear()


async def _read_info(fd: int) -> NamespaceInit | None:
    """Read bwrap's ``--info-fd`` report to its end; the sandbox's pid 1, if it says."""
    reader, transport = await _open_reader(fd)
    try:
        return NamespaceInit.from_info(await reader.read())
    finally:
        transport.close()


async def _end_namespace(info: asyncio.Future[NamespaceInit | None] | None) -> bool:
    """Make sure the sandbox's namespace is gone: bwrap's death SIGKILLs its pid 1
    (``--die-with-parent``) and the kernel the rest; kill pid 1 ourselves if it lingers.
    Whether pid 1 was seen gone (a pid that ended cannot come back: a reused one fails
    :meth:`NamespaceInit.alive`'s start-time check, so nothing is left to kill)."""
    if info is None:
        return False
    try:
        init = await asyncio.wait_for(asyncio.shield(info), timeout=KILL_WAIT_S)
    except (TimeoutError, OSError):
        return False
    if init is None:
        return False
    if await _ended(init, NAMESPACE_EXIT_S):
        return True
    init.kill()
    if await _ended(init, NAMESPACE_EXIT_S):
        return True
    log.warning("the sandbox of a command (pid 1: %d) did not end", init.pid)
    return False


async def _ended(init: NamespaceInit, limit_s: float) -> bool:
    """Wait up to ``limit_s`` for the sandbox's pid 1 to end (woken by its pidfd when the
    system has them, else polling); whether it did."""
    fd = init.open_pidfd()
    if fd is not None:
        loop = asyncio.get_running_loop()
        ended: asyncio.Future[None] = loop.create_future()

        def readable() -> None:
            if not ended.done():
                ended.set_result(None)

        try:
            loop.add_reader(fd, readable)
        except (NotImplementedError, ValueError, OSError):
            os.close(fd)
        else:
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(ended, limit_s)
            finally:
                loop.remove_reader(fd)
                os.close(fd)
            return not init.alive()
    deadline = time.monotonic() + limit_s
    while init.alive():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.002)
    return True
