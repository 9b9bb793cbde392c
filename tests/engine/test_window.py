"""The context-window policy: elision placeholders, dropping, invariants (property-based)."""

from __future__ import annotations

import copy
import math
from collections import UserDict
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from smith_tui.config import check_config
from smith_tui.engine.window import (
    WindowSettings,
    _pinned_indices,
    _walk,
    apply_window,
    cut_marker,
    elision_placeholder,
    estimate_tokens,
    message_chars,
)

Msg = dict[str, Any]


def user(text: str, **extra: Any) -> Msg:
    return {"role": "user", "content": text, **extra}


def assistant(text: str) -> Msg:
    return {"role": "assistant", "content": text}


def tool_round(call_ids: list[str], outputs: list[str], recall: list[str | None]) -> list[Msg]:
    calls = [
        {"id": cid, "type": "function", "function": {"name": "bash", "arguments": '{"c":1}'}}
        for cid in call_ids
    ]
    msgs: list[Msg] = [{"role": "assistant", "content": None, "tool_calls": calls}]
    # Fewer outputs than calls leaves the last calls unanswered.
    for cid, out, key in zip(call_ids, outputs, recall, strict=False):
        result: Msg = {"role": "tool", "tool_call_id": cid, "content": out}
        if key:
            result["recall_key"] = key
        msgs.append(result)
    return msgs


# --- example tests -----------------------------------------------------------------


def test_old_tool_output_becomes_placeholder_without_recall_key() -> None:
    msgs = [
        {"role": "system", "content": "sys"},
        user("go"),
        *tool_round(["a"], ["x" * 5000], [None]),
        *tool_round(["b"], ["y" * 5000], [None]),
    ]
    result = apply_window(msgs, tool_output_keep_rounds=1, tool_output_elide_over_chars=100)
    assert result.elided_count == 1
    assert result.messages[3]["content"] == "[elided 5000 chars of tool output]"
    assert result.messages[3]["tool_call_id"] == "a"
    assert result.messages[5]["content"] == "y" * 5000  # the most recent round stays verbatim
    assert msgs[3]["content"] == "x" * 5000  # the input is untouched


def test_placeholder_names_recall_key() -> None:
    msgs = [
        user("go"),
        *tool_round(["a", "b"], ["r" * 3000, "s" * 10], ["dispatch/job1", None]),
        *tool_round(["c"], ["t" * 3000], [None]),
    ]
    result = apply_window(msgs, tool_output_keep_rounds=1, tool_output_elide_over_chars=50)
    assert result.messages[2]["content"] == (
        '[elided 3000 chars of tool output; retrieve with recall(key="dispatch/job1")]'
    )
    assert result.messages[2]["recall_key"] == "dispatch/job1"
    assert result.messages[3] is msgs[3]  # short result kept as is
    assert result.elided_count == 1


def test_placeholder_quotes_unusual_keys_as_json() -> None:
    text = elision_placeholder(9999, 'we"ird\\key')
    assert text.endswith('recall(key="we\\"ird\\\\key")]')


def test_placeholder_only_used_when_shorter() -> None:
    msgs = [user("go"), *tool_round(["a"], ["abc"], [None]), *tool_round(["b"], ["d"], [None])]
    result = apply_window(msgs, tool_output_keep_rounds=0, tool_output_elide_over_chars=0)
    assert result.elided_count == 0
    assert result.messages == msgs


def test_placeholder_of_equal_length_is_not_used() -> None:
    assert len(elision_placeholder(32)) == 32
    msgs = [
        user("go"),
        *tool_round(["a"], ["q" * 32], [None]),
        *tool_round(["b"], ["q" * 33], [None]),
    ]
    result = apply_window(msgs, tool_output_keep_rounds=0, tool_output_elide_over_chars=0)
    assert result.messages[2] is msgs[2]
    assert result.messages[4]["content"] == "[elided 33 chars of tool output]"


def test_transcript_exactly_at_the_budget_is_kept_whole() -> None:
    msgs = [user("u" * 100), assistant("a" * 97)]  # 197 chars = 50 tokens (rounded up)
    assert apply_window(msgs, context_window=100, trim_threshold_pct=50).messages == msgs
    result = apply_window(msgs, context_window=100, trim_threshold_pct=49.99)
    assert result.messages == [msgs[0]]
    assert result.dropped_rounds == 1


