"""record / recall on a real SQLite store: round trips, prefixes, errors and budgets."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.store import Store
from smith_tui.tools.builtin.memory import (
    MAX_KEY_CHARS,
    MAX_VALUE_CHARS,
    RECALL_TOOL,
    RECORD_TOOL,
    TOOLS,
    save_scratchpad,
)
from smith_tui.tools.builtin.todo import save_todo
from smith_tui.tools.executor import execute_tool_call
from smith_tui.tools.registry import ToolRegistry
from smith_tui.tools.spec import ToolContext, ToolError, ToolServices
from tests.support.tools import typed_config

record_handler = RECORD_TOOL.run  # validates like the executor, then runs the handler
recall_handler = RECALL_TOOL.run


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "smith.db") as opened:
        yield opened


def make_ctx(
    store: Any, conversation_id: str | None, *, config: dict[str, Any] | None = None
) -> ToolContext:
    return ToolContext(
        role="direct",
        turn_id="t1",
        cwd=Path("/"),
        cancel=CancelToken.new_root(),
        config=typed_config(config),
        conversation_id=conversation_id,
        project_id="proj",
        services=ToolServices() if store is None else ToolServices(store=store),
    )


@pytest.fixture
def conv(store: Store) -> str:
    return store.conversations.create("proj", "test")


async def record(store: Store, conv: str, key: str, value: Any) -> str:
    out = await record_handler({"key": key, "value": value}, make_ctx(store, conv))
    return out.content


async def recall(store: Store, conv: str, **args: Any) -> str:
    out = await recall_handler(args, make_ctx(store, conv))
    return out.content


def test_spec_shapes() -> None:
    assert [t.name for t in TOOLS] == ["record", "recall"]
    assert RECORD_TOOL.mutating and not RECALL_TOOL.mutating
    assert RECORD_TOOL.input_schema["required"] == ["key", "value"]
    assert RECALL_TOOL.input_schema["properties"]["prefix"]["type"] == "boolean"


async def test_record_then_recall_exact(store: Store, conv: str) -> None:
    out = await record_handler(
        {"key": "plan", "value": "step one\nstep two"}, make_ctx(store, conv)
    )
    assert out.content.startswith("Recorded scratchpad key 'plan' (17 chars, 2 lines)")
    assert out.metadata == {
        "key": "plan",
        "note_id": "scratchpad:plan",
        "chars": 17,
        "replaced": False,
    }
    assert out.mutation_state == "attempted"
    assert store.notes.get(conv, "scratchpad:plan").content == "step one\nstep two"
    back = await recall_handler({"key": "plan"}, make_ctx(store, conv))
    assert back.content == "step one\nstep two"
    assert back.metadata["key"] == "plan" and back.metadata["chars"] == 17


async def test_record_replaces_and_says_so(store: Store, conv: str) -> None:
    await record(store, conv, "k", "first")
    out = await record_handler({"key": "k", "value": "second!"}, make_ctx(store, conv))
    assert out.content.startswith("Replaced scratchpad key 'k' (7 chars)")
    assert "previous value had 5 chars" in out.content
    assert out.metadata["replaced"] is True
    assert await recall(store, conv, key="k") == "second!"


async def test_record_json_value_is_encoded(store: Store, conv: str) -> None:
    text = await record(store, conv, "data", {"b": [1, 2], "a": "x"})
    assert "stored as JSON" in text
    assert json.loads(await recall(store, conv, key="data")) == {"a": "x", "b": [1, 2]}


async def test_recall_survives_reopening_the_store(tmp_path: Path) -> None:
    path = tmp_path / "smith.db"
    with Store.open(path) as first:
        conv = first.conversations.create("proj")
        await record(first, conv, "dispatch/job1", "findings: the bug is in parse()")
    with Store.open(path) as second:
        assert await recall(second, conv, key="dispatch/job1") == "findings: the bug is in parse()"
        listing = await recall(second, conv, key="dispatch/", prefix=True)
        assert "dispatch/job1" in listing


async def test_scratchpad_is_per_conversation(store: Store, conv: str) -> None:
    other = store.conversations.create("proj")
    await record(store, conv, "secret", "only here")
    with pytest.raises(ToolError) as err:
        await recall(store, other, key="secret")
    assert err.value.code == "not_found"
    assert "scratchpad of this conversation is empty" in err.value.message


async def test_recall_missing_key_suggests_close_keys(store: Store, conv: str) -> None:
    for key in ("dispatch/abc123", "dispatch/xyz999", "plan"):
        await record(store, conv, key, "v")
    with pytest.raises(ToolError) as err:
        await recall(store, conv, key="dispatch/abc124")
    message = err.value.message
    assert message.startswith("no scratchpad entry under key 'dispatch/abc124'.")
    assert "Did you mean 'dispatch/abc123'" in message
    assert "Existing keys (3): 'dispatch/abc123', 'dispatch/xyz999', 'plan'." in message


async def test_recall_missing_key_lists_only_the_first_ten(store: Store, conv: str) -> None:
    for n in range(13):
        await record(store, conv, f"k{n:02d}", "v")
    with pytest.raises(ToolError) as err:
        await recall(store, conv, key="nothing-like-it")
    assert "Existing keys (13):" in err.value.message
    assert "'k09'" in err.value.message and "'k10'" not in err.value.message
    assert "and 3 more." in err.value.message


async def test_recall_prefix_lists_keys_with_first_line_and_size(store: Store, conv: str) -> None:
    result = {"status": "ok", "summary": "Found the parser bug", "findings": ["x"]}
    await record(store, conv, "dispatch/j1", json.dumps(result))
    await record(store, conv, "dispatch/j2", "\n  plain first line\nsecond")
    await record(store, conv, "notes", "unrelated")
    out = await recall_handler({"key": "dispatch/", "prefix": True}, make_ctx(store, conv))
    lines = out.content.splitlines()
    assert lines[0] == "2 scratchpad keys under 'dispatch/':"
    assert lines[1].startswith("- dispatch/j1 (") and lines[1].endswith(
        "): ok: Found the parser bug"
    )
    assert lines[2] == "- dispatch/j2 (26 chars, 3 lines): plain first line"
    assert out.metadata == {"prefix": "dispatch/", "keys": ["dispatch/j1", "dispatch/j2"]}


async def test_recall_empty_prefix_lists_everything_but_only_scratchpad(
    store: Store, conv: str
) -> None:
    await record(store, conv, "a", "1")
    await record(store, conv, "b/c", "2")
    save_todo(store, conv, [{"content": "x", "status": "pending"}])
    store.notes.put_turn_record(conv, "turn9", {"ok": True})
    for args in ({"key": "", "prefix": True}, {"prefix": True}, {"key": "", "prefix": "true"}):
        out = await recall_handler(args, make_ctx(store, conv))
        assert out.metadata["keys"] == ["a", "b/c"]
        assert out.content.startswith("2 scratchpad keys in this conversation's scratchpad:")


async def test_recall_prefix_is_literal_not_a_pattern(store: Store, conv: str) -> None:
    await record(store, conv, "a_b", "1")
    await record(store, conv, "axb", "2")
    await record(store, conv, "50%/x", "3")
    assert (await recall_handler({"key": "a_", "prefix": True}, make_ctx(store, conv))).metadata[
        "keys"
    ] == ["a_b"]
    assert (await recall_handler({"key": "50%", "prefix": True}, make_ctx(store, conv))).metadata[
        "keys"
    ] == ["50%/x"]


async def test_recall_prefix_without_matches(store: Store, conv: str) -> None:
    assert await recall(store, conv, key="", prefix=True) == (
        "No scratchpad keys in this conversation's scratchpad."
    )
    assert await recall(store, conv, key="dispatch/", prefix=True) == (
        "No scratchpad keys under 'dispatch/'. The scratchpad is empty."
    )
    await record(store, conv, "dispatch-old", "v")
    text = await recall(store, conv, key="dispatch/", prefix=True)
    assert text.startswith("No scratchpad keys under 'dispatch/'. Did you mean 'dispatch-old'?")


async def test_recall_output_is_budgeted(store: Store, conv: str) -> None:
    await record(store, conv, "big", "x" * 5000)
    ctx = make_ctx(
        store, conv, config={"services": {"tool": {"recall": {"max_output_chars": 200}}}}
    )
    out = await recall_handler({"key": "big"}, ctx)
    assert len(out.content) < 400
    assert "cut from the middle" in out.content
    assert out.metadata["chars"] == 5000
    for n in range(50):
        await record(store, conv, f"many/{n:03d}", "value line")
    listing = await recall_handler({"key": "many/", "prefix": True}, ctx)
    assert "cut from the middle" in listing.content and len(listing.content) < 400


async def test_save_scratchpad_for_dispatch(store: Store, conv: str) -> None:
    save_scratchpad(store, conv, "dispatch/j7", '{"summary": "done"}')
    assert await recall(store, conv, key="dispatch/j7") == '{"summary": "done"}'
    with pytest.raises(ToolError):
        save_scratchpad(store, conv, " bad", "v")


async def test_key_at_limit_is_accepted(store: Store, conv: str) -> None:
    key = "k" * MAX_KEY_CHARS
    await record(store, conv, key, "v")
    assert await recall(store, conv, key=key) == "v"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"value": "v"}, "missing required argument `key` (a string)."),
        ({"key": 5, "value": "v"}, "`key` must be a string, got 5."),
        ({"key": "", "value": "v"}, "`key` must not be empty."),
        ({"key": " k", "value": "v"}, "`key` must not start or end with whitespace"),
        ({"key": "k\n", "value": "v"}, "`key` must not start or end with whitespace"),
        ({"key": "k" * 201, "value": "v"}, "`key` is 201 characters long; the limit is 200."),
        ({"key": "a\tb", "value": "v"}, "`key` must be a single line without control characters"),
        ({"key": "k"}, "missing required argument `value` (a string)."),
        ({"key": "k", "value": None}, "missing required argument `value` (a string)."),
        ({"key": "k", "value": "  \n"}, "`value` must not be empty"),
        ({"key": "k", "value": "x" * (MAX_VALUE_CHARS + 1)}, "Split it over several keys"),
        ({"key": "k", "value": {1, 2}}, "`value` must be text (or JSON data), got set."),
    ],
)
async def test_record_rejects_bad_arguments(
    store: Store, conv: str, args: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ToolError) as err:
        await record_handler(args, make_ctx(store, conv))
    assert err.value.code == "invalid_arguments"
    assert expected in err.value.message
    assert store.notes.list(conv) == []


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, "missing required argument `key` (a string)."),
        ({"key": ""}, "`key` must not be empty (to list every key"),
        ({"key": "k", "prefix": "yes"}, "`prefix` must be true or false, got 'yes'."),
        ({"key": "k", "prefix": 1}, "`prefix` must be true or false, got 1."),
        ({"key": ["k"]}, "`key` must be a string, got ['k']"),
        ({"key": " x", "prefix": True}, "`key` must not start or end with whitespace"),
    ],
)
async def test_recall_rejects_bad_arguments(
    store: Store, conv: str, args: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ToolError) as err:
        await recall_handler(args, make_ctx(store, conv))
    assert err.value.code == "invalid_arguments"
    assert expected in err.value.message


@pytest.mark.parametrize("handler", [record_handler, recall_handler])
async def test_missing_store_or_conversation(handler: Any, store: Store, conv: str) -> None:
    args = {"key": "k", "value": "v"} if handler is record_handler else {"key": "k"}
    with pytest.raises(ToolError) as err:
        await handler(args, make_ctx(None, conv))
    assert err.value.code == "no_store"
    assert "services.store is unset" in err.value.message
    with pytest.raises(ToolError) as err:
        await handler(args, make_ctx({"not": "a store"}, conv))
    assert err.value.code == "no_store"
    assert "got dict" in err.value.message
    with pytest.raises(ToolError) as err:
        await handler(args, make_ctx(store, None))
    assert err.value.code == "no_conversation"


async def test_record_into_unknown_conversation_is_a_clear_error(store: Store) -> None:
    with pytest.raises(ToolError) as err:
        await record(store, "ghost", "k", "v")
    assert err.value.code == "store_error"
    assert (
        err.value.message == "could not record scratchpad key 'k': no conversation with id 'ghost'"
    )


async def test_through_the_executor_errors_become_results(store: Store, conv: str) -> None:
    registry = ToolRegistry(tools=TOOLS)
    ctx = make_ctx(store, conv)
    ok = await execute_tool_call(registry, "c1", "record", '{"key": "k", "value": "v"}', ctx)
    assert ok.ok and ok.mutation_state == "attempted"
    missing = await execute_tool_call(registry, "c2", "recall", '{"key": "nope"}', ctx)
    assert not missing.ok
    assert missing.content.startswith("error: no scratchpad entry under key 'nope'.")
    assert missing.metadata["error_code"] == "not_found"
