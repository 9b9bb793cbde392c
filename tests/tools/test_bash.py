"""The bash tool against real subprocesses: output, budgets, timeouts, group kill."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.tools.builtin.bash import TOOL
from smith_tui.tools.command_runner import CommandExit, RunnerOutput
from smith_tui.tools.local_runner import LocalCommandRunner
from smith_tui.tools.spec import ToolContext, ToolError, ToolServices
from tests.support.tools import load_error, typed_config

handler = TOOL.run  # validates like the executor, then runs the handler


def make_ctx(cwd: Path, config: dict[str, Any] | None = None, **extra: Any) -> ToolContext:
    return ToolContext(
        role="worker",
        turn_id="turn1",
        cwd=cwd,
        cancel=CancelToken.new_root(),
        config=typed_config(config),
        **extra,
    )


UNSANDBOXED = {"sandbox": {"mode": "off"}}
"""For tests that read the command's own pids (``$$``, ``$!``): those are host pids only
outside the sandbox's PID namespace (tests/security/test_sandbox_escape.py covers the
sandboxed runs)."""


def bash_config(**settings: Any) -> dict[str, Any]:
    return {"services": {"tool": {"bash": settings}}}


def live_members(pgid: int) -> list[int]:
    """Pids of processes in group ``pgid`` that are not zombies."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            pids.append(int(entry.name))
    return pids


def is_running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] not in ("Z", "X")


def read_stripped(path: Path) -> str:
    return path.read_text().strip() if path.exists() else ""


async def wait_for_file(path: Path, limit_s: float = 5.0) -> str:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if text := read_stripped(path):
            return text
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} was never written")


def test_spec_shape() -> None:
    assert TOOL.name == "bash"
    assert TOOL.mutating
    assert TOOL.input_schema["required"] == ["command"]
    assert set(TOOL.input_schema["properties"]) == {"command", "timeout_s"}


async def test_stdout_stderr_exit_code_and_cwd(tmp_path: Path) -> None:
    out = await handler(
        {"command": "pwd; echo to-err >&2; exit 3"},
        make_ctx(tmp_path),
    )
    assert out.ok
    assert out.metadata["exit_code"] == 3
    assert out.content.startswith("exit code: 3")
    assert f"--- stdout ({len(str(tmp_path)) + 1} bytes) ---\n{tmp_path}" in out.content
    assert "--- stderr (7 bytes) ---\nto-err" in out.content
    assert out.mutation_state == "attempted"


async def test_stdin_is_dev_null(tmp_path: Path) -> None:
    started = time.monotonic()
    out = await handler({"command": "cat; echo done"}, make_ctx(tmp_path))
    assert time.monotonic() - started < 5
    assert out.metadata["exit_code"] == 0
    assert "done" in out.content


async def test_empty_streams_are_labelled(tmp_path: Path) -> None:
    out = await handler({"command": "true"}, make_ctx(tmp_path))
    assert "stdout: (empty)" in out.content
    assert "stderr: (empty)" in out.content


async def test_cancel_kills_whole_group_quickly(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, UNSANDBOXED)
    pid_file = tmp_path / "grandchild.pid"
    task = asyncio.create_task(
        handler({"command": f"sleep 100 & echo $! > {pid_file}; sleep 100"}, ctx)
    )
    grandchild = int(await wait_for_file(pid_file))
    assert is_running(grandchild)
    started = time.monotonic()
    ctx.cancel.cancel("user pressed ctrl+c")
    out = await task
    latency = time.monotonic() - started
    assert latency < 1.0, latency
    assert not out.ok
    assert out.error == "cancelled"
    assert out.mutation_state == "unknown"
    assert "cancelled" in out.content
    assert not is_running(grandchild)
    assert live_members(out.metadata["pgid"]) == []


async def test_task_cancellation_also_kills_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "shell.pid"
    task = asyncio.create_task(
        handler(
            {"command": f"echo $$ > {pid_file}; sleep 100 & sleep 100"},
            make_ctx(tmp_path, UNSANDBOXED),
        )
    )
    shell_pid = int(await wait_for_file(pid_file))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert live_members(shell_pid) == []


