"""Plan mode headless: the real ``smith -p`` against the scripted server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.engine.test_headless_cli import smith
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import make_git_repo

PLAN = {
    "title": "Add a greeting file",
    "steps": ["Write hello.txt with a greeting", "Check it reads back"],
    "files": ["hello.txt", "README.md"],
    "risks": [],
}
SECRET = "research-output-8812"


def _planning(server: ScriptedLLMServer) -> None:
    server.enqueue(
        text_reply(tool_calls=[tool_call("read", {"path": "notes.txt"})]),
        text_reply(tool_calls=[tool_call("write", {"path": "hello.txt", "content": "no\n"})]),
        text_reply(tool_calls=[tool_call("present_plan", PLAN)]),
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    made = make_git_repo(tmp_path / "repo")
    (made / "notes.txt").write_text(SECRET + "\n")
    return made


def test_plan_mode_prints_the_plan_and_exits_0(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    _planning(llm_server)
    done = smith(tmp_path, repo, llm_server, "-p", "--permission-mode", "plan", "add a greeting")
    assert done.returncode == 0, done.stderr
    assert "# Add a greeting file" in done.stdout
    assert "1. Write hello.txt with a greeting" in done.stdout and "- hello.txt" in done.stdout
    assert not (repo / "hello.txt").exists()  # the write was refused while planning
    assert "Traceback" not in done.stderr


def test_plan_mode_json_then_the_plan_file_runs_in_a_fresh_context(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    _planning(llm_server)
    done = smith(
        tmp_path,
        repo,
        llm_server,
        "-p",
        "add a greeting",
        "--permission-mode",
        "plan",
        "--output-format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["plan"] == PLAN and summary["permission_mode"] == "plan"
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(done.stdout)
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("write", {"path": "hello.txt", "content": "hi\n"})]),
        text_reply("Written."),
    )
    ran = smith(tmp_path, repo, llm_server, "-p", "--plan-file", str(plan_file))
    assert ran.returncode == 0, ran.stderr
    assert "Written." in ran.stdout
    assert (repo / "hello.txt").read_text() == "hi\n"
    run_request = json.dumps(llm_server.chat_requests()[3]["messages"])
    assert "Write hello.txt with a greeting" in run_request
    assert SECRET not in run_request and "add a greeting" not in run_request


def test_a_markdown_plan_file_runs_too(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text("# Say hi\n\n## Steps\n1. Answer hi\n")
    llm_server.enqueue(text_reply("hi"))
    ran = smith(tmp_path, repo, llm_server, "-p", "--plan-file", str(plan_file))
    assert ran.returncode == 0, ran.stderr
    assert "1. Answer hi" in json.dumps(llm_server.chat_requests()[0]["messages"])


@pytest.mark.parametrize(
    ("content", "args", "says"),
    [
        ("# Title only\n", [], "plan.md: the plan is not valid: steps"),
        ("{broken", [], "not valid JSON"),
        (None, [], "cannot read the plan file"),
        ("# T\n## Steps\n1. a\n", ["--permission-mode", "plan"], "plan mode would refuse"),
        ("# T\n## Steps\n1. a\n", ["--prompt", "also this"], "takes no prompt"),
    ],
)
def test_a_bad_plan_file_is_a_clear_error_with_exit_2(
    tmp_path: Path,
    repo: Path,
    llm_server: ScriptedLLMServer,
    content: str | None,
    args: list[str],
    says: str,
) -> None:
    plan_file = tmp_path / "plan.md"
    if content is not None:
        plan_file.write_text(content)
    prompt = ["-p"] if "--prompt" not in args else []
    ran = smith(tmp_path, repo, llm_server, *prompt, *args, "--plan-file", str(plan_file))
    assert ran.returncode == 2, ran.stderr
    assert says in ran.stderr and "Traceback" not in ran.stderr
    assert llm_server.chat_requests() == []


def test_plan_mode_without_a_plan_exits_1(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply("I would rather just talk."))
    done = smith(tmp_path, repo, llm_server, "-p", "--permission-mode", "plan", "add a greeting")
    assert done.returncode == 1
    assert "I would rather just talk." in done.stdout
    assert "ended without presenting a plan" in done.stderr
