"""The history screen against a real store: list, scope toggle, search, open, rename, delete, new."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, OptionList

from smith_tui.app.screens.confirm import ConfirmScreen
from smith_tui.app.screens.history_screen import HistoryScreen
from smith_tui.app.screens.pager_screen import PagerScreen
from smith_tui.engine import events as ev
from tests.app.app_harness import screen_text, wait_until
from tests.support.pilot import wait_for_history_hits
from tests.support.runtime import Recorder
from tests.support.screen_host import SIZE, ScreenHost, offline_runtime

FIXED = "2025-01-02 03:04"


def _fill(runtime) -> dict[str, str]:
    """Three conversations here and one in another project; returns ids by name."""
    store = runtime.store
    parser = store.conversations.create(runtime.project_id, "Fix the parser")
    store.conversations.append_messages(
        parser,
        [
            {"role": "user", "content": "the parser breaks on tabs"},
            {"role": "assistant", "content": "I changed the tokenizer to expand tabs"},
        ],
    )
    turn = store.turns.start(parser, "direct")
    store.usage.record(parser, turn, "direct", "m", 1200, 300)
    turn = store.turns.start(parser, "direct")
    store.usage.record(parser, turn, "direct", "m", 100, 20)
    docs = store.conversations.create(runtime.project_id, None)
    store.conversations.append_messages(
        docs, [{"role": "user", "content": "write docs for the tokenizer module"}]
    )
    other = store.conversations.create("other-project", "Elsewhere")
    store.conversations.append_messages(other, [{"role": "user", "content": "tokenizer in Go"}])
    return {"parser": parser, "docs": docs, "other": other}


def _titles(screen: HistoryScreen) -> list[str]:
    return [row.title for row in screen.rows]


def _host(runtime) -> ScreenHost:
    return ScreenHost(lambda: HistoryScreen(runtime, time_format=lambda ts: FIXED))


async def test_lists_this_project_with_turns_tokens_and_toggles_all(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    ids = _fill(runtime)
    runtime.conversations.load(ids["parser"])
    async with _host(runtime).run_test(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        assert sorted(_titles(screen)) == ["Fix the parser", "write docs for the tokenizer module"]
        parser = next(r for r in screen.rows if r.conversation.id == ids["parser"])
        assert (parser.turns, parser.tokens, parser.messages) == (2, 1620, 2)
        text = screen_text(app)
        assert "● Fix the parser" in text  # the active one, under the cursor
        assert "1,620" in text and FIXED in text
        assert screen.selected_row is parser

        await pilot.press("a")
        await pilot.pause()
        assert "Elsewhere" in _titles(screen)
        assert "Project" in screen_text(app) and "other-project" in screen_text(app)
        await pilot.press("a")
        await pilot.pause()
        assert "Elsewhere" not in _titles(screen)
    await runtime.aclose()


async def test_search_finds_messages_and_opens_the_hit(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    ids = _fill(runtime)
    runtime.conversations.load(ids["docs"])
    recorder = Recorder()
    runtime.bus.subscribe(recorder)
    async with _host(runtime).run_test(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        screen = app.screen
        await pilot.press("slash", *"tabs")
        await wait_for_history_hits(pilot, "tabs")
        assert [h.conversation_id for h in screen.hits] == [ids["parser"], ids["parser"]]
        text = screen_text(app)
        assert "Fix the parser" in text and "the parser breaks on tabs" in text
        assert "2 matches" in text

        # Scope: this project only, then all projects.
        screen.query_one("#history-search").value = "tokenizer"
        await wait_for_history_hits(pilot, "tokenizer")
        assert {h.conversation_id for h in screen.hits} == {ids["parser"], ids["docs"]}
        await pilot.click("#history-all")
        await pilot.pause()
        assert ids["other"] in {h.conversation_id for h in screen.hits}

        screen.query_one("#history-search").value = "zzzz"
        await wait_for_history_hits(pilot, "zzzz")
        assert "No messages match." in screen_text(app)

        await pilot.press("slash")
        screen.query_one("#history-search").value = "tabs"
        await wait_for_history_hits(pilot, "tabs")
        await pilot.press("enter")  # into the results
        assert app.focused is screen.query_one("#history-hits", OptionList)
        await pilot.press("enter")  # open the hit's conversation
        await pilot.pause()
        assert app.results == [ids["parser"]]
        assert runtime.conversations.conversation_id == ids["parser"]
        assert runtime.conversations.messages[0]["content"] == "the parser breaks on tabs"
        assert recorder.of(ev.ConversationChanged)[-1].conversation_id == ids["parser"]
    await runtime.aclose()


async def test_open_from_the_table(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    ids = _fill(runtime)
    runtime.conversations.load(ids["parser"])
    async with _host(runtime).run_test(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        screen = app.screen
        table = screen.query_one("#history-table", DataTable)
        table.move_cursor(row=[r.conversation.id for r in screen.rows].index(ids["docs"]))
        await pilot.press("enter")
        await pilot.pause()
        assert runtime.conversations.conversation_id == ids["docs"]
        assert app.results == [ids["docs"]]
    await runtime.aclose()


async def test_rename_and_cancel_rename(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    ids = _fill(runtime)
    runtime.conversations.load(ids["parser"])
    async with _host(runtime).run_test(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        screen = app.screen
        await pilot.press("r")
        box = screen.query_one("#history-rename")
        assert box.display and box.value == "Fix the parser"
        box.value = ""
        await pilot.press(*"Tabs", "enter")
        await pilot.pause()
        assert runtime.store.conversations.get(ids["parser"]).title == "Tabs"
        assert "Tabs" in _titles(screen) and "Renamed to “Tabs”." in screen_text(app)
        assert not box.display

        await pilot.press("r", "x", "escape")
        await pilot.pause()
        assert runtime.store.conversations.get(ids["parser"]).title == "Tabs"
        assert "Rename cancelled." in screen_text(app)
        assert isinstance(app.screen, HistoryScreen)
    await runtime.aclose()


async def test_delete_asks_first_and_replaces_the_active_conversation(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    ids = _fill(runtime)
    runtime.conversations.load(ids["parser"])
    async with _host(runtime).run_test(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        screen = app.screen
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "“Fix the parser” with its 2 messages" in app.screen.question
        await pilot.press("n")
        await pilot.pause()
        assert runtime.store.conversations.get(ids["parser"]) is not None
        assert "Nothing deleted." in screen_text(app)

        await pilot.press("d")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert runtime.store.conversations.get(ids["parser"]) is None
        assert runtime.conversations.conversation_id not in (None, ids["parser"])
        assert runtime.conversations.messages == []
        assert "Fix the parser" not in _titles(screen)
        assert "Conversation deleted." in screen_text(app)
    await runtime.aclose()


async def test_new_conversation(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    ids = _fill(runtime)
    runtime.conversations.load(ids["parser"])
    async with _host(runtime).run_test(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        assert runtime.conversations.conversation_id not in ids.values()
        assert app.results == [runtime.conversations.conversation_id]
    await runtime.aclose()


async def test_busy_runtime_refuses_to_switch(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    ids = _fill(runtime)
    runtime.conversations.load(ids["parser"])
    async with _host(runtime).run_test(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        screen = app.screen
        table = screen.query_one("#history-table", DataTable)
        table.move_cursor(row=[r.conversation.id for r in screen.rows].index(ids["docs"]))
        runtime.begin_turn()
        try:
            await pilot.press("enter")
            await pilot.pause()
            assert "a turn is running" in screen_text(app)
            assert runtime.conversations.conversation_id == ids["parser"]
        finally:
            runtime.finish_turn()
    await runtime.aclose()


async def test_a_sub_agent_hit_opens_its_parent_with_the_pager_on_its_messages(
    tmp_path: Path,
) -> None:
    runtime = offline_runtime(tmp_path)
    ids = _fill(runtime)
    store = runtime.store
    child = store.conversations.create(runtime.project_id, "worker job", parent_id=ids["parser"])
    store.conversations.append_messages(
        child,
        [
            {"role": "user", "content": "look at the lexer"},
            {"role": "assistant", "content": "the quokka lexer drops tabs"},
        ],
    )
    runtime.conversations.load(ids["docs"])
    async with _host(runtime).run_test(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        screen = app.screen
        screen.query_one("#history-search").value = "quokka"
        await wait_for_history_hits(pilot, "quokka")
        assert [(h.conversation_id, h.parent_id) for h in screen.hits] == [(child, ids["parser"])]
        assert "worker job (sub-agent)  #1 assistant:" in screen_text(app)
        await pilot.press("enter", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PagerScreen), "the pager")
        assert (
            app.results == [ids["parser"]]
            and runtime.conversations.conversation_id == ids["parser"]
        )
        pager = app.screen
        await wait_until(pilot, lambda: pager.pager.current_match is not None, "the hit")
        assert pager.pager.current_text.lower() == "quokka"
        assert "the quokka lexer drops tabs" in screen_text(app)
    await runtime.aclose()
