"""Plan mode in the app: a scripted planning turn, the plan screen, and what each decision
sends to the model next (read from the requests the scripted server received)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from smith_tui.app.screens.plan_screen import RUN_MODES, PlanDecision, PlanScreen
from smith_tui.engine.plans import PLANNED_IN_KEY
from smith_tui.tools.builtin.plan import parse_plan
from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    screen_text,
    submit,
    wait_for_text,
    wait_until,
)
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.pilot import wait_for_still_screen
from tests.support.screen_host import ScreenHost

PLAN = {
    "title": "Rename the greeting",
    "steps": ["Change hello to hi in greet.py", "Run the tests"],
    "files": ["greet.py"],
    "risks": ["callers that match the old text"],
}
SECRET = "research-output-5520"


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: Any) -> Any:
    config = {"permissions": {"mode": "plan"}, "sandbox": {"mode": "off"}}
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config) as opened:
        (opened.options.cwd / "greet.py").write_text("print('hello')\n")
        (opened.options.cwd / "notes.txt").write_text(SECRET + "\n")
        yield opened


def _planning(server: ScriptedLLMServer) -> None:
    server.enqueue(
        text_reply(tool_calls=[tool_call("read", {"path": "notes.txt"})]),
        text_reply(tool_calls=[tool_call("write", {"path": "greet.py", "content": "x"})]),
        text_reply(tool_calls=[tool_call("present_plan", PLAN)]),
    )


def _sent(server: ScriptedLLMServer, index: int) -> str:
    return json.dumps(server.wait_for_chats(index + 1)[index]["messages"])


async def _plan_shown(pilot: Any) -> None:
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, PlanScreen), what="the plan")
    await pilot.pause()


async def test_planning_turn_shows_the_plan_and_runs_it_in_a_fresh_context(
    runtime: Any, llm_server: ScriptedLLMServer
) -> None:
    _planning(llm_server)
    llm_server.enqueue(text_reply("renamed"))
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "rename the greeting")
        await _plan_shown(pilot)
        text = screen_text(app)
        assert "Rename the greeting" in text and "Change hello to hi in greet.py" in text
        assert "callers that match the old text" in text and "mode: auto-edit" in text
        planning = runtime.conversation_id
        assert (runtime.options.cwd / "greet.py").read_text() == "print('hello')\n"
        await pilot.press("enter")
        await wait_for_text(pilot, "renamed")
        await wait_until(pilot, lambda: not runtime.busy, what="the run to end")
        # the dispatch tree shows the run under the turn that planned it
        tree = app.main_screen.query_one("#dispatch")
        planning_turn = next(t for t in tree.turns.values() if t.planned_in is None)
        run_turn = next(t for t in tree.turns.values() if t.planned_in is not None)
        assert run_turn.planned_in == planning_turn.turn_id
        assert list(planning_turn.node.children) == [run_turn.node]
        assert "plan: Rename the greeting" in str(planning_turn.node.label)
        assert "runs the plan Rename the greeting" in str(run_turn.node.label)
    sent = _sent(llm_server, 3)
    assert "Change hello to hi in greet.py" in sent and "print('hello')" in sent
    assert SECRET not in sent and "rename the greeting" not in sent
    assert SECRET in _sent(llm_server, 1)  # the research was there while planning
    assert runtime.permission_mode == "auto-edit" and runtime.conversation_id != planning
    conv = runtime.store.conversations.get(runtime.conversation_id)
    assert conv.metadata[PLANNED_IN_KEY] == {
        "conversation_id": planning,
        "turn_id": planning_turn.turn_id,
    }
    assert conv.title == "Plan: Rename the greeting"  # what /history lists


async def test_rejection_feedback_goes_back_to_the_model(
    runtime: Any, llm_server: ScriptedLLMServer
) -> None:
    _planning(llm_server)
    llm_server.enqueue(text_reply("I will revise it"))
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "rename the greeting")
        await _plan_shown(pilot)
        await pilot.press("r", *"keep an alias-9031", "enter")
        await wait_for_text(pilot, "I will revise it")
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
    sent = _sent(llm_server, 3)
    assert "keep an alias-9031" in sent and SECRET in sent  # same conversation, still planning
    assert runtime.permission_mode == "plan"


def _editor(tmp_path: Path, body: str) -> str:
    """An $EDITOR: a script that rewrites the file it is given (python, no shell)."""
    script = tmp_path / "editor.py"
    script.write_text(f"import sys, pathlib\npath = pathlib.Path(sys.argv[1])\n{body}\n")
    return f"{sys.executable} {script}"


async def test_an_edit_in_the_editor_is_the_plan_that_runs(
    runtime: Any, llm_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv(
        "EDITOR",
        _editor(
            tmp_path,
            "path.write_text(path.read_text().replace('Run the tests', 'Run the whole suite'))",
        ),
    )
    _planning(llm_server)
    llm_server.enqueue(text_reply("done"))
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "rename the greeting")
        await _plan_shown(pilot)
        await pilot.press("e")
        await wait_for_text(pilot, "Run the whole suite")
        await pilot.press("a")  # approve, here
        await wait_for_text(pilot, "done")
        await wait_until(pilot, lambda: not runtime.busy, what="the run to end")
    sent = _sent(llm_server, 3)
    assert "Run the whole suite" in sent and "approved the plan" in sent
    assert runtime.todo[-1]["content"] == "Run the whole suite"


async def test_an_edit_that_is_not_a_plan_says_why_and_keeps_the_text(
    runtime: Any, llm_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", _editor(tmp_path, "path.write_text('## Steps\\n1. only\\n')"))
    _planning(llm_server)
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "rename the greeting")
        await _plan_shown(pilot)
        screen = app.screen
        await pilot.press("e")
        await wait_for_text(pilot, "The edited plan was not taken")
        assert "no title" in screen_text(app)
        assert isinstance(screen, PlanScreen) and screen.draft == "## Steps\n1. only\n"
        assert screen.plan.title == "Rename the greeting"  # the plan shown is unchanged
        await pilot.press("escape")
    assert len(llm_server.chat_requests()) == 3  # closing runs nothing


async def test_writing_tools_are_refused_while_planning(
    runtime: Any, llm_server: ScriptedLLMServer
) -> None:
    _planning(llm_server)
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "rename the greeting")
        await _plan_shown(pilot)
    assert "write is refused: plan mode allows only reading tools" in _sent(llm_server, 2)
    assert (runtime.options.cwd / "greet.py").read_text() == "print('hello')\n"


async def test_the_mode_key_cycles_into_plan_mode(
    tmp_path: Path, monkeypatch: Any, llm_server: ScriptedLLMServer
) -> None:
    from smith_tui.app.bindings import key_for

    config = {"permissions": {"mode": "yolo"}}
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config) as rt:
        app = make_app(rt)
        async with running(app) as pilot:
            await pilot.press(key_for(app.keymap, "permission_mode"))
            await wait_until(pilot, lambda: rt.permission_mode == "plan", what="plan mode")
            await wait_for_text(pilot, "Permission mode: plan")


async def test_the_screen_answers_with_the_mode_picked() -> None:
    plan = parse_plan(json.dumps(PLAN))
    app = ScreenHost(lambda: PlanScreen(plan))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("m", "f")
        await wait_until(pilot, lambda: app.results, what="the decision")
    assert app.results == [PlanDecision("fresh", plan, RUN_MODES[1])]
    assert RUN_MODES[0] == "auto-edit" and "plan" not in RUN_MODES


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
def test_plan_screen_snapshot(snap_compare: Any, size: tuple[int, int]) -> None:
    plan = parse_plan(
        json.dumps(
            {
                **PLAN,
                "steps": [
                    *PLAN["steps"],
                    "Update the README's example so it greets with hi, and say why in the "
                    "changelog entry of the next release",
                ],
                "files": ["greet.py", "README.md", "CHANGELOG.md"],
            }
        )
    )
    app = ScreenHost(lambda: PlanScreen(plan))

    async def shown(pilot: Any) -> None:
        await wait_until(pilot, lambda: isinstance(app.screen, PlanScreen), what="the plan")
        await wait_for_still_screen(pilot)

    assert snap_compare(app, terminal_size=size, run_before=shown)
