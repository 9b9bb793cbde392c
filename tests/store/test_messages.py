"""Message ordering, paging, editing and validation."""

import pytest

from smith_tui.store import Store, StoreError


def fill(store: Store, count: int) -> str:
    cid = store.conversations.create("p")
    store.conversations.append_messages(
        cid, [{"role": "user", "content": f"m{i}"} for i in range(count)]
    )
    return cid


def contents(messages: list) -> list[str]:
    return [m.content for m in messages]


def test_positions_continue_across_appends(store: Store) -> None:
    cid = store.conversations.create("p")
    assert store.conversations.append_messages(cid, [{"role": "user", "content": "a"}]) == [0]
    assert store.conversations.append_messages(
        cid, [{"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]
    ) == [1, 2]
    assert store.conversations.append_messages(cid, []) == []
    assert store.conversations.count_messages(cid) == 3


def test_appending_moves_the_conversation_to_the_top(store: Store) -> None:
    older = store.conversations.create("p")
    newer = store.conversations.create("p")
    store.conversations.append_messages(older, [{"role": "user", "content": "hi"}])
    assert store.conversations.most_recent("p").id == older  # type: ignore[union-attr]
    assert store.conversations.list_for_project("p")[1].id == newer


def test_list_messages_paging(store: Store) -> None:
    cid = fill(store, 10)
    assert contents(store.conversations.list_messages(cid)) == [f"m{i}" for i in range(10)]
    assert contents(store.conversations.list_messages(cid, offset=7)) == ["m7", "m8", "m9"]
    assert contents(store.conversations.list_messages(cid, offset=2, limit=3)) == ["m2", "m3", "m4"]
    # Older history on demand: the page just before position 6, oldest first.
    assert contents(store.conversations.list_messages(cid, limit=3, before_position=6)) == [
        "m3",
        "m4",
        "m5",
    ]
    assert contents(
        store.conversations.list_messages(cid, offset=1, limit=2, before_position=6)
    ) == ["m3", "m4"]
    assert contents(store.conversations.list_messages(cid, before_position=2)) == ["m0", "m1"]
    assert contents(store.conversations.tail_messages(cid, 2)) == ["m8", "m9"]
    assert store.conversations.list_messages("nope") == []


def test_list_messages_after_a_position(store: Store) -> None:
    cid = fill(store, 10)
    # Newer history on demand: the page just after position 3, oldest first.
    after = store.conversations.list_messages(cid, limit=3, after_position=3)
    assert contents(after) == ["m4", "m5", "m6"]
    assert [m.position for m in after] == [4, 5, 6]
    assert contents(store.conversations.list_messages(cid, after_position=7)) == ["m8", "m9"]
    assert contents(
        store.conversations.list_messages(cid, offset=1, limit=1, after_position=7)
    ) == ["m9"]
    assert store.conversations.list_messages(cid, after_position=9) == []
    assert contents(store.conversations.list_messages(cid, limit=2, after_position=-1)) == [
        "m0",
        "m1",
    ]
    # Positions are what counts, not how many messages come first: a gap is skipped.
    gap = fill(store, 5)
    assert store.conversations.delete_message(store.conversations.list_messages(gap)[2].id)
    after_gap = store.conversations.list_messages(gap, limit=2, after_position=1)
    assert [(m.content, m.position) for m in after_gap] == [("m3", 3), ("m4", 4)]
    with pytest.raises(StoreError, match="not both"):
        store.conversations.list_messages(cid, before_position=5, after_position=1)


def test_update_message_changes_fields_and_keeps_position(store: Store) -> None:
    cid = fill(store, 3)
    target = store.conversations.list_messages(cid)[1]
    updated = store.conversations.update_message(
        target.id, content="edited", metadata={"edited": True}, recall_key="k"
    )
    assert (updated.content, updated.metadata, updated.recall_key) == (
        "edited",
        {"edited": True},
        "k",
    )
    assert store.conversations.get_message(target.id) == updated
    assert updated.position == 1
    with pytest.raises(StoreError, match="cannot update message field"):
        store.conversations.update_message(target.id, position=5)
    with pytest.raises(StoreError, match="no message"):
        store.conversations.update_message(999_999, content="x")
    with pytest.raises(StoreError, match="content must be str"):
        store.conversations.update_message(target.id, content=42)
    assert store.conversations.get_message(target.id).content == "edited"  # type: ignore[union-attr]


def test_delete_message_leaves_a_gap_and_appends_continue(store: Store) -> None:
    cid = fill(store, 3)
    middle = store.conversations.list_messages(cid)[1]
    assert store.conversations.delete_message(middle.id) is True
    assert store.conversations.delete_message(middle.id) is False
    assert store.conversations.get_message(middle.id) is None
    assert [m.position for m in store.conversations.list_messages(cid)] == [0, 2]
    assert store.conversations.append_messages(cid, [{"role": "user", "content": "x"}]) == [3]


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ({"content": "no role"}, "no 'role'"),
        ({"role": "robot", "content": "x"}, "role must be one of"),
        ({"role": "user", "content": "x", "colour": "red"}, "unknown field"),
        ({"role": "user", "content": ["parts"]}, "content must be str"),
        ({"role": "assistant", "tool_calls": [{"name": "x"}]}, "string 'id'"),
        ({"role": "assistant", "tool_calls": {"id": "x"}}, "tool_calls must be"),
        ({"role": "user", "content": "x", "metadata": {"t": {1, 2}}}, "cannot be stored as JSON"),
        ({"role": "user", "content": "x", "round": "1"}, "round must be"),
        ("just text", "must be a dict"),
    ],
)
def test_invalid_messages_are_rejected_and_nothing_is_written(
    store: Store, message: object, error: str
) -> None:
    cid = store.conversations.create("p")
    with pytest.raises(StoreError, match=error):
        store.conversations.append_messages(
            cid,
            [{"role": "user", "content": "valid first"}, message],  # type: ignore[list-item]
        )
    assert store.conversations.count_messages(cid) == 0


def test_append_to_a_missing_conversation_is_a_clear_error(store: Store) -> None:
    with pytest.raises(StoreError, match="no conversation with id 'ghost'"):
        store.conversations.append_messages("ghost", [{"role": "user", "content": "x"}])


def test_structural_ids_must_not_contain_colons(store: Store) -> None:
    with pytest.raises(StoreError, match="project_id must not contain ':'"):
        store.conversations.create("a:b")
    with pytest.raises(StoreError, match="conversation id must not contain ':'"):
        store.conversations.create("p", conversation_id="x:y")
    cid = store.conversations.create("p")
    with pytest.raises(StoreError, match="turn_id must not contain ':'"):
        store.conversations.append_messages(cid, [{"role": "user", "content": "x"}], turn_id="t:1")
    with pytest.raises(StoreError, match="no conversation"):
        store.conversations.create("p", parent_id="ghost")
