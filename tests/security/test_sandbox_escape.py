"""Issue 20, "The sandbox": a sandboxed bash command cannot get back to the host.

Each attack runs through the real bash tool (its handler, real bubblewrap) and must fail;
its control runs the same command without the defence (the sandbox off, or the plain
``bash -c`` / bwrap command line of before) and must succeed, so the attack is real.
Tests that need bwrap skip with the probe's reason when it cannot run here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pty
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from smith_tui.config.schema import SandboxConfig
from smith_tui.tools.builtin.bash import TOOL
from smith_tui.tools.sandbox import bwrap_argv
from smith_tui.tools.spec import ToolOutput
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.smith_cli import server_args, smith_env
from tests.tools.test_sandbox import (
    PROBE,
    after_a_tick,
    cached_folders,
    make_ctx,
    needs_bwrap,
    pids_with,
    run,
    settled,  # noqa: F401 (a fixture)
    sleep_marker,
)

pytestmark = needs_bwrap

OFF = {"mode": "off"}
IS_ROOT = os.geteuid() == 0


def attack(what: str) -> pytest.MarkDecorator:
    return pytest.mark.attack("sandbox", what)


def control(what: str) -> pytest.MarkDecorator:
    return pytest.mark.control("sandbox", what)


def stdout_of(result: ToolOutput) -> str:
    """The stdout section of a result ('' when empty)."""
    content = result.content
    if "--- stdout" not in content:
        return ""
    return content.split("--- stdout", 1)[1].split("\n", 1)[1].split("--- stderr")[0]


async def until(condition: Callable[[], bool], limit_s: float = 5.0) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.01)
    return condition()


def sleeps(mark: str) -> list[int]:
    """The running ``sleep <mark>`` processes (not the shells or bwraps naming the mark):
    what to wait for before checking they are killed."""
    found = []
    for pid in pids_with(mark):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep\0"):
                found.append(pid)
    return found


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    return root


@pytest.fixture
def host_file(tmp_path: Path) -> Path:
    """A file of the host, outside the project (in the host's /tmp, where pytest works)."""
    path = tmp_path / "host" / "profile"
    path.parent.mkdir()
    path.write_text("original\n")
    return path


@pytest.fixture
def secret_holder() -> Iterator[tuple[int, str]]:
    """A host process whose environment holds a secret: its pid and the secret."""
    secret = f"sk-{uuid.uuid4().hex}"
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"],
        env={**os.environ, "SMITH_TEST_SECRET": secret},
        stdin=subprocess.DEVNULL,
    )
    try:
        yield proc.pid, secret
    finally:
        proc.kill()
        proc.wait()


# ---------------------------------------------------------------------------
# /proc: no way back to the host


@attack("write a host file through /proc/<smith pid>/root")
async def test_proc_root_write_is_blocked(project: Path, host_file: Path) -> None:
    result = await run(make_ctx(project), f"echo pwned > /proc/{os.getpid()}/root{host_file}")
    assert result.metadata["sandboxed"] is True
    assert host_file.read_text() == "original\n"  # noqa: ASYNC240


@control("without the sandbox, /proc/<pid>/root writes the host file")
async def test_proc_root_write_works_unsandboxed(project: Path, host_file: Path) -> None:
    await run(make_ctx(project, OFF), f"echo pwned > /proc/{os.getpid()}/root{host_file}")
    assert host_file.read_text() == "pwned\n"  # noqa: ASYNC240


@attack("read the environment of a host process holding a secret via /proc/<pid>/environ")
async def test_proc_environ_is_not_readable(project: Path, secret_holder: tuple[int, str]) -> None:
    pid, secret = secret_holder
    result = await run(make_ctx(project), f"tr '\\0' '\\n' < /proc/{pid}/environ | rev")
    assert secret[::-1] not in result.content


