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

The handler reads its settings, asks the sandbox for the command line, runs it with a
runner and builds one result. A front end that offers terminals (an editor over ACP,
``smith_tui.tools.command_runner``) runs the command line in one of its terminals, so the
editor shows it; otherwise :class:`~smith_tui.tools.local_runner.LocalCommandRunner` runs
it as a local subprocess. Both are command runners: ``bash`` drives them the same way (the
timeout, cancel and kill are its own) and reports both through :func:`_result`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from smith_tui.config.schema import SandboxConfig
from smith_tui.config.secrets import scrubbed_environ, secret_values
from smith_tui.config.service_options import BashOptions
from smith_tui.tools import permission_policy
from smith_tui.tools.args import NotBool, Text, max_output_chars
from smith_tui.tools.command_runner import (
    CommandExit,
    CommandRunner,
    RunnerOutput,
    RunningCommand,
)
from smith_tui.tools.local_runner import LocalCommandRunner
from smith_tui.tools.sandbox import (
    bwrap_argv,
    cached_sandbox_state,
    failure_note,
    require_sandbox,
    sandbox_environ,
    sandbox_state,
)
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec
from smith_tui.tools.stream_capture import StreamCapture

_DEFAULTS = BashOptions()
DEFAULT_TIMEOUT_S = _DEFAULTS.default_timeout_s
DEFAULT_MAX_TIMEOUT_S = _DEFAULTS.max_timeout_s
# A front end's terminal (command_runner.CommandRunner): how often its output is polled,
# how many bytes it keeps per character of budget, how long a killed command gets to exit.
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


@dataclass(frozen=True)
class _Settings:
    """What this call runs and how: the command, its timeout, budget and folder."""

    command: str
    timeout: float
    timeout_note: str | None
    budget: int
    cwd: Path
    secrets: tuple[str, ...]


@dataclass(frozen=True)
class _Sandbox:
    """The sandbox of this call: its settings, and bwrap's path when it is in use."""

    settings: SandboxConfig
    bwrap: str | None
    project_writable: bool


@dataclass(frozen=True)
class _Ran:
    """How a command went, as a runner saw it: what :func:`_result` reports."""

    outcome: str
    """``completed``, ``timeout`` or ``cancelled``."""
    exit_code: int | None
    exit_shown: str
    elapsed: float
    killed: str
    """What a timeout or cancel killed, in words."""
    streams: dict[str, StreamCapture]
    """The output sections, in order, by name."""
    seen: str
    """The output a sandbox failure note is looked for in."""
    notes: list[str] = field(default_factory=list)
    truncated: bool = False
    """The runner itself dropped output."""
    details: dict[str, Any] = field(default_factory=dict)
    """The runner's own metadata (the process group, the terminal id)."""


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Run ``args.command`` and report its exit code and (budgeted) output."""
    settings = _settings(args, ctx)
    sandbox = await _sandbox(ctx)
    if ctx.is_cancelled():
        raise ToolError("the call was cancelled before the command started.", code="cancelled")
    argv = await _command_line(settings, sandbox, ctx)
    runner = ctx.services.commands
    if runner is not None:
        running = await _start_elsewhere(
            runner, argv, settings.cwd, settings.budget, ctx, sandbox.bwrap is not None
        )
        if running is not None:
            return _result(await _run_elsewhere(running, settings, ctx), settings, sandbox)
    return _result(await _run_locally(argv, settings, sandbox, ctx), settings, sandbox)


def _settings(args: Args, ctx: ToolContext) -> _Settings:
    timeout, timeout_note = _timeouts(args, ctx)
    budget = max_output_chars(ctx, "bash")
    cwd = _working_dir(ctx)
    secrets = secret_values(ctx.config)  # also makes _child_env hide the configured names
    return _Settings(args.command, timeout, timeout_note, budget, cwd, secrets)


async def _sandbox(ctx: ToolContext) -> _Sandbox:
    settings = ctx.config.sandbox
    # Off the event loop only the first time, when bwrap is probed (it is run once).
    state = cached_sandbox_state(settings)
    if state is None:
        state = await asyncio.to_thread(sandbox_state, settings)
    require_sandbox(state)
    project_writable = permission_policy.project_writable(ctx)  # False in read-only mode
    return _Sandbox(settings, state.bwrap if state.active else None, project_writable)


def _timeouts(args: Args, ctx: ToolContext) -> tuple[float, str | None]:
    options = ctx.config.services.tool.bash
    default, ceiling = options.default_timeout_s, options.max_timeout_s
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


def _child_env(sandboxed: bool) -> dict[str, str]:
    env = scrubbed_environ()
    # A non-interactive run: never block on a pager or a credential prompt.
    env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    # Unsandboxed, the sockets those variables name are reachable anyway (and git over
    # ssh wants its agent): only a sandboxed command loses them.
    return sandbox_environ(env) if sandboxed else env


async def _command_line(settings: _Settings, sandbox: _Sandbox, ctx: ToolContext) -> list[str]:
    """``bash -c <command>``, inside bwrap's command line when the sandbox is in use."""
    shell = ["bash", "-c", settings.command]
    if sandbox.bwrap is None:
        return shell
    # A walk of the project (its .git folders): off the event loop.
    return await asyncio.to_thread(
        bwrap_argv,
        sandbox.bwrap,
        shell,
        cwd=settings.cwd,
        project=ctx.project_root or settings.cwd,
        settings=sandbox.settings,
        project_writable=sandbox.project_writable,
    )


