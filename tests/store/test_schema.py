"""The peewee models match the tables the schema DDL creates."""

from smith_tui.store import Store
from smith_tui.store.models import ALL_MODELS


def test_models_match_the_created_tables(store: Store) -> None:
    db = store.database
    for model in ALL_MODELS:
        table = model._meta.table_name
        columns = [row[1] for row in db.execute_sql(f"PRAGMA table_info({table})")]
        assert columns == [field.column_name for field in model._meta.sorted_fields], table


def test_expected_indexes_exist(store: Store) -> None:
    names = {
        row[0]
        for row in store.database.execute_sql("SELECT name FROM sqlite_master WHERE type = 'index'")
    }
    assert {
        "conversations_project_updated",
        "conversations_parent",
        "turns_conversation",
        "usage_conversation",
        "usage_turn",
        "messages_turn",
        "request_snapshots_created",
    } <= names
    plan = store.database.execute_sql(
        "EXPLAIN QUERY PLAN SELECT MAX(position) FROM messages WHERE conversation_id = 'x'"
    ).fetchall()
    assert "USING COVERING INDEX" in " ".join(str(row[-1]) for row in plan)


def test_the_open_check_for_unanswered_tool_calls_reads_only_indexes(store: Store) -> None:
    # Every open runs it: reading the conversation's rows (answers included) made it cost
    # what the conversation weighs.
    from smith_tui.store.conversations import _ORPHAN_IDS_SQL

    plan = store.database.execute_sql(
        "EXPLAIN QUERY PLAN " + _ORPHAN_IDS_SQL, ("x", "x")
    ).fetchall()
    searches = [str(row[-1]) for row in plan if str(row[-1]).startswith("SEARCH")]
    assert len(searches) == 2, plan
    assert all("USING COVERING INDEX" in search for search in searches), plan
