"""read / write / edit and checkpoint restore against a process swapping a folder and a symlink.

A real Python process exchanges ``proj/d`` (a folder) and ``proj/x`` (a symlink to a folder
outside the project) with ``renameat2(RENAME_EXCHANGE)`` as fast as it can, so ``d`` is at
every moment either the folder or the symlink. The real tool handlers are called 1,000
times each on ``d/...``: none may return the outside file's content or change anything
outside. Each runs with the ``openat2`` fast path and with the component walk forced.
The controls run the old logic (``realpath``, check, then open by name) in the same race
and show it does leave the project.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.tools import beneath
from smith_tui.tools.builtin import edit, read, write
from smith_tui.tools.checkpoints.shadow_repo import CheckpointError, Checkpoints
from smith_tui.tools.spec import ToolContext, ToolError

SECTION = "files"
CALLS = 1000
RESTORES = 40
CONTROL_DEADLINE_S = 20.0
SECRET = b"SECRET outside the project\n"
INSIDE = b"inside\n"

SWAPPER = r"""
import ctypes, errno, os, signal, sys
a, b, ready, outside = (os.fsencode(arg) for arg in sys.argv[1:5])
libc = ctypes.CDLL(None, use_errno=True)
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
swaps = 0
open(ready, "w").close()
while not stop:
    if libc.renameat2(-100, a, -100, b, 2) == 0:  # AT_FDCWD, RENAME_EXCHANGE
        swaps += 1
        continue
    code = ctypes.get_errno()
    if code != errno.ENOENT:
        sys.exit(f"renameat2: {os.strerror(code)}")
    for name in (a, b):  # a restore removed one of them: bring the symlink back
        try:
            os.symlink(outside, name)
        except FileExistsError:
            pass
print(swaps)
"""


@dataclass
class Race:
    """The project, the outside folder and the running swapper."""

    root: Path
    outside: Path
    proc: subprocess.Popen[str]

    def stop(self) -> int:
        """Stop the swapper; return how many swaps it made."""
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=30)
        assert self.proc.returncode == 0, err
        return int(out)


def outside_state(outside: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every entry of the outside folder: content, inode and mtime."""
    state = {}
    for entry in sorted(os.listdir(outside)):
        info = os.lstat(outside / entry)
        state[entry] = ((outside / entry).read_bytes(), info.st_ino, info.st_mtime_ns)
    return state


def build(tmp_path: Path, link: str, *, outside_content: bytes = SECRET) -> tuple[Path, Path]:
    """``proj/d/file.txt`` inside, ``outside/file.txt`` outside, ``proj/x`` -> outside."""
    root = (tmp_path / "proj").resolve()
    outside = (tmp_path / "outside").resolve()
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    (root / "d" / "file.txt").write_bytes(INSIDE)
    (outside / "file.txt").write_bytes(outside_content)
    target = str(outside) if link == "absolute" else "../outside"
    (root / "x").symlink_to(target)
    return root, outside


def start_swapper(root: Path, outside: Path) -> subprocess.Popen[str]:
    """Start the swapper of ``d`` and ``x`` and wait until it runs."""
    return start_swapper_of(root / "d", root / "x", outside, root.parent)


def start_swapper_of(a: Path, b: Path, outside: Path, scratch: Path) -> subprocess.Popen[str]:
    """Start a swapper exchanging ``a`` and ``b`` (re-making a lost one as a symlink to
    ``outside``) and wait until it runs; its ready mark goes into ``scratch``."""
    ready = scratch / f"swapper-ready-{a.name}"
    proc = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(a), str(b), str(ready), str(outside)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not ready.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the swapper did not start"
        time.sleep(0.01)
    return proc


