"""Tool outcomes where the eye is (issue 22): a non-zero exit is a failure on the row and in
the tools pane, a running command's last lines stream under its row, durations leave out
the permission question, one key expands every tool call, one key focuses the dispatch tree,
and a sub-agent's own transcript opens from the tree, live while it runs.

Real app, real runtime, store and bash, the scripted Chat-Completions server, Pilot.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from smith_tui.app.screens.child_transcript import ChildTranscriptScreen
from smith_tui.app.screens.permission_screen import PermissionScreen
from smith_tui.widgets.activity import ToolActivity
from smith_tui.widgets.dispatch_tree import DispatchTree
from smith_tui.widgets.transcript.reasoning import ReasoningBlock
from smith_tui.widgets.transcript.tool_call import ToolCallEntry, ToolOutputLines
from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    screen_text,
    submit,
    wait_for_text,
    wait_until,
)
from tests.dispatch.support import dispatch, report
from tests.support.llm_server import text_reply, tool_call

# Prints four lines, waits for the test to create `go`, then fails with exit 3.
GATED = (
    "for i in 1 2 3 4; do echo line-$i; done; "
    "while [ ! -f go ]; do sleep 0.05; done; echo after-gate; exit 3"
)


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: Any) -> Any:
    config = {"permissions": {"mode": "yolo"}, "sandbox": {"mode": "off"}}
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config) as opened:
        yield opened


def _rows(app: Any) -> list[ToolCallEntry]:
    return list(app.main_screen.query(ToolCallEntry))


async def test_a_non_zero_exit_is_a_failure_on_the_row_and_in_the_pane_and_after_reload(
    runtime: Any, llm_server: Any
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": "echo out; exit 1"})]),
        text_reply("it failed"),
    )
    app = make_app(runtime)
    async with running(app, size=(160, 45)) as pilot:
        await submit(pilot, "run the tests")
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
        await wait_for_text(pilot, "it failed")
        [row] = _rows(app)
        assert "✗ exit 1" in row.line.render().plain
        assert "✓" not in row.line.render().plain
        assert row.has_class("-error")
        pane = app.main_screen.query_one(ToolActivity)
        [record] = pane.calls
        assert record.state == "error"
        assert any("✗" in line and "exit 1" in line for line in pane.line_texts())
        # Reloaded from the store (a restart, --continue): still a failure.
        app.main_screen.show_conversation()
        await wait_until(
            pilot,
            lambda: [r for r in _rows(app) if r is not row] != [],
            what="the reloaded row",
        )
        [reloaded] = _rows(app)
        assert "✗ exit 1" in reloaded.line.render().plain
        await wait_until(pilot, lambda: reloaded.has_class("-error"), what="the red row")


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
async def test_a_running_command_streams_its_last_lines_under_its_row(
    runtime: Any, llm_server: Any, size: tuple[int, int]
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": GATED})]), text_reply("done")
    )
    app = make_app(runtime)
    async with running(app, size=size) as pilot:
        await submit(pilot, "run it")
        await wait_until(pilot, lambda: app.main_screen.query(ToolOutputLines), what="the tail")
        tail = app.main_screen.query_one(ToolOutputLines)
        # The last three lines, under the row, in the transcript (at 80x24 the side panes
        # are hidden: the transcript is the only place that shows them).
        await wait_until(pilot, lambda: tail.lines() == ["line-2", "line-3", "line-4"])
        await wait_for_text(pilot, "│ line-4")
        # The tools pane shows the same lines at 160x45, so the text can be on screen a
        # layout before the tail under the row has its region: wait for that region.
        await wait_until(
            pilot,
            lambda: tail.region.height == 3 and tail.region.width > 0,
            what="the tail's three rows under its row",
        )
        assert "line-1" not in screen_text(app)
        (Path(runtime.options.cwd) / "go").write_text("")
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
        await wait_until(pilot, lambda: not app.main_screen.query(ToolOutputLines))
        [row] = _rows(app)
        assert "✗ exit 3" in row.line.render().plain


async def test_durations_leave_out_the_permission_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: Any
) -> None:
    config = {"permissions": {"mode": "ask"}, "sandbox": {"mode": "off"}}
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": "echo quick"})]), text_reply("ok")
    )
    waited_s = 1.5
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            await submit(pilot, "run it")
            await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
            asked = time.monotonic()
            # The user thinks for a while: the answer comes waited_s after the question.
            await wait_until(
                pilot, lambda: time.monotonic() - asked >= waited_s, what="the user", within=5
            )
            await pilot.press("y")
            await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
            [row] = _rows(app)
            assert row.entry.duration_s is not None and row.entry.duration_s < waited_s
            [record] = app.main_screen.query_one(ToolActivity).calls
            assert record.duration_s is not None and record.duration_s < waited_s
        [stored] = [m for m in runtime.conversations.messages if m["role"] == "tool"]
        assert stored["metadata"]["duration_s"] < waited_s


async def test_one_key_expands_and_collapses_every_tool_call(runtime: Any, llm_server: Any) -> None:
    llm_server.enqueue(
        text_reply(
            tool_calls=[
                tool_call("bash", {"command": "echo first-$((40+2))"}),
                tool_call("bash", {"command": "echo second-$((40+2))"}),
            ]
        ),
        text_reply("both ran"),
    )
    app = make_app(runtime)
    async with running(app, size=(160, 45)) as pilot:
        await submit(pilot, "run two")
        await wait_for_text(pilot, "both ran")
        assert len(_rows(app)) == 2 and not any(r.expanded for r in _rows(app))
        await pilot.press("alt+e")
        await wait_for_text(pilot, "second-42")  # the results, not the commands
        assert all(r.expanded for r in _rows(app))
        assert "first-42" in screen_text(app)
        await pilot.press("alt+e")
        await wait_until(pilot, lambda: "second-42" not in screen_text(app))
        assert not any(r.expanded for r in _rows(app))


async def test_the_dispatch_key_and_palette_entry_focus_the_tree_with_a_visible_outline(
    runtime: Any, llm_server: Any
) -> None:
    app = make_app(runtime)
    async with running(app, size=(80, 24)) as pilot:
        main = app.main_screen
        tree = main.query_one(DispatchTree)
        assert not main.side_shown  # 80 columns: the side panes start hidden
        await pilot.press("alt+d")
        await wait_until(pilot, lambda: app.focused is tree.job_tree, what="the tree's focus")
        assert main.side_shown
        # The outline: the pane's top rule turns to the accent colour while it has the focus.
        accent = tree.styles.border_top
        main.query_one("#prompt").focus()
        await pilot.pause()
        assert tree.styles.border_top != accent
        await app.run_action("focus_dispatch")  # what the palette entry runs
        await wait_until(pilot, lambda: app.focused is tree.job_tree)
        assert tree.styles.border_top == accent
    from smith_tui.app.screens.palette import palette_entries

    assert "focus_dispatch" in [e.action for e in palette_entries()]
    assert "toggle_tool_results" in [e.action for e in palette_entries()]


async def test_a_sub_agents_transcript_opens_from_the_tree_live_and_from_the_store(
    runtime: Any, llm_server: Any
) -> None:
    gated = "echo child-says-hi; while [ ! -f go ]; do sleep 0.05; done; echo child-done"
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "check the gate")]),
        text_reply(
            "Niobe looks at the gate first.",
            reasoning="The gate file decides.",
            tool_calls=[tool_call("bash", {"command": gated})],
        ),
        text_reply(tool_calls=[report(status="success", summary="gate checked")]),
        text_reply("the worker is done"),
    )
    runtime.set_active_role("orchestrator")
    app = make_app(runtime)
    async with running(app, size=(160, 45)) as pilot:
        await submit(pilot, "delegate")
        tree = app.main_screen.query_one(DispatchTree)
        await wait_until(pilot, lambda: tree.running_jobs, what="the job in the tree")
        [job_id] = tree.running_jobs
        # The child's tool is running: open its transcript from the tree (enter on the job).
        await wait_until(pilot, lambda: "child-says-hi" in screen_text(app), what="the tool")
        await pilot.press("alt+d")
        await wait_until(pilot, lambda: app.focused is tree.job_tree)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChildTranscriptScreen))
        screen = app.screen
        assert isinstance(screen, ChildTranscriptScreen) and screen.job_id == job_id
        await wait_for_text(pilot, "Niobe looks at the gate first.")
        await wait_for_text(pilot, "│ child-says-hi")  # its live output, under its row
        reasoning = [block.source for block in screen.query(ReasoningBlock)]
        assert any("The gate file decides." in source for source in reasoning)
        (Path(runtime.options.cwd) / "go").write_text("")
        # Live: the call finishes and the report call follows in this screen.
        await wait_until(
            pilot,
            lambda: any(
                r.entry.finished and r.entry.name == "bash" for r in screen.query(ToolCallEntry)
            ),
            what="the child's bash result",
        )
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
        await wait_until(
            pilot, lambda: any(r.entry.name == "report" for r in screen.query(ToolCallEntry))
        )
        bash_rows = [r for r in screen.query(ToolCallEntry) if r.entry.name == "bash"]
        assert len(bash_rows) == 1  # not repeated by the store and the live events
        bash_rows[0].expanded = True
        await wait_for_text(pilot, "child-done")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.main_screen)
        # After the job: the same transcript from the store.
        tree.select_job(job_id)
        await wait_until(pilot, lambda: isinstance(app.screen, ChildTranscriptScreen))
        stored = app.screen
        await wait_for_text(pilot, "Niobe looks at the gate first.")
        rows = list(stored.query(ToolCallEntry))
        assert [r.entry.name for r in rows] == ["bash", "report"]
        assert all(r.entry.finished for r in rows)
        await pilot.press("p")  # the pager shows the child's messages too
        await wait_for_text(pilot, "child-done")
