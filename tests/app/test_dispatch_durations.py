"""A dispatch's duration leaves out the time its sub-agent's permission question waited for
the user: on the transcript row, in the tools pane, in the dispatch tree and in the store
(issue 22). Real app, runtime, store and bash, the scripted server, Pilot."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from smith_tui.app.screens.permission_screen import PermissionScreen
from smith_tui.widgets.activity import ToolActivity
from smith_tui.widgets.dispatch_tree import DispatchTree
from smith_tui.widgets.transcript.tool_call import ToolCallEntry
from tests.app.app_harness import isolated_runtime, make_app, running, submit, wait_until
from tests.dispatch.support import dispatch, report
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call

WAITED_S = 1.5
"""How long the user takes to answer the sub-agent's question."""


async def test_a_dispatch_duration_leaves_out_its_sub_agents_permission_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    config = {"permissions": {"mode": "ask"}, "sandbox": {"mode": "off"}}
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "say hi")]),
        text_reply(tool_calls=[tool_call("bash", {"command": "echo child-hi"})]),
        text_reply(tool_calls=[report(status="success", summary="said hi")]),
        text_reply("done"),
    )
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config) as runtime:
        runtime.set_active_role("orchestrator")
        app = make_app(runtime)
        async with running(app, size=(160, 45)) as pilot:
            await submit(pilot, "delegate")
            asked_bash = False
            while not asked_bash:
                await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
                screen = app.screen
                assert isinstance(screen, PermissionScreen)
                if screen.request.tool == "bash":
                    assert screen.request.job_id is not None  # the sub-agent asks
                    asked_bash = True
                    asked = time.monotonic()
                    await wait_until(
                        pilot, lambda a=asked: time.monotonic() - a >= WAITED_S, "the user", 5
                    )
                if screen.request.tool == "bash":
                    waited = time.monotonic() - asked  # the user's delay, to the key press
                await pilot.press("y")
                await wait_until(pilot, lambda s=screen: app.screen is not s, "the answer")
            await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
            [job] = app.main_screen.query_one(DispatchTree).jobs.values()
            # The control: by the wall clock the job took longer than the wait.
            assert job.finished is not None and job.finished - job.started >= waited
            # Each duration is the wall time less the wait (half of it, as the call starts a
            # moment before its job), on a loaded machine too:
            # the job's own work may take seconds there, so no fixed bound is used.
            bound = (job.finished - job.started) - 0.5 * waited
            [row] = [r for r in app.main_screen.query(ToolCallEntry) if r.entry.name == "dispatch"]
            assert row.entry.duration_s is not None and row.entry.duration_s < bound
            records = app.main_screen.query_one(ToolActivity).calls
            [record] = [r for r in records if r.name == "dispatch"]
            assert record.duration_s is not None and record.duration_s < bound
            assert job.duration_s is not None and job.duration_s < bound
        [stored] = [m for m in runtime.conversations.messages if m.get("name") == "dispatch"]
        assert stored["metadata"]["duration_s"] < bound


async def test_the_tree_takes_each_dispatch_calls_duration_by_its_maker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Call ids repeat across conversations (a sub-agent's first call is ``call_1`` too):
    a dispatch call's duration goes to the job that call started, not to a namesake."""
    from smith_tui.engine import events as ev

    with isolated_runtime(tmp_path, monkeypatch) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            tree = app.main_screen.query_one(DispatchTree)
            turn = "t1"
            runtime.emit(ev.TurnStarted(turn_id=turn, conversation_id="c", prompt="go"))
            for job, parent in (("job-a", None), ("job-b", "job-a")):
                runtime.emit(
                    ev.DispatchStarted(
                        turn_id=turn,
                        target_role="worker",
                        task=f"task of {job}",
                        parent_job_id=parent,
                        call_id="call_1",
                        job_id=job,
                    )
                )
            await wait_until(pilot, lambda: len(tree.jobs) == 2, what="both jobs")
            for maker, took in (("job-a", 0.5), (None, 0.25)):  # job-a's call, then Tank's
                runtime.emit(
                    ev.ToolCallFinished(
                        turn_id=turn,
                        call_id="call_1",
                        name="dispatch",
                        ok=True,
                        duration_s=took,
                        summary="",
                        job_id=maker,
                    )
                )
                await pilot.pause()
            await wait_until(pilot, lambda: tree.jobs["job-a"].duration_s == 0.25, "job-a")
            assert tree.jobs["job-b"].duration_s == 0.5
