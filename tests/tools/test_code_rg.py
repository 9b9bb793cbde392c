"""Locating rg, listing files with it, and the cancellable process runner."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from smith_tui.cancel import Cancelled, CancelToken
from smith_tui.tools.builtin.code.rg import find_rg, list_files
from smith_tui.tools.process import run_capture
from smith_tui.tools.spec import ToolError


def test_rg_is_found_beside_the_interpreter() -> None:
    assert find_rg() == str(Path(sys.executable).parent / "rg")


def test_rg_falls_back_to_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = Path(sys.executable).parent / "rg"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "rg").symlink_to(real)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "nowhere" / "python"))
    monkeypatch.setenv("PATH", str(bin_dir))
    assert find_rg() == str(bin_dir / "rg")


def test_missing_rg_is_a_clear_tool_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolError, match=r"ripgrep \(rg\) is not installed") as caught:
        find_rg()
    assert caught.value.code == "rg_missing"


async def test_list_files_honours_gitignore_hidden_and_git(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    for rel in ["src/a.py", "build/out.py", "debug.log", ".hidden/x.py", ".git/config", "b.txt"]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    files = await list_files(tmp_path, ".", CancelToken.new_root())
    assert sorted(files) == ["b.txt", "src/a.py"]


async def test_cancel_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = f"sleep 30 & echo $! > {pid_file}; wait"
    token = CancelToken.new_root()

    async def cancel_soon() -> None:
        for _ in range(500):
            if pid_file.exists() and pid_file.read_text().strip():
                break
            await asyncio.sleep(0.02)
        token.cancel("user pressed ctrl+c")

    started = time.monotonic()
    canceller = asyncio.create_task(cancel_soon())
    with pytest.raises(Cancelled, match="ctrl"):
        await run_capture(["sh", "-c", script], cwd=tmp_path, cancel=token)
    await canceller
    assert time.monotonic() - started < 10
    grandchild = int(pid_file.read_text())
    for _ in range(100):
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.02)
    else:
        pytest.fail("the grandchild 'sleep' survived cancellation")


async def test_time_limit_stops_the_child_with_a_tool_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"stopped after 0\.3 s") as caught:
        await run_capture(
            ["sleep", "30"], cwd=tmp_path, cancel=CancelToken.new_root(), time_limit=0.3
        )
    assert caught.value.code == "timeout"


async def test_output_cap_truncates(tmp_path: Path) -> None:
    result = await run_capture(
        ["sh", "-c", "yes hello | head -c 100000"],
        cwd=tmp_path,
        cancel=CancelToken.new_root(),
        max_bytes=1000,
    )
    assert result.truncated
    assert len(result.stdout) == 1000


async def test_missing_program_is_a_tool_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="could not start"):
        await run_capture([str(tmp_path / "nope")], cwd=tmp_path, cancel=CancelToken.new_root())


async def test_already_cancelled_token_never_starts(tmp_path: Path) -> None:
    token = CancelToken.new_root()
    token.cancel("early")
    marker = tmp_path / "ran"
    with pytest.raises(Cancelled):
        await run_capture(["touch", str(marker)], cwd=tmp_path, cancel=token)
    assert not marker.exists()