async def _run_locally(
    argv: list[str], settings: _Settings, sandbox: _Sandbox, ctx: ToolContext
) -> _Ran:
    """Run ``argv`` as a local subprocess; stdout and stderr stream and are kept apart."""
    runner = LocalCommandRunner(
        keep=settings.budget,
        secrets=settings.secrets,
        on_output=ctx.on_output,
        sandboxed=sandbox.bwrap is not None,
    )
    running = await runner.start(
        argv,
        cwd=settings.cwd,
        env=_child_env(sandbox.bwrap is not None),
        output_byte_limit=settings.budget * BYTES_PER_CHAR,
        call_id=None,
        job_id=None,
    )
    outcome, ended, final, elapsed = await _drive(running, ctx, settings.timeout)
    exit_code = ended.exit_code if ended is not None else final.exit_code
    notes = []
    if outcome == "completed" and running.pipes_left_open:
        notes.append(
            "note: background processes still hold the output pipes open; their later output "
            "is not captured (redirect background output to a file, e.g. `cmd > log 2>&1 &`)."
        )
    return _Ran(
        outcome,
        exit_code,
        str(exit_code),
        elapsed,
        killed="the command's whole process group was killed",
        streams=running.streams,
        seen=final.text,
        notes=notes,
        details={"pgid": running.pgid},
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
            call_id=ctx.call_id,
            job_id=ctx.job_id,
        )
    except Exception:  # the runner should decline itself; a local run is the fallback
        log.exception("starting the command through the front end failed; running it locally")
        return None


async def _run_elsewhere(running: RunningCommand, settings: _Settings, ctx: ToolContext) -> _Ran:
    """Poll a command a front end runs (an editor's terminal) into the live output, and
    describe it as a local run is described (the terminal mixes stdout and stderr)."""
    live = StreamCapture(settings.budget, settings.secrets)  # redacts as a local run does
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

    outcome, ended, final, elapsed = await _drive(
        running,
        ctx,
        settings.timeout,
        poll=pump,
        failed="the editor's terminal failed while running the command",
    )
    pump(final.text, last=True)
    if ended is None and final.exited:
        ended = CommandExit(final.exit_code, final.signal)
    exit_code = ended.exit_code if ended else None
    shown_exit = f"{exit_code}" if exit_code is not None else "none"
    if ended is not None and ended.signal:
        shown_exit += f", ended by {ended.signal}"
    output = StreamCapture(settings.budget, settings.secrets)
    output.feed(final.text.encode("utf-8"), final=True)
    notes = []
    if final.truncated:
        notes.append(
            f"note: the editor's terminal kept only the last "
            f"{settings.budget * BYTES_PER_CHAR:,} bytes of output; the start is missing "
            f"(redirect big outputs to a file and read it)."
        )
    return _Ran(
        outcome,
        exit_code,
        shown_exit,
        elapsed,
        killed="the command was killed in the editor's terminal",
        streams={"output": output},
        seen=final.text,
        notes=notes,
        truncated=final.truncated,
        details={"signal": ended.signal if ended else None, "terminal_id": running.id},
    )


