"""The first hour of a new user (issue 17): typed text is never lost, the view follows what
the user just did, the keyboard reaches everything, and the screen shows what changed.

Real app, real runtime and store, the scripted Chat-Completions server.
"""

from __future__ import annotations

import hashlib

from smith_tui.widgets.prompt_input import PromptInput
from smith_tui.widgets.status_line import StatusLine
from smith_tui.widgets.transcript.diff_view import DiffView
from smith_tui.widgets.transcript.tool_call import ToolCallEntry
from tests.app.app_harness import (
    make_app,
    running,
    screen_text,
    submit,
    wait_for_text,
    wait_until,
)
from tests.support.llm_server import stall, text_reply, tool_call


def _seed_long_conversation(runtime, pairs: int = 60) -> None:
    """More entries than the transcript mounts at first (its first page is 16)."""
    conv = runtime.store.conversations.create(runtime.project_id, "Long talk")
    messages = []
    for n in range(pairs):
        messages.append({"role": "user", "content": f"question number {n}"})
        messages.append({"role": "assistant", "content": f"answer number {n}"})
    runtime.store.conversations.append_messages(conv, messages)
    runtime.conversations.load(conv)


def _chat_prompts(llm_server) -> list[str]:
    prompts = []
    for request in llm_server.chat_requests():
        users = [
            m
            for m in request["messages"]
            if m["role"] == "user" and not str(m["content"]).startswith("[state snapshot]")
        ]
        prompts.append(str(users[-1]["content"]) if users else "")
    return prompts


async def test_after_history_new_typed_text_reaches_the_prompt_and_is_sent(
    runtime, llm_server
) -> None:
    llm_server.enqueue(text_reply("Fresh start."))
    app = make_app(runtime)
    async with running(app) as pilot:
        app.screen.query_one("#transcript").focus()  # focus away from the prompt first
        await pilot.press("ctrl+r")
        await wait_for_text(pilot, "Conversations")
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is app.main_screen, what="the main screen")
        prompt = app.screen.query_one(PromptInput)
        assert app.focused is prompt
        await pilot.press(*"hello")
        await pilot.press("enter")
        await wait_for_text(pilot, "Fresh start.")
    assert _chat_prompts(llm_server) == ["hello"]


async def test_text_typed_in_a_pane_goes_to_the_prompt(runtime) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        app.screen.query_one("#transcript").focus()
        await pilot.press(*"hi there")
        prompt = app.screen.query_one(PromptInput)
        assert prompt.text == "hi there"
        assert app.focused is prompt


async def test_page_keys_scroll_and_home_reaches_the_first_message(runtime) -> None:
    # 40 entries: home still loads older pages (16 are mounted at first) but not 100 of
    # them, which took 2.3 s of CPU, over 10 s at the share of a core a loaded run leaves.
    _seed_long_conversation(runtime, pairs=20)
    app = make_app(runtime)
    async with running(app, size=(100, 30)) as pilot:
        transcript = app.screen.query_one("#transcript")
        await wait_for_text(pilot, "answer number 19")
        assert transcript.has_older  # the first entries are not mounted yet
        await pilot.press("pageup")
        # A page up leaves the bottom; the scroll offset itself may grow again when the
        # older page this brings into view is mounted above (the view is kept in place).
        await wait_until(pilot, lambda: not transcript.following, what="a page up")
        await pilot.press("home")
        # Home mounts every older page first, each after a repaint: seconds on a machine
        # whose cores are busy elsewhere.
        await wait_for_text(pilot, "question number 0", within=30)
        await wait_until(pilot, lambda: transcript.scroll_y == 0, what="the very top")
        assert not transcript.has_older
        await pilot.press("pagedown")
        await wait_until(pilot, lambda: transcript.scroll_y > 0, what="a page down")
        await pilot.press("end")
        await wait_for_text(pilot, "answer number 19")
        await wait_until(pilot, lambda: transcript.following, what="following the end again")
        # With text in the prompt, home and end move its cursor instead.
        prompt = app.screen.query_one(PromptInput)
        await pilot.press(*"abc")
        await pilot.press("home")
        assert prompt.cursor_location == (0, 0)
        assert transcript.following


