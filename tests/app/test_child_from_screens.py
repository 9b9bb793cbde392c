"""A sub-agent's transcript opens from the pager (``o`` on a ``dispatch`` call in view) and
from inspect (ctrl+o on the call or its result), live while the child runs, from the store
after, and after a restart, when the dispatch tree knows nothing of it (issue 22).

Real app, real runtime, store and bash, the scripted Chat-Completions server, Pilot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import OptionList

from smith_tui.app.screens.child_transcript import ChildTranscriptScreen
from smith_tui.app.screens.inspect_screen import InspectScreen
from smith_tui.app.screens.pager_screen import PagerScreen
from smith_tui.widgets.dispatch_tree import DispatchTree
from smith_tui.widgets.transcript.tool_call import ToolCallEntry
from tests.app.app_harness import (
    app_runtime,
    isolate_environment,
    make_app,
    running,
    screen_text,
    submit,
    wait_for_text,
    wait_until,
)
from tests.dispatch.support import dispatch, report
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call

CONFIG = {"permissions": {"mode": "yolo"}, "sandbox": {"mode": "off"}}
GATED = "echo child-says-hi; while [ ! -f go ]; do sleep 0.05; done; echo child-done"


def _script(llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "check the gate")]),
        text_reply(
            "Niobe looks at the gate first.", tool_calls=[tool_call("bash", {"command": GATED})]
        ),
        text_reply(tool_calls=[report(status="success", summary="gate checked")]),
        text_reply("the worker is done"),
    )


async def _child_open(pilot: Any, app: Any) -> ChildTranscriptScreen:
    await wait_until(pilot, lambda: isinstance(app.screen, ChildTranscriptScreen), "the child")
    screen = app.screen
    assert isinstance(screen, ChildTranscriptScreen)
    await wait_for_text(pilot, "Niobe looks at the gate first.")
    return screen


async def test_the_pager_and_inspect_open_a_sub_agents_transcript_live_and_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    _script(llm_server)
    runtime = app_runtime(tmp_path, llm_server.base_url, config=CONFIG)
    runtime.set_active_role("orchestrator")
    try:
        app = make_app(runtime)
        async with running(app, size=(160, 45)) as pilot:
            await submit(pilot, "delegate")
            tree = app.main_screen.query_one(DispatchTree)
            await wait_until(pilot, lambda: tree.running_jobs, what="the job in the tree")
            [job_id] = tree.running_jobs
            await wait_until(pilot, lambda: "child-says-hi" in screen_text(app), "the tool")
            # While the child runs: the pager's o opens it, live.
            await pilot.press("alt+h")
            await wait_until(pilot, lambda: isinstance(app.screen, PagerScreen), "the pager")
            await wait_for_text(pilot, "→ dispatch")
            await pilot.press("o")
            child = await _child_open(pilot, app)
            assert child.job_id == job_id and child.job is not None
            await wait_for_text(pilot, "│ child-says-hi")  # live output under its row
            (Path(runtime.options.cwd) / "go").write_text("")
            await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
            await wait_until(
                pilot, lambda: any(r.entry.name == "report" for r in child.query(ToolCallEntry))
            )
            await pilot.press("escape", "escape")
            await wait_until(pilot, lambda: app.screen is app.main_screen, "back to the main")
            # After it ended: inspect's ctrl+o on the dispatch result.
            await pilot.press("alt+i")
            await wait_until(pilot, lambda: isinstance(app.screen, InspectScreen), "inspect")
            inspect = app.screen
            assert isinstance(inspect, InspectScreen)
            results = [n for n, m in enumerate(inspect.stored) if m.name == "dispatch"]
            assert results, [m.role for m in inspect.stored]
            inspect.query_one("#inspect-list", OptionList).highlighted = results[0]
            await pilot.pause()
            await pilot.press("ctrl+o")
            child = await _child_open(pilot, app)
            assert child.job_id == job_id
            rows = [r.entry.name for r in child.query(ToolCallEntry)]
            assert rows == ["bash", "report"]
            # Inspect on a message that is no dispatch says so and opens nothing.
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is inspect, "inspect again")
            inspect.query_one("#inspect-list", OptionList).highlighted = 0
            await pilot.pause()
            await pilot.press("ctrl+o")
            await wait_for_text(pilot, "Highlight a dispatch call or its result")
            assert app.screen is inspect
    finally:
        runtime.store.close()

    # After a restart the dispatch tree is empty: the pager still opens it, from the store.
    again = app_runtime(tmp_path, llm_server.base_url, config=CONFIG)
    try:
        app = make_app(again)
        async with running(app, size=(160, 45)) as pilot:
            assert not app.main_screen.query_one(DispatchTree).jobs
            await pilot.press("alt+h")
            await wait_until(pilot, lambda: isinstance(app.screen, PagerScreen), "the pager")
            await pilot.press("o")
            child = await _child_open(pilot, app)
            assert child.job is None and child.job_id == job_id
            assert [r.entry.name for r in child.query(ToolCallEntry)] == ["bash", "report"]
            assert "Niobe · finished · check the gate" in screen_text(app)
            await pilot.press("p")
            await wait_for_text(pilot, "child-done")
    finally:
        again.store.close()
