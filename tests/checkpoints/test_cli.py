"""Headless checkpoints through the real ``smith`` binary: ``smith -p``, ``smith undo``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.checkpoints.support import hash_git_dir
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import make_git_repo

SMITH = Path(sys.executable).with_name("smith")


def _smith(tmp_path: Path, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "LLM_", "GIT_"))}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"),
        XDG_DATA_HOME=str(tmp_path / "home" / ".local" / "share"),
    )
    return subprocess.run(
        [str(SMITH), "--db", str(tmp_path / "smith.db"), *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _write_turn(server: ScriptedLLMServer) -> None:
    server.enqueue(
        text_reply(tool_calls=[tool_call("write", {"path": "README.md", "content": "changed\n"})]),
        text_reply("done"),
    )


def test_smith_undo_restores_what_a_headless_turn_changed(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    git_before = hash_git_dir(repo)
    _write_turn(llm_server)
    api = ("--api-url", llm_server.base_url, "--model", "scripted-model")

    turn = _smith(tmp_path, repo, "-p", "change the readme", *api)
    assert turn.returncode == 0, turn.stderr
    assert (repo / "README.md").read_text() == "changed\n"

    undo = _smith(tmp_path, repo, "undo")

    assert undo.returncode == 0, undo.stderr
    assert "restored 1 file" in undo.stdout and "README.md" in undo.stdout
    assert (repo / "README.md").read_text() == "# demo\n"
    assert hash_git_dir(repo) == git_before
    assert "Traceback" not in undo.stderr


def test_no_checkpoint_turns_leave_nothing_to_undo(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    _write_turn(llm_server)
    api = ("--api-url", llm_server.base_url, "--model", "scripted-model")

    turn = _smith(tmp_path, repo, "-p", "change the readme", "--no-checkpoint", *api)
    assert turn.returncode == 0, turn.stderr

    undo = _smith(tmp_path, repo, "undo")
    assert undo.returncode == 0
    assert "nothing to undo" in undo.stdout
    assert (repo / "README.md").read_text() == "changed\n"


def test_smith_undo_refuses_a_prompt(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    result = _smith(tmp_path, repo, "undo", "-p", "x")
    assert result.returncode == 2
    assert "takes no prompt" in result.stderr
