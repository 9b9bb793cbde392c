"""Every record kind written, the file closed and reopened, and read back intact."""

import sqlite3
from pathlib import Path

import pytest

from smith_tui.store import Store, StoreError, UsageTotals
from smith_tui.store.notes import scratchpad_note_id
from smith_tui.store.sql_layout import LATEST_VERSION


def reopen(store: Store) -> Store:
    store.close()
    return Store.open(store.path)


def test_conversation_round_trip_and_listing(store: Store) -> None:
    first = store.conversations.create("proj-a", "First", metadata={"b": 1, "a": [1, 2]})
    second = store.conversations.create("proj-a")
    other = store.conversations.create("proj-b", "Elsewhere")
    child = store.conversations.create("proj-a", "child", parent_id=first)
    store.conversations.set_pinned_model(second, "gpt-x")
    store.conversations.rename(first, "Renamed")  # also makes `first` the most recent

    store = reopen(store)
    got = store.conversations.get(first)
    assert got is not None
    assert (got.project_id, got.title, got.metadata) == ("proj-a", "Renamed", {"a": [1, 2], "b": 1})
    assert got.parent_id is None and got.updated_at >= got.created_at
    assert store.conversations.get(second).pinned_model == "gpt-x"  # type: ignore[union-attr]
    assert store.conversations.get(child).parent_id == first  # type: ignore[union-attr]
    assert [c.id for c in store.conversations.list_for_project("proj-a")] == [first, second]
    assert {
        c.id for c in store.conversations.list_for_project("proj-a", include_children=True)
    } == {
        first,
        second,
        child,
    }
    assert {c.id for c in store.conversations.list_all()} == {first, second, other}
    assert store.conversations.most_recent("proj-a").id == first  # type: ignore[union-attr]
    assert store.conversations.most_recent("nobody") is None
    assert [c.id for c in store.conversations.children(first)] == [child]
    assert store.conversations.get("missing") is None
    store.close()


def test_conversation_ids_are_short_url_safe_and_unique(store: Store) -> None:
    ids = {store.conversations.create("p") for _ in range(200)}
    assert len(ids) == 200
    for conversation_id in ids:
        assert len(conversation_id) == 12
        assert all(ch.isalnum() or ch in "-_" for ch in conversation_id)


def test_delete_cascades_to_everything_in_the_conversation(store: Store) -> None:
    parent = store.conversations.create("p", "parent")
    child = store.conversations.create("p", "child", parent_id=parent)
    for cid in (parent, child):
        turn = store.turns.start(cid, "smith")
        store.conversations.append_messages(cid, [{"role": "user", "content": "zebra"}], turn)
        store.notes.put(cid, "scratchpad:x", "y")
        store.usage.record(cid, turn, "smith", "m", 1, 2)
        store.snapshots.record(cid, "m", "sys", [])
    assert store.conversations.delete(parent) is True
    assert store.conversations.delete(parent) is False
    raw = sqlite3.connect(store.path)
    for table in ("conversations", "messages", "turns", "notes", "usage", "request_snapshots"):
        assert raw.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0, table
    raw.close()
    assert store.search_messages("zebra") == []


