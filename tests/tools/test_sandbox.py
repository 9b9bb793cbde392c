"""The bash sandbox with the real bubblewrap: what a command may write and reach, and the modes.

Tests that need a working ``bwrap`` skip with the probe's reason when it is
missing or cannot build a sandbox here (e.g. user namespaces are not allowed
in this container). ``.ci/run`` installs bubblewrap so they run in CI.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.config.schema import SandboxConfig
from smith_tui.engine import events as ev
from smith_tui.tools.builtin.bash import TOOL
from smith_tui.tools.sandbox import failure_note, probe_bwrap, scratch_folder
from smith_tui.tools.spec import ToolContext, ToolError, ToolOutput
from tests.support.runtime import open_runtime
from tests.support.tools import load_error, typed_config
from tests.tools.test_bash import is_running, live_members

PROBE = probe_bwrap()
needs_bwrap = pytest.mark.skipif(
    not PROBE.ok, reason=f"the sandbox cannot run here: {PROBE.reason}"
)


def pids_with(marker: str) -> list[int]:
    """Host pids of live processes whose command line contains ``marker`` (a command's
    own ``$$``/``$!`` are pids of its PID namespace, not the host's)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and is_running(int(entry.name)):
            found.append(int(entry.name))
    return found


def sleep_marker() -> str:
    """A ``sleep`` duration nobody else uses: ``sleep <it>`` is findable by :func:`pids_with`."""
    return f"300.{uuid.uuid4().int % 10**9:09d}"


def make_ctx(project: Path, sandbox: dict[str, Any] | None = None) -> ToolContext:
    return ToolContext(
        role="worker",
        turn_id="turn1",
        cwd=project,
        cancel=CancelToken.new_root(),
        config=typed_config({"sandbox": sandbox} if sandbox is not None else {}),
        project_root=project,
    )


async def run(ctx: ToolContext, command: str) -> ToolOutput:
    result = await TOOL.run({"command": command}, ctx)
    assert isinstance(result, ToolOutput)
    return result


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder with a ``.git`` folder in it."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside both the project and the temp folders (/tmp, $TMPDIR)."""
    base = Path("/var/tmp") if os.access("/var/tmp", os.W_OK) else Path.home()
    tmp_roots = [Path("/tmp").resolve(), Path(tempfile.gettempdir()).resolve()]
    if any(base.resolve().is_relative_to(root) for root in tmp_roots):
        pytest.skip(f"no folder outside the temp folders to write to ({base} is inside one)")
    folder = Path(tempfile.mkdtemp(prefix="smith-sandbox-test-", dir=base))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def no_bwrap_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``PATH`` holding bash (and git) but no bwrap."""
    bin_dir = tmp_path / "bin-without-bwrap"
    bin_dir.mkdir()
    for tool in ("bash", "git"):
        found = shutil.which(tool)
        assert found, f"{tool} is needed by this test"
        (bin_dir / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


@pytest.fixture
def broken_bwrap_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``PATH`` whose bwrap fails the way it does where namespaces are not allowed."""
    bin_dir = tmp_path / "bin-broken-bwrap"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    (bin_dir / "bash").symlink_to(shutil.which("bash") or "/bin/bash")
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


# ---------------------------------------------------------------------------
# the filesystem


@needs_bwrap
async def test_writes_inside_the_project_and_tmp_work_outside_fail_and_say_why(
    project: Path, outside: Path
) -> None:
    in_tmp = Path("/tmp") / f"smith-sandbox-{uuid.uuid4().hex}"
    scratch = scratch_folder(project)
    assert scratch is not None
    try:
        result = await run(
            make_ctx(project),
            f"echo in > inside.txt && echo t > {in_tmp} && echo out > {outside}/x.txt",
        )
        assert (project / "inside.txt").read_text() == "in\n"
        # /tmp is the project's scratch folder, never the host's /tmp.
        assert (scratch / in_tmp.name).read_text() == "t\n"
        assert not in_tmp.exists()
    finally:
        in_tmp.unlink(missing_ok=True)
        (scratch / in_tmp.name).unlink(missing_ok=True)
    assert not (outside / "x.txt").exists()
    assert result.metadata["sandboxed"] is True
    assert result.metadata["exit_code"] != 0
    assert "Read-only file system" in result.content
    assert "bash sandbox (bubblewrap)" in result.content
    assert "sandbox.writable" in result.content


@needs_bwrap
async def test_the_same_command_works_with_the_sandbox_off(project: Path, outside: Path) -> None:
    result = await run(make_ctx(project, {"mode": "off"}), f"echo out > {outside}/x.txt")
    assert result.metadata["exit_code"] == 0
    assert result.metadata["sandboxed"] is False
    assert (outside / "x.txt").read_text() == "out\n"


@needs_bwrap
async def test_a_folder_in_sandbox_writable_can_be_written(project: Path, outside: Path) -> None:
    result = await run(
        make_ctx(project, {"writable": [str(outside)]}), f"echo out > {outside}/x.txt"
    )
    assert result.metadata["exit_code"] == 0, result.content
    assert (outside / "x.txt").read_text() == "out\n"


@needs_bwrap
async def test_git_folder_is_read_only_unless_allowed(project: Path) -> None:
    result = await run(make_ctx(project), "echo x > .git/touched")
    assert result.metadata["exit_code"] != 0
    assert not (project / ".git" / "touched").exists()
    assert "sandbox.git_writable" in result.content
    # A parent folder listed as writable does not undo it.
    widened = make_ctx(project, {"writable": [str(project.parent)]})
    assert (await run(widened, "echo x > .git/touched")).metadata["exit_code"] != 0
    allowed = await run(make_ctx(project, {"git_writable": True}), "echo x > .git/touched")
    assert allowed.metadata["exit_code"] == 0, allowed.content
    assert (project / ".git" / "touched").read_text() == "x\n"


@needs_bwrap
async def test_a_read_only_project_keeps_tmp_writable(project: Path) -> None:
    from smith_tui.tools.sandbox import bwrap_argv

    assert PROBE.path is not None
    argv = bwrap_argv(
        PROBE.path,
        ["bash", "-c", "echo t > /tmp/$$.probe && rm /tmp/$$.probe && echo x > inside.txt"],
        cwd=project,
        project=project,
        settings=SandboxConfig(),
        project_writable=False,
    )
    proc = await asyncio.create_subprocess_exec(*argv, stderr=asyncio.subprocess.PIPE)
    _, err = await proc.communicate()
    assert proc.returncode != 0
    assert b"Read-only file system" in err
    assert not (project / "inside.txt").exists()


# ---------------------------------------------------------------------------
# the network


@needs_bwrap
async def test_network_is_off_unless_allowed(project: Path) -> None:
    connections = 0

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    try:
        blocked = await run(make_ctx(project), command)
        assert blocked.metadata["exit_code"] != 0
        assert "connected" not in blocked.content.split("--- stderr")[0]
        assert "sandbox.network" in blocked.content
        assert connections == 0
        for sandbox in ({"network": True}, {"mode": "off"}):
            allowed = await run(make_ctx(project, sandbox), command)
            assert allowed.metadata["exit_code"] == 0, allowed.content
            assert "connected" in allowed.content
            assert "sandbox.network" not in allowed.content
        assert connections == 2
    finally:
        server.close()
        await server.wait_closed()


# ---------------------------------------------------------------------------
# cancellation


@needs_bwrap
async def test_cancel_kills_the_sandboxed_process_tree(project: Path) -> None:
    ctx = make_ctx(project)
    pids = project / "pids"
    mark = sleep_marker()
    command = (
        f"(trap '' TERM; sleep {mark}) & a=$!; sleep {mark} & b=$!; "
        f"echo $$ $a $b > {pids}.part && mv {pids}.part {pids}; wait"
    )
    task = asyncio.ensure_future(run(ctx, command))
    for _ in range(500):
        if pids.exists() and len(pids_with(mark)) >= 3:
            break
        await asyncio.sleep(0.01)
    assert pids.exists(), "the sandboxed command did not start"
    # The shell and both sleeps, found by the marker on their command lines.
    started = pids_with(mark)
    assert len(started) >= 3 and all(is_running(pid) for pid in started)
    ctx.cancel.cancel("test")
    result = await asyncio.wait_for(task, timeout=10)
    assert result.metadata["outcome"] == "cancelled"
    assert result.metadata["sandboxed"] is True
    assert not [pid for pid in started if is_running(pid)]
    assert live_members(result.metadata["pgid"]) == []


@needs_bwrap
@pytest.mark.parametrize("pidfds", [True, False], ids=["pidfd", "polling"])
async def test_the_wait_for_a_sandbox_to_end_sees_its_end(
    monkeypatch: pytest.MonkeyPatch, pidfds: bool
) -> None:
    from smith_tui.tools.local_runner import _ended
    from smith_tui.tools.sandbox import NamespaceInit

    if not pidfds:
        monkeypatch.setattr(NamespaceInit, "open_pidfd", lambda self: None)
    assert PROBE.path is not None
    info_r, info_w = os.pipe()
    line = [PROBE.path, "--unshare-pid", "--die-with-parent", "--ro-bind", "/", "/"]
    outer = await asyncio.create_subprocess_exec(
        *line,
        *("--info-fd", str(info_w), "sleep", sleep_marker()),
        pass_fds=(info_w,),
        stdin=asyncio.subprocess.DEVNULL,
    )
    os.close(info_w)
    try:
        with os.fdopen(info_r, "rb") as report:
            init = NamespaceInit.from_info(await asyncio.to_thread(report.read))
        assert init is not None and init.alive()
        if pidfds:
            fd = init.open_pidfd()
            assert fd is not None, "this kernel has no pidfds"
            os.close(fd)
        assert not await _ended(init, 0.05)  # still running: the wait runs out
        outer.kill()  # bwrap's death SIGKILLs the sandbox's pid 1
        assert await _ended(init, 5.0)
        assert not init.alive()
    finally:
        with contextlib.suppress(ProcessLookupError):
            outer.kill()
        await outer.wait()


# ---------------------------------------------------------------------------
# without bubblewrap


async def test_auto_without_bwrap_runs_unsandboxed(
    project: Path, outside: Path, no_bwrap_path: Path
) -> None:
    result = await run(make_ctx(project), f"echo out > {outside}/x.txt")
    assert result.metadata["exit_code"] == 0, result.content
    assert result.metadata["sandboxed"] is False
    assert (outside / "x.txt").read_text() == "out\n"


async def test_on_without_bwrap_is_a_clear_error(project: Path, no_bwrap_path: Path) -> None:
    with pytest.raises(ToolError) as caught:
        await run(make_ctx(project, {"mode": "on"}), "echo ran > ran.txt")
    assert caught.value.code == "sandbox_unavailable"
    message = caught.value.message
    assert "not installed" in message and "apt-get install bubblewrap" in message
    assert "sandbox.mode off" in message
    assert not (project / "ran.txt").exists()


async def test_a_broken_bwrap_is_not_used(project: Path, broken_bwrap_path: Path) -> None:
    result = await run(make_ctx(project), "echo ran > ran.txt")
    assert result.metadata["sandboxed"] is False
    assert (project / "ran.txt").exists()
    with pytest.raises(ToolError) as caught:
        await run(make_ctx(project, {"mode": "on"}), "echo again > again.txt")
    assert "No permissions to create new namespace" in caught.value.message
    assert not (project / "again.txt").exists()


async def test_the_runtime_says_once_that_commands_run_unsandboxed(
    tmp_path: Path, no_bwrap_path: Path
) -> None:
    runtime, recorder = open_runtime(tmp_path, "http://127.0.0.1:9/v1")
    try:
        runtime.start_session()
        runtime.set_config("sandbox.network", "true")  # a change: the state is sent again
        runtime.set_config("sandbox.network", "false")
        statuses = recorder.of(ev.SandboxStatus)
        assert [s.label for s in statuses] == ["unsandboxed"] * 3
        assert not any(s.active for s in statuses)
        notices = [s.notice for s in statuses if s.notice]
        assert len(notices) == 1
        assert "not installed" in notices[0] and "run unsandboxed" in notices[0]
        assert "sandbox.mode off" in notices[0]
        runtime.set_config("sandbox.mode", "on")  # now commands fail: that is said once too
        last = recorder.of(ev.SandboxStatus)[-1]
        assert last.label == "sandbox unavailable" and "will fail" in last.notice
        runtime.set_config("sandbox.mode", "off")
        assert recorder.of(ev.SandboxStatus)[-1].label == "sandbox off"
        assert not recorder.of(ev.SandboxStatus)[-1].notice
    finally:
        await runtime.aclose()


@needs_bwrap
async def test_the_runtime_reports_an_active_sandbox_without_a_notice(tmp_path: Path) -> None:
    runtime, recorder = open_runtime(tmp_path, "http://127.0.0.1:9/v1")
    try:
        runtime.start_session()
        (status,) = recorder.of(ev.SandboxStatus)
        assert status.active and status.label == "sandboxed" and status.notice == ""
    finally:
        await runtime.aclose()


def test_output_without_a_sign_of_the_sandbox_gets_no_note() -> None:
    settings = SandboxConfig()
    assert failure_note("make: *** [all] Error 2", settings) == ""
    assert "sandbox.network" in failure_note("curl: (6) Could not resolve host: x", settings)
    networked = typed_config({"sandbox": {"network": True}}).sandbox
    assert failure_note("Could not resolve host", networked) == ""


def test_a_bad_sandbox_table_is_a_clear_load_error(tmp_path: Path) -> None:
    # Checked once, when the config is loaded (bash reads the typed result, never the table).
    assert "sandbox.mode" in load_error(tmp_path, {"sandbox": {"mode": "sometimes"}})


@pytest.fixture
def old_bwrap_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``PATH`` whose bwrap is too old for a flag the sandbox uses."""
    bin_dir = tmp_path / "bin-old-bwrap"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then echo "bubblewrap 0.1.8"; exit 0; fi\n'
        "echo 'bwrap: Unknown option --cap-drop' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    (bin_dir / "bash").symlink_to(shutil.which("bash") or "/bin/bash")
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


async def test_a_too_old_bwrap_is_reported_like_a_missing_one(
    project: Path, old_bwrap_path: Path
) -> None:
    probe = probe_bwrap()
    assert not probe.ok
    assert "bubblewrap 0.1.8" in probe.reason and "--cap-drop" in probe.reason
    assert "install bubblewrap 0.3.1 or newer" in probe.reason
    assert probe_bwrap() is probe  # probed once per binary
    result = await run(make_ctx(project), "echo ran > ran.txt")
    assert result.metadata["sandboxed"] is False
    with pytest.raises(ToolError) as caught:
        await run(make_ctx(project, {"mode": "on"}), "echo again > again.txt")
    assert "0.1.8" in caught.value.message and "apt-get install bubblewrap" in caught.value.message


def test_git_paths_finds_nested_folders_and_files_without_following_links(tmp_path: Path) -> None:
    from smith_tui.tools.sandbox import git_paths

    root = tmp_path / "p"
    (root / ".git" / "modules" / "inner" / ".git").mkdir(parents=True)  # never entered
    (root / "vendor" / "lib" / ".git").mkdir(parents=True)
    (root / "mods" / "m").mkdir(parents=True)
    (root / "mods" / "m" / ".git").write_text("gitdir: ../../.git/modules/m\n")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".git").mkdir(parents=True)
    (root / "link").symlink_to(elsewhere)  # not followed
    (root / "vendor" / ".git-not").mkdir()
    assert git_paths(root) == [
        str(root / ".git"),
        str(root / "mods" / "m" / ".git"),
        str(root / "vendor" / "lib" / ".git"),
    ]


# ---------------------------------------------------------------------------
# the cache of the .git walk


@pytest.fixture
def settled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every folder's listing may be cached at once, as if its ctime were long settled:
    the cache then relies on the ctime alone, the case a stale listing would slip through.
    Skips where the temp folder's filesystem is not one the cache is used on."""
    from smith_tui.tools import sandbox

    if tmp_path.stat().st_dev not in sandbox._cacheable_devices():
        pytest.skip(f"{tmp_path} is not on one of {sorted(sandbox.CACHED_FILESYSTEMS)}")
    monkeypatch.setattr(sandbox, "SETTLED_NS", -(10**15))


def after_a_tick(folder: Path, scratch: Path) -> None:
    """Wait until a change to ``folder`` would give it a later ctime than it has now (the
    filesystem's clock moves in ticks), touching a file in ``scratch`` to read the clock."""
    ctime = folder.stat().st_ctime_ns
    probe = scratch / f"tick-{uuid.uuid4().hex}"
    deadline = time.monotonic() + 5
    try:
        while True:
            probe.touch()
            if probe.stat().st_ctime_ns > ctime:
                return
            assert time.monotonic() < deadline, "the filesystem's clock did not move"
    finally:
        probe.unlink(missing_ok=True)


def cached_folders(root: Path) -> set[str]:
    """The folders of ``root`` whose listing the walk's cache holds (reused next walk)."""
    from smith_tui.tools import sandbox

    return set(sandbox._LISTINGS.get(str(root), (0, {}))[1])


def walk_tree(tmp_path: Path) -> Path:
    root = tmp_path / "walked"
    for folder in ("a/b/c", "a/d", "e"):
        (root / folder).mkdir(parents=True)
    (root / ".git").mkdir()
    return root


@pytest.mark.usefixtures("settled")
def test_the_git_walk_cache_sees_every_change_to_an_unchanged_looking_tree(tmp_path: Path) -> None:
    from smith_tui.tools.sandbox import git_paths

    root = walk_tree(tmp_path)
    assert git_paths(root) == [str(root / ".git")]
    assert str(root / "a" / "b" / "c") in cached_folders(root)
    # A .git made deep in a cached folder.
    after_a_tick(root / "a" / "b" / "c", tmp_path)
    (root / "a" / "b" / "c" / ".git").mkdir()
    assert git_paths(root) == [str(root / ".git"), str(root / "a/b/c/.git")]
    # A submodule's .git file, and a new folder holding a repository.
    after_a_tick(root / "e", tmp_path)
    (root / "e" / ".git").write_text("gitdir: ../.git/modules/e\n")
    (root / "e" / "new" / ".git").mkdir(parents=True)
    assert git_paths(root) == [
        str(root / ".git"),
        str(root / "a/b/c/.git"),
        str(root / "e/.git"),
        str(root / "e/new/.git"),
    ]
    # Folders swapped by renames: the one at a path now is another inode.
    after_a_tick(root / "a", tmp_path)
    (root / "a" / "d" / "r" / ".git").mkdir(parents=True)
    os.rename(root / "a" / "b", root / "a" / "x")
    os.rename(root / "a" / "d", root / "a" / "b")
    os.rename(root / "a" / "x", root / "a" / "d")
    assert git_paths(root) == [
        str(root / ".git"),
        str(root / "a/b/r/.git"),
        str(root / "a/d/c/.git"),
        str(root / "e/.git"),
        str(root / "e/new/.git"),
    ]
    # A cached folder replaced by a link to a repository elsewhere: not followed.
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".git").mkdir(parents=True)
    after_a_tick(root, tmp_path)
    shutil.rmtree(root / "e")
    (root / "e").symlink_to(elsewhere)
    assert git_paths(root) == [
        str(root / ".git"),
        str(root / "a/b/r/.git"),
        str(root / "a/d/c/.git"),
    ]