@pytest.fixture(params=["openat2", "walk"])
def resolver(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Resolution by ``openat2`` (counted, so the test sees it is used) or the forced walk."""
    if request.param == "walk":
        monkeypatch.setattr(beneath.OPENAT2, "enabled", False)
        yield "walk"
        return
    if not beneath.OPENAT2.enabled:
        pytest.skip("this kernel or machine has no openat2")
    calls = 0
    real = beneath.OPENAT2.open_dir

    def counted(dir_fd: int, rel: str) -> int:
        nonlocal calls
        calls += 1
        return real(dir_fd, rel)

    monkeypatch.setattr(beneath.OPENAT2, "open_dir", counted)
    yield "openat2"
    assert calls > 0, "the openat2 fast path was never used"
    assert beneath.OPENAT2.enabled


@pytest.fixture(params=["absolute", "relative"])
def link(request: pytest.FixtureRequest) -> str:
    """The symlink's target: the outside folder's absolute path, or ``../outside``."""
    return str(request.param)


@pytest.fixture
def race(tmp_path: Path, link: str) -> Iterator[Race]:
    root, outside = build(tmp_path, link)
    proc = start_swapper(root, outside)
    try:
        yield Race(root, outside, proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def make_ctx(root: Path) -> ToolContext:
    return ToolContext(
        role="worker",
        turn_id="t1",
        cwd=root,
        cancel=CancelToken.new_root(),
        project_root=root,
    )


async def run_calls(tool: Any, ctx: ToolContext, args: list[dict[str, Any]]) -> tuple[list, list]:
    """Call ``tool`` with each of ``args``; return the outputs and the errors."""
    outputs, errors = [], []
    for one in args:
        try:
            outputs.append(await tool.TOOL.run(one, ctx))
        except ToolError as exc:
            errors.append(exc)
    return outputs, errors


def assert_race_was_live(outputs: list, errors: list[ToolError], swaps: int) -> None:
    """The swapper ran and the calls met both states of ``d``."""
    assert swaps > 100
    assert outputs, "no call ever found the folder"
    assert errors, "no call ever met the symlink: the race did not happen"
    # refused: the path led outside, or it kept changing while realpath read it
    odd = [e for e in errors if e.code != "outside_project" and "kept changing" not in e.message]
    assert not odd, [e.message for e in odd[:3]]


@pytest.mark.attack(SECTION, "read a file outside the project through a swapped folder")
async def test_read_never_returns_a_file_outside(race: Race, resolver: str) -> None:
    before = outside_state(race.outside)
    outputs, errors = await run_calls(read, make_ctx(race.root), [{"path": "d/file.txt"}] * CALLS)
    swaps = race.stop()
    for out in outputs:
        assert b"SECRET" not in out.content.encode()
        assert out.metadata["sha256"] == hashlib.sha256(INSIDE).hexdigest()
    assert all("SECRET" not in err.message for err in errors)
    assert outside_state(race.outside) == before
    assert_race_was_live(outputs, errors, swaps)


@pytest.mark.attack(SECTION, "read or write a file outside by swapping it for a symlink")
async def test_read_never_follows_a_final_symlink_out(
    tmp_path: Path, link: str, resolver: str
) -> None:
    root, outside = build(tmp_path, link)
    sub = root / "sub"
    sub.mkdir()
    (sub / "f.txt").write_bytes(INSIDE)
    (sub / "x").symlink_to(
        str(outside / "file.txt") if link == "absolute" else "../../outside/file.txt"
    )
    before = outside_state(outside)
    proc = start_swapper_of(sub / "f.txt", sub / "x", outside / "file.txt", tmp_path)
    try:
        outputs, errors = await run_calls(read, make_ctx(root), [{"path": "sub/f.txt"}] * CALLS)
        # then writes, which replace the name itself (link or file) and never follow out
        writes = [{"path": "sub/f.txt", "content": "written\n"}] * (CALLS // 5)
        await run_calls(write, make_ctx(root), writes)
    finally:
        swaps = Race(root, outside, proc).stop()
    assert all(b"SECRET" not in out.content.encode() for out in outputs)
    assert all("SECRET" not in err.message for err in errors)
    assert outside_state(outside) == before
    assert_race_was_live(outputs, errors, swaps)


@pytest.mark.attack(
    SECTION, "write (as auto-edit runs it) outside the project via a swapped folder"
)
async def test_write_never_creates_or_replaces_a_file_outside(race: Race, resolver: str) -> None:
    before = outside_state(race.outside)
    args = [
        {"path": "d/file.txt" if n % 2 else "d/new.txt", "content": f"written {n}\n"}
        for n in range(CALLS)
    ]
    outputs, errors = await run_calls(write, make_ctx(race.root), args)
    swaps = race.stop()
    assert outside_state(race.outside) == before
    assert_race_was_live(outputs, errors, swaps)
    real_d = next(p for p in (race.root / "d", race.root / "x") if not p.is_symlink())
    assert sorted(os.listdir(real_d)) == ["file.txt", "new.txt"]  # no temp file left


@pytest.mark.attack(SECTION, "edit a file outside the project through a swapped folder")
async def test_edit_never_replaces_a_file_outside(tmp_path: Path, link: str, resolver: str) -> None:
    # The outside file has the inside file's content and hash, so an edit that
    # reached it would pass the hash check and replace it (a new inode).
    root, outside = build(tmp_path, link, outside_content=INSIDE)
    before = outside_state(outside)
    digest = hashlib.sha256(INSIDE).hexdigest()
    args = {
        "path": "d/file.txt",
        "expected_hash": digest,
        "operation": "replace",
        "start_line": 1,
        "text": "inside",
    }
    proc = start_swapper(root, outside)
    try:
        outputs, errors = await run_calls(edit, make_ctx(root), [args] * CALLS)
    finally:
        swaps = Race(root, outside, proc).stop()
    assert outside_state(outside) == before
    assert all(out.metadata["new_hash"] == digest for out in outputs)
    assert_race_was_live(outputs, errors, swaps)


@pytest.mark.attack(SECTION, "make a checkpoint restore delete or write outside the project")
def test_checkpoint_restore_never_deletes_or_writes_outside(
    tmp_path: Path, resolver: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    root, outside = build(tmp_path, "absolute")
    (outside / "extra.txt").write_bytes(SECRET)
    (outside / "new.txt").write_bytes(SECRET)
    # an ignored file keeps the real folder from ever being empty (and pruned)
    (root / ".gitignore").write_text("*.log\n")
    (root / "d" / "keep.log").write_text("ignored\n")
    cps = Checkpoints.for_project(tmp_path / "data", root)
    (root / "d" / "new.txt").write_bytes(b"new\n")
    item = cps.record_turn()  # d/file.txt "inside", d/new.txt "new", x -> outside
    real_d = os.open(root / "d", os.O_PATH | os.O_DIRECTORY)
    os.unlink("new.txt", dir_fd=real_d)
    before = outside_state(outside)
    proc = start_swapper(root, outside)
    restored = failed = n = 0
    reasons: set[str] = set()
    try:
        while n < RESTORES or (not restored and n < 10 * RESTORES):
            n += 1
            # the turn's changes, made in the real folder wherever it is now
            for name, data in (("file.txt", b"changed\n"), ("extra.txt", b"extra\n")):
                fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=real_d)
                os.write(fd, data + str(n).encode())
                os.close(fd)
            try:
                cps.restore(item)
                restored += 1
            except CheckpointError as exc:
                failed += 1
                reasons.add(exc.message)
    finally:
        os.close(real_d)
        swaps = Race(root, outside, proc).stop()
    assert outside_state(outside) == before
    assert swaps > 100
    assert restored > 0, reasons
    assert failed > 0, "no restore ever met the symlink: the race did not happen"
    assert not any(name.endswith(".tmp") for name in os.listdir(outside))


# ---------------------------------------------------------------------------
# controls: the old logic in the same race


def naive_read(root: Path, rel: str) -> bytes | None:
    """The old read: realpath, check it is inside, then open by name (O_NOFOLLOW on the
    last component only)."""
    try:
        real = os.path.realpath(root / rel)
    except OSError:  # changed while realpath read it
        return None
    if not real.startswith(str(root) + os.sep):
        return None
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def naive_write(root: Path, rel: str, data: bytes) -> None:
    """The old write: realpath, check, temp file in the parent by name, replace."""
    try:
        real = Path(os.path.realpath(root / rel))
    except OSError:  # changed while realpath read it
        return
    if str(root) not in map(str, real.parents):
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    except OSError:
        return
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    try:
        os.replace(tmp, real)
    except OSError:
        pass  # the temp file stays wherever the swap put it


@pytest.mark.control(SECTION, "realpath-check-then-open reads the outside file in the same race")
def test_control_naive_read_escapes(race: Race) -> None:
    deadline = time.monotonic() + CONTROL_DEADLINE_S
    tries = 0
    while time.monotonic() < deadline:
        tries += 1
        if naive_read(race.root, "d/file.txt") == SECRET:
            break
    else:
        pytest.fail(f"the naive read never escaped in {tries} tries")
    race.stop()


@pytest.mark.control(SECTION, "realpath-check-then-write creates a file outside in the same race")
def test_control_naive_write_escapes(race: Race) -> None:
    before = set(os.listdir(race.outside))
    deadline = time.monotonic() + CONTROL_DEADLINE_S
    tries = 0
    while time.monotonic() < deadline:
        tries += 1
        naive_write(race.root, "d/new.txt", b"escaped\n")
        if set(os.listdir(race.outside)) != before:
            break
    else:
        pytest.fail(f"the naive write never escaped in {tries} tries")
    race.stop()