def test_message_round_trip_keeps_every_field(store: Store) -> None:
    cid = store.conversations.create("p")
    tool_calls = [
        {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    ]
    positions = store.conversations.append_messages(
        cid,
        [
            {"role": "user", "content": "run it"},
            {
                "role": "assistant",
                "content": None,
                "reasoning": "thinking…",
                "tool_calls": tool_calls,
                "metadata": {"model": "m1"},
            },
            {
                "role": "tool",
                "content": "ok",
                "tool_call_id": "call_1",
                "name": "bash",
                "recall_key": "dispatch/j1",
                "round": 7,
            },
        ],
        turn_id="turn1",
        round=1,
    )
    assert positions == [0, 1, 2]
    store = reopen(store)
    user, assistant, tool = store.conversations.list_messages(cid)
    assert (user.role, user.content, user.turn_id, user.round) == ("user", "run it", "turn1", 1)
    assert assistant.tool_calls == tool_calls and assistant.reasoning == "thinking…"
    assert assistant.metadata == {"model": "m1"} and assistant.content is None
    assert (tool.tool_call_id, tool.name, tool.recall_key, tool.round) == (
        "call_1",
        "bash",
        "dispatch/j1",
        7,
    )
    assert (assistant.tool_call_id, assistant.name, assistant.recall_key) == (None, None, None)
    assert (tool.role, tool.content, tool.tool_calls) == ("tool", "ok", None)
    assert store.conversations.get_message(tool.id) == tool
    store.close()


def test_turn_start_and_finish(store: Store) -> None:
    cid = store.conversations.create("p")
    tid = store.turns.start(cid, "smith")
    running = store.turns.get(tid)
    assert running is not None and running.status == "running" and running.finished_at is None
    store.turns.finish(tid, "failed", stop_reason="error", error="transport: reset")
    own = store.turns.start(cid, "tank", turn_id="turn-own")
    store = reopen(store)
    done = store.turns.get(tid)
    assert done is not None
    assert (done.status, done.stop_reason, done.error) == ("failed", "error", "transport: reset")
    assert done.finished_at is not None and done.finished_at >= done.started_at
    assert [t.id for t in store.turns.list_for_conversation(cid)] == [tid, own]
    with pytest.raises(StoreError, match="no turn"):
        store.turns.finish("nope", "completed")
    with pytest.raises(StoreError, match="final status"):
        store.turns.finish(own, "running")
    with pytest.raises(StoreError, match="must not contain ':'"):
        store.turns.start(cid, "smith", turn_id="a:b")
    store.close()


def test_notes_scratchpad_prefix_listing_and_turn_record(store: Store) -> None:
    cid = store.conversations.create("p")
    other = store.conversations.create("p")
    store.notes.put(cid, scratchpad_note_id("dispatch/j1"), "finding one")
    store.notes.put(cid, "scratchpad:dispatch/j2", "finding two")
    store.notes.put(cid, "scratchpad:plan", "v1")
    store.notes.put(cid, "scratchpad:plan", "v2")
    store.notes.put(cid, "scratchpad_%:odd", "wildcards are literal")
    store.notes.put(other, "scratchpad:dispatch/j9", "not mine")
    store.notes.put_turn_record(cid, "t1", {"z": 1, "a": {"nested": True}})
    store = reopen(store)
    assert [n.note_id for n in store.notes.list(cid, prefix="scratchpad:dispatch/")] == [
        "scratchpad:dispatch/j1",
        "scratchpad:dispatch/j2",
    ]
    assert [n.note_id for n in store.notes.list(cid, prefix="scratchpad_%")] == ["scratchpad_%:odd"]
    plan = store.notes.get(cid, "scratchpad:plan")
    assert plan is not None and plan.content == "v2" and plan.updated_at >= plan.created_at
    assert store.notes.get_turn_record(cid, "t1") == {"a": {"nested": True}, "z": 1}
    assert store.notes.get(cid, "turn_record-t1").content == '{"a":{"nested":true},"z":1}'  # type: ignore[union-attr]
    assert len(store.notes.list(cid)) == 5
    assert store.notes.delete(cid, "scratchpad:plan") is True
    assert store.notes.delete(cid, "scratchpad:plan") is False
    assert store.notes.get(cid, "scratchpad:plan") is None
    with pytest.raises(StoreError, match="no conversation"):
        store.notes.put("ghost", "scratchpad:x", "y")
    store.close()


def test_usage_totals_by_role_and_turn(store: Store) -> None:
    cid = store.conversations.create("p")
    store.usage.record(cid, "t1", "smith", "m1", 100, 20, cost=0.5)
    store.usage.record(cid, "t1", "tank", "m2", 10, 5, job_id="job-a")
    store.usage.record(cid, "t1", "tank", "m2", 1, 1, total_tokens=3, job_id="job-b", cost=0.25)
    store.usage.record(cid, "t2", "smith", "m1", 7, 3)
    store = reopen(store)
    assert store.usage.totals_by_role(cid) == {
        "smith": UsageTotals(107, 23, 130, 0.5, 2),
        "tank": UsageTotals(11, 6, 18, 0.25, 2),
    }
    assert store.usage.totals_for_turn("t2") == {"smith": UsageTotals(7, 3, 10, None, 1)}
    records = store.usage.list_for_turn("t1")
    assert [r.job_id for r in records] == [None, "job-a", "job-b"]
    assert [r.id for r in store.usage.list_for_conversation(cid)][:3] == [r.id for r in records]
    with pytest.raises(StoreError, match="input_tokens must be int"):
        store.usage.record(cid, "t1", "smith", "m", "12", 1)  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="no conversation with id 'ghost'"):
        store.usage.record("ghost", "t1", "smith", "m", 1, 1)
    with pytest.raises(StoreError, match="job_id must not contain"):
        store.usage.record(cid, "t1", "tank", "m", 1, 1, job_id="a:b")
    store.close()