def test_drops_oldest_units_until_it_fits() -> None:
    msgs = [
        {"role": "system", "content": "s" * 40},
        user("old question " * 10),
        *tool_round(["a"], ["o" * 400], [None]),
        assistant("old answer " * 10),
        user("new question"),
        *tool_round(["b"], ["n" * 40], [None]),
    ]
    # Budget of 50 tokens = 200 chars: system (40) + new user (12) + last round fit.
    result = apply_window(msgs, context_window=100, trim_threshold_pct=50)
    assert [m.get("content") for m in result.messages][:2] == ["s" * 40, "new question"]
    assert result.messages[-1] is msgs[-1]
    assert result.dropped_rounds == 3  # old user, old round, old answer
    assert result.estimated_tokens <= 50
    assert result.estimated_tokens == estimate_tokens(result.messages)


def test_pinned_messages_survive_even_when_over_budget() -> None:
    msgs = [{"role": "system", "content": "s" * 1000}, assistant("a"), user("u" * 1000)]
    result = apply_window(msgs, context_window=10, trim_threshold_pct=100)
    assert result.messages == [msgs[0], msgs[2]]
    assert result.estimated_tokens == 500


def test_transient_message_is_kept_and_is_not_the_latest_user() -> None:
    msgs = [
        user("real question"),
        assistant("x" * 400),
        user("[state snapshot] date 2030-01-01", transient=True),
    ]
    result = apply_window(msgs, context_window=20, trim_threshold_pct=100)
    assert result.messages == [msgs[0], msgs[2]]


def test_disabled_returns_same_messages_in_new_list() -> None:
    msgs = [user("q"), *tool_round(["a"], ["z" * 9000], [None]), user("q2")]
    result = apply_window(msgs, enabled=False, context_window=10, tool_output_keep_rounds=0)
    assert result.messages == msgs and result.messages is not msgs
    assert all(a is b for a, b in zip(result.messages, msgs, strict=True))
    assert (result.elided_count, result.dropped_rounds) == (0, 0)
    assert result.estimated_tokens == math.ceil((1 + 9000 + 2 + len("bash") + 7) / 4)


def test_orphan_and_unanswered_calls_are_removed() -> None:
    msgs = [
        {"role": "tool", "tool_call_id": "ghost", "content": "orphan"},
        user("q"),
        *tool_round(["a", "b"], ["ra"], [None]),  # call b never answered
        assistant("text"),
        {"role": "tool", "tool_call_id": "a", "content": "late"},  # not after its call
        *tool_round(["c"], ["rc"], [None]),
        {"role": "tool", "tool_call_id": "zzz", "content": "stray in a valid block"},
    ]
    result = apply_window(msgs)
    roles = [(m["role"], m.get("tool_call_id")) for m in result.messages]
    assert roles == [("user", None), ("assistant", None), ("assistant", None), ("tool", "c")]
    assert result.dropped_invalid == 1 + 2 + 1 + 1


def test_bad_settings_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="trim_threshold_pct must be in"):
        apply_window([], trim_threshold_pct=0)
    with pytest.raises(ValueError, match="tool_output_keep_rounds must be >= 0"):
        apply_window([], tool_output_keep_rounds=-1)
    with pytest.raises(ValueError, match="context window must be positive"):
        apply_window([], context_window=0)


def test_window_settings_come_from_context_management() -> None:
    settings = WindowSettings.from_config(
        check_config({"context_management": {"enabled": False, "tool_output_keep_rounds": 2}})
    )
    assert settings == WindowSettings(enabled=False, tool_output_keep_rounds=2)
    assert WindowSettings.from_config(check_config({})) == WindowSettings()
    history = [user("question"), assistant("x" * 800)]
    assert settings.apply(history, 10).messages == history  # disabled: nothing dropped
    assert WindowSettings().apply(history, 10).messages == [history[0]]


