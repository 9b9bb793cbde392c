"""The transcript pager: the whole un-elided conversation in one read-only view, with find."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from smith_tui.app.screens.pager_screen import PagerScreen
from smith_tui.widgets.text_pager import TextPager
from tests.app.app_harness import screen_text
from tests.support.screen_host import SIZE, ScreenHost, offline_runtime

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
    runtime.conversations.load(conv)


async def test_shows_everything_read_only_in_one_view(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    _seed_long(runtime)
    async with ScreenHost(lambda: PagerScreen(runtime)).run_test(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        screen = app.screen
        pager = screen.query_one("#pager-text", TextPager)
        assert BIG_OUTPUT in pager.text  # never elided
        assert '→ bash {"command": "step 3"}  [call_3]' in pager.text
        assert "── #2 tool bash [call_0]" in pager.text
        # One virtualised view, not a widget per message.
        assert len(screen.query("*")) < 20
        assert "Show the listing" in screen_text(app)
        before = pager.text
        await pilot.press("x", "enter", "backspace", "end")
        await pilot.pause()
        assert pager.text == before  # read-only
        assert "The Listing is long." in screen_text(app)  # end scrolled to the bottom
        assert pager.scroll_y == pager.max_scroll_y > 0
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
        pager = screen.query_one("#pager-text", TextPager)
        await pilot.press("slash")
        assert app.focused is screen.query_one("#pager-find", Input)
        await pilot.press(*"listing")
        await pilot.pause()
        count = len(pager.matches)
        assert count == 202  # "Show the listing", 200 lines, the answer (case ignored)
        assert pager.current_text == "listing" and "1 of 202" in screen_text(app)
        first_line = pager.current_match.line
        await pilot.press("enter")
        assert "2 of 202" in screen_text(app)
        assert pager.current_match.line > first_line
        await pilot.press("shift+enter", "shift+enter")  # wraps to the last match
        await pilot.pause()
        assert pager.current_index == count - 1
        assert pager.current_text == "Listing"
        assert "The Listing is long." in screen_text(app)  # scrolled into view

        pager.focus()
        await pilot.press("n")
        assert pager.current_index == 0
        await pilot.press("N", "f3", "f3")
        await pilot.pause()
        assert pager.current_index == 1
        assert "line 0000 of a long listing" in screen_text(app)

        screen.query_one("#pager-find", Input).value = "no such words"
        await pilot.pause()
        assert "no matches" in screen_text(app)
        assert pager.current_text == "" and pager.matches == []
    await runtime.aclose()


async def test_empty_conversation(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    async with ScreenHost(lambda: PagerScreen(runtime)).run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "no messages yet" in screen_text(pilot.app)
    await runtime.aclose()
