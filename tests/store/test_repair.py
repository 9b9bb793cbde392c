"""Orphan repair: tool calls without a stored result get a synthetic TOOL_OUTCOME_UNKNOWN reply."""

from smith_tui.store import TOOL_OUTCOME_UNKNOWN, Store


def call(call_id: str, name: str = "bash") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def test_orphans_get_synthetic_results_after_their_round(store: Store) -> None:
    cid = store.conversations.create("p")
    store.conversations.append_messages(cid, [{"role": "user", "content": "go"}], "t1", 0)
    store.conversations.append_messages(
        cid,
        [
            {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b", "read")]},
            {"role": "tool", "content": "a done", "tool_call_id": "a"},
        ],
        "t1",
        1,
    )
    store.conversations.append_messages(
        cid,
        [
            {"role": "assistant", "content": "next", "tool_calls": [{"id": "c", "name": "edit"}]},
            {"role": "user", "content": "interrupting"},
        ],
        "t1",
        2,
    )
    inserted = store.conversations.repair_orphan_tool_calls(cid)
    assert len(inserted) == 2
    messages = store.conversations.list_messages(cid)
    assert [(m.position, m.role, m.tool_call_id) for m in messages] == [
        (0, "user", None),
        (1, "assistant", None),
        (2, "tool", "a"),
        (3, "tool", "b"),
        (4, "assistant", None),
        (5, "tool", "c"),
        (6, "user", None),
    ]
    b_result, c_result = messages[3], messages[5]
    for synthetic, name, round_ in ((b_result, "read", 1), (c_result, "edit", 2)):
        assert synthetic.content.startswith(TOOL_OUTCOME_UNKNOWN)  # type: ignore[union-attr]
        assert synthetic.metadata == {"synthetic": True}
        assert (synthetic.name, synthetic.turn_id, synthetic.round) == (name, "t1", round_)
    assert sorted(inserted) == sorted([b_result.id, c_result.id])

    assert store.conversations.repair_orphan_tool_calls(cid) == []  # idempotent
    assert store.conversations.list_messages(cid) == messages
    assert store.conversations.append_messages(cid, [{"role": "user", "content": "x"}]) == [7]


def test_nothing_to_repair_in_a_complete_transcript(store: Store) -> None:
    cid = store.conversations.create("p")
    store.conversations.append_messages(
        cid,
        [
            {"role": "assistant", "content": None, "tool_calls": [call("a")]},
            {"role": "tool", "content": "ok", "tool_call_id": "a"},
            {"role": "assistant", "content": "done"},
        ],
    )
    before = store.conversations.list_messages(cid)
    assert store.conversations.repair_orphan_tool_calls(cid) == []
    assert store.conversations.list_messages(cid) == before
    assert store.conversations.repair_orphan_tool_calls("no-such-conversation") == []


def test_orphan_at_the_very_end(store: Store) -> None:
    cid = store.conversations.create("p")
    store.conversations.append_messages(
        cid, [{"role": "assistant", "content": None, "tool_calls": [call("z")]}]
    )
    store.conversations.repair_orphan_tool_calls(cid)
    last = store.conversations.list_messages(cid)[-1]
    assert (last.position, last.role, last.tool_call_id) == (1, "tool", "z")
    assert store.search_messages("TOOL_OUTCOME_UNKNOWN")[0].message_id == last.id


def test_synthetic_result_names_the_arguments_and_cuts_long_ones(store: Store) -> None:
    from smith_tui.store.repair import ARGUMENTS_SHOWN

    cid = store.conversations.create("p")
    short = {
        "id": "s",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command": "make"}'},
    }
    long_text = "x" * (ARGUMENTS_SHOWN + 500)
    long = {"id": "l", "type": "function", "function": {"name": "write", "arguments": long_text}}
    store.conversations.append_messages(
        cid, [{"role": "assistant", "content": None, "tool_calls": [short, long]}]
    )
    store.conversations.repair_orphan_tool_calls(cid)
    first, second = store.conversations.list_messages(cid)[1:]
    assert 'the bash call s with arguments {"command": "make"};' in first.content
    assert "x" * ARGUMENTS_SHOWN + "… (500 more characters)" in second.content
    assert long_text not in second.content


def test_one_orphan_among_answered_calls_of_other_conversations(store: Store) -> None:
    """The quick check before the repair looks at this conversation's ids only: a result
    with the same id in another conversation does not answer the call."""
    cid, other = store.conversations.create("p"), store.conversations.create("p")
    for turn in range(50):
        store.conversations.append_messages(
            cid,
            [
                {"role": "assistant", "content": None, "tool_calls": [call(f"c{turn}")]},
                {"role": "tool", "content": "ok", "tool_call_id": f"c{turn}"},
            ],
        )
    store.conversations.append_messages(
        cid, [{"role": "assistant", "content": None, "tool_calls": [call("lost")]}]
    )
    store.conversations.append_messages(
        other,
        [
            {"role": "assistant", "content": None, "tool_calls": [call("lost")]},
            {"role": "tool", "content": "ok", "tool_call_id": "lost"},
        ],
    )
    assert store.conversations.repair_orphan_tool_calls(other) == []
    inserted = store.conversations.repair_orphan_tool_calls(cid)
    assert len(inserted) == 1
    last = store.conversations.list_messages(cid)[-1]
    assert (last.role, last.tool_call_id) == ("tool", "lost")
    assert store.conversations.repair_orphan_tool_calls(cid) == []
