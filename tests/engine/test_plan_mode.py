"""Plan mode in the engine: real runtimes against the scripted Chat-Completions server.

What reaches the model is read from the requests the server received: the tools offered,
the refusals, the plan, the feedback — and what is NOT there after a fresh start.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from smith_tui.config.permission_settings import MODE_TEXT, PERMISSION_MODES
from smith_tui.engine import events as ev
from smith_tui.engine.plans import PLAN_NOTE_ID, PLANNED_IN_KEY
from smith_tui.tools.builtin.plan import PlanError, parse_plan, render_plan
from tests.dispatch.support import dispatch
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import open_runtime

PLAN = {
    "title": "Rename the greeting",
    "steps": ["Change hello to hi in greet.py", "Run the tests"],
    "files": ["greet.py", "docs/new.md"],
    "risks": ["callers that match the old text"],
}
RESEARCH_SECRET = "research-output-7731"


def _texts(request: dict[str, Any]) -> str:
    """Everything the messages of one chat request say, as one string."""
    return json.dumps(request["messages"])


def _tool_names(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools") or []}


def _planning_runtime(tmp_path: Path, server: ScriptedLLMServer) -> Any:
    runtime, rec = open_runtime(
        tmp_path, server.base_url, config={"sandbox": {"mode": "off"}}, ephemeral={}
    )
    (runtime.options.cwd / "greet.py").write_text("print('hello')\n")
    (runtime.options.cwd / "notes.txt").write_text(RESEARCH_SECRET + "\n")
    runtime.set_permission_mode("plan")
    return runtime, rec


def test_the_modes_are_one_list_with_plan() -> None:
    assert "plan" in PERMISSION_MODES
    assert set(MODE_TEXT) == set(PERMISSION_MODES)
    from smith_tui.cli import build_parser
    from smith_tui.tools.permission_policy import MODES

    assert MODES == PERMISSION_MODES
    action = next(a for a in build_parser()._actions if a.dest == "permission_mode")
    assert tuple(action.choices or ()) == PERMISSION_MODES


async def test_mode_command_and_cycle_reach_plan(tmp_path: Path) -> None:
    runtime, rec = open_runtime(tmp_path)
    runtime.start_session()
    assert runtime.permission_mode == "yolo"
    assert runtime.cycle_permission_mode() == "plan"  # yolo → plan → read-only
    assert runtime.cycle_permission_mode() == "read-only"
    out = await runtime.submit("/mode plan")
    assert out.ok and runtime.permission_mode == "plan"
    usage = await runtime.submit("/mode a b")
    assert "read-only|ask|auto-edit|yolo|plan" in usage.text
    assert [e.mode for e in rec.of(ev.PermissionMode)] == ["yolo", "plan", "read-only", "plan"]
    await runtime.aclose()


async def test_planning_turn_refuses_writes_and_presents_a_plan(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, rec = _planning_runtime(tmp_path, llm_server)
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("read", {"path": "greet.py"})]),
        text_reply(tool_calls=[tool_call("write", {"path": "x.txt", "content": "no"})]),
        text_reply(tool_calls=[tool_call("write", {"path": "greet.py", "content": "no"})]),
        text_reply(tool_calls=[dispatch("worker", "change it")]),
        text_reply(tool_calls=[tool_call("present_plan", PLAN)]),
    )
    result = await runtime.run_turn("rename the greeting")
    assert result.stop_reason == "completed"
    requests = llm_server.chat_requests()
    assert len(requests) == 5
    first = requests[0]
    assert "present_plan" in _tool_names(first)
    assert "## Plan mode" in first["messages"][0]["content"]
    assert not (runtime.options.cwd / "x.txt").exists()
    assert (runtime.options.cwd / "greet.py").read_text() == "print('hello')\n"
    refusals = [e.reason for e in rec.of(ev.PermissionDenied)]
    assert len(refusals) == 3 and all("present_plan" in why for why in refusals)
    # the refusal reached the model as the call's result
    assert "plan mode allows only reading tools" in _texts(requests[2])
    presented = rec.of(ev.PlanPresented)
    assert [p.plan for p in presented] == [PLAN]
    assert presented[0].text == render_plan(parse_plan(json.dumps(PLAN)))
    note = runtime.store.notes.get(runtime.conversations.conversation_id, PLAN_NOTE_ID)
    assert note is not None and json.loads(note.content)["plan"] == PLAN
    await runtime.aclose()


async def test_bash_without_the_sandbox_is_refused_while_planning(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _ = _planning_runtime(tmp_path, llm_server)  # sandbox.mode off
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": "touch pwn.txt"})]),
        text_reply(tool_calls=[tool_call("present_plan", PLAN)]),
    )
    await runtime.run_turn("plan")
    assert not (runtime.options.cwd / "pwn.txt").exists()
    assert "sandbox.mode is off" in _texts(llm_server.chat_requests()[1])
    await runtime.aclose()


async def test_present_plan_is_not_offered_outside_plan_mode(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    llm_server.enqueue(text_reply("done"))
    await runtime.run_turn("hi")
    request = llm_server.chat_requests()[0]
    assert "present_plan" not in _tool_names(request)
    assert "## Plan mode" not in request["messages"][0]["content"]
    await runtime.aclose()


async def test_bad_plan_arguments_are_returned_to_the_model(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, rec = _planning_runtime(tmp_path, llm_server)
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("present_plan", {"title": "x", "steps": []})]),
        text_reply(tool_calls=[tool_call("present_plan", PLAN)]),
    )
    await runtime.run_turn("plan")
    second = _texts(llm_server.chat_requests()[1])
    assert "`steps` must list at least one step" in second
    assert [p.plan for p in rec.of(ev.PlanPresented)] == [PLAN]
    await runtime.aclose()


async def test_approve_in_a_fresh_context(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    runtime, rec = _planning_runtime(tmp_path, llm_server)
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("read", {"path": "notes.txt"})]),
        text_reply(tool_calls=[tool_call("present_plan", PLAN)]),
    )
    await runtime.run_turn("rename the greeting")
    planning_conversation = runtime.conversations.conversation_id
    planning_turn = rec.of(ev.PlanPresented)[0].turn_id
    assert RESEARCH_SECRET in _texts(llm_server.chat_requests()[1])
    todo_call = tool_call(
        "todo",
        {
            "items": [
                {"content": PLAN["steps"][0], "status": "done"},
                {"content": PLAN["steps"][1], "status": "pending"},
            ]
        },
    )
    llm_server.enqueue(text_reply(tool_calls=[todo_call]), text_reply("all done"))
    plan = parse_plan(json.dumps(PLAN))
    result = await runtime.plans.approve(plan)  # auto-edit, fresh: the defaults
    assert result.stop_reason == "completed"
    assert runtime.permission_mode == "auto-edit"
    run_request = llm_server.chat_requests()[2]
    sent = _texts(run_request)
    assert "Change hello to hi in greet.py" in sent and "Rename the greeting" in sent
    assert "print('hello')" in sent  # greet.py, a file the plan names, is attached
    assert RESEARCH_SECRET not in sent and "rename the greeting" not in sent
    assert "present_plan" not in _tool_names(run_request)
    assert "## Plan mode" not in run_request["messages"][0]["content"]
    # a new conversation, linked to the planning turn
    assert runtime.conversations.conversation_id != planning_conversation
    conv = runtime.store.conversations.get(runtime.conversations.conversation_id)
    origin = {"conversation_id": planning_conversation, "turn_id": planning_turn}
    assert conv.metadata[PLANNED_IN_KEY] == origin
    assert conv.title == "Plan: Rename the greeting"
    record = runtime.store.notes.get_turn_record(
        runtime.conversations.conversation_id, rec.of(ev.TurnStarted)[-1].turn_id
    )
    assert record[PLANNED_IN_KEY] == origin
    stored = runtime.plans.stored()
    assert stored["status"] == "approved" and stored["plan"] == PLAN
    assert runtime.plans.stored(planning_conversation)["status"] == "approved"
    # the steps were the todo list, checked off as the work went
    first_todo = next(e for e in rec.of(ev.TodoUpdated) if e.items)
    assert [i["content"] for i in first_todo.items] == PLAN["steps"]
    assert {i["status"] for i in first_todo.items} == {"pending"}
    assert [i["status"] for i in runtime.conversations.todo] == ["done", "pending"]
    await runtime.aclose()


async def test_approve_in_the_same_context_keeps_the_history(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _ = _planning_runtime(tmp_path, llm_server)
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("read", {"path": "notes.txt"})]),
        text_reply(tool_calls=[tool_call("present_plan", PLAN)]),
        text_reply("done"),
    )
    await runtime.run_turn("rename the greeting")
    conversation = runtime.conversations.conversation_id
    await runtime.plans.approve(parse_plan(json.dumps(PLAN)), mode="yolo", fresh=False)
    sent = _texts(llm_server.chat_requests()[2])
    assert "approved the plan" in sent and RESEARCH_SECRET in sent
    assert (
        runtime.conversations.conversation_id == conversation and runtime.permission_mode == "yolo"
    )
    await runtime.aclose()


async def test_rejection_feedback_reaches_the_model(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, rec = _planning_runtime(tmp_path, llm_server)
    revised = {**PLAN, "steps": ["Keep hello, add hi as an alias"]}
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("present_plan", PLAN)]),
        text_reply(tool_calls=[tool_call("present_plan", revised)]),
    )
    await runtime.run_turn("rename the greeting")
    await runtime.plans.reject("keep backwards compatibility-4410")
    assert runtime.plans.stored()["status"] == "presented"  # the revised plan, presented again
    second = llm_server.chat_requests()[1]
    assert "keep backwards compatibility-4410" in _texts(second)
    assert "present_plan" in _tool_names(second) and runtime.permission_mode == "plan"
    assert [p.plan for p in rec.of(ev.PlanPresented)] == [PLAN, revised]
    await runtime.aclose()


async def test_a_plan_does_not_run_in_plan_mode(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    from smith_tui.engine.errors import UserRequestError

    runtime, _ = _planning_runtime(tmp_path, llm_server)
    with pytest.raises(UserRequestError, match="choose read-only, ask, auto-edit or yolo"):
        await runtime.plans.approve(parse_plan(json.dumps(PLAN)), mode="plan")
    assert llm_server.chat_requests() == []
    await runtime.aclose()


def test_plan_markdown_round_trips_and_bad_text_says_what_to_fix() -> None:
    plan = parse_plan(json.dumps(PLAN))
    assert parse_plan(render_plan(plan)) == plan
    assert parse_plan(json.dumps({"plan": PLAN, "result": ""})) == plan
    edited = render_plan(plan).replace("Run the tests", "Run the tests\n3. Update the docs")
    assert parse_plan(edited).steps[-1] == "Update the docs"
    for text, says in [
        ("", "empty"),
        ("## Steps\n1. a\n", "no title"),
        ("# T\n## Steps\n", "steps"),
        ("# T\n## Wishes\n- a\n", "unknown section"),
        ("# T\nloose text\n", "outside a section"),
        ("{not json", "not valid JSON"),
        ('{"title": "t", "steps": ["a"], "extra": 1}', "extra"),
    ]:
        with pytest.raises(PlanError, match=says):
            parse_plan(text)