def test_round_the_fast_path_gives_up_on_midway_is_redone_in_full() -> None:
    # The first result is elided before the second call turns out to have non-string
    # arguments; the round is then paired, sized and elided by the general path.
    calls = [
        {"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "read", "arguments": {"p": 1}}},
    ]
    msgs = [
        user("go"),
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "a", "content": "x" * 500, "recall_key": "k/a"},
        {"role": "tool", "tool_call_id": "b", "content": "y" * 500},
        *tool_round(["c"], ["z" * 500], [None]),
    ]
    before = copy.deepcopy(msgs)
    result = apply_window(msgs, tool_output_keep_rounds=1, tool_output_elide_over_chars=100)
    assert msgs == before
    assert [m["content"] for m in result.messages[2:4]] == [
        elision_placeholder(500, "k/a"),
        elision_placeholder(500),
    ]
    assert result.messages[-1] is msgs[-1]
    assert result.elided_count == 2
    assert result.estimated_tokens == estimate_tokens(result.messages)


def call(cid: Any, name: Any = "bash", arguments: Any = "{}") -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def result(cid: Any, text: str = "r" * 200) -> Msg:
    return {"role": "tool", "tool_call_id": cid, "content": text}


# Rounds off the fast path's usual shape, with how many of their messages are invalid.
ODD_ROUNDS: dict[str, tuple[list[Msg], int]] = {
    "results out of call order": (
        [{"role": "assistant", "tool_calls": [call("a"), call("b")]}, result("b"), result("a")],
        0,
    ),
    "extra result": (
        [{"role": "assistant", "tool_calls": [call("a")]}, result("a"), result("a")],
        1,
    ),
    "call without function": (
        [{"role": "assistant", "tool_calls": [{"id": "a"}, call("b")]}, result("a"), result("b")],
        0,
    ),
    "arguments as an object": (
        [{"role": "assistant", "tool_calls": [call("a", arguments={"p": 1})]}, result("a")],
        0,
    ),
    "two calls, one id": (
        [{"role": "assistant", "tool_calls": [call("a"), call("a")]}, result("a"), result("a")],
        3,
    ),
    "three calls, two ids": (
        [
            {"role": "assistant", "tool_calls": [call("a"), call("b"), call("a")]},
            result("a"),
            result("b"),
            result("a"),
        ],
        4,
    ),
    "no call id": ([{"role": "assistant", "tool_calls": [call(None)]}, result(None)], 2),
    "call without an id": (
        [{"role": "assistant", "tool_calls": [{"function": {"name": "x"}}]}, result("a")],
        2,
    ),
    "call that is not a dict": (
        [{"role": "assistant", "tool_calls": [UserDict(call("a"))]}, result("a")],
        0,
    ),
    "call without a result": ([{"role": "assistant", "tool_calls": [call("a")]}], 1),
    "one call with an unhashable id": (
        [{"role": "assistant", "tool_calls": [call(["a"])]}, result(["a"])],
        0,
    ),
    "two calls with unhashable ids": (
        [
            {"role": "assistant", "tool_calls": [call(["a"]), call(["b"])]},
            result(["a"]),
            result(["b"]),
        ],
        3,
    ),
    "call id that is a number": (
        [{"role": "assistant", "tool_calls": [call(7)]}, result(7)],
        0,
    ),
    "text next to the calls": (
        [{"role": "assistant", "content": "let me look", "tool_calls": [call("a")]}, result("a")],
        0,
    ),
    "text parts next to the calls": (
        [
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "let me look"}],
                "tool_calls": [call("a")],
            },
            result("a"),
        ],
        0,
    ),
}


@pytest.mark.parametrize("name", ODD_ROUNDS)
@pytest.mark.parametrize("context_window", [10**6, 130])
def test_rounds_of_any_shape_match_the_general_path(name: str, context_window: int) -> None:
    odd, invalid = ODD_ROUNDS[name]
    msgs = [user("go"), *odd, *tool_round(["z"], ["last"], [None])]
    opts: dict[str, Any] = dict(
        tool_output_keep_rounds=0, tool_output_elide_over_chars=10, context_window=context_window
    )
    before = copy.deepcopy(msgs)
    fast = apply_window(msgs, **opts)
    general = apply_window(calls_as(tuple, msgs), **opts)
    assert msgs == before
    assert fast.messages == calls_as(list, general.messages)
    assert fast == replace(general, messages=fast.messages)
    assert fast.estimated_tokens == estimate_tokens(fast.messages)
    if context_window == 10**6:
        assert fast.dropped_invalid == invalid
        assert len(fast.messages) == len(msgs) - invalid


