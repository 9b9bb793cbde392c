"""Permission modes in `smith -p`, as a real subprocess against the scripted server."""

from __future__ import annotations

import json
from pathlib import Path

from smith_tui.cli import EXIT_DENIED
from tests.engine.test_headless_cli import smith
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import make_git_repo


def _script(server: ScriptedLLMServer) -> None:
    server.enqueue(
        text_reply(
            tool_calls=[
                tool_call("bash", {"command": "echo ran > ran.txt"}),
                tool_call("write", {"path": "w.txt", "content": "w\n"}),
            ]
        ),
        text_reply("Done."),
    )


def test_headless_default_runs_everything_as_before(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    _script(llm_server)
    done = smith(tmp_path, repo, llm_server, "-p", "go")
    assert done.returncode == 0, done.stderr
    assert (repo / "ran.txt").exists() and (repo / "w.txt").exists()


def test_ask_mode_headless_denies_what_would_ask_and_says_how_to_allow_it(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    _script(llm_server)
    done = smith(tmp_path, repo, llm_server, "-p", "go", "--permission-mode", "ask")
    assert done.returncode == EXIT_DENIED
    assert not (repo / "ran.txt").exists() and not (repo / "w.txt").exists()
    assert "Done." in done.stdout
    assert "smith: 2 tool calls were denied" in done.stderr
    assert "bash(echo ran > ran.txt) to permissions.allow" in done.stderr
    assert "--permission-mode auto-edit" in done.stderr
    tool_results = [m for m in llm_server.chat_requests()[1]["messages"] if m["role"] == "tool"]
    assert all("nobody can be asked" in m["content"] for m in tool_results)


def test_auto_edit_headless_json_lists_the_denied_call(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    _script(llm_server)
    done = smith(
        tmp_path,
        repo,
        llm_server,
        "-p",
        "go",
        "--permission-mode",
        "auto-edit",
        "--output-format",
        "json",
    )
    assert done.returncode == EXIT_DENIED
    summary = json.loads(done.stdout)
    assert summary["stop_reason"] == "completed"
    assert summary["permission_mode"] == "auto-edit"
    assert [(d["tool"], d["subject"]) for d in summary["denied"]] == [
        ("bash", "echo ran > ran.txt")
    ]
    assert (repo / "w.txt").read_text() == "w\n" and not (repo / "ran.txt").exists()
