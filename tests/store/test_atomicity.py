"""Batch writes are all-or-nothing, including a whole round written under `store.atomic()`."""

import sqlite3

import pytest

from smith_tui.store import Store, StoreError


class Boom(Exception):
    pass


def table_counts(store: Store) -> dict[str, int]:
    raw = sqlite3.connect(store.path)
    try:
        return {
            table: raw.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("conversations", "messages", "turns", "notes", "usage")
        }
    finally:
        raw.close()


def write_round(store: Store, cid: str, turn: str, fail_after_messages: bool) -> None:
    with store.atomic():
        store.conversations.append_messages(
            cid,
            [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "bash", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "content": "the round result", "tool_call_id": "c1"},
            ],
            turn,
            1,
        )
        store.notes.put(cid, "scratchpad:progress", "half way")
        if fail_after_messages:
            raise Boom("crash in the middle of the round")
        store.usage.record(cid, turn, "smith", "m", 10, 5)


def test_a_failed_round_leaves_nothing_behind(store: Store) -> None:
    cid = store.conversations.create("p")
    turn = store.turns.start(cid, "smith")
    before = table_counts(store)
    with pytest.raises(Boom):
        write_round(store, cid, turn, fail_after_messages=True)
    assert table_counts(store) == before
    assert store.search_messages("round result") == []
    write_round(store, cid, turn, fail_after_messages=False)
    after = table_counts(store)
    assert after["messages"] == before["messages"] + 2
    assert after["usage"] == before["usage"] + 1
    assert [m.position for m in store.conversations.list_messages(cid)] == [0, 1]


def test_a_failing_repository_call_inside_a_batch_rolls_back_the_batch(store: Store) -> None:
    cid = store.conversations.create("p")
    with pytest.raises(StoreError):
        with store.atomic():
            store.conversations.append_messages(cid, [{"role": "user", "content": "one"}])
            store.usage.record(cid, "t", "smith", "m", -1, 0)
    assert store.conversations.count_messages(cid) == 0


def test_nested_atomic_blocks_roll_back_only_the_inner_part(store: Store) -> None:
    cid = store.conversations.create("p")
    with store.atomic():
        store.conversations.append_messages(cid, [{"role": "user", "content": "outer"}])
        with pytest.raises(Boom):
            with store.atomic():
                store.conversations.append_messages(cid, [{"role": "user", "content": "inner"}])
                raise Boom
    assert [m.content for m in store.conversations.list_messages(cid)] == ["outer"]


def test_writes_are_invisible_to_other_connections_until_commit(store: Store) -> None:
    cid = store.conversations.create("p")
    raw = sqlite3.connect(store.path)
    try:
        with store.atomic():
            store.conversations.append_messages(cid, [{"role": "user", "content": "pending"}])
            seen = raw.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        assert seen == 0
        assert raw.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 1
    finally:
        raw.close()