def test_round_that_does_not_fit_leaves_no_elided_count() -> None:
    msgs = [
        user("go"),
        *tool_round(["a", "b"], ["x" * 500, "y" * 500], [None, None]),
        *tool_round(["c"], ["z" * 50], [None]),
    ]
    result = apply_window(
        msgs,
        tool_output_keep_rounds=1,
        tool_output_elide_over_chars=100,
        context_window=30,  # 120 chars: 63 for user and newest round, 88 for the elided one
        trim_threshold_pct=100,
    )
    assert result.messages == [msgs[0], *msgs[4:]]
    assert (result.elided_count, result.dropped_rounds) == (0, 1)


def test_old_transient_message_is_counted_before_newer_units() -> None:
    # Found only when the walk reaches it, the old transient note no longer leaves room
    # for the newer answer: the window is worked out again with it pinned from the start.
    msgs = [
        user("q"),
        user("[note]" + "n" * 94, transient=True),
        assistant("a" * 100),
        assistant("b" * 100),
    ]
    result = apply_window(msgs, context_window=60, trim_threshold_pct=100)
    assert result.messages == [msgs[0], msgs[1], msgs[3]]
    assert result.dropped_rounds == 1


def test_transient_message_in_the_dropped_part_is_kept() -> None:
    msgs = [
        user("old"),
        user("[note]", transient=True),
        assistant("a" * 400),
        user("q"),
        assistant("b" * 40),
    ]
    result = apply_window(msgs, context_window=30, trim_threshold_pct=100)
    assert result.messages == [msgs[1], msgs[3], msgs[4]]
    assert (result.dropped_rounds, result.estimated_tokens) == (2, math.ceil(47 / 4))


def test_message_chars_counts_text_parts_and_tool_calls() -> None:
    msg = {
        "role": "assistant",
        "content": [{"type": "text", "text": "abcd"}, {"type": "image_url", "image_url": {}}],
        "tool_calls": [{"id": "1", "function": {"name": "read", "arguments": {"p": 1}}}],
    }
    assert message_chars(msg) == 4 + 4 + len('{"p": 1}')


# --- property-based tests ----------------------------------------------------------

sizes = st.integers(min_value=0, max_value=600)
segment = st.one_of(
    st.tuples(st.just("user"), sizes),
    st.tuples(st.just("assistant"), sizes),
    st.tuples(st.just("system"), sizes),
    st.tuples(
        st.just("round"),
        st.lists(st.tuples(sizes, st.booleans()), min_size=1, max_size=3),
    ),
)


@st.composite
def transcripts(draw: st.DrawFn) -> list[Msg]:
    """A valid transcript: optional system prompt, then users, answers and tool rounds."""
    msgs: list[Msg] = []
    if draw(st.booleans()):
        msgs.append({"role": "system", "content": "S" * draw(sizes)})
    counter = 0
    for kind, spec in draw(st.lists(segment, max_size=25)):
        if kind == "round":
            ids = [f"c{counter + k}" for k in range(len(spec))]
            counter += len(spec)
            outs = ["o" * n for n, _ in spec]
            keys = [
                f"dispatch/{cid}" if has_key else None
                for cid, (_, has_key) in zip(ids, spec, strict=True)
            ]
            msgs.extend(tool_round(ids, outs, keys))
        else:
            msgs.append({"role": kind, "content": kind[0] * spec})
    if draw(st.booleans()):
        msgs.append(user("[state snapshot]", transient=True))
    return msgs


@st.composite
def transcripts_with_transients(draw: st.DrawFn) -> list[Msg]:
    """A transcript with transient notes inserted between its units, at any age."""
    msgs = draw(transcripts())
    bounds = [i for i in range(len(msgs) + 1) if i == len(msgs) or msgs[i]["role"] != "tool"]
    for pos in sorted(draw(st.lists(st.sampled_from(bounds), max_size=3)), reverse=True):
        role = draw(st.sampled_from(["user", "assistant"]))
        msgs.insert(pos, {"role": role, "content": "T" * draw(sizes), "transient": True})
    return msgs


def calls_as(kind: type, msgs: list[Msg]) -> list[Msg]:
    """``msgs`` with every ``tool_calls`` list turned into ``kind`` (a copy, when there are)."""
    return [{**m, "tool_calls": kind(m["tool_calls"])} if m.get("tool_calls") else m for m in msgs]