async def test_sigterm_ignoring_process_is_killed(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, UNSANDBOXED)
    pid_file = tmp_path / "stubborn.pid"
    task = asyncio.create_task(
        handler(
            {"command": f"bash -c 'trap \"\" TERM; echo $$ > {pid_file}; sleep 100' & wait"},
            ctx,
        )
    )
    stubborn = int(await wait_for_file(pid_file))
    started = time.monotonic()
    ctx.cancel.cancel()
    out = await task
    assert time.monotonic() - started < 1.0
    assert not is_running(stubborn)
    assert live_members(out.metadata["pgid"]) == []


async def test_timeout_kills_group(tmp_path: Path) -> None:
    started = time.monotonic()
    out = await handler(
        {"command": "echo begun; sleep 30 & sleep 30", "timeout_s": 0.3}, make_ctx(tmp_path)
    )
    assert time.monotonic() - started < 2.0
    assert not out.ok
    assert out.error == "timeout"
    assert out.mutation_state == "unknown"
    assert "timed out after 0.3 s" in out.content
    assert "begun" in out.content
    assert live_members(out.metadata["pgid"]) == []


async def test_default_timeout_comes_from_config(tmp_path: Path) -> None:
    out = await handler(
        {"command": "sleep 30"}, make_ctx(tmp_path, bash_config(default_timeout_s=0.2))
    )
    assert out.metadata["outcome"] == "timeout"
    assert out.metadata["timeout_s"] == 0.2


async def test_timeout_is_capped_by_config(tmp_path: Path) -> None:
    out = await handler(
        {"command": "echo quick", "timeout_s": 9000},
        make_ctx(tmp_path, bash_config(default_timeout_s=5, max_timeout_s=5)),
    )
    assert out.metadata["timeout_s"] == 5
    assert "capped at the configured maximum of 5 s" in out.content


async def test_numeric_string_timeout_is_accepted(tmp_path: Path) -> None:
    out = await handler({"command": "echo ok", "timeout_s": "10"}, make_ctx(tmp_path))
    assert out.metadata["timeout_s"] == 10


async def test_huge_output_is_budgeted_with_head_tail_and_size(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, bash_config(max_output_chars=2000))
    out = await handler(
        {"command": "echo FIRST; seq 1 200000; echo LAST"},
        ctx,
    )
    total = len("FIRST\n") + sum(len(f"{n}\n") for n in range(1, 200001)) + len("LAST\n")
    assert out.metadata["stdout_bytes"] == total
    assert out.metadata["truncated"]
    assert len(out.content) < 2600
    assert "FIRST\n1\n2\n" in out.content
    assert "199999\n200000\nLAST\nstderr: (empty)" in out.content
    assert f"total {total:,} bytes" in out.content
    assert f"--- stdout ({total:,} bytes) ---" in out.content


async def test_budget_is_shared_between_streams(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, bash_config(max_output_chars=3000))
    out = await handler(
        {"command": "seq 1 100000; echo IMPORTANT-ERROR >&2"},
        ctx,
    )
    # The short stderr is kept whole even though stdout overflows.
    assert "--- stderr (16 bytes) ---\nIMPORTANT-ERROR" in out.content
    assert len(out.content) < 3600


async def test_on_output_streams_while_running(tmp_path: Path) -> None:
    chunks: list[str] = []
    ctx = make_ctx(tmp_path, on_output=chunks.append)
    task = asyncio.create_task(handler({"command": "echo one; sleep 0.5; echo two >&2"}, ctx))
    deadline = time.monotonic() + 3
    while not any("one" in c for c in chunks):
        assert time.monotonic() < deadline, "no live output arrived"
        await asyncio.sleep(0.01)
    assert not task.done()
    await task
    assert "".join(chunks) == "one\ntwo\n"


async def test_utf8_split_across_chunks_is_decoded(tmp_path: Path) -> None:
    chunks: list[str] = []
    out = await handler(
        {"command": "printf 'caf\\xc3'; sleep 0.2; printf '\\xa9\\n'"},
        make_ctx(tmp_path, on_output=chunks.append),
    )
    assert "café" in out.content
    assert "".join(chunks) == "café\n"


