"""read / edit / write against hostile paths: FIFOs, devices, sockets, symlinks, huge files, .git.

Every tool call runs against real special files in a temp project. A call that
must not hang gets a generous timeout, so a regression fails instead of stalling
the suite.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import socket
import stat
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import Cancelled, CancelToken
from smith_tui.tools.builtin import edit, read, write
from smith_tui.tools.builtin.code.symbols import read_source
from smith_tui.tools.files import open_regular_file, read_capped
from smith_tui.tools.spec import ToolContext, ToolError
from tests.support.tools import load_error, typed_config

HANG_GUARD_S = 30.0
"""Far longer than any of these calls takes; only a hang reaches it."""

HANDLERS = {"read": read.TOOL.run, "edit": edit.TOOL.run, "write": write.TOOL.run}


def make_ctx(root: Path, *, extra_roots: list[str] | None = None, **tools: Any) -> ToolContext:
    """A context whose cwd and project root are ``root``; ``tools`` are per-tool settings."""
    tool_config: dict[str, Any] = dict(tools)
    if extra_roots is not None:
        tool_config["extra_roots"] = extra_roots
    return ToolContext(
        role="worker",
        turn_id="t1",
        cwd=root,
        cancel=CancelToken.new_root(),
        project_root=root,
        config=typed_config({"services": {"tool": tool_config}}),
    )


async def call(tool: str, ctx: ToolContext, **args: Any) -> Any:
    """Run one tool handler under the hang guard."""
    return await asyncio.wait_for(HANDLERS[tool](args, ctx), HANG_GUARD_S)


async def refusal(tool: str, ctx: ToolContext, **args: Any) -> ToolError:
    """Run a call that must fail and return its ToolError."""
    with pytest.raises(ToolError) as caught:
        await call(tool, ctx, **args)
    return caught.value


def edit_args(path: str, digest: str = "0" * 64) -> dict[str, Any]:
    return {
        "path": path,
        "expected_hash": digest,
        "operation": "replace",
        "start_line": 1,
        "text": "x",
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def fifo(project: Path) -> Path:
    path = project / "pipe.txt"
    os.mkfifo(path)
    return path


@pytest.fixture
def unix_socket(project: Path) -> Iterator[Path]:
    path = project / "s.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    try:
        yield path
    finally:
        server.close()


# ---------------------------------------------------------------------------
# FIFOs, devices, sockets, /dev/stdin


async def test_reading_a_fifo_fails_at_once_instead_of_waiting_for_a_writer(
    project: Path, fifo: Path
) -> None:
    err = await refusal("read", make_ctx(project), path="pipe.txt")
    assert err.code == "not_regular_file"
    assert "is a FIFO (named pipe), not a regular file" in err.message
    assert str(fifo) in err.message


async def test_write_and_edit_never_replace_a_fifo(project: Path, fifo: Path) -> None:
    err = await refusal("write", make_ctx(project), path="pipe.txt", content="data")
    assert err.code == "not_regular_file"
    assert "never replaces a special file" in err.message
    err = await refusal("edit", make_ctx(project), **edit_args("pipe.txt"))
    assert err.code == "not_regular_file"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert os.listdir(project) == ["pipe.txt"]  # no temp file left either


async def test_a_socket_is_refused_by_read_write_and_edit(project: Path, unix_socket: Path) -> None:
    ctx = make_ctx(project)
    err = await refusal("read", ctx, path="s.sock")
    assert (err.code, "is a socket" in err.message) == ("not_regular_file", True)
    err = await refusal("write", ctx, path="s.sock", content="x")
    assert (err.code, "is a socket" in err.message) == ("not_regular_file", True)
    err = await refusal("edit", ctx, **edit_args("s.sock"))
    assert err.code == "not_regular_file"
    assert stat.S_ISSOCK(os.lstat(unix_socket).st_mode)


async def test_devices_outside_the_project_are_refused_by_the_path_policy(project: Path) -> None:
    for tool, args in (
        ("read", {"path": "/dev/zero"}),
        ("write", {"path": "/dev/null", "content": "x"}),
        ("edit", edit_args("/dev/null")),
    ):
        err = await refusal(tool, make_ctx(project), **args)
        assert err.code == "outside_project", tool
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


async def test_a_device_inside_an_allowed_root_is_refused_by_read(project: Path) -> None:
    # /dev allowed as an extra root: only the file-type check stands between
    # read and an endless device.
    ctx = make_ctx(project, extra_roots=["/dev"])
    err = await refusal("read", ctx, path="/dev/zero")
    assert err.code == "not_regular_file"
    assert "/dev/zero is a character device" in err.message


@pytest.fixture
def null_device(project: Path) -> Path:
    """A character device inside the project (same numbers as /dev/null); needs mknod rights.

    A private node, so a regression that replaces it cannot break the system's /dev/null.
    """
    path = project / "null"
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    return path


async def test_write_and_edit_never_replace_a_device(project: Path, null_device: Path) -> None:
    before = os.lstat(null_device)
    ctx = make_ctx(project)
    err = await refusal("write", ctx, path="null", content="replaced")
    assert err.code == "not_regular_file"
    assert "is a character device, not a regular file; write never replaces" in err.message
    err = await refusal("edit", ctx, **edit_args("null"))
    assert err.code == "not_regular_file"
    err = await refusal("read", ctx, path="null")
    assert err.code == "not_regular_file"
    after = os.lstat(null_device)
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert os.listdir(project) == ["null"]


async def test_dev_stdin_is_refused_at_once(project: Path) -> None:
    err = await refusal("read", make_ctx(project), path="/dev/stdin")
    assert err.code == "outside_project"
    assert "/dev/stdin (it resolves to " in err.message


def test_dev_stdin_on_an_open_pipe_is_refused_even_with_every_folder_allowed(
    tmp_path: Path,
) -> None:
    # A child whose stdin is a pipe nobody writes to or closes: opening and
    # reading /dev/stdin there would block forever.
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from smith_tui.cancel import CancelToken\n"
        "from smith_tui.tools.builtin.read import TOOL\n"
        "from smith_tui.config import check_config\n"
        "from smith_tui.tools.spec import ToolContext, ToolError\n"
        "root = Path(sys.argv[1])\n"
        "config = check_config({'services': {'tool': {'extra_roots': ['/']}}})\n"
        "ctx = ToolContext(role='worker', turn_id='t', cwd=root, cancel=CancelToken.new_root(),\n"
        "    project_root=root, config=config)\n"
        "try:\n"
        "    asyncio.run(TOOL.run({'path': '/dev/stdin'}, ctx))\n"
        "except ToolError as exc:\n"
        "    print(exc.code, exc.message)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        out, _ = child.communicate(timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        pytest.fail("reading /dev/stdin hung")
    finally:
        if child.stdin is not None and not child.stdin.closed:
            child.stdin.close()
    assert out.startswith("not_regular_file /dev/stdin is a FIFO (named pipe)"), out


# ---------------------------------------------------------------------------
# symlinks and the path policy


async def test_symlink_out_of_the_project_is_refused(project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("token=abc\n")
    (project / "link.txt").symlink_to(secret)
    ctx = make_ctx(project)
    err = await refusal("read", ctx, path="link.txt")
    assert err.code == "outside_project"
    assert f"(it resolves to {secret})" in err.message
    assert f"outside the project root {project}" in err.message
    assert "services.tool.extra_roots" in err.message
    assert "token" not in err.message
    err = await refusal("write", ctx, path="link.txt", content="overwritten")
    assert err.code == "outside_project"
    digest = hashlib.sha256(b"token=abc\n").hexdigest()
    err = await refusal("edit", ctx, **edit_args("link.txt", digest))
    assert err.code == "outside_project"
    assert secret.read_text() == "token=abc\n"


async def test_symlinked_folder_out_of_the_project_is_refused_for_new_files(
    project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (project / "out").symlink_to(outside)
    err = await refusal("write", make_ctx(project), path="out/new.txt", content="x")
    assert err.code == "outside_project"
    assert list(outside.iterdir()) == []


async def test_symlink_inside_the_project_is_followed(project: Path) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "real.md").write_text("hello\n")
    (project / "alias.md").symlink_to(project / "docs" / "real.md")
    ctx = make_ctx(project)
    out = await call("read", ctx, path="alias.md")
    assert "     1\thello" in out.content
    assert out.metadata["path"] == str(project / "alias.md")
    await call("write", ctx, path="alias.md", content="bye\n")
    assert (project / "alias.md").is_symlink()
    assert (project / "docs" / "real.md").read_text() == "bye\n"


async def test_relative_path_climbing_out_of_the_project_is_refused(project: Path) -> None:
    err = await refusal("write", make_ctx(project), path="../escaped.txt", content="x")
    assert err.code == "outside_project"
    assert "'../escaped.txt' relative to the working directory" in err.message
    assert not (project.parent / "escaped.txt").exists()


async def test_extra_roots_allow_a_folder_outside_the_project(
    project: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes.txt").write_text("one\n")
    target = str(shared / "notes.txt")
    err = await refusal("read", make_ctx(project), path=target)
    assert err.code == "outside_project"
    assert f'"extra_roots": ["{shared}"]' in err.message

    ctx = make_ctx(project, extra_roots=[str(shared)])
    out = await call("read", ctx, path=target)
    assert "     1\tone" in out.content
    out = await call("edit", ctx, **{**edit_args(target, out.metadata["sha256"]), "text": "two"})
    assert (shared / "notes.txt").read_text() == "two\n"
    await call("write", ctx, path=str(shared / "sub" / "new.txt"), content="three\n")
    assert (shared / "sub" / "new.txt").read_text() == "three\n"
    # A sibling of the extra root stays outside.
    err = await refusal("write", ctx, path=str(tmp_path / "other.txt"), content="x")
    assert err.code == "outside_project"
    assert f"the extra roots {shared}" in err.message


async def test_extra_roots_from_a_home_relative_path(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "lib").mkdir(parents=True)
    (home / "lib" / "a.txt").write_text("a\n")
    ctx = make_ctx(project, extra_roots=["~/lib"])
    old = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        out = await call("read", ctx, path="~/lib/a.txt")
    finally:
        if old is None:
            del os.environ["HOME"]
        else:
            os.environ["HOME"] = old
    assert "     1\ta" in out.content


@pytest.mark.parametrize("bad", ["relative/dir", 3, "/ok,not-a-list"])
def test_malformed_extra_roots_are_a_config_error(tmp_path: Path, bad: Any) -> None:
    # Refused when the config file is loaded: read, edit and write get checked folders.
    roots: Any = bad if bad == "/ok,not-a-list" else [bad]
    message = load_error(tmp_path, {"services": {"tool": {"extra_roots": roots}}})
    assert "services.tool.extra_roots" in message


# ---------------------------------------------------------------------------
# .git


@pytest.fixture
def git_project(project: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


@pytest.mark.parametrize("path", [".git/config", ".GIT/config", ".git/hooks/pre-commit"])
async def test_writing_into_dot_git_is_refused(git_project: Path, path: str) -> None:
    project = git_project
    config = project / ".git" / "config"
    before = config.read_bytes()
    err = await refusal("write", make_ctx(project), path=path, content="[core]\n")
    assert err.code == "git_internal"
    assert "inside a .git folder" in err.message
    assert config.read_bytes() == before
    assert not (project / ".git" / "hooks" / "pre-commit").exists()


async def test_editing_git_config_is_refused_even_through_a_symlink(git_project: Path) -> None:
    project = git_project
    config = project / ".git" / "config"
    before = config.read_bytes()
    (project / "cfg").symlink_to(config)
    ctx = make_ctx(project)
    digest = hashlib.sha256(before).hexdigest()
    for path in (".git/config", "cfg"):
        err = await refusal("edit", ctx, **edit_args(path, digest))
        assert err.code == "git_internal", path
        err = await refusal("write", ctx, path=path, content="x")
        assert err.code == "git_internal", path
    assert config.read_bytes() == before
    # Reading git's files stays allowed (the git tool reads them too).
    out = await call("read", ctx, path=".git/config")
    assert "[core]" in out.content


async def test_a_file_merely_named_like_git_is_writable(project: Path) -> None:
    await call("write", make_ctx(project), path=".gitignore", content="*.pyc\n")
    await call("write", make_ctx(project), path="docs/.github/x.md", content="x\n")
    assert (project / ".gitignore").read_text() == "*.pyc\n"


# ---------------------------------------------------------------------------
# huge files, bounded reads, cancel


def head(path: Path, count: int) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(count)


@pytest.fixture
def huge_sparse(project: Path) -> Path:
    """A 2 GiB file: 10,000 text lines, then a sparse hole (no disk used)."""
    path = project / "huge.log"
    with open(path, "wb") as handle:
        handle.write(b"".join(f"line {n}\n".encode() for n in range(1, 10_001)))
        handle.truncate(2 * 1024**3)
    return path


async def test_huge_sparse_file_reads_a_window_from_its_first_megabytes(
    project: Path, huge_sparse: Path
) -> None:
    tracemalloc.start()
    try:
        out = await call("read", make_ctx(project), path="huge.log", offset=9_999, limit=5)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024**2  # the cap is 8 MiB; the whole file would be 2 GiB
    assert "2,147,483,648 bytes, only the first 8,388,608 read (10000 whole lines)" in out.content
    assert "no sha256" in out.content
    assert "  9999\tline 9999\n" in out.content
    assert "\tline 10000" in out.content
    assert "[file cut: it is 2,147,483,648 bytes and read loads at most 8,388,608" in out.content
    assert "nothing after line 10000 is shown" in out.content
    assert out.metadata["file_cut"] is True
    assert out.metadata["sha256"] is None
    assert out.metadata["size_bytes"] == 2 * 1024**3


async def test_read_cut_at_the_configured_limit_ends_on_a_whole_line(project: Path) -> None:
    (project / "a.txt").write_text("".join(f"row {n:04d}\n" for n in range(1000)))  # 9 B/line
    ctx = make_ctx(project, read={"max_file_bytes": 100})
    out = await call("read", ctx, path="a.txt")
    assert out.metadata["total_lines"] == 11  # 99 bytes: 11 whole lines of 9 bytes
    assert out.content.rstrip().endswith("edit refuses a file this big.]")
    assert "row 0010" in out.content and "row 0011" not in out.content
    err = await refusal("read", ctx, path="a.txt", offset=50)
    assert "the first 100 bytes read hold 11 lines" in err.message


async def test_edit_refuses_a_file_over_its_limit(project: Path, huge_sparse: Path) -> None:
    err = await refusal("edit", make_ctx(project), **edit_args("huge.log"))
    assert err.code == "file_too_large"
    assert "2,147,483,648 bytes, over the edit limit of 8,388,608 bytes" in err.message
    assert "services.tool.edit.max_file_bytes" in err.message
    assert os.stat(huge_sparse).st_size == 2 * 1024**3
    assert head(huge_sparse, 7) == b"line 1\n"


async def test_edit_limit_is_configurable(project: Path) -> None:
    data = b"a\nb\n"
    (project / "f.txt").write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    err = await refusal(
        "edit", make_ctx(project, edit={"max_file_bytes": 3}), **edit_args("f.txt", digest)
    )
    assert err.code == "file_too_large"
    await call("edit", make_ctx(project, edit={"max_file_bytes": 4}), **edit_args("f.txt", digest))
    assert (project / "f.txt").read_bytes() == b"x\nb\n"


def test_a_cancel_stops_a_read_between_chunks(project: Path) -> None:
    path = project / "big.txt"
    path.write_bytes(b"x" * (5 * 1024 * 1024))
    token = CancelToken.new_root()
    checks = 0

    def check() -> None:
        nonlocal checks
        checks += 1
        if checks == 2:
            token.cancel("user pressed ctrl+c")
        token.check()

    fd = open_regular_file(path)
    try:
        with pytest.raises(Cancelled, match="ctrl\\+c"):
            read_capped(fd, 10 * 1024 * 1024, check)
        assert os.lseek(fd, 0, os.SEEK_CUR) == 1024 * 1024  # one chunk read, then stopped
    finally:
        os.close(fd)


async def test_a_cancelled_call_reads_nothing(project: Path, huge_sparse: Path) -> None:
    ctx = make_ctx(project)
    ctx.cancel.cancel("cancelled by user")
    with pytest.raises((asyncio.CancelledError, Cancelled)):
        await call("read", ctx, path="huge.log")
    data = b"a\n"
    (project / "f.txt").write_bytes(data)
    with pytest.raises(Cancelled):
        await call("edit", ctx, **edit_args("f.txt", hashlib.sha256(data).hexdigest()))
    assert (project / "f.txt").read_bytes() == data


def test_code_tools_never_open_a_fifo(project: Path) -> None:
    os.mkfifo(project / "mod.py")
    assert read_source(project / "mod.py") is None
