"""Compaction pieces without a server: tool-pair-safe cuts, the record, the view, rendering."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from smith_tui.engine.compaction import (
    SUMMARY_PREFIX,
    CompactionContext,
    CompactionRecord,
    Compactor,
    choose_cut,
    find_boundary,
    message_check,
    render_older,
    summary_message,
)
from smith_tui.engine.prompt import RequestBudget
from smith_tui.engine.window import WindowSettings

Msg = dict[str, Any]


def call(cid: str) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": "bash", "arguments": "{}"}}


@st.composite
def messy_transcripts(draw: st.DrawFn) -> list[Msg]:
    """Transcripts as they really come: parallel calls, results out of order or late
    (after a user message, as crash repair appends them), unanswered calls, stray results."""
    msgs: list[Msg] = []
    pending: list[str] = []
    counter = 0
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(st.sampled_from(["user", "assistant", "calls", "results", "stray"]))
        if kind in ("user", "assistant"):
            msgs.append({"role": kind, "content": kind[0] * draw(st.integers(0, 300))})
        elif kind == "calls":
            ids = [f"c{counter + k}" for k in range(draw(st.integers(1, 3)))]
            counter += len(ids)
            msgs.append({"role": "assistant", "content": "", "tool_calls": [call(i) for i in ids]})
            pending += ids
        elif kind == "results" and pending:
            answered = draw(st.lists(st.sampled_from(pending), unique=True, min_size=1))
            for cid in draw(st.permutations(answered)):
                size = draw(st.integers(0, 400))
                msgs.append({"role": "tool", "tool_call_id": cid, "content": "o" * size})
                pending.remove(cid)
        elif kind == "stray":
            msgs.append({"role": "tool", "tool_call_id": "nobody", "content": "x"})
    return msgs


def assert_pair_safe(msgs: list[Msg], cut: int) -> None:
    tail = msgs[cut:]
    assert tail, "the kept tail is never empty"
    assert tail[0]["role"] != "tool", "the kept tail starts on a tool result"
    called_before = {c["id"] for m in msgs[:cut] for c in m.get("tool_calls") or ()}
    answered_after = {m.get("tool_call_id") for m in tail if m["role"] == "tool"}
    assert not called_before & answered_after, "a call was separated from its results"


@settings(max_examples=400, deadline=None)
@given(messy_transcripts(), st.integers(0, 3000), st.integers(0, 5))
def test_every_cut_is_tool_pair_safe(msgs: list[Msg], keep_chars: int, lo_hint: int) -> None:
    lo = min(lo_hint, max(0, len(msgs) - 1))
    cut = choose_cut(msgs, lo, keep_chars)
    if cut is None:
        return
    assert lo < cut < len(msgs)
    assert_pair_safe(msgs, cut)
    newest = len(msgs) - 1
    while newest > lo and msgs[newest]["role"] == "tool":
        newest -= 1
    assert cut <= newest, "the newest unit is always kept"


def test_a_cut_finds_a_safe_point_even_inside_a_long_round_run() -> None:
    msgs: list[Msg] = [{"role": "user", "content": "u" * 100}]
    for k in range(10):
        msgs.append(
            {"role": "assistant", "content": "", "tool_calls": [call(f"a{k}"), call(f"b{k}")]}
        )
        msgs.append({"role": "tool", "tool_call_id": f"b{k}", "content": "r" * 500})
        msgs.append({"role": "tool", "tool_call_id": f"a{k}", "content": "r" * 500})
    cut = choose_cut(msgs, 0, 2_000)
    assert cut is not None and msgs[cut].get("tool_calls")
    assert_pair_safe(msgs, cut)
    assert choose_cut(msgs[:1], 0, 10) is None  # nothing older to summarise


def test_the_record_round_trips_and_finds_its_boundary() -> None:
    msgs = [
        {"role": "user", "content": "a", "position": 0},
        {"role": "assistant", "content": "b", "position": 1},
        {"role": "user", "content": "c", "position": 3},
    ]
    record = CompactionRecord(3, message_check(msgs[2]), "S", "auto", 2, 1, 100, 10)
    assert CompactionRecord.from_json(record.to_json()) == record
    assert CompactionRecord.from_json("not json") is None
    assert find_boundary(msgs, record) == 2
    edited = [*msgs[:2], {**msgs[2], "content": "changed"}]
    assert find_boundary(edited, record) is None  # edited: the full history is used
    assert find_boundary(msgs[:2], record) is None  # removed


def test_the_view_falls_back_to_the_full_history_when_the_boundary_is_gone() -> None:
    class Notes:
        def __init__(self, text: str) -> None:
            self.text = text

        def get(self, conversation_id: str, note_id: str) -> Any:
            return type("Note", (), {"content": self.text})()

    class Store:
        def __init__(self, text: str) -> None:
            self.notes = Notes(text)

    msgs = [
        {"role": "user", "content": "a", "position": 0},
        {"role": "assistant", "content": "b", "position": 1},
        {"role": "user", "content": "c", "position": 2},
    ]
    good = CompactionRecord(2, message_check(msgs[2]), "SUMMARY", "auto", 2, 1, 0, 0)
    stale = CompactionRecord(2, "0" * 16, "SUMMARY", "auto", 2, 1, 0, 0)

    def compactor(record: CompactionRecord) -> Compactor:
        return Compactor(
            CompactionContext(
                conversation_id="c",
                llm=None,
                model="m",
                budget=RequestBudget(1000, 10, 0),
                window=WindowSettings(),
                emit=lambda e: None,
                store=Store(record.to_json()),
            )
        )

    view = compactor(good).view(msgs)
    assert view[0]["content"].startswith(SUMMARY_PREFIX) and "SUMMARY" in view[0]["content"]
    assert view[0]["transient"] is True
    assert view[1:] == msgs[2:]
    assert compactor(stale).view(msgs) == msgs


def test_render_keeps_the_newest_and_says_what_it_left_out() -> None:
    msgs = [{"role": "user", "content": f"message {k} " + "x" * 100} for k in range(50)]
    msgs.append({"role": "assistant", "content": "", "tool_calls": [call("c1")]})
    msgs.append({"role": "tool", "tool_call_id": "c1", "name": "bash", "content": "y" * 10_000})
    text = render_older(msgs, 0, len(msgs), 3_000, previous="EARLIER")
    assert text.startswith("Summary of the earlier part:\nEARLIER")
    assert "message 49" in text and "message 0 " not in text
    assert "older messages left out" in text
    assert "(10000 chars in all)" in text and "y" * 2_001 not in text
    assert "-> bash({})" in text


def test_the_summary_message_carries_todo_and_pinned_notes() -> None:
    record = CompactionRecord(0, "", "We fixed the parser.", "auto", 12, 3, 0, 0)
    message = summary_message(
        record,
        [{"content": "write the tests", "status": "in_progress"}],
        [("pinned/style", "Tabs, never spaces.")],
    )
    text = message["content"]
    assert "(12 messages)" in text and "We fixed the parser." in text
    assert "[~] write the tests" in text
    assert "[pinned/style]\nTabs, never spaces." in text


def test_the_transcript_marks_a_compaction_and_what_it_kept() -> None:
    from smith_tui.engine import events as ev
    from smith_tui.widgets.transcript.event_router import route_event

    class Notes:
        streaming = False

        def __init__(self) -> None:
            self.notices: list[tuple[str, str]] = []

        def add_notice(self, text: str, style: str = "info") -> None:
            self.notices.append((text, style))

    fields = dict(conversation_id="c", summarised=40, kept=6, tokens_before=9000, tokens_after=2100)
    shown = Notes()
    route_event(shown, ev.ContextCompacted(reason="auto", **fields))
    route_event(shown, ev.ContextCompacted(reason="manual", **fields))  # /compact says it itself
    ((text, style),) = shown.notices
    assert style == "info" and text.startswith("Context compacted (the context window filled up)")
    assert "40 older messages summarised, the newest 6 kept" in text
    assert "9000 → 2100 tokens" in text


@settings(max_examples=200, deadline=None)
@given(messy_transcripts(), st.integers(1, 40), st.integers(50, 2_000))
def test_the_threshold_check_matches_the_estimate_as_the_transcript_grows(
    msgs: list[Msg], step: int, window: int
) -> None:
    compactor = Compactor(
        CompactionContext(
            conversation_id="c",
            llm=None,
            model="m",
            budget=RequestBudget(window, 20, 0),
            window=WindowSettings(tool_output_keep_rounds=1, tool_output_elide_over_chars=50),
            emit=lambda e: None,
        )
    )
    limit = window * 0.85
    grown: list[Msg] = []
    for start in range(0, len(msgs), step):
        grown.extend(msgs[start : start + step])
        assert compactor.over_threshold(grown) == (compactor.estimate(grown) > limit)