async def test_failing_on_output_does_not_break_the_tool(tmp_path: Path) -> None:
    def broken(_: str) -> None:
        raise RuntimeError("ui bug")

    out = await handler({"command": "echo fine"}, make_ctx(tmp_path, on_output=broken))
    assert "fine" in out.content


async def test_background_process_holding_pipe_does_not_hang(tmp_path: Path) -> None:
    pid_file = tmp_path / "bg.pid"
    started = time.monotonic()
    out = await handler(
        # Only a process that left the group (setsid) outlives an unsandboxed command.
        # The pid file is written after setsid, so the shell ends only once it escaped.
        {
            "command": f"setsid bash -c 'echo $$ > {pid_file}; exec sleep 5' & "
            f"until [ -s {pid_file} ]; do sleep 0.01; done; echo fg"
        },
        make_ctx(tmp_path, UNSANDBOXED),
    )
    assert time.monotonic() - started < 3
    assert out.metadata["exit_code"] == 0
    assert "fg" in out.content
    assert "background processes still hold the output pipes open" in out.content
    os.kill(int(pid_file.read_text()), signal.SIGKILL)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument `command`"),
        ({"command": "   "}, "`command` must not be empty"),
        ({"command": 42}, "`command` must be a string"),
        (
            {"command": "true", "timeout_s": "abc"},
            "`timeout_s` must be a number > 0, got 'abc'",
        ),
        ({"command": "true", "timeout_s": -1}, "`timeout_s` must be a number > 0"),
        ({"command": "true", "timeout_s": True}, "`timeout_s` must be a number > 0"),
    ],
)
async def test_bad_arguments(tmp_path: Path, args: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError) as err:
        await handler(args, make_ctx(tmp_path))
    assert message in err.value.message


async def test_missing_working_directory(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"working directory .* does not exist"):
        await handler({"command": "true"}, make_ctx(tmp_path / "gone"))


def test_bad_config_value_names_the_setting(tmp_path: Path) -> None:
    # Refused when the config is loaded; bash reads the checked, typed value.
    message = load_error(tmp_path, bash_config(max_timeout_s="x"))
    assert 'services.tool.bash.max_timeout_s: must be a number (got "x")' in message