def test_a_folder_changed_in_the_last_seconds_is_listed_again(tmp_path: Path) -> None:
    from smith_tui.tools.sandbox import git_paths

    root = walk_tree(tmp_path)  # every folder made just now
    assert git_paths(root) == [str(root / ".git")]
    assert cached_folders(root) == set()
    # Even a change in the same tick of the filesystem's clock is seen.
    (root / "a" / "b" / "c" / ".git").mkdir()
    assert git_paths(root) == [str(root / ".git"), str(root / "a/b/c/.git")]


@pytest.mark.usefixtures("settled")
def test_folders_on_filesystems_not_known_to_track_changes_are_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from smith_tui.tools import sandbox

    root = walk_tree(tmp_path)
    device = root.stat().st_dev
    sandbox.git_paths(root)
    assert str(root / "a") in cached_folders(root)
    # The same folders on a filesystem outside the list (a network or FUSE one).
    monkeypatch.setattr(sandbox, "CACHED_FILESYSTEMS", frozenset({"nfs"}))
    assert device not in sandbox._cacheable_devices()
    sandbox.git_paths(root)
    assert cached_folders(root) == set()


@pytest.mark.usefixtures("settled")
def test_nothing_cached_is_reused_once_the_clock_was_set_back(tmp_path: Path) -> None:
    from smith_tui.tools import sandbox

    root = walk_tree(tmp_path)
    sandbox.git_paths(root)
    walked, listings = sandbox._LISTINGS[str(root)]
    sandbox.git_paths(root)
    assert sandbox._LISTINGS[str(root)][1][str(root / "a")] is listings[str(root / "a")]
    # As if the last walk had been an hour later than the clock says now.
    sandbox._LISTINGS[str(root)] = (walked + 3600 * 10**9, listings)
    sandbox.git_paths(root)
    relisted = sandbox._LISTINGS[str(root)][1]
    assert set(relisted) == set(listings)
    assert all(relisted[folder] is not listings[folder] for folder in listings)
