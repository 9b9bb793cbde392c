"""The panes tell the truth about the conversation on screen (issue 17, honest state).

Through the real app and runtime against the scripted server: after ``/new``, ``/clear``,
a switch back (``/load``, as the history screen does) or ``--continue`` the usage pane,
context gauge and tools pane show that conversation; an error in the status line clears
when the next action works; a turn that used no tokens draws no bar.
"""

from __future__ import annotations

import pytest

from smith_tui.widgets.activity import ToolActivity
from smith_tui.widgets.status_line import StatusLine
from smith_tui.widgets.usage_pane import UsagePane
from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    screen_text,
    submit,
    wait_for_still_screen,
    wait_for_text,
    wait_until,
)
from tests.support.llm_server import http_error, stall, text_reply, tool_call

USAGE = {"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500}


def _smith_turn(pane: UsagePane) -> str:
    """The Smith row's turn column (``·`` when the turn used nothing)."""
    row = pane.table_text().plain.splitlines()[1].split()
    return row[1]


async def test_usage_and_tools_follow_new_clear_and_load(runtime, llm_server) -> None:
    llm_server.enqueue(
        text_reply("Looking.", tool_calls=[tool_call("bash", {"command": "echo hi"})], usage=USAGE),
        text_reply("Done.", usage=USAGE),
    )
    app = make_app(runtime)
    async with running(app) as pilot:
        usage = app.screen.query_one(UsagePane)
        tools = app.screen.query_one(ToolActivity)
        await submit(pilot, "first conversation")
        await wait_until(pilot, lambda: not runtime.busy and usage.turn_history, "the turn")
        first = runtime.conversations.conversation_id
        assert _smith_turn(usage) == "2.4k/600"
        assert usage.context_tokens == 1500 and list(usage.turn_history) == [3000]
        assert any("echo hi" in line for line in tools.line_texts())

        for command in ("/new", "/clear"):
            before = runtime.conversations.conversation_id
            await submit(pilot, command)
            await wait_until(
                pilot, lambda b=before: runtime.conversations.conversation_id != b, command
            )
            await pilot.pause()
            assert _smith_turn(usage) == "·", command
            assert usage.context_tokens == 0 and not usage.turn_history, command
            assert usage.history_text() == "tokens/turn —"
            assert not any("echo hi" in line for line in tools.line_texts()), command
            # The session column still counts this run.
            assert usage.session["direct"]["total_tokens"] == 3000

        await submit(pilot, f"/load {first}")
        await wait_until(
            pilot, lambda: runtime.conversations.conversation_id == first, "the switch back"
        )
        await pilot.pause()
        assert _smith_turn(usage) == "2.4k/600"
        assert usage.context_tokens == 1500 and list(usage.turn_history) == [3000]


async def test_continue_shows_the_resumed_conversations_usage(
    tmp_path, monkeypatch, llm_server
) -> None:
    llm_server.enqueue(text_reply("Stored.", usage=USAGE))
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as first:
        try:
            await first.run_turn("remember this")
        finally:
            await first.aclose()
    # The second runtime resumes the last conversation.
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            usage = app.screen.query_one(UsagePane)
            await wait_until(pilot, lambda: usage.context_tokens == 1500, "the stored usage")
            assert _smith_turn(usage) == "1.2k/300"
            assert list(usage.turn_history) == [1500]
            assert usage.history_text() == "tokens/turn (1 turn, max 1.5k)"


async def test_an_error_clears_when_the_next_action_works(runtime, llm_server) -> None:
    llm_server.enqueue(http_error(400))
    app = make_app(runtime)
    async with running(app) as pilot:
        status = app.screen.query_one(StatusLine)
        await submit(pilot, "this fails")
        await wait_until(pilot, lambda: status.status == "error", "the error")
        assert "HTTP 400" in status.detail
        await submit(pilot, "/usage")
        await wait_until(pilot, lambda: status.status == "idle", "the error to clear")
        assert status.detail == ""


async def test_a_cancelled_turn_without_tokens_draws_no_bar(runtime, llm_server) -> None:
    llm_server.enqueue(stall(after_events=0, hold_s=30))
    app = make_app(runtime)
    async with running(app) as pilot:
        usage = app.screen.query_one(UsagePane)
        status = app.screen.query_one(StatusLine)
        await submit(pilot, "wait forever")
        await wait_until(pilot, lambda: runtime.busy and usage.turn_running, "the turn")
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: status.status == "cancelled", "the cancel")
        await wait_until(pilot, lambda: not usage.turn_running, "the turn to end")
        assert not usage.turn_history and not usage.sparkline.data
        assert usage.history_text() == "tokens/turn —"


