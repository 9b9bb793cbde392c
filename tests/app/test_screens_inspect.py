"""The inspect screen: edits and deletions reach the store, the live session and the next request."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList, Static, TabbedContent, TextArea

from smith_tui.app.screens.confirm import ConfirmScreen
from smith_tui.app.screens.inspect_screen import InspectScreen
from smith_tui.engine import events as ev
from tests.app.app_harness import screen_text
from tests.support.llm_server import text_reply, tool_call
from tests.support.runtime import open_runtime
from tests.support.screen_host import SIZE, ScreenHost, offline_runtime, seed_conversation


def _error(screen: InspectScreen) -> str:
    widget = screen.query_one("#inspect-error", Static)
    return str(widget.render()) if widget.display else ""


def _roles(runtime) -> list[str]:
    return [
        m.role
        for m in runtime.store.conversations.list_messages(runtime.conversations.conversation_id)
    ]


async def _highlight(pilot, screen: InspectScreen, index: int) -> None:
    messages = screen.query_one("#inspect-list", OptionList)
    messages.focus()
    messages.highlighted = index
    await pilot.pause()


async def test_edit_changes_what_the_next_request_sends(tmp_path: Path, llm_server) -> None:
    runtime, recorder = open_runtime(tmp_path, llm_server.base_url)
    llm_server.enqueue(text_reply("Llamas are camelids."), text_reply("Noted."))
    await runtime.submit("tell me about llamas")
    app = ScreenHost(lambda: InspectScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, InspectScreen)
        text = screen_text(app)
        assert "#0" in text and "user" in text and "tell me about llamas" in text
        editor = screen.query_one("#inspect-editor", TextArea)
        assert editor.text == "tell me about llamas"
        await pilot.press("enter")  # into the editor
        assert app.focused is editor
        editor.select_all()
        await pilot.press(*"alpacas?")
        await pilot.pause()
        assert "unsaved edit" in str(screen.query_one("#inspect-meta", Static).render())
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "Saved message #0." in screen_text(app)
        stored = runtime.store.conversations.list_messages(runtime.conversations.conversation_id)
        assert stored[0].content == "alpacas?"
        assert runtime.conversations.messages[0]["content"] == "alpacas?"
        changed = recorder.of(ev.ConversationChanged)
        assert changed and changed[-1].reason == "edited"

        await runtime.submit("and now?")
    sent = llm_server.chat_requests()[-1]["messages"]
    contents = [str(m.get("content")) for m in sent]
    assert "alpacas?" in contents
    assert not any("llamas" in c for c in contents)
    await runtime.aclose()


async def test_delete_with_confirmation_changes_the_next_request(
    tmp_path: Path, llm_server
) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    llm_server.enqueue(text_reply("First answer."), text_reply("Second answer."), text_reply("ok"))
    await runtime.submit("first question about zebras")
    await runtime.submit("second question")
    app = ScreenHost(lambda: InspectScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        await _highlight(pilot, screen, 0)
        await pilot.press("delete")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "Delete user message #0?" in screen_text(app)
        await pilot.press("escape")  # no
        await pilot.pause()
        assert app.screen is screen
        assert _roles(runtime) == ["user", "assistant", "user", "assistant"]

        await pilot.press("delete")
        await pilot.pause()
        await pilot.click("#confirm-yes")
        await pilot.pause()
        assert app.screen is screen
        assert _roles(runtime) == ["assistant", "user", "assistant"]
        assert [m["role"] for m in runtime.conversations.messages] == [
            "assistant",
            "user",
            "assistant",
        ]
        assert "Deleted 1 message." in screen_text(app)
        await runtime.submit("third")
    sent = llm_server.chat_requests()[-1]["messages"]
    contents = [str(m.get("content")) for m in sent]
    assert not any("zebras" in c for c in contents)
    assert "First answer." in contents and "second question" in contents
    await runtime.aclose()


async def test_tool_calls_keep_the_transcript_valid(tmp_path: Path, llm_server) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": "echo hi"}, id="call_echo")]),
        text_reply("It printed hi."),
        text_reply("fine"),
    )
    await runtime.submit("run echo")
    assert _roles(runtime) == ["user", "assistant", "tool", "assistant"]
    app = ScreenHost(lambda: InspectScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        await _highlight(pilot, screen, 2)  # the tool result alone: refused, with the reason
        await pilot.press("delete")
        await pilot.pause()
        assert app.screen is screen
        assert "Delete that assistant message" in _error(screen)
        assert _roles(runtime) == ["user", "assistant", "tool", "assistant"]

        await _highlight(pilot, screen, 1)
        assert "→ bash" in str(screen.query_one("#inspect-meta", Static).render())
        await pilot.press("delete")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "its 1 tool call(s) and their 1 tool result" in app.screen.question
        assert "Delete assistant message #1" in screen_text(app)
        await pilot.press("y")
        await pilot.pause()
        assert _roles(runtime) == ["user", "assistant"]
        await runtime.submit("again")
    sent = llm_server.chat_requests()[-1]["messages"]
    assert all(m["role"] != "tool" and not m.get("tool_calls") for m in sent)
    await runtime.aclose()


async def test_requests_tab_shows_each_request_snapshot(tmp_path: Path, llm_server) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    llm_server.enqueue(text_reply("hello"))
    await runtime.submit("hi")
    snapshot = runtime.store.snapshots.list_for_conversation(runtime.conversations.conversation_id)[
        -1
    ]
    app = ScreenHost(lambda: InspectScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert screen.query_one("#inspect-tabs", TabbedContent).active == "inspect-requests-tab"
        detail = screen.query_one("#request-detail", TextArea).text
        assert "model: scripted-model" in detail
        assert snapshot.system_prompt in detail
        assert '"name": "bash"' in detail
        assert "request 1 of 1" in screen_text(app)
        await pilot.press("ctrl+t")
        assert screen.query_one("#inspect-tabs", TabbedContent).active == "inspect-messages-tab"
    await runtime.aclose()


async def test_refusals_revert_and_unsaved_edits(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    seed_conversation(runtime)
    app = ScreenHost(lambda: InspectScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        editor = screen.query_one("#inspect-editor", TextArea)
        editor.focus()
        editor.select_all()
        await pilot.press("backspace", "ctrl+s")
        await pilot.pause()
        assert "cannot be empty" in _error(screen)
        assert _roles(runtime)[0] == "user"
        assert runtime.conversations.messages[0]["content"] == "List the files in this repository"

        # The draft survives moving away and back; Revert drops it.
        await _highlight(pilot, screen, 3)
        assert editor.text == "There is one file: README.md."
        await _highlight(pilot, screen, 0)
        assert editor.text == ""
        await pilot.click("#inspect-revert")
        await pilot.pause()
        assert editor.text == "List the files in this repository"
        assert screen.drafts == {}

        # No writes while a turn runs.
        editor.focus()
        await pilot.press("x")
        runtime.begin_turn()
        try:
            await pilot.press("ctrl+s")
            assert "A turn is running" in _error(screen)
        finally:
            runtime.finish_turn()

        # Closing with an unsaved edit asks first.
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert app.results == [None]
        assert runtime.conversations.messages[0]["content"] == "List the files in this repository"
    await runtime.aclose()


async def test_empty_conversation_says_so(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    app = ScreenHost(lambda: InspectScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "No conversation yet." in screen_text(app)
        await pilot.press("delete", "ctrl+s")
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == [None]
    await runtime.aclose()