async def test_already_cancelled_call_does_not_run(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    ctx.cancel.cancel()
    marker = tmp_path / "ran"
    with pytest.raises(ToolError, match="cancelled before the command started"):
        await handler({"command": f"touch {marker}"}, ctx)
    assert not marker.exists()


class LocalTerminal:
    """A command run by :class:`LocalRunner`: a real subprocess, output merged, the start
    dropped past ``limit`` bytes (as an editor's terminal does)."""

    def __init__(self, process: asyncio.subprocess.Process, limit: int) -> None:
        self.id = f"t{process.pid}"
        self.process = process
        self.limit = limit
        self.data = b""
        self.truncated = False
        self.calls: list[str] = []
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(4096):
            self.data += chunk
            if len(self.data) > self.limit:
                self.data, self.truncated = self.data[-self.limit :], True

    async def output(self) -> RunnerOutput:
        self.calls.append("output")
        code = self.process.returncode
        return RunnerOutput(
            self.data.decode("utf-8", "replace"), self.truncated, code is not None, code
        )

    async def wait(self) -> CommandExit:
        self.calls.append("wait")
        code = await self.process.wait()
        await self.reader
        return CommandExit(code if code >= 0 else None, None if code >= 0 else "SIGKILL")

    async def kill(self) -> None:
        self.calls.append("kill")
        if self.process.returncode is None:
            os.killpg(self.process.pid, signal.SIGKILL)

    async def release(self) -> None:
        self.calls.append("release")


class LocalRunner:
    """A ``CommandRunner`` like an editor's terminals, with a byte limit of its own."""

    def __init__(self, limit: int | None = None, *, decline: bool = False) -> None:
        self.limit = limit
        self.decline = decline
        self.started: list[LocalTerminal] = []
        self.requests: list[dict[str, Any]] = []

    async def start(self, argv: list[str], **request: Any) -> LocalTerminal | None:
        self.requests.append({"argv": argv, **request})
        if self.decline:
            return None
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=request["cwd"],
            env=request["env"],
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal = LocalTerminal(process, self.limit or request["output_byte_limit"])
        self.started.append(terminal)
        return terminal


async def test_a_runner_runs_the_command_streaming_its_output(tmp_path: Path) -> None:
    runner = LocalRunner()
    chunks: list[str] = []
    ctx = make_ctx(
        tmp_path, on_output=chunks.append, services=ToolServices(commands=runner), call_id="c1"
    )
    task = asyncio.create_task(handler({"command": "echo one; sleep 0.6; echo two >&2"}, ctx))
    deadline = time.monotonic() + 5
    while not any("one" in c for c in chunks):
        assert time.monotonic() < deadline, "no live output arrived"
        await asyncio.sleep(0.02)
    assert not task.done()
    out = await task
    ((request),) = runner.requests
    assert request["argv"][-2:] == ["-c", "echo one; sleep 0.6; echo two >&2"]
    assert (request["cwd"], request["call_id"], request["job_id"]) == (tmp_path, "c1", None)
    assert out.ok and out.content.startswith("exit code: 0")
    assert "one\ntwo" in out.content
    assert "".join(chunks) == "one\ntwo\n"
    (terminal,) = runner.started
    assert out.metadata["terminal_id"] == terminal.id
    assert terminal.calls[-1] == "release" and "kill" not in terminal.calls


async def test_a_runner_command_is_killed_on_timeout_and_says_what_it_dropped(
    tmp_path: Path,
) -> None:
    runner = LocalRunner(limit=50)
    ctx = make_ctx(tmp_path, services=ToolServices(commands=runner))
    command = "for i in $(seq 1 40); do echo line-$i; done; sleep 30"
    started = time.monotonic()
    out = await handler({"command": command, "timeout_s": 0.5}, ctx)
    assert time.monotonic() - started < 5
    (terminal,) = runner.started
    assert terminal.process.returncode == -signal.SIGKILL
    assert terminal.calls[-4:] == ["kill", "wait", "output", "release"]
    assert not out.ok and out.error == "timeout"
    assert "timed out after 0.5 s" in out.content
    assert "line-40" in out.content and "line-1\n" not in out.content
    assert "kept only the last" in out.content


async def test_a_declining_runner_leaves_the_command_to_a_local_process(tmp_path: Path) -> None:
    runner = LocalRunner(decline=True)
    out = await handler(
        {"command": "echo local"}, make_ctx(tmp_path, services=ToolServices(commands=runner))
    )
    assert len(runner.requests) == 1
    assert out.ok and "--- stdout" in out.content and "local" in out.content
    assert "pgid" in out.metadata


async def test_the_local_runner_is_a_command_runner_bash_can_drive_as_a_terminal(
    tmp_path: Path,
) -> None:
    # The local runner behind the same interface as an editor's terminals: handed to bash
    # as the front end's runner, bash polls it, kills its whole group on timeout, and
    # reports it as a terminal's run (one mixed output section, the terminal id).
    runner = LocalCommandRunner(keep=10_000)
    ctx = make_ctx(tmp_path, UNSANDBOXED, services=ToolServices(commands=runner))
    out = await handler({"command": "echo out; echo err >&2"}, ctx)
    assert out.ok and out.content.startswith("exit code: 0")
    assert "--- output" in out.content and "out\n" in out.content and "err" in out.content
    assert "pgid" not in out.metadata and out.metadata["terminal_id"].isdigit()
    pid_file = tmp_path / "grandchild.pid"
    out = await handler(
        {"command": f"sleep 100 & echo $! > {pid_file}; sleep 100", "timeout_s": 0.5}, ctx
    )
    assert not out.ok and out.error == "timeout"
    assert "killed in the editor's terminal" in out.content
    assert not is_running(int(pid_file.read_text()))
    assert live_members(int(out.metadata["terminal_id"])) == []
