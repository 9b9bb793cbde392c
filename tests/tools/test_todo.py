"""The todo tool on a real SQLite store: whole-list replace, clear, load and validation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.store import Store
from smith_tui.tools.builtin.todo import (
    MAX_CONTENT_CHARS,
    MAX_ITEMS,
    TODO_NOTE_ID,
    TOOL,
    clear_todo,
    load_todo,
    render_todo,
)
from smith_tui.tools.spec import ToolContext, ToolError, ToolServices

handler = TOOL.run  # validates like the executor, then runs the handler


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "smith.db") as opened:
        yield opened


@pytest.fixture
def conv(store: Store) -> str:
    return store.conversations.create("proj")


def make_ctx(store: Any, conversation_id: str | None) -> ToolContext:
    return ToolContext(
        role="orchestrator",
        turn_id="t1",
        cwd=Path("/"),
        cancel=CancelToken.new_root(),
        conversation_id=conversation_id,
        project_id="proj",
        services=ToolServices() if store is None else ToolServices(store=store),
    )


PLAN = [
    {"content": "Read the parser", "status": "done"},
    {"content": "Fix the off-by-one", "status": "in_progress"},
    {"content": "Add a regression test", "status": "pending"},
]


def test_spec_shape() -> None:
    assert TOOL.name == "todo" and TOOL.mutating
    item_schema = TOOL.input_schema["properties"]["items"]["items"]
    assert item_schema["properties"]["status"]["enum"] == ["pending", "in_progress", "done"]


async def test_write_returns_rendered_list_and_metadata(store: Store, conv: str) -> None:
    out = await handler({"items": PLAN}, make_ctx(store, conv))
    assert out.content == (
        "Todo list updated (3 items: 1 done, 1 in progress, 1 pending):\n"
        "[x] Read the parser\n"
        "[~] Fix the off-by-one\n"
        "[ ] Add a regression test"
    )
    assert out.metadata == {"todo": PLAN}
    assert out.mutation_state == "attempted"
    assert json.loads(store.notes.get(conv, TODO_NOTE_ID).content) == PLAN
    assert load_todo(store, conv) == PLAN


async def test_last_write_wins(store: Store, conv: str) -> None:
    await handler({"items": PLAN}, make_ctx(store, conv))
    second = [{"content": "Only this", "status": "pending"}]
    out = await handler({"items": second}, make_ctx(store, conv))
    assert out.content.endswith("[ ] Only this")
    assert load_todo(store, conv) == second


async def test_empty_list_clears(store: Store, conv: str) -> None:
    await handler({"items": PLAN}, make_ctx(store, conv))
    out = await handler({"items": []}, make_ctx(store, conv))
    assert out.content == "Todo list cleared (0 items)."
    assert out.metadata == {"todo": []}
    assert load_todo(store, conv) == []


async def test_clear_todo_for_a_new_user_turn(store: Store, conv: str) -> None:
    await handler({"items": PLAN}, make_ctx(store, conv))
    assert clear_todo(store, conv) is True
    assert load_todo(store, conv) == []
    assert store.notes.get(conv, TODO_NOTE_ID) is None
    assert clear_todo(store, conv) is False
    assert clear_todo(store, "never-existed") is False


async def test_todo_is_per_conversation_and_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "smith.db"
    with Store.open(path) as first:
        mine = first.conversations.create("proj")
        other = first.conversations.create("proj")
        await handler({"items": PLAN}, make_ctx(first, mine))
        assert load_todo(first, other) == []
    with Store.open(path) as second:
        assert load_todo(second, mine) == PLAN


async def test_content_is_trimmed_and_extra_fields_dropped(store: Store, conv: str) -> None:
    items = [{"content": "  spaced  ", "status": "pending", "id": "1", "priority": "high"}]
    out = await handler({"items": items}, make_ctx(store, conv))
    assert out.metadata["todo"] == [{"content": "spaced", "status": "pending"}]


async def test_items_sent_as_a_json_string_are_accepted(store: Store, conv: str) -> None:
    await handler({"items": json.dumps(PLAN)}, make_ctx(store, conv))
    assert load_todo(store, conv) == PLAN


async def test_item_limits_are_inclusive(store: Store, conv: str) -> None:
    items = [{"content": "x" * MAX_CONTENT_CHARS, "status": "pending"}] * MAX_ITEMS
    out = await handler({"items": items}, make_ctx(store, conv))
    assert len(out.metadata["todo"]) == MAX_ITEMS


def test_render_multiline_content() -> None:
    text = render_todo([{"content": "first\nsecond", "status": "done"}])
    assert text == "[x] first\n    second"


def test_load_todo_ignores_an_unreadable_note(store: Store, conv: str) -> None:
    store.notes.put(conv, TODO_NOTE_ID, "{not json")
    assert load_todo(store, conv) == []
    store.notes.put(conv, TODO_NOTE_ID, json.dumps([{"content": "x", "status": "weird"}]))
    assert load_todo(store, conv) == []


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        (None, "missing required argument `items` (an array of at most 100 objects)."),
        ({"content": "x"}, "`items` must be an array of at most 100 objects, got {"),
        ("not json", "got a string that is not JSON."),
        (
            [{"content": "x", "status": "pending"}] * 101,
            "`items` has 101 entries; the limit is 100.",
        ),
        (["just text"], "`items[0]` must be an object with content, status, got 'just text'"),
        ([{"status": "pending"}], "missing required argument `items[0].content` (a string)"),
        ([{"content": 5, "status": "pending"}], "`items[0].content` must be a string, got 5."),
        (
            [{"content": "ok", "status": "done"}, {"content": "  ", "status": "pending"}],
            "`items[1].content` must not be empty.",
        ),
        (
            [{"content": "x" * 1001, "status": "pending"}],
            "`items[0].content` is 1001 characters; the limit is 1000.",
        ),
        (
            [{"content": "x"}],
            "missing required argument `items[0].status` (one of pending, in_progress, done).",
        ),
        (
            [{"content": "x", "status": "completed"}],
            "`items[0].status` must be one of pending, in_progress, done, got 'completed'; use 'done'.",
        ),
        (
            [{"content": "x", "status": "in-progress"}],
            "`items[0].status` must be one of pending, in_progress, done, got 'in-progress'; use 'in_progress'.",
        ),
        (
            [{"content": "x", "status": "blocked"}],
            "`items[0].status` must be one of pending, in_progress, done, got 'blocked'.",
        ),
        (
            [{"content": "x", "status": 1}],
            "`items[0].status` must be one of pending, in_progress, done, got 1",
        ),
    ],
)
async def test_bad_items(store: Store, conv: str, items: Any, expected: str) -> None:
    await handler({"items": PLAN}, make_ctx(store, conv))
    with pytest.raises(ToolError) as err:
        await handler({} if items is None else {"items": items}, make_ctx(store, conv))
    assert err.value.code == "invalid_arguments"
    assert expected in err.value.message
    assert load_todo(store, conv) == PLAN


async def test_missing_store_or_conversation(store: Store, conv: str) -> None:
    with pytest.raises(ToolError) as err:
        await handler({"items": PLAN}, make_ctx(None, conv))
    assert err.value.code == "no_store"
    with pytest.raises(ToolError) as err:
        await handler({"items": PLAN}, make_ctx(store, None))
    assert err.value.code == "no_conversation"
    with pytest.raises(ToolError) as err:
        await handler({"items": PLAN}, make_ctx(store, "ghost"))
    assert err.value.code == "store_error"
    assert err.value.message == "could not save the todo list: no conversation with id 'ghost'"
