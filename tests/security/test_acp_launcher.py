"""The launcher an editor's terminal runs for a sandboxed command (smith_tui/acp/
terminal_launcher.py): it runs the sandbox command line smith handed over for exactly that
command, and nothing when the command or the hand-over is not smith's."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from smith_tui.acp import terminal_launcher as launcher


def _run(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, env=env, cwd=cwd, capture_output=True, text=True, timeout=30, check=False
    )


def _terminal(argv: list[str]) -> tuple[list[str], dict[str, str]]:
    """What the editor is asked to run for ``argv`` (a stand-in for bwrap's line)."""
    command, args, env = launcher.terminal_command(argv, {"PATH": os.environ["PATH"]})
    return [command, *args], env


def _sandbox_line(command: str) -> list[str]:
    # The launcher checks the line's last words, not that it is bwrap: /bin/sh stands in
    # for bwrap so the file the command makes shows whether it ran.
    return ["/bin/sh", "-c", command]


def test_the_terminal_is_titled_with_the_users_command(tmp_path: Path) -> None:
    argv = ["/usr/bin/bwrap", "--die-with-parent", "--unshare-all", "bash", "-c", "echo hi"]
    command, args, env = launcher.terminal_command(argv, {"PATH": "/usr/bin"})
    assert (command, args) == ("smith-sandbox", ["-c", "echo hi"])
    assert json.loads(env[launcher.ARGV_VARIABLE]) == argv
    assert env["PATH"].startswith(f"{launcher.folder()}{os.pathsep}")
    # Not sandboxed: run as it is.
    assert launcher.terminal_command(["/bin/bash", "-c", "ls"], {}) == (
        "/bin/bash",
        ["-c", "ls"],
        {},
    )


def test_the_launcher_runs_the_handed_over_line(tmp_path: Path) -> None:
    _, env = _terminal(["/usr/bin/bwrap", "-c", "unused"])
    env[launcher.ARGV_VARIABLE] = json.dumps(_sandbox_line("touch ran"))
    done = _run(["smith-sandbox", "-c", "touch ran"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ran").exists()


@pytest.mark.attack("sandbox", "an editor terminal runs the launcher with another command")
def test_a_command_the_hand_over_does_not_name_runs_nothing(tmp_path: Path) -> None:
    _, env = _terminal(["/usr/bin/bwrap", "bash", "-c", "echo safe"])
    done = _run(["smith-sandbox", "-c", "touch evil"], env, tmp_path)
    assert done.returncode == 126 and "nothing was run" in done.stderr
    assert not (tmp_path / "evil").exists()


@pytest.mark.attack("sandbox", "the launcher started without smith's hand-over")
def test_no_hand_over_runs_nothing(tmp_path: Path) -> None:
    _, env = _terminal(["/usr/bin/bwrap", "bash", "-c", "touch evil"])
    env.pop(launcher.ARGV_VARIABLE)
    done = _run(["smith-sandbox", "-c", "touch evil"], env, tmp_path)
    assert done.returncode == 126
    assert not (tmp_path / "evil").exists()


@pytest.mark.control("sandbox", "the same command outside the launcher runs")
def test_control_the_command_itself_runs(tmp_path: Path) -> None:
    done = _run(["bash", "-c", "touch evil"], dict(os.environ), tmp_path)
    assert done.returncode == 0
    assert (tmp_path / "evil").exists()
