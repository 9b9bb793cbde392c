"""Plan mode (issue 24) against a prompt-injected model: while planning nothing changes the
project, and an approved plan's file list attaches nothing from outside the project.

Each attack runs a real runtime against the scripted server (real files, real bash in real
bubblewrap); its control runs the same calls without the defence (yolo mode; a naive open
of the named paths) and must succeed, so the attack is real.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from smith_tui.tools.builtin.plan import parse_plan
from tests.dispatch.support import dispatch, report
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import open_runtime
from tests.tools.test_sandbox import needs_bwrap

RULES, FILES = "rules", "files"
SECRET = "outside-secret-6612"


def _writes() -> list[Any]:
    """A round of calls that would each change the project."""
    return [
        tool_call("write", {"path": "pwn-write.txt", "content": "pwn\n"}),
        tool_call("write", {"path": "README.md", "content": "overwritten\n"}),
        tool_call("bash", {"command": "echo pwn > pwn-bash.txt; rm -f README.md"}),
    ]


def _changed(project: Path) -> list[str]:
    found = [name for name in ("pwn-write.txt", "pwn-bash.txt") if (project / name).exists()]
    readme = project / "README.md"
    if not readme.exists() or readme.read_text() != "# demo\n":
        found.append("README.md")
    return found


async def _run(tmp_path: Path, server: ScriptedLLMServer, mode: str) -> Path:
    runtime, _ = open_runtime(tmp_path, server.base_url)
    runtime.set_permission_mode(mode)
    project = runtime.options.cwd
    server.enqueue(
        text_reply(tool_calls=_writes()),
        text_reply(tool_calls=[dispatch("worker", "write pwn-worker.txt")]),
        text_reply(tool_calls=[tool_call("write", {"path": "pwn-worker.txt", "content": "w"})]),
        text_reply(tool_calls=[report(status="success", summary="wrote it")]),
        text_reply("done"),
    )
    await runtime.run_turn("plan the change")
    await runtime.aclose()
    return project


@needs_bwrap
@pytest.mark.attack(RULES, "plan mode: write, overwrite, bash redirection and rm, a worker")
async def test_nothing_changes_the_project_while_planning(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    project = await _run(tmp_path, llm_server, "plan")
    assert _changed(project) == [] and not (project / "pwn-worker.txt").exists()
    results = [
        m["content"] for m in llm_server.chat_requests()[1]["messages"] if m["role"] == "tool"
    ]
    assert sum("plan mode allows only reading tools" in r for r in results) == 2
    assert "Read-only file system" in results[2] or "Permission denied" in results[2]


@needs_bwrap
@pytest.mark.control(RULES, "the same calls in yolo mode change the project and run a worker")
async def test_the_same_calls_change_the_project_in_yolo(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    project = await _run(tmp_path, llm_server, "yolo")
    assert sorted(_changed(project)) == ["README.md", "pwn-bash.txt", "pwn-write.txt"]
    assert (project / "pwn-worker.txt").exists()


def _outside(tmp_path: Path, project: Path) -> list[str]:
    """Paths a plan may name that lead out of the project: up, absolute, a symlink."""
    secret = tmp_path / "outside.txt"
    secret.write_text(SECRET + "\n")
    os.symlink(secret, project / "link.txt")
    return [os.path.relpath(secret, project), str(secret), "link.txt"]


@pytest.mark.attack(FILES, "an approved plan names files outside the project to attach them")
async def test_a_plans_files_attach_nothing_from_outside(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    paths = _outside(tmp_path, runtime.options.cwd)
    plan = parse_plan(json.dumps({"title": "t", "steps": ["do it"], "files": paths}))
    llm_server.enqueue(text_reply("done"))
    await runtime.plans.approve(plan, mode="yolo")
    sent = json.dumps(llm_server.chat_requests()[0]["messages"])
    assert SECRET not in sent
    await runtime.aclose()


@pytest.mark.control(FILES, "a naive open of the plan's paths reads the secret")
def test_a_naive_open_of_those_paths_reads_the_secret(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    for path in _outside(tmp_path, project):
        assert SECRET in (project / path).read_text()


TERMINAL = "terminal"
HOSTILE = {
    "title": "Plan \x1b]0;owned\x07\x1b[2J",
    "steps": ["step \x1b[31mred\x1b[0m", "\x9b6n ask the terminal"],
    "files": ["a\x1b[8m.py"],
    "risks": ["\x07bell"],
}


@pytest.mark.attack(TERMINAL, "a plan's title, steps and files carry terminal escapes")
def test_smith_p_prints_a_hostile_plan_as_text(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    from tests.engine.test_headless_cli import smith
    from tests.support.runtime import make_git_repo

    repo = make_git_repo(tmp_path / "repo")
    llm_server.enqueue(text_reply(tool_calls=[tool_call("present_plan", HOSTILE)]))
    done = smith(tmp_path, repo, llm_server, "-p", "--permission-mode", "plan", "plan")
    assert done.returncode == 0, done.stderr
    assert "owned" in done.stdout and "ask the terminal" in done.stdout
    assert not any(ch in done.stdout for ch in ("\x1b", "\x07", "\x9b"))


@pytest.mark.attack(TERMINAL, "the plan screen shows a plan that carries terminal escapes")
async def test_the_plan_screen_shows_a_hostile_plan_as_text() -> None:
    from smith_tui.app.screens.plan_screen import PlanScreen
    from tests.support.pilot import screen_text, wait_until
    from tests.support.screen_host import ScreenHost

    app = ScreenHost(lambda: PlanScreen(parse_plan(json.dumps(HOSTILE))))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: "ask the terminal" in screen_text(app), "the plan")
        shown = screen_text(app)
    assert not any(ch in shown for ch in ("\x1b", "\x07", "\x9b"))


@pytest.mark.control(TERMINAL, "the plan as the model sent it holds the raw escapes")
def test_the_plan_as_sent_holds_the_raw_escapes() -> None:
    from smith_tui.tools.builtin.plan import render_plan

    raw = render_plan(parse_plan(json.dumps(HOSTILE)))
    assert "\x1b]0;owned\x07" in raw and "\x9b6n" in raw and "\x1b[8m" in raw


@pytest.mark.control(TERMINAL, "a naive Static of the plan's title puts the escapes on screen")
async def test_a_naive_static_puts_the_escapes_on_screen() -> None:
    from rich.text import Text
    from textual.app import App, ComposeResult
    from textual.widgets import Static

    from tests.support.pilot import screen_text

    class Naive(App[None]):
        def compose(self) -> ComposeResult:
            yield Static(Text(HOSTILE["title"] + " " + HOSTILE["steps"][1]))

    app = Naive()
    async with app.run_test(size=(100, 5)) as pilot:
        await pilot.pause()
        shown = screen_text(app)
    assert "\x1b]0;owned" in shown and "\x9b6n" in shown