async def test_a_command_after_scrolling_up_jumps_to_its_output(runtime) -> None:
    _seed_long_conversation(runtime)
    app = make_app(runtime)
    async with running(app, size=(80, 24)) as pilot:
        transcript = app.screen.query_one("#transcript")
        await wait_for_text(pilot, "answer number 59")
        await pilot.press("pageup", "pageup")
        await wait_until(pilot, lambda: not transcript.following, what="scrolled up")
        await wait_until(pilot, lambda: "answer number 59" not in screen_text(app), what="away")
        await submit(pilot, "/model")
        await wait_for_text(pilot, "no request made yet")
        await wait_until(pilot, lambda: transcript.following, what="following again")
        assert transcript.scroll_y == transcript.max_scroll_y


async def test_model_pin_shows_in_the_status_line_and_in_model(runtime, llm_server) -> None:
    llm_server.enqueue(text_reply("one"), text_reply("two"))
    app = make_app(runtime)
    async with running(app) as pilot:
        status = app.screen.query_one(StatusLine)
        await submit(pilot, "hi")
        await wait_for_text(pilot, "one")
        await wait_until(pilot, lambda: status.model == "scripted-model", what="the model")
        await submit(pilot, "/model pinned-x")
        await wait_until(pilot, lambda: status.model == "pinned-x", what="the pin in the status")
        await submit(pilot, "/model")
        # The line /model answers with (the pin's own output says "pinned" too).
        text = await wait_for_text(pilot, "pinned-x (pinned")
        assert "pinned to this conversation" in text and "Smith · pinned-x" in text
        await submit(pilot, "again")
        await wait_for_text(pilot, "two")
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
        assert status.model == "pinned-x"
    assert llm_server.chat_requests()[-1]["model"] == "pinned-x"


async def test_a_queued_prompt_is_sent_when_the_turn_ends_and_up_takes_one_back(
    runtime, llm_server
) -> None:
    gate = runtime.options.cwd / "go"
    wait = "while [ ! -f go ]; do sleep 0.05; done; echo released"
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": wait})]),
        text_reply("First done."),
        text_reply("Second done."),
    )
    app = make_app(runtime)
    async with running(app, size=(80, 24)) as pilot:
        await submit(pilot, "first")
        await wait_until(pilot, lambda: runtime.busy, what="the turn to start")
        await submit(pilot, "second")
        await submit(pilot, "third")
        await wait_for_text(pilot, "⏸ queued: third")
        assert "⏸ queued: second" in screen_text(app)
        prompt = app.screen.query_one(PromptInput)
        await pilot.press("up")  # the newest queued prompt comes back to be edited
        assert prompt.text == "third"
        assert "⏸ queued: third" not in screen_text(app)
        prompt.clear()
        gate.write_text("")
        await wait_for_text(pilot, "Second done.")
        await wait_until(pilot, lambda: not runtime.busy, what="the second turn to end")
        assert "⏸ queued" not in screen_text(app)
    assert _chat_prompts(llm_server)[-1] == "second"
    assert len(llm_server.chat_requests()) == 3


async def test_waiting_shows_seconds_and_how_to_interrupt(runtime, llm_server) -> None:
    llm_server.enqueue(stall(after_events=0, hold_s=30))
    app = make_app(runtime)
    app.animation_level = "full"  # the line's clock ticks only when animated
    async with running(app) as pilot:
        status = app.screen.query_one(StatusLine)
        now = [1000.0]
        status.clock = lambda: now[0]
        await submit(pilot, "are you there?")
        await wait_until(pilot, lambda: status.status == "thinking", what="waiting")
        now[0] += 7.4
        await wait_for_text(pilot, "7s · esc to interrupt")
        await pilot.press("escape")
        await wait_until(pilot, lambda: status.waited == "", what="the wait to end")


