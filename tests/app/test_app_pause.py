"""Pause, step and resume in the app (Pilot): the keys, the status line's and the dispatch
tree's ``paused``, a sub-agent paused from the tree, quitting while paused asks. A real
runtime against the scripted server; its request log shows what was sent while paused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from smith_tui.app.bindings import keymap_for
from smith_tui.app.screens.confirm import ConfirmScreen
from smith_tui.app.screens.palette import palette_entries
from smith_tui.widgets.dispatch_tree import DispatchTree
from smith_tui.widgets.status_line import StatusLine
from tests.app.app_harness import isolated_runtime, make_app, running, submit
from tests.dispatch.support import child_requests, dispatch, report
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.pilot import screen_text, wait_until

YOLO = {"permissions": {"mode": "yolo"}}
#: A tool that runs until the test creates the project's ``go`` file.
WAIT_FOR_GO = tool_call("bash", {"command": "while [ ! -e go ]; do sleep 0.02; done; echo went"})
FOUND = {
    "status": "ok",
    "summary": "It went.",
    "changes": ["nothing"],
    "verification": ["ls go"],
}


def _control(app: Any) -> Any:
    return app.runtime.turn_control()


async def _start_and_pause(pilot: Any, server: ScriptedLLMServer, project: Path) -> StatusLine:
    """Submit a turn, press the pause key while round one's tool runs, let the tool end;
    return the status line once the turn holds after round one."""
    app = pilot.app
    await submit(pilot, "go and read")
    await wait_until(pilot, lambda: app.runtime.busy and len(server.chat_requests()) == 1)
    status = app.main_screen.query_one(StatusLine)
    await wait_until(pilot, lambda: status.status == "tool", "round one's tool")
    await pilot.press("alt+p")
    assert _control(app).state == "pausing"
    (project / "go").touch()
    await wait_until(pilot, lambda: status.status == "paused", "the status line's paused")
    return status


async def test_the_keys_pause_step_and_resume_and_the_status_line_shows_paused(
    tmp_path: Path, monkeypatch: Any, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[WAIT_FOR_GO]),
        text_reply(tool_calls=[tool_call("read", {"path": "go"})]),
        text_reply("Went and read."),
    )
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config=YOLO) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            status = await _start_and_pause(pilot, llm_server, tmp_path / "project")
            assert "‖ paused: before the next request" in screen_text(app)
            assert len(llm_server.chat_requests()) == 1  # nothing sent while paused

            await pilot.press("alt+s")  # one more round, then it holds again
            await wait_until(pilot, lambda: len(llm_server.chat_requests()) == 2, "round two")
            await wait_until(pilot, lambda: _control(app).state == "paused", "the next hold")
            await wait_until(pilot, lambda: status.status == "paused", "paused again")

            await pilot.press("ctrl+q")  # quitting while paused asks
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
            assert "The turn is paused. Quit anyway?" in screen_text(app)
            await pilot.press("n")
            await wait_until(pilot, lambda: app.screen is app.main_screen, "back on the screen")
            assert app.is_running and len(llm_server.chat_requests()) == 2

            await pilot.press("alt+p")  # paused: the same key resumes
            await wait_until(pilot, lambda: not app.runtime.busy, "the turn to end")
            assert len(llm_server.chat_requests()) == 3
            await wait_until(pilot, lambda: status.status == "idle", "idle")
            assert "Went and read." in screen_text(app)


async def test_quitting_while_paused_and_confirming_cancels_the_turn_and_exits(
    tmp_path: Path, monkeypatch: Any, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply(tool_calls=[WAIT_FOR_GO]), text_reply("never sent"))
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config=YOLO) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            await _start_and_pause(pilot, llm_server, tmp_path / "project")
            await pilot.press("ctrl+q")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
            await pilot.press("y")
            await wait_until(pilot, lambda: not app.is_running, "the app to exit")
        assert app.return_code == 0
        assert len(llm_server.chat_requests()) == 1
        (turn,) = runtime.store.turns.list_for_conversation(
            str(runtime.conversations.conversation_id)
        )
        assert turn.stop_reason == "cancelled"  # quitting cancelled it; it is on record


async def test_a_sub_agent_paused_from_the_tree_holds_while_its_sibling_finishes(
    tmp_path: Path, monkeypatch: Any, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "task alpha"), dispatch("worker", "task beta")]),
        text_reply(tool_calls=[WAIT_FOR_GO]),
        text_reply(tool_calls=[WAIT_FOR_GO]),
        text_reply(tool_calls=[report(**FOUND)]),
        text_reply(tool_calls=[report(**FOUND)]),
        text_reply("Both reported."),
    )
    config = {**YOLO, "active_role": "orchestrator"}
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config=config) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            await submit(pilot, "do both")
            tree = app.main_screen.query_one(DispatchTree)
            await wait_until(pilot, lambda: len(child_requests(llm_server)) == 2, "both children")
            await wait_until(pilot, lambda: len(tree.running_jobs) == 2, "both jobs in the tree")
            await pilot.press("alt+d")  # the tree, the cursor on the newest job
            node = tree.job_tree.cursor_node
            assert node is not None and node.data is not None
            paused_job = node.data[1]
            await pilot.press("p")
            await wait_until(pilot, lambda: app.runtime.turn_control(paused_job).paused, "pause")
            (tmp_path / "project" / "go").touch()

            await wait_until(
                pilot, lambda: "paused" in tree.job_label(paused_job), "the tree's paused"
            )
            sibling = next(job for job in tree.jobs if job != paused_job)
            await wait_until(pilot, lambda: tree.jobs[sibling].status == "ok", "the sibling")
            assert tree.jobs[paused_job].status == "running"
            assert len(child_requests(llm_server)) == 3  # the paused one sent nothing more

            await pilot.press("s")  # one round: its report
            await wait_until(pilot, lambda: not app.runtime.busy, "the turn to end")
            assert tree.jobs[paused_job].status == "ok"
            assert "paused" not in tree.job_label(paused_job)
            assert len(child_requests(llm_server)) == 4


def test_the_keys_are_configurable_and_in_the_palette() -> None:
    keymap = keymap_for({"pause": "f5", "step": "f6"})
    assert keymap["smith.pause"] == "f5" and keymap["smith.step"] == "f6"
    actions = {entry.action for entry in palette_entries()}
    assert {"pause_turn", "step_turn"} <= actions
