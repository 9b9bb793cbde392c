"""The screens' plain helpers: secret redaction, edit text, removal plans, find, transcript text."""

from __future__ import annotations

from smith_tui.app.screens.config_rows import (
    HIDDEN,
    edit_text,
    is_secret_name,
    redact,
    value_text,
)
from smith_tui.app.screens.message_removal import plan_removal
from smith_tui.config import coerce_value
from smith_tui.engine.transcript_text import message_preview, transcript_text
from smith_tui.store import Message
from smith_tui.widgets.text_pager import TextMatch, clean_line, find_in_lines, wrap_offsets


def test_secret_names_and_redaction() -> None:
    for name in ("api_key", "API_KEY", "linkup_apikey", "client_secret", "password", "token"):
        assert is_secret_name(name), name
    for name in ("api_key_env", "max_tokens", "tool_output_keep_rounds", "endpoint", "model"):
        assert not is_secret_name(name), name
    value = {
        "api_key": "sk-1",
        "api_key_env": "LLM_API_KEY",
        "nested": {"access_token": "t-2", "items": ["https://u:p4ss@host/x", "plain"]},
        "empty_secret": "",
    }
    assert redact(value) == {
        "api_key": HIDDEN,
        "api_key_env": "LLM_API_KEY",
        "nested": {"access_token": HIDDEN, "items": ["https://u:••••@host/x", "plain"]},
        "empty_secret": "",
    }


def test_edit_text_round_trips_through_coercion() -> None:
    for value in (3, 80.5, False, [2000, 8000], "INDEX.md", "123", "true", None):
        text = edit_text(value)
        if value is None:
            assert text == ""
        else:
            assert coerce_value(text) == value, value
    assert edit_text(HIDDEN) == ""
    assert value_text(None) == "absent" and value_text([1, 2]) == "[1, 2]"


def _message(mid: int, role: str, **fields) -> Message:
    return Message(
        id=mid,
        conversation_id="c",
        position=mid,
        role=role,
        content=fields.pop("content", "x"),
        created_at=0.0,
        **fields,
    )


def _call(cid: str) -> dict:
    return {"id": cid, "type": "function", "function": {"name": "bash", "arguments": "{}"}}


def test_removal_keeps_calls_and_results_together() -> None:
    messages = [
        _message(1, "user"),
        _message(2, "assistant", content=None, tool_calls=[_call("a"), _call("b")]),
        _message(3, "tool", tool_call_id="a"),
        _message(4, "tool", tool_call_id="b"),
        _message(5, "assistant"),
        _message(6, "tool", tool_call_id="orphan"),
    ]
    plan = plan_removal(messages, 2)
    assert plan.allowed and plan.ids == (2, 3, 4)
    assert "2 tool call(s) and their 2 tool results" in plan.question
    refused = plan_removal(messages, 3)
    assert not refused.allowed and "assistant message #2" in refused.refusal
    assert plan_removal(messages, 1).ids == (1,)
    assert plan_removal(messages, 6).ids == (6,)  # a result that answers no call may go
    assert not plan_removal(messages, 99).allowed


def test_find_ignores_case_and_does_not_overlap() -> None:
    assert find_in_lines(["Aaa aAa", "x", "AA"], "aa") == [
        TextMatch(0, 0, 2),
        TextMatch(0, 4, 6),
        TextMatch(2, 0, 2),
    ]
    assert find_in_lines(["Straße STRASSE"], "strasse") == [TextMatch(0, 7, 14)]
    assert find_in_lines(["abc"], "") == []


def test_wrapping_and_cleaning() -> None:
    assert wrap_offsets("", 10) == [(0, 0)]
    assert wrap_offsets("short", 10) == [(0, 5)]
    assert wrap_offsets("aaaa bbbb cccc", 10) == [(0, 10), (10, 14)]
    assert wrap_offsets("x" * 25, 10) == [(0, 10), (10, 20), (20, 25)]
    wide = "漢字" * 6  # 24 cells
    rows = wrap_offsets(wide, 10)
    assert [wide[s:e] for s, e in rows] == ["漢字漢字漢", "字漢字漢字", "漢字"]
    assert clean_line("a\tb\x1b[0m") == "a   b\u241b[0m"


def test_transcript_text_keeps_everything() -> None:
    long = "y" * 5000
    text = transcript_text(
        [
            {"role": "user", "content": "hi", "position": 0},
            {
                "role": "assistant",
                "content": None,
                "reasoning": "think\nmore",
                "tool_calls": [_call("a")],
                "position": 1,
            },
            {"role": "tool", "name": "bash", "tool_call_id": "a", "content": long, "position": 2},
        ]
    )
    assert long in text
    assert "── #2 tool bash [a]" in text and "→ bash {}  [a]" in text
    assert "(reasoning)\n  think\n  more" in text
    assert message_preview({"role": "assistant", "tool_calls": [_call("a")]}) == "→ bash"
    assert message_preview({"role": "user", "content": "\n\n  first  \nsecond"}) == "first"
    assert transcript_text([]).startswith("(this conversation has no messages yet)")
