"""Issue 27 in the history and inspect screens, through the real app, runtime and store:
the history filter searches titles and every stored message and opens a hit at its
message; forks show under their source; ``f`` forks from history (whole) and from
inspect (up to a message's turn, the files optionally put back)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, OptionList

from smith_tui.app.screens.confirm import ConfirmScreen
from smith_tui.app.screens.fork_question import ForkQuestion
from smith_tui.app.screens.history_rows import fork_source, tree_order
from smith_tui.app.screens.history_screen import HistoryScreen
from smith_tui.app.screens.inspect_screen import InspectScreen
from smith_tui.app.screens.pager_screen import PagerScreen
from smith_tui.engine import forks
from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    screen_text,
    submit,
    wait_for_text,
    wait_until,
)
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.pilot import wait_for_history_hits


async def _turn(pilot: Any, runtime: Any, prompt: str) -> None:
    count = len(runtime.store.turns.list_for_conversation(runtime.conversations.conversation_id))
    await submit(pilot, prompt)
    await wait_until(
        pilot,
        lambda: (
            not runtime.busy
            and len(
                runtime.store.turns.list_for_conversation(runtime.conversations.conversation_id)
            )
            > count
        ),
        f"the turn {prompt!r}",
    )


async def _open_history(pilot: Any) -> HistoryScreen:
    pilot.app.action_open_history()
    await wait_until(
        pilot,
        lambda: isinstance(pilot.app.screen, HistoryScreen) and bool(pilot.app.screen.rows),
        "history, filled",
    )
    screen = pilot.app.screen
    assert isinstance(screen, HistoryScreen)
    return screen


async def test_the_filter_searches_messages_and_opens_a_hit_at_its_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    filler = "\n".join(f"line {n} of a long answer" for n in range(80))
    llm_server.enqueue(
        text_reply(filler),
        text_reply(filler + "\nthe zanzibar parser is fixed\n" + filler),
        text_reply("nothing to see"),
    )
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as runtime:
        app = make_app(runtime)
        async with running(app, size=(120, 36)) as pilot:
            await _turn(pilot, runtime, "one")
            await _turn(pilot, runtime, "two")
            source = runtime.conversations.conversation_id
            runtime.store.conversations.rename(source, "Parser work")
            await submit(pilot, "/new")
            await wait_until(pilot, lambda: runtime.conversations.conversation_id != source, "/new")
            await _turn(pilot, runtime, "elsewhere")
            other = runtime.conversations.conversation_id
            runtime.store.conversations.rename(other, "Zanzibar trip")

            screen = await _open_history(pilot)
            searched: list[str] = []
            real_search = screen.search
            monkeypatch.setattr(screen, "search", lambda q: (searched.append(q), real_search(q)))
            box = screen.query_one("#history-search", Input)
            box.focus()
            # Typing runs one search once it pauses, for the last text.
            box.value = "zanz"
            box.value = "zanzibar"
            await wait_for_history_hits(pilot, "zanzibar")
            assert searched == ["zanzibar"]
            # The title match first, then the message with the words, in its conversation.
            assert [row.conversation.id for row in screen.title_hits] == [other]
            assert [(h.conversation_id, h.position) for h in screen.hits] == [(source, 3)]
            text = screen_text(app)
            assert "Zanzibar trip  title" in text
            assert "Parser work  #3 assistant:" in text and "the «zanzibar» parser" not in text
            assert "zanzibar parser is fixed" in text
            assert "1 match · 1 title" in text

            # Enter on the message: its conversation is active, the pager opens at it.
            await pilot.press("enter")
            assert app.focused is screen.query_one("#history-hits", OptionList)
            await pilot.press("down", "enter")
            await wait_until(pilot, lambda: isinstance(app.screen, PagerScreen), "the pager")
            assert runtime.conversations.conversation_id == source
            pager = app.screen
            assert isinstance(pager, PagerScreen)
            await wait_until(pilot, lambda: pager.pager.current_match is not None, "the hit")
            match = pager.pager.current_match
            start, end = pager.message_lines(3) or (0, 0)
            assert match is not None and start <= match.line < end
            assert pager.pager.scroll_y > 40
            assert "the zanzibar parser is fixed" in screen_text(app)
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is app.main_screen, "the transcript")

            # Enter on a title match opens that conversation, no pager.
            screen = await _open_history(pilot)
            screen.query_one("#history-search", Input).value = "trip"
            await wait_for_history_hits(pilot, "trip")
            assert not screen.hits and len(screen.title_hits) == 1
            await pilot.press("enter")  # into the results
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.screen is app.main_screen, "closed")
            assert runtime.conversations.conversation_id == other

            # Emptying the filter shows the table again at once.
            screen = await _open_history(pilot)
            box = screen.query_one("#history-search", Input)
            box.value = "parser"
            await wait_for_history_hits(pilot, "parser")
            box.value = ""
            await pilot.pause()
            assert screen.query_one("#history-table").display
            assert not screen.query_one("#history-hits").display


async def test_forks_show_under_their_source_and_f_forks_from_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply("first answer"), text_reply("second answer"))
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as runtime:
        app = make_app(runtime)
        async with running(app, size=(120, 36)) as pilot:
            await _turn(pilot, runtime, "first question")
            await _turn(pilot, runtime, "second question")
            source = runtime.conversations.conversation_id
            runtime.store.conversations.rename(source, "Source talk")
            await submit(pilot, "/fork 1")
            await wait_for_text(pilot, "forked up to turn 1 into conversation")
            at_one = runtime.conversations.conversation_id
            assert at_one != source
            unrelated = runtime.store.conversations.create(runtime.project_id, "Unrelated")
            runtime.store.conversations.append_messages(
                unrelated, [{"role": "user", "content": "hello"}]
            )

            screen = await _open_history(pilot)
            order = [(row.conversation.id, row.depth, row.fork_turn) for row in screen.rows]
            # Newest first, the fork right under its source (the source is older).
            assert order == [(unrelated, 0, None), (source, 0, None), (at_one, 1, 1)]
            text = screen_text(app)
            assert "↳ Source talk (fork)  fork at turn 1" in text
            lines = text.splitlines()
            source_line = next(n for n, line in enumerate(lines) if "Source talk  " in line)
            assert "↳ Source talk (fork)" in lines[source_line + 1]

            # f on the source: a whole fork, opened.
            table = screen.query_one("#history-table")
            table.move_cursor(row=1)
            await pilot.press("f")
            await wait_until(pilot, lambda: app.screen is app.main_screen, "closed")
            whole = runtime.conversations.conversation_id
            assert whole not in (source, at_one, unrelated)
            stored = runtime.store.conversations
            assert [m.content for m in stored.list_messages(whole)] == [
                m.content for m in stored.list_messages(source)
            ]
            link = stored.get(whole).metadata[forks.FORKED_FROM]
            assert link == {
                "conversation": source,
                "turn": forks.turn_ids(runtime.store, source)[1],
            }
            assert [m["content"] for m in runtime.conversations.messages][-1] == "second answer"

            # A fork of a fork sits one step deeper.
            deeper = forks.fork_conversation(runtime.store, whole)
            screen = await _open_history(pilot)
            order = [(row.conversation.id, row.depth) for row in screen.rows]
            assert order[:2] == [(unrelated, 0), (source, 0)]
            assert order[2:] == [(whole, 1), (deeper, 2), (at_one, 1)]
            assert "  ↳ Source talk (fork) (fork)  fork at turn 2" in screen_text(app)
            assert fork_source(stored.get(deeper)) == whole
            # A fork whose source is gone is a top-level row.
            stored.delete(whole)
            rows = tree_order(stored.list_for_project(runtime.project_id))
            assert (stored.get(deeper), 0) in rows


async def test_f_in_inspect_forks_at_the_message_turn_and_can_restore_the_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    for n in (1, 2, 3):
        llm_server.enqueue(
            text_reply(tool_calls=[tool_call("write", {"path": "a.txt", "content": f"v{n}\n"})]),
            text_reply(f"wrote v{n}"),
        )
    with isolated_runtime(
        tmp_path, monkeypatch, llm_server.base_url, config={"permissions": {"mode": "yolo"}}
    ) as runtime:
        repo = Path(runtime.options.cwd)
        app = make_app(runtime)
        async with running(app, size=(120, 36)) as pilot:
            for n in (1, 2, 3):
                await _turn(pilot, runtime, f"write version {n}")
            source = runtime.conversations.conversation_id
            assert (repo / "a.txt").read_text() == "v3\n"
            before = [m.content for m in runtime.store.conversations.list_messages(source)]

            async def inspect_at(content: str) -> InspectScreen:
                app.action_open_inspect()
                await wait_until(
                    pilot,
                    lambda: isinstance(app.screen, InspectScreen) and bool(app.screen.stored),
                    "inspect, filled",
                )
                screen = app.screen
                assert isinstance(screen, InspectScreen)
                index = [m.content for m in screen.stored].index(content)
                screen.query_one("#inspect-list", OptionList).highlighted = index
                await wait_until(pilot, lambda: screen.current is screen.stored[index], "it")
                return screen

            # Escape on the question: nothing forked.
            await inspect_at("write version 2")
            await pilot.press("f")
            await wait_until(pilot, lambda: isinstance(app.screen, ForkQuestion), "the question")
            assert "up to the end of turn 2 of 3 (message #4)" in app.screen.question
            await pilot.press("escape")
            await wait_for_text(pilot, "Nothing forked.")
            assert runtime.conversations.conversation_id == source
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is app.main_screen, "closed")

            # Fork + restore files, from the second turn's answer.
            await inspect_at("wrote v2")
            await pilot.press("f")
            await wait_until(pilot, lambda: isinstance(app.screen, ForkQuestion), "the question")
            await pilot.press("r")
            await wait_for_text(pilot, "forked up to turn 2")
            fork = runtime.conversations.conversation_id
            assert fork != source
            assert (repo / "a.txt").read_text() == "v2\n"
            contents = [m.content for m in runtime.store.conversations.list_messages(fork)]
            assert contents == before[: before.index("wrote v2") + 1]
            link = runtime.store.conversations.get(fork).metadata[forks.FORKED_FROM]
            assert link == {
                "conversation": source,
                "turn": forks.turn_ids(runtime.store, source)[1],
            }
            assert "restored 1 file" in screen_text(app)
            # The source is untouched.
            assert [m.content for m in runtime.store.conversations.list_messages(source)] == before

            # Fork only, from the fork's first turn: the files stay as they are.
            await inspect_at("write version 1")
            await pilot.press("f")
            await wait_until(pilot, lambda: isinstance(app.screen, ForkQuestion), "the question")
            await pilot.press("f")
            await wait_until(
                pilot, lambda: runtime.conversations.conversation_id not in (source, fork), "fork"
            )
            assert (repo / "a.txt").read_text() == "v2\n"
            second = runtime.conversations.conversation_id
            contents = [m.content for m in runtime.store.conversations.list_messages(second)]
            assert contents == before[: before.index("wrote v1") + 1]

            # On the last turn there is nothing to put back: a plain confirm, a whole fork.
            await inspect_at("wrote v1")
            await pilot.press("f")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the confirm")
            assert not isinstance(app.screen, ForkQuestion)
            assert "whole" in app.screen.question
            await pilot.press("y")
            await wait_until(
                pilot,
                lambda: runtime.conversations.conversation_id not in (source, fork, second),
                "fork",
            )
            assert len(
                runtime.store.conversations.list_messages(runtime.conversations.conversation_id)
            ) == len(contents)
