"""Reading many turns' records at once: what a reopen asks for, in one query per chunk."""

import logging
import sqlite3

import pytest

from smith_tui.store import Store
from smith_tui.store import notes as notes_module


def _note_queries(store: Store) -> list[str]:
    """The statements on the notes table run on ``store``'s connection from now on."""
    seen: list[str] = []
    connection: sqlite3.Connection = store.database.connection()
    connection.set_trace_callback(
        lambda sql: seen.append(sql) if '"notes"' in sql and "SELECT" in sql else None
    )
    return seen


def test_the_records_of_many_turns_come_back_by_turn_in_one_query(store: Store) -> None:
    cid = store.conversations.create("proj")
    other = store.conversations.create("proj")
    for n in range(40):
        store.notes.put_turn_record(cid, f"t{n}", {"n": n, "checkpoint": {"files": [n]}})
    store.notes.put_turn_record(other, "t1", {"n": "someone else's"})
    queries = _note_queries(store)

    got = store.notes.get_turn_records(cid, [f"t{n}" for n in range(40)] + ["t3", "missing"])

    assert got == {f"t{n}": {"n": n, "checkpoint": {"files": [n]}} for n in range(40)}
    assert len(queries) == 1
    assert got == {
        f"t{n}": store.notes.get_turn_record(cid, f"t{n}") for n in range(40)
    }  # the same records the one-by-one read gives


def test_turns_beyond_one_query_are_read_in_chunks(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(notes_module, "RECORDS_PER_QUERY", 3)
    cid = store.conversations.create("proj")
    for n in range(7):
        store.notes.put_turn_record(cid, f"t{n}", {"n": n})
    queries = _note_queries(store)

    got = store.notes.get_turn_records(cid, (f"t{n}" for n in range(7)))

    assert got == {f"t{n}": {"n": n} for n in range(7)}
    assert len(queries) == 3


def test_damaged_records_and_bad_ids_leave_out_only_themselves(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    cid = store.conversations.create("proj")
    store.notes.put_turn_record(cid, "good", {"ok": True})
    store.notes.put(cid, "turn_record-broken", "{not json")
    store.notes.put(cid, "turn_record-list", "[1, 2]")
    store.notes.put_turn_record(cid, "later", {"ok": "too"})

    with caplog.at_level(logging.WARNING, logger="smith_tui.store.notes"):
        got = store.notes.get_turn_records(cid, ["good", "broken", "list", "bad:id", "later"])

    assert got == {"good": {"ok": True}, "later": {"ok": "too"}}
    logged = caplog.text
    assert "broken is not JSON" in logged
    assert "list is not a JSON object" in logged
    assert "'bad:id'" in logged