async def _drive(
    running: RunningCommand,
    ctx: ToolContext,
    limit_s: float,
    *,
    poll: Callable[[str], None] | None = None,
    failed: str | None = None,
) -> tuple[str, CommandExit | None, RunnerOutput, float]:
    """Wait for ``running`` with the timeout and the call's cancel (killing it when either
    comes first), then read its output and release it: the outcome, its exit if known,
    the output and the seconds it took. ``poll`` gets the output so far every ``POLL_S``;
    ``failed`` turns a runner's error into a tool error saying so."""
    step = POLL_S if poll is not None else math.inf
    started = time.monotonic()
    waiter = asyncio.ensure_future(running.wait())
    cancel_waiter = asyncio.ensure_future(ctx.cancel.wait())
    outcome = "completed"
    ended: CommandExit | None = None
    try:
        while True:
            left = started + limit_s - time.monotonic()
            done, _ = await asyncio.wait(
                {waiter, cancel_waiter},
                timeout=max(min(step, left), 0),
                return_when=asyncio.FIRST_COMPLETED,
            )
            if waiter in done:
                ended = waiter.result()
                break
            if cancel_waiter in done or left <= step:
                outcome = "cancelled" if cancel_waiter in done else "timeout"
                ended = await _finish(running, kill=True)
                break
            if poll is not None:
                with contextlib.suppress(Exception):  # a missed poll only delays the live text
                    poll((await running.output()).text)
        final = await running.output()
    except asyncio.CancelledError:
        # The executor cancelled this task: never leave the command running.
        await asyncio.shield(_finish(running, kill=True))
        raise
    except Exception as exc:
        if failed is None:
            raise
        await _finish(running, kill=True)
        raise ToolError(f"{failed}: {exc}", code="terminal") from None
    finally:
        cancel_waiter.cancel()
        if not waiter.done():
            waiter.cancel()
        with contextlib.suppress(Exception):
            await asyncio.shield(running.release())
    return outcome, ended, final, time.monotonic() - started


async def _finish(running: RunningCommand, *, kill: bool) -> CommandExit | None:
    """Kill (when asked) and let the command exit; its exit, or ``None`` if unknown."""
    with contextlib.suppress(Exception):
        if kill:
            await running.kill()
        return await asyncio.wait_for(running.wait(), KILLED_EXIT_S)
    return None


def _result(ran: _Ran, settings: _Settings, sandbox: _Sandbox) -> ToolOutput:
    """The tool's result: how the command ended, the notes, then each output section."""
    lines = [
        outcome_line(
            ran.outcome,
            ran.exit_shown,
            timeout_s=settings.timeout,
            elapsed=ran.elapsed,
            killed=ran.killed,
        )
    ]
    if settings.timeout_note:
        lines.append(f"note: {settings.timeout_note}")
    lines += ran.notes
    if sandbox.bwrap is not None and ran.outcome == "completed" and ran.exit_code != 0:
        if note := failure_note(
            ran.seen, sandbox.settings, project_writable=sandbox.project_writable
        ):
            lines.append(note)
    budgets = _section_budgets(ran.streams, settings.budget)
    for name, capture in ran.streams.items():
        lines += capture.section(name, budgets[name])
    completed = ran.outcome == "completed"
    return ToolOutput(
        content="\n".join(lines),
        metadata={
            "exit_code": ran.exit_code,
            "outcome": ran.outcome,
            "timeout_s": settings.timeout,
            "duration_s": round(ran.elapsed, 3),
            **{f"{name}_bytes": capture.total_bytes for name, capture in ran.streams.items()},
            "truncated": ran.truncated
            or any(
                capture.dropped_chars > 0 or capture.total_chars > budgets[name]
                for name, capture in ran.streams.items()
            ),
            **ran.details,
            "sandboxed": sandbox.bwrap is not None,
        },
        mutation_state="attempted" if completed else "unknown",
        ok=completed,
        error=None if completed else ran.outcome,
    )


def _section_budgets(streams: dict[str, StreamCapture], budget: int) -> dict[str, int]:
    """Each section's share of ``budget``: all of it while everything fits; else the
    second (stderr) gets what it needs up to a third, or more if the first needs less."""
    if len(streams) == 1 or sum(c.total_chars for c in streams.values()) <= budget:
        return dict.fromkeys(streams, budget)
    (first, out), (second, err) = streams.items()
    err_budget = min(err.total_chars, max(budget // 3, budget - out.total_chars))
    return {first: max(budget - err_budget, 1), second: err_budget}


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
