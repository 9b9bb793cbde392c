"""Whole turns through the app and the real runtime against the scripted server."""

from __future__ import annotations

import pytest

from smith_tui.widgets.status_line import StatusLine
from smith_tui.widgets.todo_panel import TodoPanel
from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    screen_text,
    submit,
    wait_for_text,
    wait_until,
)
from tests.support.llm_server import http_error, stall, text_reply, tool_call


async def test_a_request_streams_the_answer_and_shows_the_tool_call(runtime, llm_server) -> None:
    llm_server.enqueue(
        text_reply(
            "Let me look.", tool_calls=[tool_call("bash", {"command": "echo matrix-$((6*7))"})]
        ),
        text_reply("There is no spoon, only matrix-42.", chunk_chars=3),
    )
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "what is there?")
        text = await wait_for_text(pilot, "There is no spoon, only matrix-42.")
        assert "what is there?" in text
        assert "bash" in text
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
        status = app.screen.query_one(StatusLine)
        assert status.status == "idle"
        assert status.model == "scripted-model"
        assert "scripted-model" in screen_text(app)
    tool_results = [m for m in runtime.conversations.messages if m["role"] == "tool"]
    assert tool_results and "matrix-42" in tool_results[0]["content"]


@pytest.mark.parametrize("code", [503, 429])
async def test_retry_shows_in_the_status_line_naming_the_status_once(
    code: int, tmp_path, monkeypatch, llm_server
) -> None:
    config = {"llm_config": {"retry_backoff_ms": [1500], "retry_max_retries": 1}}
    llm_server.enqueue(http_error(code), text_reply("Back online."))
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            await submit(pilot, "hello")
            text = await wait_for_text(pilot, "retrying in 2s (")
            line = text.split("retrying in 2s (", 1)[1].splitlines()[0]
            assert line.startswith(f"HTTP {code}") and f"http_{code}" not in text
            await wait_for_text(pilot, "Back online.")
            status = app.screen.query_one(StatusLine)
            await wait_until(pilot, lambda: status.retry == "", what="the retry note to clear")


async def test_todo_tool_fills_the_panel_and_a_new_turn_clears_it(runtime, llm_server) -> None:
    items = [
        {"content": "Read the code", "status": "done"},
        {"content": "Fix the bug", "status": "in_progress"},
        {"content": "Write the test", "status": "pending"},
    ]
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("todo", {"items": items})]),
        text_reply("Planned."),
        text_reply("Next."),
    )
    app = make_app(runtime)
    async with running(app) as pilot:
        panel = app.screen.query_one(TodoPanel)
        assert not panel.display
        await submit(pilot, "plan it")
        text = await wait_for_text(pilot, "Write the test")
        assert panel.display
        assert "Todo 1/3" in text and "Fix the bug" in text
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
        await submit(pilot, "go on")
        await wait_until(pilot, lambda: not panel.display, what="the panel to hide")
        assert "Write the test" not in screen_text(app)


async def test_a_prompt_while_busy_is_queued_and_back_in_the_prompt_after_a_cancel(
    runtime, llm_server
) -> None:
    llm_server.enqueue(stall(after_events=2, hold_s=30))
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "first")
        await wait_until(pilot, lambda: runtime.busy, what="the turn to start")
        await submit(pilot, "second")
        await wait_for_text(pilot, "⏸ queued: second")
        from smith_tui.widgets.prompt_input import PromptInput

        prompt = app.screen.query_one(PromptInput)
        assert prompt.text == ""
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
        await wait_until(pilot, lambda: prompt.text == "second", what="the prompt back")
        assert "⏸ queued" not in screen_text(app)


async def test_slash_commands_run_open_screens_and_quit(runtime) -> None:
    from smith_tui.app.screens.pager_screen import PagerScreen

    app = make_app(runtime)
    async with running(app) as pilot:
        first = runtime.conversations.conversation_id
        await submit(pilot, "/new")
        await wait_until(pilot, lambda: runtime.conversations.conversation_id != first, what="/new")
        await submit(pilot, "/role orchestrator")
        status = app.screen.query_one(StatusLine)
        await wait_until(pilot, lambda: status.role == "orchestrator", what="/role")
        assert "Tank" in screen_text(app)
        await submit(pilot, "/pager")
        await wait_until(pilot, lambda: isinstance(app.screen, PagerScreen), what="/pager")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.main_screen, what="the main screen")
        from smith_tui.app.screens.help_screen import HelpScreen
        from smith_tui.widgets.transcript.notice import Notice

        notices = len(app.screen.query(Notice))
        await submit(pilot, "/help")  # a screen, not a notice with the same text
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="/help")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.main_screen, what="the main screen")
        assert len(app.screen.query(Notice)) == notices
        await submit(pilot, "/usage")  # other commands print into the transcript
        await wait_until(pilot, lambda: len(app.screen.query(Notice)) == notices + 1)
        await submit(pilot, "/quit")
        await wait_until(pilot, lambda: not app.is_running, what="/quit to exit")


async def test_prompt_history_starts_with_the_conversations_requests(runtime, llm_server) -> None:
    llm_server.enqueue(text_reply("one"), text_reply("two"))
    await runtime.submit("first request")
    await runtime.submit("second request")
    app = make_app(runtime)
    async with running(app) as pilot:
        from smith_tui.widgets.prompt_input import PromptInput

        prompt = app.screen.query_one(PromptInput)
        await pilot.press("up")
        assert prompt.text == "second request"
        await pilot.press("up")
        assert prompt.text == "first request"


async def test_usage_pane_gets_prices_from_the_catalog(runtime, llm_server) -> None:
    llm_server.catalog = {
        "object": "list",
        "data": [
            {
                "id": "scripted-model",
                "object": "model",
                "pricing": {"prompt": "0.000002", "completion": "0.000004"},
            }
        ],
    }
    app = make_app(runtime)
    async with running(app) as pilot:
        usage = app.screen.query_one("#usage")
        await wait_until(pilot, lambda: usage.priced, what="prices from GET /models")


async def test_dispatch_tree_cancel_key_stops_only_that_sub_agent(runtime, llm_server) -> None:
    from smith_tui.widgets.dispatch_tree import DispatchTree

    llm_server.enqueue(
        text_reply(
            tool_calls=[
                tool_call(
                    "dispatch",
                    {
                        "target_role": "explorer",
                        "task": "look around slowly",
                        "context": {"user_request_summary": "look around"},
                    },
                )
            ]
        ),
        stall(after_events=1, hold_s=30),
        text_reply("The explorer was stopped; done."),
    )
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "/role orchestrator")
        await wait_until(pilot, lambda: runtime.active_role == "orchestrator", what="the role")
        await submit(pilot, "go explore")
        await wait_until(pilot, lambda: bool(runtime.jobs), what="the dispatched job")
        tree = app.screen.query_one(DispatchTree)
        (job_id,) = list(runtime.jobs)
        await wait_until(pilot, lambda: job_id in tree.jobs, what="the job in the tree")
        tree.job_tree.move_cursor(tree.jobs[job_id].node)
        tree.job_tree.focus()
        await pilot.press("x")
        await wait_for_text(pilot, "The explorer was stopped; done.")
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
    assert runtime.conversations.messages[-1]["content"] == "The explorer was stopped; done."