window_settings = st.fixed_dictionaries(
    {
        "tool_output_keep_rounds": st.integers(0, 6),
        "tool_output_elide_over_chars": st.integers(0, 500),
        "trim_threshold_pct": st.sampled_from([1, 10, 33.3, 50, 80, 100]),
        "context_window": st.integers(1, 4000),
    }
)


def pinned_ids(msgs: list[Msg]) -> set[int]:
    pinned = {id(m) for m in msgs if m.get("transient")}
    systems = [m for m in msgs if m["role"] == "system"]
    users = [m for m in msgs if m["role"] == "user" and not m.get("transient")]
    if systems:
        pinned.add(id(systems[0]))
    if users:
        pinned.add(id(users[-1]))
    return pinned


def reference_window(msgs: list[Msg], opts: dict[str, Any]) -> list[Msg]:
    """The policy written the slow, obvious way: elide, then drop oldest until it fits."""
    units: list[list[Msg]] = []
    for m in msgs:
        if m["role"] == "tool":
            units[-1].append(m)
        else:
            units.append([m])
    rounds = [u for u in units if u[0].get("tool_calls")]
    old = rounds[: max(0, len(rounds) - opts["tool_output_keep_rounds"])]
    for unit in old:
        for k in range(1, len(unit)):
            content = unit[k]["content"]
            if len(content) > opts["tool_output_elide_over_chars"]:
                text = elision_placeholder(len(content), unit[k].get("recall_key"))
                if len(text) < len(content):
                    unit[k] = {**unit[k], "content": text}
    pinned = pinned_ids(msgs)
    last = [u for u in units if not (len(u) == 1 and u[0].get("transient"))]
    newest_round = last[-1] if last and last[-1][0].get("tool_calls") else None
    if newest_round is not None:
        pinned.add(id(newest_round[0]))  # the newest round is never dropped
    budget = opts["context_window"] * opts["trim_threshold_pct"] / 100
    keep = [True] * len(units)
    for idx, unit in enumerate(units):
        kept = [m for u, flag in zip(units, keep, strict=True) if flag for m in u]
        if estimate_tokens(kept) <= budget:
            break
        if id(unit[0]) not in pinned:
            keep[idx] = False
    kept = [m for u, flag in zip(units, keep, strict=True) if flag for m in u]
    if newest_round is not None and estimate_tokens(kept) > budget:
        head = next(k for k, m in enumerate(kept) if m is newest_round[0])
        others = sum(message_chars(m) for m in kept) - sum(map(message_chars, newest_round))
        room = 4 * math.floor(budget) - others - message_chars(newest_round[0])
        kept[head + 1 : head + len(newest_round)] = reference_cut(newest_round[1:], room)
    return kept


def reference_cut(results: list[Msg], room: int) -> list[Msg]:
    """Share ``room`` chars out over ``results``, smallest first; cut the ones that get less."""
    out = list(results)
    left = max(0, room)
    order = sorted(range(len(results)), key=lambda k: len(results[k]["content"]))
    for rank, k in enumerate(order):
        content = results[k]["content"]
        share = left // (len(order) - rank)
        if len(content) <= share:
            left -= len(content)
            continue
        marker = cut_marker(0, len(content), results[k].get("recall_key"))
        shown = max(0, share - len(marker))
        text = content[:shown] + cut_marker(shown, len(content), results[k].get("recall_key"))
        if len(text) >= len(content):
            left -= min(share, len(content))
            continue
        out[k] = {**results[k], "content": text}
        left -= min(share, len(text))
    return out