@control("without the sandbox, /proc/<pid>/environ | rev hands the secret over")
async def test_proc_environ_readable_unsandboxed(
    project: Path, secret_holder: tuple[int, str]
) -> None:
    pid, secret = secret_holder
    result = await run(make_ctx(project, OFF), f"tr '\\0' '\\n' < /proc/{pid}/environ | rev")
    assert secret[::-1] in result.content


def _pipe_reads(read_end: int) -> bytes:
    os.set_blocking(read_end, False)
    try:
        return os.read(read_end, 100)
    except BlockingIOError:
        return b""


@attack("write raw bytes into a host process's open file via /proc/<pid>/fd/N")
async def test_proc_fd_write_is_blocked(project: Path) -> None:
    read_end, write_end = os.pipe()
    try:
        await run(make_ctx(project), f"printf injected > /proc/{os.getpid()}/fd/{write_end}")
        assert _pipe_reads(read_end) == b""
    finally:
        os.close(read_end)
        os.close(write_end)


@control("without the sandbox, /proc/<pid>/fd/N writes into the host process's pipe")
async def test_proc_fd_write_works_unsandboxed(project: Path) -> None:
    read_end, write_end = os.pipe()
    try:
        await run(make_ctx(project, OFF), f"printf injected > /proc/{os.getpid()}/fd/{write_end}")
        assert _pipe_reads(read_end) == b"injected"
    finally:
        os.close(read_end)
        os.close(write_end)


@attack("see (ps, /proc) and signal (kill -0) a host process")
async def test_host_processes_are_invisible(project: Path, secret_holder: tuple[int, str]) -> None:
    pid, _ = secret_holder
    result = await run(
        make_ctx(project),
        f"kill -0 {pid} && echo SIGNALLED; ls /proc | grep -c '^[0-9]'; "
        f"ps -eo pid= | tr -d ' ' | grep -qx {pid} && echo LISTED; true",
    )
    out = stdout_of(result)
    assert "SIGNALLED" not in out and "LISTED" not in out
    # Only the command's own few processes are in its /proc.
    assert int(out.split()[0]) < 10, out


@control("without the sandbox, kill -0 and ps reach the host process")
async def test_host_processes_visible_unsandboxed(
    project: Path, secret_holder: tuple[int, str]
) -> None:
    pid, _ = secret_holder
    result = await run(
        make_ctx(project, OFF),
        f"kill -0 {pid} && echo SIGNALLED; ps -eo pid= | tr -d ' ' | grep -qx {pid} && echo LISTED",
    )
    assert "SIGNALLED" in result.content and "LISTED" in result.content


@attack("write /proc/sys (kernel.core_pattern runs a program as root on a crash)")
async def test_proc_sys_is_read_only(project: Path) -> None:
    # The same value written back: harmless if it ever got through.
    result = await run(
        make_ctx(project),
        'v=$(cat /proc/sys/kernel/hostname); echo "$v" > /proc/sys/kernel/hostname && '
        "echo WROTE; mount -o remount,rw,bind / 2>/dev/null && echo REMOUNTED; true",
    )
    assert "WROTE" not in stdout_of(result) and "REMOUNTED" not in stdout_of(result)


