"""The ``bash`` tool: run a shell command in its own process group.

The command runs as ``bash -c`` with stdin from /dev/null and its own session
(so its own process group). Timeout and cancellation kill the whole group:
SIGTERM first, SIGKILL after a short grace. Output streams to
``ctx.on_output`` as it arrives; stdout and stderr are captured separately and
only their heads and tails are kept once they outgrow the budget.

Nothing outlives its command. Sandboxed, the command's PID namespace ends when
the command does (see ``smith_tui.tools.sandbox``), and the tool checks it is
gone before it returns. Unsandboxed, what is left of the process group is
killed when the shell exits; a process that left the group (``setsid``) escapes
that, and is only noticed when it still holds the output pipes.

The shell's environment has no API-key variables (``smith_tui.config.secrets``).
On Linux it runs in the bubblewrap sandbox of ``smith_tui.tools.sandbox`` as
``sandbox.mode`` says; a command the sandbox stopped says so in its result.

A front end that offers terminals (an editor over ACP, ``smith_tui.tools.command_runner``) runs
the same command line in one of its terminals instead, so the editor shows it; ``bash``
still polls the output, applies the timeout and cancel and builds the result.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import os
import signal
import time
from collections import deque
from pathlib import Path
from typing import Annotated

from pydantic import Field

from smith_tui.config.schema import SandboxConfig
from smith_tui.config.secrets import StreamRedactor, scrubbed_environ, secret_values
from smith_tui.config.service_options import BashOptions
from smith_tui.tools import permission_policy
from smith_tui.tools.args import NotBool, Text, max_output_chars, setting_number, tool_settings
from smith_tui.tools.command_runner import (
    CommandExit,
    CommandRunner,
    RunningCommand,
    command_runner,
)
from smith_tui.tools.process import signal_group
from smith_tui.tools.sandbox import (
    NamespaceInit,
    bwrap_argv,
    cached_sandbox_state,
    failure_note,
    require_sandbox,
    sandbox_environ,
    sandbox_settings,
    sandbox_state,
)
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

_DEFAULTS = BashOptions()
DEFAULT_TIMEOUT_S = _DEFAULTS.default_timeout_s
DEFAULT_MAX_TIMEOUT_S = _DEFAULTS.max_timeout_s
TERM_GRACE_S = 0.3
# After SIGKILL, how long to wait for the members to finish exiting.
KILL_WAIT_S = 0.2
# After the shell exits, background children may still hold the pipes open.
PIPE_DRAIN_S = 0.5
# After bwrap exits, how long the kernel gets to end the sandbox's namespace on its own.
NAMESPACE_EXIT_S = 0.5
READ_CHUNK = 65536
# A front end's terminal (commands.CommandRunner): how often its output is polled, how
# many bytes it keeps per character of budget, how long a killed command gets to exit.
POLL_S = 0.2
BYTES_PER_CHAR = 4
KILLED_EXIT_S = 2.0

log = logging.getLogger(__name__)


class Args(ToolArgs):
    """Arguments of ``bash``."""

    command: Text = Field(description="The command line, run as `bash -c <command>`.")
    timeout_s: Annotated[float, Field(gt=0), NotBool] | None = Field(
        None,
        description=(
            f"Seconds before the command is killed (default {DEFAULT_TIMEOUT_S:g}; "
            f"capped at services.tool.bash.max_timeout_s, default {DEFAULT_MAX_TIMEOUT_S:g})."
        ),
    )


class StreamCapture:
    """Collects one output stream, keeping at most ``keep`` characters of head and tail.

    The values in ``secrets`` are redacted as the text arrives, before it is kept or
    returned, so neither the live output nor a head/tail cut can show one.
    """

    def __init__(self, keep: int, secrets: tuple[str, ...] = ()) -> None:
        self.keep = max(keep, 1)
        self.head = ""
        self.tail: deque[str] = deque()
        self.tail_len = 0
        self.total_chars = 0
        self.total_bytes = 0
        self.total_newlines = 0
        self.dropped_chars = 0
        self.dropped_newlines = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._fresh: list[str] = []
        self._redactor = StreamRedactor(secrets, self._fresh.append)

    def feed(self, data: bytes, *, final: bool = False) -> str:
        """Add raw bytes; return the newly decoded (and redacted) text."""
        self.total_bytes += len(data)
        self._redactor.feed(self._decoder.decode(data, final))
        if final:
            self._redactor.flush()
        text = "".join(self._fresh)
        self._fresh.clear()
        if not text:
            return text
        self.total_chars += len(text)
        self.total_newlines += text.count("\n")
        room = self.keep - len(self.head)
        if room > 0:
            self.head += text[:room]
            text_rest = text[room:]
        else:
            text_rest = text
        if text_rest:
            self.tail.append(text_rest)
            self.tail_len += len(text_rest)
            while self.tail_len > self.keep:
                first = self.tail[0]
                excess = self.tail_len - self.keep
                if len(first) <= excess:
                    self.tail.popleft()
                    dropped = first
                else:
                    self.tail[0] = first[excess:]
                    dropped = first[:excess]
                self.tail_len -= len(dropped)
                self.dropped_chars += len(dropped)
                self.dropped_newlines += dropped.count("\n")
        return text

    def finish(self) -> str:
        """Flush the decoder (a trailing partial UTF-8 sequence becomes U+FFFD)."""
        return self.feed(b"", final=True)

    def section(self, name: str, budget: int) -> list[str]:
        """The result's lines for this stream: ``name: (empty)``, or a header with its size
        and the text cut to ``budget`` characters."""
        if self.total_chars == 0:
            return [f"{name}: (empty)"]
        return [f"--- {name} ({self.total_bytes:,} bytes) ---", self.render(budget).rstrip("\n")]

    def render(self, budget: int) -> str:
        """The kept text cut to ``budget`` characters, with a note saying what was left out."""
        tail = "".join(self.tail)
        if self.dropped_chars == 0 and len(self.head) + len(tail) <= budget:
            return self.head + tail
        half = max(budget // 2, 1)
        head_part = self.head[:half]
        tail_part = tail[-(budget - half) :] if budget - half > 0 else ""
        # Characters between head_part and tail_part that we are not showing.
        cut_chars = self.total_chars - len(head_part) - len(tail_part)
        cut_newlines = self.total_newlines - head_part.count("\n") - tail_part.count("\n")
        note = (
            f"\n[… {cut_chars:,} of {self.total_chars:,} characters ({cut_newlines:,} lines) cut "
            f"from the middle; total {self.total_bytes:,} bytes. Redirect to a file and read or "
            f"grep it to see more …]\n"
        )
        return head_part + note + tail_part


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


def _timeouts(args: Args, ctx: ToolContext) -> tuple[float, str | None]:
    settings = tool_settings(ctx, "bash")
    default = setting_number(settings, "default_timeout_s", DEFAULT_TIMEOUT_S, tool="bash")
    ceiling = setting_number(settings, "max_timeout_s", DEFAULT_MAX_TIMEOUT_S, tool="bash")
    requested = args.timeout_s
    timeout = requested if requested is not None else default
    note = None
    if timeout > ceiling:
        note = f"timeout_s {timeout:g} was capped at the configured maximum of {ceiling:g} s"
        timeout = ceiling
    return timeout, note


def _working_dir(ctx: ToolContext) -> Path:
    cwd = Path(ctx.cwd)
    if not cwd.is_dir():
        raise ToolError(
            f"the working directory {cwd} does not exist (or is not a directory); "
            f"the command was not run.",
            code="bad_cwd",
        )
    return cwd


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


def _child_env(sandboxed: bool) -> dict[str, str]:
    env = scrubbed_environ()
    # A non-interactive run: never block on a pager or a credential prompt.
    env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    # Unsandboxed, the sockets those variables name are reachable anyway (and git over
    # ssh wants its agent): only a sandboxed command loses them.
    return sandbox_environ(env) if sandboxed else env


async def _read_info(fd: int) -> NamespaceInit | None:
    """Read bwrap's ``--info-fd`` report to its end; the sandbox's pid 1, if it says."""
    reader, transport = await _open_reader(fd)
    try:
        return NamespaceInit.from_info(await reader.read())
    finally:
        transport.close()


async def _end_namespace(info: asyncio.Future[NamespaceInit | None] | None) -> None:
    """Make sure the sandbox's namespace is gone: bwrap's death SIGKILLs its pid 1
    (``--die-with-parent``) and the kernel the rest; kill pid 1 ourselves if it lingers."""
    if info is None:
        return
    try:
        init = await asyncio.wait_for(asyncio.shield(info), timeout=KILL_WAIT_S)
    except (TimeoutError, OSError):
        return
    if init is None or await _ended(init, NAMESPACE_EXIT_S):
        return
    init.kill()
    if not await _ended(init, NAMESPACE_EXIT_S):
        log.warning("the sandbox of a command (pid 1: %d) did not end", init.pid)


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


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Run ``args.command`` and report its exit code and (budgeted) output."""
    command = args.command
    timeout, timeout_note = _timeouts(args, ctx)
    budget = max_output_chars(ctx, "bash")
    cwd = _working_dir(ctx)
    secrets = secret_values(ctx.config)  # also makes _child_env hide the configured names
    sandbox = sandbox_settings(ctx.config)
    # Off the event loop only the first time, when bwrap is probed (it is run once).
    state = cached_sandbox_state(sandbox)
    if state is None:
        state = await asyncio.to_thread(sandbox_state, sandbox)
    require_sandbox(state)
    project_writable = permission_policy.project_writable(ctx)  # False in read-only mode
    bwrap = state.bwrap if state.active else None

    async def command_line(info_fd: int | None = None) -> list[str]:
        shell = ["bash", "-c", command]
        if bwrap is None:
            return shell
        # A walk of the project (its .git folders): off the event loop.
        return await asyncio.to_thread(
            bwrap_argv,
            bwrap,
            shell,
            cwd=cwd,
            project=ctx.project_root or cwd,
            settings=sandbox,
            project_writable=project_writable,
            info_fd=info_fd,
        )

    if ctx.is_cancelled():
        raise ToolError("the call was cancelled before the command started.", code="cancelled")
    runner = command_runner(ctx)
    if runner is not None:
        argv = await command_line()
        running = await _start_elsewhere(runner, argv, cwd, budget, ctx, bwrap is not None)
        if running is not None:
            return await _run_elsewhere(
                running,
                ctx,
                limit_s=timeout,
                timeout_note=timeout_note,
                budget=budget,
                secrets=secrets,
                sandbox=sandbox if state.active else None,
                project_writable=project_writable,
            )
    # Our own pipes (not asyncio's PIPE) so we can close the read ends ourselves even
    # when a background grandchild still holds the write ends.
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    unowned = [out_r, err_r]  # read ends not yet handed to a transport
    child_ends = [out_w, err_w]
    info: asyncio.Future[NamespaceInit | None] | None = None
    if bwrap is not None:
        # bwrap reports the host pid of the sandbox's pid 1 here, to check it is gone.
        info_r, info_w = os.pipe()
        unowned.append(info_r)
        child_ends.append(info_w)
    try:
        argv = await command_line(child_ends[2] if bwrap is not None else None)
    except BaseException:
        _close_fds(unowned)
        _close_fds(child_ends)
        raise
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            env=_child_env(bwrap is not None),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out_w,
            stderr=err_w,
            start_new_session=True,
            pass_fds=tuple(child_ends[2:]),
        )
    )
    try:
        proc = await asyncio.shield(spawn)
        if bwrap is not None:
            unowned.remove(info_r)  # from here the reader owns it
            info = asyncio.ensure_future(_read_info(info_r))
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
    # start_new_session makes the shell (or bwrap) its group (and session) leader
    pgid = proc.pid

    async def end_everything() -> None:
        """Nothing the command started outlives it: the sandbox's namespace ends, or
        (unsandboxed) what is left of the process group is killed."""
        if info is not None:
            await _end_namespace(info)
        elif _group_alive(pgid):
            await kill_group(pgid)

    # One capture (and redactor) per stream: a key split across two reads of stdout is
    # still caught when a piece of stderr arrives in between.
    captures = {name: StreamCapture(budget, secrets) for name in ("stdout", "stderr")}
    transports: list[asyncio.BaseTransport] = []

    def emit(text: str) -> None:
        if text and ctx.on_output is not None:
            with contextlib.suppress(Exception):  # a UI bug must not break the tool
                ctx.on_output(text)

    async def pump(name: str, reader: asyncio.StreamReader) -> None:
        capture = captures[name]
        try:
            while chunk := await reader.read(READ_CHUNK):
                emit(capture.feed(chunk))
        finally:
            emit(capture.finish())

    started = time.monotonic()
    readers: list[asyncio.Future[None]] = []
    waiter = asyncio.ensure_future(proc.wait())
    cancel_waiter = asyncio.ensure_future(ctx.cancel.wait())
    outcome = "completed"
    pipes_left_open = False
    try:
        for name, fd in (("stdout", out_r), ("stderr", err_r)):
            unowned.remove(fd)  # from here the pipe file object owns the fd
            reader, transport = await _open_reader(fd)
            transports.append(transport)
            readers.append(asyncio.ensure_future(pump(name, reader)))
        done, _ = await asyncio.wait(
            {waiter, cancel_waiter}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if waiter not in done:
            outcome = "cancelled" if cancel_waiter in done else "timeout"
            await kill_group(pgid)
        await end_everything()
        # Let the readers drain; background children may keep the pipes open.
        drain = PIPE_DRAIN_S if outcome == "completed" else 0.2
        _, pending = await asyncio.wait(readers, timeout=drain)
        pipes_left_open = bool(pending)
        with contextlib.suppress(ProcessLookupError, asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(waiter), timeout=1.0)
    except asyncio.CancelledError:
        # The executor cancelled this task: never leave the group behind.
        await asyncio.shield(kill_group(pgid))
        await asyncio.shield(end_everything())
        raise
    finally:
        cancel_waiter.cancel()
        if not waiter.done():
            waiter.cancel()
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        for transport in transports:
            transport.close()
        _close_fds(unowned)
        if proc.returncode is None:
            signal_group(pgid, signal.SIGKILL)
        if info is not None:
            if info.done() and not info.cancelled() and info.exception() is None:
                if (init := info.result()) is not None:
                    init.kill()
            else:
                info.cancel()
    elapsed = time.monotonic() - started
    exit_code = proc.returncode

    lines = [
        outcome_line(
            outcome,
            str(exit_code),
            timeout_s=timeout,
            elapsed=elapsed,
            killed="the command's whole process group was killed",
        )
    ]
    if timeout_note:
        lines.append(f"note: {timeout_note}")
    if outcome == "completed" and pipes_left_open:
        lines.append(
            "note: background processes still hold the output pipes open; their later output "
            "is not captured (redirect background output to a file, e.g. `cmd > log 2>&1 &`)."
        )
    out, err = captures["stdout"], captures["stderr"]
    if state.active and outcome == "completed" and exit_code != 0:
        seen = "".join((out.head, *out.tail, err.head, *err.tail))
        if note := failure_note(seen, sandbox, project_writable=project_writable):
            lines.append(note)
    # Split the budget between the streams, favouring the one that needs more.
    if out.total_chars + err.total_chars <= budget:
        out_budget, err_budget = budget, budget
    else:
        err_budget = min(err.total_chars, max(budget // 3, budget - out.total_chars))
        out_budget = max(budget - err_budget, 1)
    lines += out.section("stdout", out_budget) + err.section("stderr", err_budget)
    return ToolOutput(
        content="\n".join(lines),
        metadata={
            "exit_code": exit_code,
            "outcome": outcome,
            "timeout_s": timeout,
            "duration_s": round(elapsed, 3),
            "stdout_bytes": out.total_bytes,
            "stderr_bytes": err.total_bytes,
            "truncated": out.dropped_chars > 0
            or err.dropped_chars > 0
            or out.total_chars > out_budget
            or err.total_chars > err_budget,
            "pgid": pgid,
            "sandboxed": state.active,
        },
        mutation_state="attempted" if outcome == "completed" else "unknown",
        ok=outcome == "completed",
        error=None if outcome == "completed" else outcome,
    )


async def _start_elsewhere(
    runner: CommandRunner,
    argv: list[str],
    cwd: Path,
    budget: int,
    ctx: ToolContext,
    sandboxed: bool,
) -> RunningCommand | None:
    """Start ``argv`` with the front end's runner; ``None``: run it locally instead."""
    try:
        return await runner.start(
            argv,
            cwd=cwd,
            env=_child_env(sandboxed),
            output_byte_limit=budget * BYTES_PER_CHAR,
            call_id=ctx.services.get("call_id"),
            job_id=ctx.services.get("job_id"),
        )
    except Exception:  # the runner should decline itself; a local run is the fallback
        log.exception("starting the command through the front end failed; running it locally")
        return None


async def _finish_elsewhere(running: RunningCommand, *, kill: bool) -> CommandExit | None:
    """Kill (when asked) and let the command exit; its exit, or ``None`` if unknown."""
    with contextlib.suppress(Exception):
        if kill:
            await running.kill()
        return await asyncio.wait_for(running.wait(), KILLED_EXIT_S)
    return None


async def _run_elsewhere(
    running: RunningCommand,
    ctx: ToolContext,
    *,
    limit_s: float,
    timeout_note: str | None,
    budget: int,
    secrets: tuple[str, ...],
    sandbox: SandboxConfig | None,
    project_writable: bool,
) -> ToolOutput:
    """Poll a command a front end runs (an editor's terminal) into the live output, wait
    for it with the timeout, kill it on timeout or cancel, release it, and report it as a
    local run is reported (the terminal mixes stdout and stderr into one output)."""
    live = StreamCapture(budget, secrets)  # redacts the live text as a local run does
    shown = ""

    def pump(now: str, *, last: bool = False) -> None:
        nonlocal shown
        if now.startswith(shown):
            fresh = now[len(shown) :]
        else:  # the runner dropped the start: continue after the last text shown
            anchor = shown[-200:]
            at = now.rfind(anchor) if anchor else -1
            fresh = now[at + len(anchor) :] if at >= 0 else now
        shown = now
        text = live.feed(fresh.encode("utf-8"), final=last)
        if text and ctx.on_output is not None:
            with contextlib.suppress(Exception):  # a UI bug must not break the tool
                ctx.on_output(text)

    started = time.monotonic()
    waiter = asyncio.ensure_future(running.wait())
    cancel_waiter = asyncio.ensure_future(ctx.cancel.wait())
    outcome = "completed"
    ended: CommandExit | None = None
    final = None
    try:
        while True:
            left = started + limit_s - time.monotonic()
            done, _ = await asyncio.wait(
                {waiter, cancel_waiter},
                timeout=max(min(POLL_S, left), 0),
                return_when=asyncio.FIRST_COMPLETED,
            )
            if waiter in done:
                ended = waiter.result()
                break
            if cancel_waiter in done or left <= POLL_S:
                outcome = "cancelled" if cancel_waiter in done else "timeout"
                ended = await _finish_elsewhere(running, kill=True)
                break
            with contextlib.suppress(Exception):  # a missed poll only delays the live text
                pump((await running.output()).text)
        final = await running.output()
    except asyncio.CancelledError:
        # The executor cancelled this task: never leave the command running.
        await asyncio.shield(_finish_elsewhere(running, kill=True))
        raise
    except Exception as exc:
        await _finish_elsewhere(running, kill=True)
        raise ToolError(
            f"the editor's terminal failed while running the command: {exc}", code="terminal"
        ) from None
    finally:
        cancel_waiter.cancel()
        if not waiter.done():
            waiter.cancel()
        with contextlib.suppress(Exception):
            await asyncio.shield(running.release())
    elapsed = time.monotonic() - started
    pump(final.text, last=True)
    if ended is None and final.exited:
        ended = CommandExit(final.exit_code, final.signal)
    exit_code = ended.exit_code if ended else None
    shown_exit = f"{exit_code}" if exit_code is not None else "none"
    if ended is not None and ended.signal:
        shown_exit += f", ended by {ended.signal}"
    output = StreamCapture(budget, secrets)
    output.feed(final.text.encode("utf-8"), final=True)
    lines = [
        outcome_line(
            outcome,
            shown_exit,
            timeout_s=limit_s,
            elapsed=elapsed,
            killed="the command was killed in the editor's terminal",
        )
    ]
    if timeout_note:
        lines.append(f"note: {timeout_note}")
    if final.truncated:
        lines.append(
            f"note: the editor's terminal kept only the last {budget * BYTES_PER_CHAR:,} bytes "
            f"of output; the start is missing (redirect big outputs to a file and read it)."
        )
    if sandbox is not None and outcome == "completed" and exit_code != 0:
        if note := failure_note(final.text, sandbox, project_writable=project_writable):
            lines.append(note)
    lines += output.section("output", budget)
    return ToolOutput(
        content="\n".join(lines),
        metadata={
            "exit_code": exit_code,
            "signal": ended.signal if ended else None,
            "outcome": outcome,
            "timeout_s": limit_s,
            "duration_s": round(elapsed, 3),
            "output_bytes": output.total_bytes,
            "truncated": final.truncated or output.total_chars > budget,
            "terminal_id": running.id,
            "sandboxed": sandbox is not None,
        },
        mutation_state="attempted" if outcome == "completed" else "unknown",
        ok=outcome == "completed",
        error=None if outcome == "completed" else outcome,
    )


def outcome_line(
    outcome: str, exit_shown: str, *, timeout_s: float, elapsed: float, killed: str
) -> str:
    """The first line of a command's result: its exit code, or why it stopped early."""
    if outcome == "completed":
        return f"exit code: {exit_shown}"
    if outcome == "timeout":
        return (
            f"timed out after {timeout_s:g} s; {killed} (exit code {exit_shown}). Use a larger "
            "timeout_s or run long jobs in the background with output redirected to a file."
        )
    return (
        f"cancelled after {elapsed:.1f} s; {killed} (exit code {exit_shown}). It may have "
        "changed files before it stopped."
    )


TOOL = ToolSpec(
    name="bash",
    description=(
        "Run a shell command with `bash -c` in the working directory (stdin is /dev/null, so "
        "never wait for input; pass flags like `-y`). Returns the exit code and stdout and "
        "stderr, labelled; long output keeps its start and end and says how much was cut, so "
        "redirect big outputs to a file and inspect it with read or grep. Default timeout "
        f"{DEFAULT_TIMEOUT_S:g} s (set `timeout_s` for longer jobs, up to the configured "
        "maximum); on timeout or cancellation everything the command started is killed. "
        "Nothing outlives its command: background jobs (`&`, nohup, setsid) are killed when "
        "the command ends, so start a server and use it in the same command (e.g. "
        "`srv > srv.log 2>&1 & sleep 1; curl …`). Commands may run in a sandbox (the result "
        "says so when it stopped one): then only the project folder and /tmp are writable, "
        "/tmp is private to the sandbox (write files the read tool should see in the "
        "project), .git folders are read-only, there is no network and no other process "
        "of this machine is visible."
    ),
    args=Args,
    handler=handler,
    mutating=True,
    changes_files=True,
)
