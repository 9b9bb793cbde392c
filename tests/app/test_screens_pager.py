"""The transcript pager: the whole un-elided conversation in one read-only view, with find."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, TextArea

from smith_tui.app.screens.pager_screen import PagerScreen
from tests.app.app_harness import screen_text
from tests.app.test_screens_host import SIZE, ScreenHost, offline_runtime

BIG_OUTPUT = "\n".join(f"line {i:04d} of a long listing" for i in range(200))


def _seed_long(runtime) -> None:
    """A conversation whose first tool output is big and old enough for the window to elide."""
    store = runtime.store
    conv = store.conversations.create(runtime.project_id, "long")
    messages = [{"role": "user", "content": "Show the listing"}]
    for i in range(10):
        call = {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "bash", "arguments": f'{{"command": "step {i}"}}'},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        output = BIG_OUTPUT if i == 0 else f"done step {i}"
        messages.append(
            {"role": "tool", "tool_call_id": f"call_{i}", "name": "bash", "content": output}
        )
    messages.append({"role": "assistant", "content": "All steps done. The Listing is long."})
    store.conversations.append_messages(conv, messages)
    runtime.load_conversation(conv)


async def test_shows_everything_read_only_in_one_view(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    _seed_long(runtime)
    async with ScreenHost(lambda: PagerScreen(runtime)).run_test(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        screen = app.screen
        area = screen.query_one("#pager-text", TextArea)
        assert BIG_OUTPUT in area.text  # never elided
        assert '→ bash {"command": "step 3"}  [call_3]' in area.text
        assert "── #2 tool bash [call_0]" in area.text
        assert area.read_only
        # One text view, not a widget per message.
        assert len(screen.query(TextArea)) == 1
        assert "Show the listing" in screen_text(app)
        before = area.text
        area.focus()
        await pilot.press("x", "enter", "backspace")
        assert area.text == before
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == [None]
    await runtime.aclose()


async def test_find_next_previous_and_no_match(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    _seed_long(runtime)
    async with ScreenHost(lambda: PagerScreen(runtime)).run_test(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        screen = app.screen
        area = screen.query_one("#pager-text", TextArea)
        await pilot.press("slash")
        assert app.focused is screen.query_one("#pager-find", Input)
        await pilot.press(*"listing")
        await pilot.pause()
        count = len(screen.matches)
        assert count == 202  # "Show the listing", 200 lines, the answer (case ignored)
        assert area.selected_text == "listing" and "1 of 202" in screen_text(app)
        first_line = area.selection.start[0]
        await pilot.press("enter")
        assert "2 of 202" in screen_text(app)
        assert area.selection.start[0] > first_line
        await pilot.press("shift+enter", "shift+enter")  # wraps to the last match
        await pilot.pause()
        assert screen.match_index == count - 1
        assert area.selected_text == "Listing"
        assert "The Listing is long." in screen_text(app)  # scrolled into view

        area.focus()
        await pilot.press("n")
        assert screen.match_index == 0
        await pilot.press("N", "f3", "f3")
        assert screen.match_index == 1

        screen.query_one("#pager-find", Input).value = "no such words"
        await pilot.pause()
        assert "no matches" in screen_text(app)
        assert area.selected_text == ""
    await runtime.aclose()


async def test_empty_conversation(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    async with ScreenHost(lambda: PagerScreen(runtime)).run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "no messages yet" in screen_text(pilot.app)
    await runtime.aclose()