async def test_dispatch_pane_shows_dispatching_turns_and_a_cancelled_job_says_so(
    runtime, llm_server
) -> None:
    from smith_tui.widgets.dispatch_tree import DispatchTree
    from smith_tui.widgets.transcript.dispatch_card import DispatchCard

    dispatch = tool_call(
        "dispatch",
        {
            "target_role": "explorer",
            "task": "look around slowly",
            "context": {"user_request_summary": "look around"},
        },
    )
    llm_server.enqueue(
        *[text_reply(f"Plain answer {n}.") for n in range(4)],
        text_reply(tool_calls=[dispatch]),
        stall(after_events=1, hold_s=30),
        text_reply("The explorer was stopped; done."),
    )
    app = make_app(runtime)
    async with running(app, size=(100, 30)) as pilot:
        tree = app.screen.query_one(DispatchTree)
        for n in range(4):
            await submit(pilot, f"plain question {n}")
            await wait_until(pilot, lambda: not runtime.busy, "the plain turn")
        # Turns that dispatched nothing leave the tree empty.
        assert not tree.job_tree.root.children and not tree.turns
        await submit(pilot, "/role orchestrator")
        await wait_until(pilot, lambda: runtime.active_role == "orchestrator", "the role")
        await submit(pilot, "go explore")
        await wait_until(pilot, lambda: bool(runtime.jobs), "the dispatched job")
        (job_id,) = list(runtime.jobs)
        await wait_until(pilot, lambda: job_id in tree.jobs, "the job in the tree")
        [turn_node] = tree.job_tree.root.children
        assert "#5 " in str(turn_node.label) and "go explore" in str(turn_node.label)
        tree.job_tree.move_cursor(tree.jobs[job_id].node)
        tree.action_cancel_job()  # what x does on the job in the tree
        await wait_until(pilot, lambda: not runtime.busy, "the turn to end")
        await wait_until(pilot, lambda: bool(app.screen.query(DispatchCard)), "the card")
        assert tree.jobs[job_id].status == "cancelled"
        assert "cancelled" in tree.job_label(job_id)
        [card] = app.screen.query(DispatchCard)
        assert card.status == "cancelled" and "cancelled" in str(card.border_title)
        # At 100×30 the sub-agent is on screen next to the transcript (once the card is drawn).
        await wait_until(pilot, lambda: "Link cancelled" in screen_text(app), "the card's words")


async def test_palette_lists_the_servers_models_and_pins_the_chosen_one(
    runtime, llm_server
) -> None:
    from textual.command import CommandPalette

    llm_server.catalog = {
        "object": "list",
        "data": [{"id": "qwen-coder-32b", "object": "model"}, {"id": "tiny-1b", "object": "model"}],
    }
    app = make_app(runtime)
    async with running(app) as pilot:
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"use model qwen")
        text = await wait_for_text(pilot, "Use model: qwen-coder-32b")
        assert "Pin qwen-coder-32b to this conversation" in text
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: runtime.conversations.pinned_model == "qwen-coder-32b", "the pin"
        )
        # Roles are still there next to the models.
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"switch role")
        await wait_for_text(pilot, "Switch role: Tank (orchestrator)")


async def test_completion_entries_say_what_commands_settings_and_roles_do(runtime) -> None:
    from smith_tui.widgets.completion.menu import CompletionMenu

    app = make_app(runtime)
    async with running(app) as pilot:
        menu = app.screen.query_one(CompletionMenu)
        await pilot.press(*"/mod")
        await wait_until(pilot, lambda: menu.is_open, "the completion menu")
        text = await wait_for_text(pilot, "show or pin the conversation's model")
        assert "list the server's models" in text
        for key in ("ctrl+a", "ctrl+k"):
            await pilot.press(key)
        await pilot.press(*"/config set llm_config.api")
        await wait_for_text(pilot, "Base URL of any OpenAI-compatible Chat-Completions server")
        await pilot.press("ctrl+a", "ctrl+k", *"/role ")
        await wait_for_text(pilot, "Tank: reads and plans; may dispatch worker, explorer")


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
def test_main_screen_at_small_and_large_sizes(snap_compare, tmp_path, monkeypatch, size) -> None:
    """80x24: the side panes wait behind F3 and the footer keeps Cancel, Quit, Help, Panes;
    160x45: the panes show. Both with the completion menu saying what commands do."""
    from tests.app.test_app_snapshot import _seeded_runtime

    runtime = _seeded_runtime(tmp_path, monkeypatch)
    app = make_app(runtime)

    async def settle(pilot) -> None:
        await wait_until(pilot, lambda: app.main_screen.panes_ready, what="the panes")
        await wait_until(pilot, lambda: "Only the code" in screen_text(app), what="the transcript")
        assert app.main_screen.side_shown == (size[0] >= 100)
        await pilot.press(*"/mo")
        await wait_until(pilot, lambda: "/models" in screen_text(app), what="the completion menu")
        await wait_for_still_screen(pilot)

    try:
        assert snap_compare(app, terminal_size=size, run_before=settle)
    finally:
        runtime.store.close()


async def test_an_unreachable_server_is_said_first_with_its_url(tmp_path, monkeypatch) -> None:
    # Nothing listens on the loopback's port 9; no model is configured either.
    with isolated_runtime(tmp_path, monkeypatch, "http://127.0.0.1:9/v1") as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            status = app.screen.query_one(StatusLine)
            await submit(pilot, "hello")
            await wait_until(pilot, lambda: status.status == "error", "the error", within=30)
            assert status.detail.startswith("Cannot reach the LLM server")
            assert "http://127.0.0.1:9/v1/models" in status.detail
            text = await wait_for_text(pilot, "Cannot reach the LLM server")
            assert "default_model" not in text and "SMITH_MODEL" not in text