async def test_an_edit_shows_counts_and_a_red_green_diff(runtime, llm_server) -> None:
    src = runtime.options.cwd / "src"
    src.mkdir()
    target = src / "x.py"
    target.write_text("a = 1\nb = 2\nc = 3\n")
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    edit = {
        "path": "src/x.py",
        "expected_hash": digest,
        "operation": "replace",
        "start_line": 2,
        "text": "b = 20\nb2 = 21\n",
    }
    llm_server.enqueue(text_reply(tool_calls=[tool_call("edit", edit)]), text_reply("Changed b."))
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "change b")
        text = await wait_for_text(pilot, "Changed b.")
        assert "+2 −1" in text
        entry = app.screen.query_one(ToolCallEntry)
        entry.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: entry.query(DiffView), what="the diff")
        lines = entry.query_one(DiffView).lines
        assert ("header", "+++ b/src/x.py") in lines
        assert ("removed", "-b = 2") in lines
        assert ("added", "+b = 20") in lines and ("added", "+b2 = 21") in lines
        shown = screen_text(app)
        assert "+++ b/src/x.py" in shown and "new hash" not in shown


ANSWER = "Two ways:\n\n```python\nprint('one')\n```\n\nor\n\n~~~sh\necho two\necho three\n~~~\n"


async def test_copy_puts_the_last_answer_or_a_code_block_on_the_clipboard(
    runtime, llm_server
) -> None:
    llm_server.enqueue(text_reply(ANSWER))
    app = make_app(runtime)
    async with running(app) as pilot:
        await submit(pilot, "/copy")
        await wait_for_text(pilot, "there is no answer to copy yet")
        await submit(pilot, "how?")
        await wait_for_text(pilot, "or")
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
        await submit(pilot, "/copy")
        await wait_for_text(pilot, "Copied the last answer")
        assert app.clipboard.rstrip() == ANSWER.rstrip()
        await submit(pilot, "/copy 2")
        await wait_until(pilot, lambda: app.clipboard == "echo two\necho three", what="block 2")
        await submit(pilot, "/copy 3")
        await wait_for_text(pilot, "the last answer has only 2 code blocks")


async def test_pager_escape_clears_the_find_box_first_then_closes(runtime) -> None:
    from textual.widgets import Input

    from smith_tui.app.screens.pager_screen import PagerScreen

    _seed_long_conversation(runtime, pairs=3)
    app = make_app(runtime)
    async with running(app) as pilot:
        await pilot.press("alt+h")
        await wait_until(pilot, lambda: isinstance(app.screen, PagerScreen), what="the pager")
        await pilot.press("slash", *"answer")
        find = app.screen.query_one("#pager-find", Input)
        await wait_until(pilot, lambda: "of 3" in screen_text(app), what="three matches")
        await pilot.press("escape")
        assert isinstance(app.screen, PagerScreen) and find.value == ""
        assert app.screen.pager.matches == []
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.main_screen, what="the main screen")
        assert app.focused is app.screen.query_one(PromptInput)


async def test_f1_says_how_to_scroll_expand_copy_and_cancel(runtime) -> None:
    app = make_app(runtime)
    async with running(app, size=(120, 45)) as pilot:
        await pilot.press("f1")
        text = await wait_for_text(pilot, "Getting around")
        for needle in ("pageup / pagedown", "on a tool call: expand", "/copy [N]", "esc / ctrl+c"):
            assert needle in text


async def test_pager_keyboard_selection_and_copy(runtime) -> None:
    from smith_tui.app.screens.pager_screen import PagerScreen

    _seed_long_conversation(runtime, pairs=3)
    app = make_app(runtime)
    async with running(app) as pilot:
        await pilot.press("alt+h")
        await wait_until(pilot, lambda: isinstance(app.screen, PagerScreen), what="the pager")
        pager = app.screen.pager
        await pilot.press("slash", *"answer number 1", "enter")
        await pilot.press("escape")  # clears the find box, back to the text
        await pilot.press("c")
        await wait_for_text(pilot, "Select lines first")
        await pilot.press("slash", *"answer number 1", "enter", "tab")
        await wait_until(pilot, lambda: app.focused is pager, what="the text focused")
        await pilot.press("shift+down", "shift+down")
        selected = pager.selected_text
        assert selected.startswith("answer number 1")
        assert len(selected.splitlines()) == 2  # two rows (the second one blank)
        await pilot.press("c")
        await wait_for_text(pilot, "Copied 2 lines to the clipboard.")
        assert app.clipboard == selected
        await pilot.press("escape")  # the selection goes first
        assert pager.text_selection is None and isinstance(app.screen, PagerScreen)