def test_project_memory_is_per_project(store: Store) -> None:
    store.project_memory.put("proj1", "conventions", "use ruff")
    store.project_memory.put("proj1", "conventions", "use ruff and pytest")
    store.project_memory.put("proj1", "arch/layers", "app > engine")
    store.project_memory.put("proj2", "conventions", "tabs")
    store = reopen(store)
    note = store.project_memory.get("proj1", "conventions")
    assert note is not None and note.content == "use ruff and pytest"
    assert [n.note_id for n in store.project_memory.list("proj1")] == ["arch/layers", "conventions"]
    assert [n.note_id for n in store.project_memory.list("proj1", prefix="arch/")] == [
        "arch/layers"
    ]
    assert store.project_memory.get("proj2", "conventions").content == "tabs"  # type: ignore[union-attr]
    assert store.project_memory.delete("proj1", "conventions") is True
    assert store.project_memory.get("proj1", "conventions") is None
    store.close()


def test_config_and_meta(store: Store) -> None:
    overrides = {"services": {"ui": {"theme": "matrix"}}, "llm": {"timeout": 30}}
    store.config.set("runtime_overrides", overrides)
    store.config.set("flag", True)
    cid = store.conversations.create("p")
    store.meta.set_active_conversation_id(cid)
    store = reopen(store)
    assert store.config.get("runtime_overrides") == overrides
    assert store.config.all() == {"flag": True, "runtime_overrides": overrides}
    assert store.config.get("absent", "dflt") == "dflt"
    assert store.config.delete("flag") is True and store.config.get("flag") is None
    assert store.meta.active_conversation_id() == cid
    assert store.meta.schema_version() == store.schema_version() == LATEST_VERSION
    store.meta.set_active_conversation_id(None)
    assert store.meta.active_conversation_id() is None
    with pytest.raises(StoreError, match="migrations only"):
        store.meta.set("schema_version", 99)
    with pytest.raises(StoreError, match="cannot be stored as JSON"):
        store.config.set("bad", {"when": object()})
    store.close()


def test_config_values_are_stored_as_sorted_json(store: Store) -> None:
    store.config.set("k", {"b": 1, "a": {"d": 2, "c": 3}})
    raw = sqlite3.connect(store.path)
    assert raw.execute("SELECT value FROM config WHERE key = 'k'").fetchone()[0] == (
        '{"a":{"c":3,"d":2},"b":1}'
    )
    raw.close()


def test_request_snapshots_record_and_prune(store: Store) -> None:
    cid = store.conversations.create("p")
    schemas = [{"type": "function", "function": {"name": "bash", "parameters": {}}}]
    old = store.snapshots.record(cid, "model-a", "You are Smith.", schemas, turn_id="t1")
    store.database.execute_sql(
        "UPDATE request_snapshots SET created_at = created_at - 10 * 86400 WHERE id = ?", (old,)
    )
    new = store.snapshots.record(cid, "model-b", "You are Tank.", [])
    store = reopen(store)
    got = store.snapshots.get(old)
    assert got is not None
    assert (got.model, got.system_prompt, got.tool_schemas, got.turn_id) == (
        "model-a",
        "You are Smith.",
        schemas,
        "t1",
    )
    assert store.prune_request_snapshots(7) == 1
    assert [s.id for s in store.snapshots.list_for_conversation(cid)] == [new]
    assert store.prune_request_snapshots(7) == 0
    with pytest.raises(StoreError, match="retention_days"):
        store.prune_request_snapshots(-1)
    store.close()


def test_store_is_a_context_manager(db_path: Path) -> None:
    with Store.open(db_path) as store:
        store.config.set("a", 1)
    with Store.open(db_path) as store:
        assert store.config.get("a") == 1


def test_request_snapshots_store_each_system_prompt_and_schema_list_once(store: Store) -> None:
    cid = store.conversations.create("p")
    other = store.conversations.create("p")
    schemas = [{"type": "function", "function": {"name": "read", "parameters": {}}}]
    ids = [store.snapshots.record(cid, "m", "You are Smith." * 500, schemas) for _ in range(20)]
    store.snapshots.record(cid, "m", "You are Smith." * 500, [])
    tank = store.snapshots.record(other, "m", "You are Tank.", schemas)
    assert store.snapshots.payload_count() == 3
    store = reopen(store)
    got = store.snapshots.list_for_conversation(cid)
    assert [s.id for s in got][:20] == ids
    assert {s.system_prompt for s in got} == {"You are Smith." * 500}
    assert [s.tool_schemas for s in got][-2:] == [schemas, []]
    store.database.execute_sql("UPDATE request_snapshots SET created_at = 0 WHERE id = ?", (tank,))
    assert store.prune_request_snapshots(1) == 1
    assert store.snapshots.payload_count() == 2  # Tank's pair went with its last snapshot
    assert store.conversations.delete(cid)
    assert store.snapshots.payload_count() == 0  # the conversation's cascade took the rest