def assert_invariants(msgs: list[Msg], out: list[Msg], opts: dict[str, Any]) -> None:
    # Output is a subsequence of the input; rewritten messages differ only in content.
    pos = 0
    for m in out:
        while pos < len(msgs) and not (
            m is msgs[pos]
            or (
                m["role"] == "tool"
                and m.get("tool_call_id") == msgs[pos].get("tool_call_id")
                and {k: v for k, v in m.items() if k != "content"}
                == {k: v for k, v in msgs[pos].items() if k != "content"}
                and (m["content"].startswith("[elided ") or "\n[cut to fit: " in m["content"])
            )
        ):
            pos += 1
        assert pos < len(msgs), f"{m!r} is not from the input (or out of order)"
        pos += 1
    kept_ids = {id(m) for m in out}
    assert pinned_ids(msgs) <= kept_ids
    # Every tool call answered, every result right after its call.
    k = 0
    while k < len(out):
        m = out[k]
        assert m["role"] != "tool", "tool result without its assistant message"
        if m.get("tool_calls"):
            ids = [c["id"] for c in m["tool_calls"]]
            block = out[k + 1 : k + 1 + len(ids)]
            assert [r.get("tool_call_id") for r in block] == ids
            k += len(ids)
        k += 1


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcripts(), window_settings)
def test_window_invariants_hold(msgs: list[Msg], opts: dict[str, Any]) -> None:
    before = copy.deepcopy(msgs)
    result = apply_window(msgs, **opts)
    assert msgs == before, "the input transcript was mutated"
    assert_invariants(msgs, result.messages, opts)
    assert result.estimated_tokens == estimate_tokens(result.messages)
    budget = opts["context_window"] * opts["trim_threshold_pct"] / 100
    pinned = pinned_ids(msgs)
    pinned |= {id(m) for m in result.messages if m["role"] == "tool" or m.get("tool_calls")}
    only_pinned = {id(m) for m in result.messages} <= pinned
    assert result.estimated_tokens <= budget or only_pinned
    assert result.dropped_invalid == 0
    assert result.elided_count == sum(
        1 for m in result.messages if m["role"] == "tool" and m["content"].startswith("[elided ")
    )


@settings(max_examples=300, deadline=None)
@given(transcripts(), window_settings)
def test_window_matches_the_obvious_reference(msgs: list[Msg], opts: dict[str, Any]) -> None:
    result = apply_window(msgs, **opts)
    expected = reference_window(copy.deepcopy(msgs), opts)
    assert result.messages == expected
    dropped_units = sum(1 for m in msgs if m["role"] != "tool") - sum(
        1 for m in result.messages if m["role"] != "tool"
    )
    assert result.dropped_rounds == dropped_units


@settings(max_examples=100, deadline=None)
@given(transcripts(), window_settings)
def test_disabled_window_is_identity(msgs: list[Msg], opts: dict[str, Any]) -> None:
    result = apply_window(msgs, enabled=False, **opts)
    assert len(result.messages) == len(msgs)
    assert all(a is b for a, b in zip(result.messages, msgs, strict=True))
    assert result.estimated_tokens == math.ceil(sum(map(message_chars, msgs)) / 4)


@settings(max_examples=100, deadline=None)
@given(transcripts())
def test_generous_window_keeps_everything_recent(msgs: list[Msg]) -> None:
    result = apply_window(
        msgs, context_window=10**9, tool_output_keep_rounds=100, tool_output_elide_over_chars=0
    )
    assert result.messages == msgs
    assert (result.elided_count, result.dropped_rounds) == (0, 0)


@settings(max_examples=300, deadline=None)
@given(transcripts(), window_settings)
def test_fast_round_path_matches_the_general_one(msgs: list[Msg], opts: dict[str, Any]) -> None:
    # Calls in a tuple are never taken by the fast path for the usual round shape.
    fast = apply_window(msgs, **opts)
    general = apply_window(calls_as(tuple, msgs), **opts)
    assert fast.messages == calls_as(list, general.messages)
    assert (fast.elided_count, fast.dropped_rounds, fast.estimated_tokens) == (
        general.elided_count,
        general.dropped_rounds,
        general.estimated_tokens,
    )
    assert fast.dropped_invalid == general.dropped_invalid


@settings(max_examples=300, deadline=None)
@given(transcripts_with_transients(), window_settings)
def test_transients_met_on_the_walk_match_pinning_them_up_front(
    msgs: list[Msg], opts: dict[str, Any]
) -> None:
    result = apply_window(msgs, **opts)
    limit = 4 * math.floor(opts["context_window"] * opts["trim_threshold_pct"] / 100)
    keep, over = opts["tool_output_keep_rounds"], opts["tool_output_elide_over_chars"]
    assert result == _walk(list(msgs), keep, over, limit, _pinned_indices(msgs))
    assert result.messages == reference_window(copy.deepcopy(msgs), opts)