@pytest.mark.skipif(not IS_ROOT, reason="only root could write /proc/sys or remount")
@control("as root, the old bwrap line (no --cap-drop, /proc writable) writes /proc/sys, remounts /")
def test_proc_sys_writable_in_the_old_sandbox(project: Path) -> None:
    assert PROBE.path is not None
    old = [PROBE.path, "--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/"]
    old += ["--dev", "/dev", "--proc", "/proc", "--unshare-net", "bash", "-c"]
    done = subprocess.run(
        [
            *old,
            'v=$(cat /proc/sys/kernel/hostname); echo "$v" > /proc/sys/kernel/hostname && '
            "echo WROTE; mount -o remount,rw,bind / && echo REMOUNTED",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert "WROTE" in done.stdout and "REMOUNTED" in done.stdout, done.stderr


# ---------------------------------------------------------------------------
# sockets


class UnixServer:
    """A unix socket server on a thread-free accept: ``connected()`` says if anyone came."""

    def __init__(self, address: str | bytes) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(address)
        self.sock.listen(5)
        self.sock.setblocking(False)

    def connected(self) -> bool:
        try:
            conn, _ = self.sock.accept()
        except BlockingIOError:
            return False
        conn.close()
        return True

    def close(self) -> None:
        self.sock.close()


def connect_command(address: str) -> str:
    """A command that connects to the unix socket ``address`` ('@name': abstract)."""
    name = "\0" + address[1:] if address.startswith("@") else address
    literal = json.dumps(name)  # a Python literal too, free of single quotes
    return (
        "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); "
        f's.connect({literal}); print("CONNECTED")\''
    )


@pytest.fixture
def socket_places(tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Host sockets: in the host's /tmp, in $XDG_RUNTIME_DIR, named by $SSH_AUTH_SOCK in a
    folder the sandbox shows (the project), and an abstract one."""
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    agent = project / "agent.sock"
    monkeypatch.setenv("SSH_AUTH_SOCK", str(agent))
    return {
        "host /tmp": str(tmp_path / "tmp.sock"),
        "XDG_RUNTIME_DIR": str(runtime / "bus"),
        "SSH_AUTH_SOCK": str(agent),
        "abstract": f"@smith-test-{uuid.uuid4().hex}",
    }


@pytest.fixture
def servers(socket_places: dict[str, str]) -> Iterator[dict[str, UnixServer]]:
    made = {}
    for name, address in socket_places.items():
        bind_to = "\0" + address[1:] if address.startswith("@") else address
        made[name] = UnixServer(bind_to)
    yield made
    for server in made.values():
        server.close()


async def _try_sockets(
    project: Path, places: dict[str, str], servers: dict[str, UnixServer], sandbox: Any
) -> dict[str, bool]:
    reached = {}
    for name, address in places.items():
        await run(make_ctx(project, sandbox), connect_command(address))
        reached[name] = servers[name].connected()
    return reached


@attack("connect to host unix sockets: host /tmp, XDG_RUNTIME_DIR, $SSH_AUTH_SOCK, abstract")
async def test_host_unix_sockets_are_unreachable(
    project: Path, socket_places: dict[str, str], servers: dict[str, UnixServer]
) -> None:
    reached = await _try_sockets(project, socket_places, servers, None)
    assert reached == dict.fromkeys(socket_places, False)


@control("without the sandbox, every one of those sockets accepts the connection")
async def test_host_unix_sockets_reachable_unsandboxed(
    project: Path, socket_places: dict[str, str], servers: dict[str, UnixServer]
) -> None:
    reached = await _try_sockets(project, socket_places, servers, OFF)
    assert reached == dict.fromkeys(socket_places, True)


@pytest.fixture
def tmux_server(tmp_path: Path) -> Iterator[Path]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    sock = tmp_path / "tmux.sock"
    env = {**os.environ, "TMUX": ""}
    subprocess.run(
        ["tmux", "-S", str(sock), "-f", "/dev/null", "new-session", "-d", "sleep 120"],
        check=True,
        env=env,
        timeout=30,
    )
    try:
        yield sock
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], env=env, check=False)


@attack("run a command outside the sandbox through a host tmux server (tmux -S sock run-shell)")
async def test_tmux_run_shell_cannot_escape(
    project: Path, tmux_server: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "escaped"
    await run(make_ctx(project), f"tmux -S {tmux_server} run-shell 'touch {marker}'")
    assert not await until(marker.exists, 0.5)


@control("without the sandbox, tmux run-shell runs the command on the host")
async def test_tmux_run_shell_escapes_unsandboxed(
    project: Path, tmux_server: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "escaped"
    await run(make_ctx(project, OFF), f"tmux -S {tmux_server} run-shell 'touch {marker}'")
    assert await until(marker.exists)


SOCKET_ENV = {
    "TMUX": "/tmp/tmux-1000/default,4242,0",
    "SSH_AUTH_SOCK": "/tmp/ssh-XXXX/agent.1",
    "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus",
    "DISPLAY": ":0",
    "WAYLAND_DISPLAY": "wayland-0",
}


@attack("find host sockets through TMUX, SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS, DISPLAY …")
async def test_socket_variables_are_not_passed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SOCKET_ENV.items():
        monkeypatch.setenv(name, value)
    result = await run(make_ctx(project), "env")
    names = {line.split("=", 1)[0] for line in stdout_of(result).splitlines()}
    assert not names & set(SOCKET_ENV)
    assert "TMPDIR=/tmp" in stdout_of(result)


@control("without the sandbox the command gets those variables")
async def test_socket_variables_passed_unsandboxed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SOCKET_ENV.items():
        monkeypatch.setenv(name, value)
    result = await run(make_ctx(project, OFF), "env")
    names = {line.split("=", 1)[0] for line in stdout_of(result).splitlines()}
    assert set(SOCKET_ENV) <= names


@attack("read a file of the host's /tmp")
async def test_host_tmp_is_not_visible(project: Path, host_file: Path) -> None:
    result = await run(make_ctx(project), f"cat {host_file}; ls /tmp")
    assert "original" not in result.content
    assert host_file.parent.parent.name not in stdout_of(result)


@control("without the sandbox the host's /tmp file is read")
async def test_host_tmp_visible_unsandboxed(project: Path, host_file: Path) -> None:
    result = await run(make_ctx(project, OFF), f"cat {host_file}")
    assert "original" in result.content


# ---------------------------------------------------------------------------
# nothing outlives its command

LEFT_BEHIND = {
    "nohup": "nohup sleep {mark} > /dev/null 2>&1 &",
    "setsid": "setsid sleep {mark} > /dev/null 2>&1 < /dev/null &",
    "double fork": "( ( sleep {mark} > /dev/null 2>&1 & ) & )",
}


def _left_behind_command(kind: str, mark: str, tail: str = "") -> str:
    return LEFT_BEHIND[kind].format(mark=mark) + tail


@pytest.mark.parametrize("kind", sorted(LEFT_BEHIND))
@attack("leave a process running after the command ends (nohup, setsid, double fork)")
async def test_background_processes_end_with_the_command(project: Path, kind: str) -> None:
    mark = sleep_marker()
    # Wait until the background process runs, so the command really left it behind.
    wait = f"\nuntil pgrep -f {mark} > /dev/null; do sleep 0.01; done; echo started"
    result = await run(make_ctx(project), _left_behind_command(kind, mark, wait))
    assert "started" in stdout_of(result)
    assert pids_with(mark) == []


@pytest.mark.parametrize("kind", sorted(LEFT_BEHIND))
@control("run as plain bash -c in a session of its own (as before), the process survives")
def test_background_processes_survive_plain_bash(project: Path, kind: str) -> None:
    mark = sleep_marker()
    wait = f"\nuntil pgrep -f {mark} > /dev/null; do sleep 0.01; done"
    subprocess.run(
        ["bash", "-c", _left_behind_command(kind, mark, wait)],
        cwd=project,
        start_new_session=True,
        timeout=30,
        check=True,
    )
    survivors = pids_with(mark)
    kill_all(survivors)
    assert survivors


@pytest.mark.parametrize("kind", sorted(LEFT_BEHIND))
@attack("leave a process running after a timeout")
async def test_background_processes_end_on_timeout(project: Path, kind: str) -> None:
    mark = sleep_marker()
    started = project / "started"
    tail = f"\nuntil pgrep -f {mark} > /dev/null; do sleep 0.01; done; touch {started}; sleep 60"
    result = await TOOL.run(
        {"command": _left_behind_command(kind, mark, tail), "timeout_s": 2}, make_ctx(project)
    )
    assert result.metadata["outcome"] == "timeout"
    assert started.exists(), "the background process never ran before the timeout"
    assert pids_with(mark) == []


@attack("leave processes running after the turn is cancelled (setsid + a TERM-ignoring one)")
async def test_everything_ends_on_cancel(project: Path) -> None:
    mark = sleep_marker()
    command = (
        f"setsid sleep {mark} > /dev/null 2>&1 < /dev/null & "
        f"(trap '' TERM; sleep {mark}) & nohup sleep {mark} > /dev/null 2>&1 & wait"
    )
    ctx = make_ctx(project)
    task = asyncio.ensure_future(run(ctx, command))
    assert await until(lambda: len(sleeps(mark)) >= 3, 10)
    started = time.monotonic()
    ctx.cancel.cancel("user pressed ctrl+c")
    result = await asyncio.wait_for(task, 10)
    assert time.monotonic() - started < 2
    assert result.metadata["outcome"] == "cancelled"
    assert pids_with(mark) == []


@control("without the sandbox, a setsid process survives the cancel (the documented limit)")
async def test_setsid_survives_cancel_unsandboxed(project: Path) -> None:
    mark = sleep_marker()
    ctx = make_ctx(project, OFF)
    task = asyncio.ensure_future(
        run(ctx, f"setsid sleep {mark} > /dev/null 2>&1 < /dev/null & sleep {sleep_marker()}")
    )
    assert await until(lambda: bool(sleeps(mark)), 10)
    ctx.cancel.cancel("test")
    await task
    survivors = pids_with(mark)
    kill_all(survivors)
    assert survivors


def _smith_run(
    tmp_path: Path, project: Path, server: ScriptedLLMServer, sandbox: dict[str, Any]
) -> tuple[list[str], dict[str, str]]:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"llm_config": {"retry_backoff_ms": [10]}, "sandbox": sandbox}))
    # The interpreter may be a plain python given the venv's packages by site.addsitedir
    # (as the suite runs as a plain user): the child does the same (.pth files included).
    sites = [p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)]
    start = (
        "import runpy, site, sys\n"
        f"for folder in {sites!r}: site.addsitedir(folder)\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
        "runpy.run_module('smith_tui.cli', run_name='__main__', alter_sys=True)"
    )
    argv = [sys.executable, "-c", start, "-p", "start a server"]
    argv += server_args(server.base_url, tmp_path / "smith.db", config)
    return argv, smith_env(tmp_path)


def _left_server(mark: str) -> str:
    return (
        f"setsid nohup sleep {mark} > /dev/null 2>&1 < /dev/null & "
        f"until pgrep -f {mark} > /dev/null; do sleep 0.01; done; echo started"
    )


@attack("a process a command left behind survives smith itself exiting")
def test_nothing_survives_smith_exiting(
    tmp_path: Path, project: Path, llm_server: ScriptedLLMServer
) -> None:
    mark = sleep_marker()
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": _left_server(mark)})]),
        text_reply("done"),
    )
    argv, env = _smith_run(tmp_path, project, llm_server, {"mode": "on"})
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    sent = llm_server.chat_requests()[-1]["messages"]
    assert any("started" in (m.get("content") or "") for m in sent)
    assert pids_with(mark) == []


@attack("SIGKILL smith while a sandboxed command runs: the namespace must die with it")
def test_nothing_survives_smith_killed(
    tmp_path: Path, project: Path, llm_server: ScriptedLLMServer
) -> None:
    mark = sleep_marker()
    command = f"setsid sleep {mark} > /dev/null 2>&1 < /dev/null & sleep {mark}"
    llm_server.enqueue(text_reply(tool_calls=[tool_call("bash", {"command": command})]))
    argv, env = _smith_run(tmp_path, project, llm_server, {"mode": "on"})
    proc = subprocess.Popen(argv, cwd=project, env=env, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while len(sleeps(mark)) < 2:
            assert time.monotonic() < deadline and proc.poll() is None, "the command never ran"
            time.sleep(0.02)
        proc.kill()  # smith only, not its process group
        proc.wait(10)
        deadline = time.monotonic() + 5
        while pids_with(mark) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert pids_with(mark) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        kill_all(pids_with(mark))


@control("without the sandbox, a setsid process outlives a killed smith")
def test_setsid_survives_smith_killed_unsandboxed(
    tmp_path: Path, project: Path, llm_server: ScriptedLLMServer
) -> None:
    mark = sleep_marker()
    command = f"setsid sleep {mark} > /dev/null 2>&1 < /dev/null & sleep {mark}"
    llm_server.enqueue(text_reply(tool_calls=[tool_call("bash", {"command": command})]))
    argv, env = _smith_run(tmp_path, project, llm_server, OFF)
    proc = subprocess.Popen(argv, cwd=project, env=env, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while len(sleeps(mark)) < 2:
            assert time.monotonic() < deadline and proc.poll() is None, "the command never ran"
            time.sleep(0.02)
        proc.kill()
        proc.wait(10)
        assert pids_with(mark)
    finally:
        if proc.poll() is None:
            proc.kill()
        kill_all(pids_with(mark))


# ---------------------------------------------------------------------------
# no terminal

TTY_PROBE = (
    "python3 -c 'import fcntl, termios\n"
    'fd = open("/dev/tty", "rb", buffering=0)\n'
    'print("OPENED", flush=True)\n'
    'fcntl.ioctl(fd, termios.TIOCSTI, b" ")\n'
    'print("INJECTED")\''
)


@attack("open the controlling terminal (/dev/tty) and inject a key with TIOCSTI")
async def test_no_controlling_terminal(project: Path) -> None:
    result = await run(make_ctx(project), TTY_PROBE)
    assert "OPENED" not in stdout_of(result)
    assert "No such device or address" in result.content  # ENXIO: no controlling terminal


def _in_a_terminal(argv: list[str], cwd: Path) -> str:
    """Run ``argv`` as the session leader of a fresh pty (``setsid -c``: it becomes the
    controlling terminal), as an editor's terminal runs a command; its output."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            ["setsid", "--wait", "--ctty", *argv],
            cwd=cwd,
            stdin=follower,
            stdout=follower,
            stderr=follower,
        )
        os.close(follower)
        follower = -1
        proc.wait(30)
        chunks = []
        os.set_blocking(leader, False)
        with contextlib.suppress(OSError):
            while data := os.read(leader, 65536):
                chunks.append(data)
        return b"".join(chunks).decode(errors="replace")
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)


@attack("a sandboxed command started in a terminal (an editor's) cannot use it as its tty")
def test_sandbox_line_drops_the_terminal(project: Path) -> None:
    assert PROBE.path is not None
    line = bwrap_argv(
        PROBE.path,
        ["bash", "-c", TTY_PROBE],
        cwd=project,
        project=project,
        settings=SandboxConfig(),
    )
    out = _in_a_terminal(line, project)
    assert "OPENED" not in out and "No such device or address" in out, out


@control("the same command in that terminal without the sandbox opens it")
def test_terminal_usable_without_the_sandbox(project: Path) -> None:
    out = _in_a_terminal(["bash", "-c", TTY_PROBE], project)
    # Opening works; TIOCSTI itself may be off in this kernel (dev.tty.legacy_tiocsti).
    assert "OPENED" in out, out


# ---------------------------------------------------------------------------
# nested repositories


@pytest.fixture
def nested(project: Path) -> Path:
    """A project with a nested repository (vendor/lib/.git) and a submodule's .git file."""
    lib = project / "vendor" / "lib" / ".git"
    lib.mkdir(parents=True)
    (lib / "config").write_text("[core]\n")
    module = project / "modules" / "mod"
    module.mkdir(parents=True)
    (module / ".git").write_text("gitdir: ../../.git/modules/mod\n")
    return project


PLANT = (
    "printf '\\tfsmonitor = touch /tmp/pwned\\n' >> vendor/lib/.git/config; "
    "echo 'gitdir: /tmp/evil' > modules/mod/.git; "
    "mv vendor/lib vendor/moved && mkdir -p vendor/lib/.git && echo planted > vendor/lib/.git/config; "
    "true"
)


@attack("plant core.fsmonitor in a nested .git, repoint a .git file, rename the repo away")
async def test_nested_git_is_read_only(nested: Path) -> None:
    result = await run(make_ctx(nested), PLANT)
    assert result.metadata["sandboxed"] is True
    assert (nested / "vendor/lib/.git/config").read_text() == "[core]\n"
    assert (nested / "modules/mod/.git").read_text() == "gitdir: ../../.git/modules/mod\n"
    assert not (nested / "vendor" / "moved").exists()


@control("with sandbox.git_writable the same command plants all three")
async def test_nested_git_writable_when_allowed(nested: Path) -> None:
    await run(make_ctx(nested, {"git_writable": True}), PLANT)
    assert "fsmonitor" in (nested / "vendor/moved/.git/config").read_text()
    assert (nested / "modules/mod/.git").read_text() == "gitdir: /tmp/evil\n"
    assert (nested / "vendor/lib/.git/config").read_text() == "planted\n"


FSMONITOR = "printf '\\tfsmonitor = touch /tmp/pwned\\n' >> {}/.git/config; true"


async def plant_between_commands(root: Path, scratch: Path, sandbox: dict[str, Any]) -> None:
    """One command makes a nested repository, the next plants core.fsmonitor in it; then a
    repository made outside the sandbox (as an editor or the file tools would) is planted
    by a third. With the walk's cache trusting every folder's ctime (``settled``), the
    folders it reuses are the ones the new .git folders are in."""
    (root / "deep" / "a" / "b").mkdir(parents=True)
    after_a_tick(root / "vendor", scratch)
    made = await run(
        make_ctx(root, sandbox),
        "mkdir -p vendor/new/.git && echo '[core]' > vendor/new/.git/config",
    )
    assert made.metadata["exit_code"] == 0, made.content
    assert str(root / "vendor") in cached_folders(root)  # listed before the command made it
    await run(make_ctx(root, sandbox), FSMONITOR.format("vendor/new"))
    assert str(root / "deep" / "a" / "b") in cached_folders(root)
    after_a_tick(root / "deep" / "a" / "b", scratch)
    (root / "deep" / "a" / "b" / ".git").mkdir()
    (root / "deep" / "a" / "b" / ".git" / "config").write_text("[core]\n")
    await run(make_ctx(root, sandbox), FSMONITOR.format("deep/a/b"))


@attack(
    "plant core.fsmonitor in a .git made since the last walk of the project (by the command before, or outside the sandbox)"
)
@pytest.mark.usefixtures("settled")
async def test_a_git_made_between_commands_is_read_only(nested: Path, tmp_path: Path) -> None:
    await plant_between_commands(nested, tmp_path, {})
    assert (nested / "vendor/new/.git/config").read_text() == "[core]\n"
    assert (nested / "deep/a/b/.git/config").read_text() == "[core]\n"


@control("a naive cache that reuses a folder's listing without checking it plants both")
@pytest.mark.usefixtures("settled")
async def test_a_git_made_between_commands_is_planted_past_a_naive_cache(
    nested: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from smith_tui.tools import sandbox

    fresh = sandbox._listing

    def naive(folder: str, cached: Any, now: int, devices: Any, *, follow: bool) -> Any:
        return cached or fresh(folder, cached, now, devices, follow=follow)

    monkeypatch.setattr(sandbox, "_listing", naive)
    await plant_between_commands(nested, tmp_path, {})
    assert "fsmonitor" in (nested / "vendor/new/.git/config").read_text()
    assert "fsmonitor" in (nested / "deep/a/b/.git/config").read_text()
