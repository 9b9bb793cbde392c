"""The bounded tail of live tool output: same lines as the whole output, bounded memory."""

from __future__ import annotations

import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from smith_tui.app.bridge import coalesce
from smith_tui.app.main_screen import MainScreen
from smith_tui.engine import events as ev
from smith_tui.widgets.activity import ToolActivity
from smith_tui.widgets.output_tail import CUT_MARK, KEEP_LINES, LINE_CHARS, OutputTail, tail_text
from tests.app.app_harness import screen_text, wait_until
from tests.app.test_app_events import BridgeHost
from tests.app.test_panes import SIZE, PanesHost, tool_start


def shown(output: str, lines: int, line_chars: int) -> list[str]:
    """The lines a tail of the whole ``output`` shows, computed the plain way."""

    def visible(line: str) -> str:
        line = line.rstrip("\r").rsplit("\r", 1)[-1]
        return CUT_MARK + line[-(line_chars - 1) :] if len(line) > line_chars else line

    *done, unfinished = output.split("\n")
    out = [visible(line) for line in done]
    if visible(unfinished):
        out.append(visible(unfinished))
    return out[-lines:]


pieces = st.lists(st.text(alphabet="ab\n\r…", max_size=40), max_size=12)


@settings(max_examples=400, deadline=None)
@given(pieces, st.integers(1, 4), st.integers(2, 6))
def test_the_tail_shows_what_the_whole_output_would(
    chunks: list[str], lines: int, line_chars: int
) -> None:
    tail = OutputTail(lines, line_chars)
    for chunk in chunks:
        tail.add(chunk)
        assert len(tail.partial) <= line_chars + 1
    assert tail.lines() == shown("".join(chunks), lines, line_chars)


@settings(max_examples=400, deadline=None)
@given(st.lists(pieces, max_size=5), st.integers(1, 3), st.integers(2, 5))
def test_pieces_merged_and_cut_on_the_way_show_the_same(
    batches: list[list[str]], lines: int, line_chars: int
) -> None:
    # As the bridge does: each batch merged and cut again after every piece, for a view
    # that shows at most as many lines as the cut keeps.
    tail = OutputTail(lines, line_chars)
    for batch in batches:
        merged = ""
        for chunk in batch:
            merged = tail_text(merged + chunk, lines + 1, line_chars + 1)
        tail.add(merged)
    assert tail.lines() == shown("".join("".join(b) for b in batches), lines, line_chars)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab\n\r", max_size=200), st.integers(1, 4), st.integers(2, 6))
def test_cut_text_is_bounded_and_short_text_comes_back_as_it_is(
    text: str, lines: int, line_chars: int
) -> None:
    bound = (lines + 1) * (line_chars + 3)
    cut = tail_text(text, lines, line_chars)
    assert len(cut) <= bound
    if len(text) <= bound:
        assert cut is text


def test_a_huge_line_keeps_its_end_and_progress_bars_start_over() -> None:
    tail = OutputTail(3)
    for _ in range(160):  # 10 MB without a newline
        tail.add("x" * 65_535 + "y")
    (line,) = tail.lines()
    assert len(line) == LINE_CHARS and line.startswith(CUT_MARK) and line.endswith("xy")
    tail.add("\ndone\n10%\r20%\r30%")
    assert tail.lines() == [line, "done", "30%"]
    tail.add("\r\nwindows line\r\n")
    assert tail.lines() == ["done", "30%", "windows line"]
    assert len(tail_text("z\n" * 5_000_000)) < (KEEP_LINES + 1) * (LINE_CHARS + 3)


def test_merging_keeps_text_deltas_whole_and_cuts_tool_output() -> None:
    flood = [ev.ToolOutputDelta(turn_id="t", call_id="c", text="x" * 65_536) for _ in range(50)]
    text = [ev.TextDelta(turn_id="t", text="word " * 2_000) for _ in range(50)]
    (output,) = coalesce(flood)
    assert output.text == CUT_MARK + "x" * (LINE_CHARS - 1)
    (answer,) = coalesce(text)
    assert answer.text == "word " * 100_000


def test_events_held_until_the_panes_exist_stay_merged_and_cut() -> None:
    screen = MainScreen(None)  # no runtime: the panes are never mounted
    piece = ev.ToolOutputDelta(turn_id="t", call_id="c", text="x" * 65_536)
    for _ in range(3):
        screen.apply_events([piece] * 100 + [ev.TextDelta(turn_id="t", text="word ")])
    assert [type(e).__name__ for e in screen._held] == ["ToolOutputDelta", "TextDelta"] * 3
    assert all(len(e.text) <= LINE_CHARS for e in screen._held)


async def test_the_bridge_holds_a_flood_as_a_few_lines() -> None:
    app = BridgeHost()
    async with app.run_test() as pilot:
        callback = app.subscribers[0]

        def produce() -> None:
            for i in range(300):  # 20 MB in 64 KiB pieces, one newline every 10 pieces
                end = f"\nline {i}\n" if i % 10 == 9 else ""
                callback(ev.ToolOutputDelta(turn_id="t", call_id="c", text="x" * 65_536 + end))
            callback(ev.TurnFinished(turn_id="t", conversation_id="c", stop_reason="completed"))

        thread = threading.Thread(target=produce)
        thread.start()
        thread.join()
        await wait_until(
            pilot, lambda: app.batches and isinstance(app.batches[-1][-1], ev.TurnFinished)
        )
        deltas = [e for batch in app.batches for e in batch if isinstance(e, ev.ToolOutputDelta)]
        assert all(len(e.text) < (KEEP_LINES + 1) * (LINE_CHARS + 3) for e in deltas)
        tail = OutputTail(3)
        for delta in deltas:
            tail.add(delta.text)
        assert tail.lines() == ["line 289", CUT_MARK + "x" * (LINE_CHARS - 1), "line 299"]


async def test_the_activity_pane_shows_the_end_of_a_cut_line() -> None:
    app = PanesHost()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(ToolActivity)
        app.feed(tool_start("t1", "b", "bash", '{"command": "yes"}'))
        app.feed(ev.ToolOutputDelta(turn_id="t1", call_id="b", text="ab" * 1_000_000 + "END"))
        await pilot.pause()
        lines = pane.line_texts()
        assert lines[1].startswith("  │ …ab") and lines[1].endswith("abEND")
        assert "abEND" in screen_text(app)
        (record,) = pane.calls
        assert len(record.output.partial) == LINE_CHARS
