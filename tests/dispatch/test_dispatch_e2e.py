"""Dispatch end to end: a real runtime, a real SQLite file, the scripted server over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

from smith_tui.engine import events as ev
from tests.dispatch.support import (
    CONTEXT,
    PARENT_USAGE,
    USAGE,
    assert_transcript_valid,
    child_bodies,
    child_conversation,
    child_requests,
    dispatch,
    first_user,
    parent_bodies,
    report,
    results,
    stored,
    task_of,
    tool_messages,
)
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import open_runtime

WORKER_REPORT = {
    "status": "ok",
    "summary": "README now documents pytest",
    "changes": ["README.md: added a Testing section"],
    "verification": ["pytest -q: 12 passed"],
}
EXPLORER_REPORT = {
    "status": "ok",
    "summary": "tests run with pytest",
    "findings": "pytest is configured in pyproject.toml",
    "evidence": ["pyproject.toml:40"],
}


async def test_orchestrator_dispatches_a_worker_and_an_explorer_in_parallel(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    worker_call = dispatch("worker", "Add a Testing section to README.md", files=["README.md"])
    explorer_call = dispatch("explorer", "Find how the tests are run")
    # Either child may reach the server first; both reports are valid for either role.
    llm_server.enqueue(
        text_reply(tool_calls=[worker_call, explorer_call], usage=PARENT_USAGE),
        text_reply(tool_calls=[report(**WORKER_REPORT)], usage=USAGE, delay_s=0.6),
        text_reply(tool_calls=[report(**EXPLORER_REPORT)], usage=USAGE, delay_s=0.6),
        text_reply("Both sub-agents are done.", usage=PARENT_USAGE),
    )
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"active_role": "orchestrator"}
    )
    result = await runtime.run_turn("Document how to run the tests")
    assert result.stop_reason == "completed"
    assert result.text == "Both sub-agents are done."

    # Both children were in flight at the same time.
    first, second = (r.received_at for r in child_requests(llm_server))
    assert abs(second - first) < 0.45  # one after the other would take >= 0.6 s

    # The parent got one result per call, in call order, each the child's normalised report.
    tools = tool_messages(runtime)
    assert [m.tool_call_id for m in tools] == [worker_call.id, explorer_call.id]
    got = results(runtime)
    assert [r["role"] for r in got] == ["worker", "explorer"]
    assert {r["summary"] for r in got} == {WORKER_REPORT["summary"], EXPLORER_REPORT["summary"]}
    assert all(r["status"] == "ok" for r in got)
    assert set(got[0]) >= {"changes", "verification"}
    assert set(got[1]) >= {"findings", "evidence"}
    for res in got:
        child = child_conversation(rec, res["job_id"])
        reported = next(
            json.loads(m.tool_calls[0]["function"]["arguments"])
            for m in stored(runtime, child)
            if m.role == "assistant" and m.tool_calls
        )
        assert res["summary"] == reported["summary"]
    last_parent = parent_bodies(llm_server)[-1]["messages"]
    assert [json.loads(m["content"])["role"] for m in last_parent if m["role"] == "tool"] == [
        "worker",
        "explorer",
    ]

    # Isolated child contexts: own conversations linked to the parent, own session ids,
    # only the task and context (never the parent's transcript), child tools only.
    for res in got:
        job_id = res["job_id"]
        conv = runtime.store.conversations.get(child_conversation(rec, job_id))
        assert conv is not None and conv.parent_id == runtime.conversations.conversation_id
        assert conv.metadata["session"] == f"session-child-{job_id}"
        assert conv.metadata["job_id"] == job_id
    for body in child_bodies(llm_server):
        assert body["model"] == "scripted-model"
        text = json.dumps(body["messages"])
        assert "Document how to run the tests" not in text
        assert CONTEXT["user_request_summary"] in first_user(body)
        names = {t["function"]["name"] for t in body["tools"]}
        assert "report" in names and "dispatch" not in names and "record" not in names
    worker_body = next(b for b in child_bodies(llm_server) if "README.md" in task_of(b))
    assert "# Files to start from\n- README.md" in first_user(worker_body)

    # Usage is attributed to the child roles, in memory and in the store.
    child_usage = {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120}
    assert runtime.usage.by_role["worker"] == child_usage
    assert runtime.usage.by_role["explorer"] == child_usage
    assert runtime.usage.by_role["orchestrator"] == {
        "input_tokens": 14,
        "output_tokens": 2,
        "total_tokens": 16,
    }
    for res in got:
        assert res["usage"] == child_usage
        # Child usage is recorded under the parent's conversation and turn, keyed by job id.
        rows = [
            r
            for r in runtime.store.usage.list_for_conversation(
                runtime.conversations.conversation_id
            )
            if r.job_id == res["job_id"]
        ]
        assert [(r.role, r.job_id, r.input_tokens, r.output_tokens) for r in rows] == [
            (res["role"], res["job_id"], 100, 20)
        ]
        assert rows[0].turn_id != f"{res['job_id']}-t1"
        totals = runtime.store.usage.totals_by_role(runtime.conversations.conversation_id)
        assert totals[res["role"]].input_tokens == 100
        turn = runtime.store.turns.get(f"{res['job_id']}-t1")
        assert turn is not None and turn.stop_reason == "completed"

    # Auto-persisted: each full result is in the parent's scratchpad, and the stored
    # tool message carries the recall key.
    for message, res in zip(tools, got, strict=True):
        key = f"dispatch/{res['job_id']}"
        assert message.recall_key == key
        note = runtime.store.notes.get(runtime.conversations.conversation_id, f"scratchpad:{key}")
        assert note is not None and note.content == message.content

    # Events: the dispatch tree sees both jobs start and finish, child events carry job ids.
    started = rec.of(ev.DispatchStarted)
    finished = rec.of(ev.DispatchFinished)
    assert [e.target_role for e in started] == ["worker", "explorer"]
    assert {e.job_id for e in finished} == {r["job_id"] for r in got}
    assert all(e.role == "orchestrator" and e.status == "ok" for e in finished)
    assert {e.role for e in rec.of(ev.LLMRequestStarted) if e.job_id} == {"worker", "explorer"}
    assert_transcript_valid(stored(runtime))
    await runtime.aclose()


async def test_role_specific_reports_and_a_rejected_report_retried(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    # max_parallel 1: the worker runs first, then the explorer, so replies are order-safe.
    calls = [dispatch("worker", "edit"), dispatch("explorer", "look", model="other-model")]
    llm_server.enqueue(
        text_reply(tool_calls=calls),
        text_reply(tool_calls=[report(**WORKER_REPORT)]),
        text_reply(tool_calls=[report(status="ok", summary="found", findings=["x"])]),
        text_reply(tool_calls=[report(status="OK", summary="found", findings="x", evidence="a:1")]),
        text_reply("done"),
    )
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"services": {"dispatch": {"max_parallel": 1}}}
    )
    result = await runtime.run_turn("go", role="orchestrator")
    assert result.stop_reason == "completed"
    worker, explorer = results(runtime)
    assert worker == {
        **WORKER_REPORT,
        "job_id": worker["job_id"],
        "role": "worker",
        "usage": worker["usage"],
    }
    assert explorer["status"] == "ok"
    assert explorer["findings"] == ["x"] and explorer["evidence"] == ["a:1"]
    assert "changes" not in explorer

    # The explorer read the rejection as a tool result and called report again.
    explorer_bodies = [b for b in child_bodies(llm_server) if task_of(b) == "look"]
    assert len(explorer_bodies) == 2
    assert {b["model"] for b in explorer_bodies} == {"other-model"}
    rejection = [m for m in explorer_bodies[1]["messages"] if m["role"] == "tool"][-1]
    assert rejection["content"].startswith("error: report rejected:")
    assert "evidence" in rejection["content"]
    # Sequential: the explorer only started after the worker had finished.
    finished_worker = rec.of(ev.DispatchFinished)[0]
    assert finished_worker.target_role == "worker"
    assert rec.events.index(finished_worker) < rec.events.index(rec.of(ev.DispatchStarted)[1])
    await runtime.aclose()


async def test_a_child_that_stops_without_a_report_is_blocked(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "fix the bug")]),
        # The worker tries to delegate (denied), then just stops talking.
        text_reply(tool_calls=[dispatch("explorer", "help me")]),
        text_reply("I fixed it, I think."),
        text_reply("The worker did not report."),
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("fix the bug", role="orchestrator")
    assert result.stop_reason == "completed"
    (res,) = results(runtime)
    assert res["status"] == "blocked"
    assert res["summary"] == (
        "the worker stopped without calling report; its last message: I fixed it, I think."
    )
    denied = [m for m in child_bodies(llm_server)[1]["messages"] if m["role"] == "tool"]
    assert denied[-1]["content"] == "error: tool 'dispatch' is not available to the worker role"
    parent_sees = [m for m in parent_bodies(llm_server)[-1]["messages"] if m["role"] == "tool"]
    assert json.loads(parent_sees[-1]["content"])["status"] == "blocked"
    await runtime.aclose()


async def test_a_looping_child_is_stopped_and_reported_blocked(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    same = {"path": "README.md"}
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("explorer", "read the readme")]),
        text_reply(tool_calls=[tool_call("read", same)]),
        text_reply(tool_calls=[tool_call("read", '{ "path": "README.md" }')]),
        text_reply(tool_calls=[tool_call("read", same)]),
        text_reply("The explorer got stuck."),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("what is in the readme?", role="orchestrator")
    assert result.stop_reason == "completed"
    assert len(child_bodies(llm_server)) == 3
    (res,) = results(runtime)
    assert res["status"] == "blocked"
    assert "stopped for looping" in res["summary"]
    assert "read was called 3 times in a row with the same arguments" in res["summary"]
    assert res["error"].startswith("loop: read was called 3 times")
    child = child_conversation(rec, res["job_id"])
    child_tools = tool_messages(runtime, child)
    assert [m.metadata["ok"] for m in child_tools] == [True, True, False]
    assert "3 times in a row" in (child_tools[-1].content or "")
    assert_transcript_valid(stored(runtime, child))
    await runtime.aclose()


async def test_repeats_inside_one_parallel_batch_count_too(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    same = dispatch("explorer", "do it for me")
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "edit")]),
        text_reply(tool_calls=[same, dispatch("explorer", "do it for me"), same]),
        text_reply("The worker got stuck."),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("go", role="orchestrator")
    assert result.stop_reason == "completed"
    (res,) = results(runtime)
    assert res["status"] == "blocked"
    assert "dispatch was called 3 times in a row" in res["summary"]
    assert len(child_bodies(llm_server)) == 1
    child_tools = tool_messages(runtime, child_conversation(rec, res["job_id"]))
    assert [m.content.split(":")[0] for m in child_tools] == ["error"] * 3
    assert "not available to the worker role" in child_tools[0].content
    assert "3 times in a row" in child_tools[2].content
    await runtime.aclose()


async def test_each_child_has_its_own_step_budget(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "explore a lot")]),
        text_reply(tool_calls=[tool_call("read", {"path": "README.md"})]),
        text_reply(tool_calls=[tool_call("bash", {"command": "echo one"})]),
        text_reply(tool_calls=[tool_call("bash", {"command": "echo two"})]),
        text_reply("The worker ran out of steps."),
    )
    runtime, rec = open_runtime(
        tmp_path,
        llm_server.base_url,
        config={"tool_step_budget": 50, "services": {"dispatch": {"child_step_budget": 2}}},
    )
    result = await runtime.run_turn("go", role="orchestrator")
    assert result.stop_reason == "completed"
    (res,) = results(runtime)
    assert res["status"] == "blocked"
    assert res["summary"] == "the worker used up its tool step budget before calling report"
    assert "budget (2)" in res["error"]
    turn = runtime.store.turns.get(f"{res['job_id']}-t1")
    assert turn is not None and turn.stop_reason == "budget_exhausted"
    assert_transcript_valid(stored(runtime, child_conversation(rec, res["job_id"])))
    await runtime.aclose()


async def test_results_follow_call_order_whatever_order_children_finish(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    calls = [dispatch("explorer", f"task {i}") for i in (1, 2, 3)]
    blocked = {"status": "blocked", "summary": "nothing to find"}
    # The first child to arrive gets the slowest reply, the last one the fastest.
    llm_server.enqueue(
        text_reply(tool_calls=calls),
        text_reply(tool_calls=[report(**blocked)], delay_s=0.8),
        text_reply(tool_calls=[report(**blocked)], delay_s=0.4),
        text_reply(tool_calls=[report(**blocked)]),
        text_reply("done"),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("go", role="orchestrator")
    assert result.stop_reason == "completed"
    task_by_job = {e.job_id: e.task for e in rec.of(ev.DispatchStarted)}
    arrival = [task_of(r.json) for r in child_requests(llm_server)]
    finish = [task_by_job[e.job_id] for e in rec.of(ev.DispatchFinished)]
    assert finish == arrival[::-1]
    assert [task_by_job[r["job_id"]] for r in results(runtime)] == ["task 1", "task 2", "task 3"]
    assert [m.tool_call_id for m in tool_messages(runtime)] == [c.id for c in calls]
    await runtime.aclose()


async def test_parallel_children_are_bounded_by_max_parallel(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    ok = {"status": "ok", "summary": "did it"}
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", f"part {i}") for i in (1, 2, 3)]),
        *[text_reply(tool_calls=[report(**ok)], delay_s=0.6) for _ in range(3)],
        text_reply("done"),
    )
    runtime, _ = open_runtime(
        tmp_path, llm_server.base_url, config={"services": {"dispatch": {"max_parallel": 2}}}
    )
    result = await runtime.run_turn("go", role="orchestrator")
    assert result.stop_reason == "completed"
    times = sorted(r.received_at for r in child_requests(llm_server))
    assert times[1] - times[0] < 0.45  # two at once
    assert times[2] - times[0] >= 0.55  # the third waited for a free slot
    assert [r["status"] for r in results(runtime)] == ["ok", "ok", "ok"]
    await runtime.aclose()
