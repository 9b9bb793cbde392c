"""The note tool on a real SQLite store: project-scoped CRUD, search and precise errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.store import Store
from smith_tui.tools.builtin.note import MAX_NOTE_CHARS, TOOL
from smith_tui.tools.spec import ToolContext, ToolError, ToolOutput, ToolServices
from tests.support.tools import typed_config

handler = TOOL.run  # validates like the executor, then runs the handler


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "smith.db") as opened:
        yield opened


def make_ctx(
    store: Any,
    project_id: str | None = "proj-a",
    conversation_id: str | None = "c1",
    config: dict[str, Any] | None = None,
) -> ToolContext:
    return ToolContext(
        role="direct",
        turn_id="t1",
        cwd=Path("/"),
        cancel=CancelToken.new_root(),
        config=typed_config(config),
        conversation_id=conversation_id,
        project_id=project_id,
        services=ToolServices() if store is None else ToolServices(store=store),
    )


async def note(store: Store, project: str = "proj-a", **args: Any) -> ToolOutput:
    return await handler(args, make_ctx(store, project))


async def note_error(store: Store, project: str | None = "proj-a", **args: Any) -> ToolError:
    with pytest.raises(ToolError) as err:
        await handler(args, make_ctx(store, project))
    return err.value


def test_spec_shape() -> None:
    assert TOOL.name == "note"
    assert TOOL.input_schema["properties"]["action"]["enum"] == [
        "list",
        "get",
        "upsert",
        "delete",
        "search",
    ]
    assert TOOL.input_schema["required"] == ["action"]


async def test_upsert_get_update_delete(store: Store) -> None:
    created = await note(store, action="upsert", id="style", content="Use ruff.\nLine 2")
    assert created.content == "Created project note 'style' (16 chars, 2 lines)."
    assert created.metadata == {"id": "style", "chars": 16, "created": True}
    assert created.mutation_state == "attempted"
    assert (await note(store, action="get", id="style")).content == "Use ruff.\nLine 2"

    updated = await note(store, action="upsert", id="style", content="Use ruff format.")
    assert updated.content == "Updated project note 'style' (16 chars)."
    assert updated.metadata["created"] is False
    assert store.project_memory.get("proj-a", "style").content == "Use ruff format."

    deleted = await note(store, action="delete", id="style")
    assert deleted.content == "Deleted project note 'style'."
    assert store.project_memory.get("proj-a", "style") is None


async def test_shared_across_conversations_of_a_project_only(store: Store) -> None:
    first = store.conversations.create("proj-a")
    second = store.conversations.create("proj-a")
    elsewhere = store.conversations.create("proj-b")
    await handler(
        {"action": "upsert", "id": "build", "content": "make test"},
        make_ctx(store, "proj-a", first),
    )
    got = await handler({"action": "get", "id": "build"}, make_ctx(store, "proj-a", second))
    assert got.content == "make test"
    with pytest.raises(ToolError) as err:
        await handler({"action": "get", "id": "build"}, make_ctx(store, "proj-b", elsewhere))
    assert err.value.code == "not_found"
    assert "Project memory is empty." in err.value.message
    listing = await handler({"action": "list"}, make_ctx(store, "proj-b", elsewhere))
    assert listing.metadata["ids"] == []
    found = await handler({"action": "search", "query": "make"}, make_ctx(store, "proj-b"))
    assert found.metadata["ids"] == []


async def test_notes_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "smith.db"
    with Store.open(path) as first:
        await note(first, action="upsert", id="deploy", content="kubectl apply -k overlays/prod")
    with Store.open(path) as second:
        assert (await note(second, action="get", id="deploy")).content.startswith("kubectl")
        hits = await note(second, action="search", query="overlays")
        assert hits.metadata["ids"] == ["deploy"]


async def test_list_shows_ids_first_lines_and_sizes(store: Store) -> None:
    empty = await note(store, action="list")
    assert empty.content.startswith("Project memory is empty; add a note with")
    await note(store, action="upsert", id="b/two", content="\n\nSecond note\nmore")
    await note(store, action="upsert", id="a-one", content="First note " + "x" * 200)
    out = await note(store, action="list")
    lines = out.content.splitlines()
    assert lines[0] == "2 notes in project memory:"
    assert lines[1].startswith("- a-one (211 chars): First note xxx")
    assert lines[1].endswith("…") and len(lines[1]) < 140
    assert lines[2] == "- b/two (18 chars, 4 lines): Second note"
    assert out.metadata["ids"] == ["a-one", "b/two"]
    only_b = await note(store, action="list", prefix="b/")
    assert only_b.metadata["ids"] == ["b/two"]
    assert only_b.content.startswith("1 note with ids starting with 'b/':")
    none = await note(store, action="list", prefix="zzz")
    assert none.content == "No project notes with ids starting with 'zzz'."


async def test_search_follows_updates_and_deletes(store: Store) -> None:
    await note(store, action="upsert", id="db", content="We use PostgreSQL for storage.")
    await note(store, action="upsert", id="cache", content="Redis caches sessions.")
    hits = await note(store, action="search", query="postgresql")
    assert hits.metadata == {"query": "postgresql", "ids": ["db"]}
    assert hits.content.splitlines()[0] == "1 project note match 'postgresql':"
    assert "«PostgreSQL»" in hits.content
    await note(store, action="upsert", id="db", content="We moved to SQLite.")
    assert (await note(store, action="search", query="postgresql")).metadata["ids"] == []
    assert (await note(store, action="search", query="sqlite")).metadata["ids"] == ["db"]
    await note(store, action="delete", id="db")
    gone = await note(store, action="search", query="sqlite")
    assert gone.content == "No project notes match 'sqlite'."
    either = await note(store, action="search", query="redis OR sqlite")
    assert either.metadata["ids"] == ["cache"]


async def test_search_query_with_control_characters(store: Store) -> None:
    await note(store, action="upsert", id="db", content="We use PostgreSQL for storage.")
    for char in (*map(chr, range(0x20)), "\x7f"):
        hits = await note(store, action="search", query=f"{char}postgresql{char}storage{char}")
        assert hits.metadata["ids"] == ["db"], repr(char)
        only = await note_error(store, action="search", query=f"{char}({char}'{char}")
        assert "`query` must contain at least one word" in only.message
    for query in ('"postgresql', "postgresql)", "(postgresql OR", "postgresql' AND"):
        hits = await note(store, action="search", query=query)
        assert hits.metadata["ids"] == ([] if "AND" in query else ["db"]), query


async def test_search_limit(store: Store) -> None:
    for n in range(5):
        await note(store, action="upsert", id=f"n{n}", content=f"shared word number {n}")
    assert len((await note(store, action="search", query="shared")).metadata["ids"]) == 5
    limited = await note(store, action="search", query="shared", limit=2)
    assert len(limited.metadata["ids"]) == 2
    err = await note_error(store, action="search", query="shared", limit=0)
    assert err.message == "note: `limit` must be an integer between 1 and 50, got 0."


async def test_output_is_budgeted(store: Store) -> None:
    await note(store, action="upsert", id="big", content="y" * 3000)
    ctx = make_ctx(store, config={"services": {"tool": {"note": {"max_output_chars": 300}}}})
    out = await handler({"action": "get", "id": "big"}, ctx)
    assert "cut from the middle" in out.content and len(out.content) < 500
    assert out.metadata["chars"] == 3000


async def test_missing_notes_get_suggestions(store: Store) -> None:
    await note(store, action="upsert", id="conventions", content="c")
    await note(store, action="upsert", id="deploy", content="d")
    err = await note_error(store, action="get", id="convention")
    assert err.code == "not_found"
    assert err.message == (
        "no project note with id 'convention'. Did you mean 'conventions'? "
        "Existing note ids (2): 'conventions', 'deploy'."
    )
    err = await note_error(store, action="delete", id="deploy-old")
    assert err.code == "not_found"
    assert "Did you mean 'deploy'?" in err.message
    assert store.project_memory.get("proj-a", "deploy") is not None


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, "missing required argument `action` (one of list, get, upsert, delete, search)."),
        (
            {"action": "destroy"},
            "`action` must be one of list, get, upsert, delete, search, got 'destroy'",
        ),
        ({"action": "create"}, "(to create a note use 'upsert')."),
        ({"action": "remove"}, "(to remove a note use 'delete')."),
        ({"action": 3}, "`action` must be one of list, get, upsert, delete, search, got 3"),
        ({"action": "get"}, "action 'get' needs `id`, the note's name;"),
        ({"action": "delete"}, "action 'delete' needs `id`"),
        ({"action": "upsert", "content": "x"}, "action 'upsert' needs `id`"),
        ({"action": "upsert", "id": "k"}, "action 'upsert' needs `content`"),
        ({"action": "upsert", "id": "k", "content": 7}, "`content` must be a string, got 7."),
        ({"action": "upsert", "id": "k", "content": " "}, 'to remove a note use action "delete"'),
        (
            {"action": "upsert", "id": "k", "content": "x" * (MAX_NOTE_CHARS + 1)},
            f"the limit is {MAX_NOTE_CHARS:,}",
        ),
        ({"action": "get", "id": ""}, "`id` must not be empty."),
        ({"action": "get", "id": "k "}, "`id` must not start or end with whitespace"),
        ({"action": "get", "id": "k" * 201}, "`id` is 201 characters long"),
        ({"action": "get", "id": ["k"]}, "`id` must be a string"),
        ({"action": "search"}, "action 'search' needs `query`"),
        ({"action": "search", "query": "!!! ()"}, "`query` must contain at least one word"),
        ({"action": "search", "query": 5}, "`query` must be a string, got 5"),
        ({"action": "list", "prefix": 5}, "`prefix` must be a string"),
    ],
)
async def test_bad_arguments(store: Store, args: dict[str, Any], expected: str) -> None:
    err = await note_error(store, **args)
    assert err.code == "invalid_arguments"
    assert expected in err.message
    assert store.project_memory.list("proj-a") == []


async def test_action_is_case_and_space_tolerant(store: Store) -> None:
    await note(store, action=" UPSERT ", id="k", content="v")
    assert (await note(store, action="Get", id="k")).content == "v"


async def test_missing_store_or_project(store: Store) -> None:
    with pytest.raises(ToolError) as err:
        await handler({"action": "list"}, make_ctx(None))
    assert err.value.code == "no_store"
    with pytest.raises(ToolError) as err:
        await handler({"action": "list"}, make_ctx(store, None))
    assert err.value.code == "no_project"
    assert "no project id" in err.value.message


async def test_bad_project_id_is_a_store_error(store: Store) -> None:
    err = await note_error(store, "bad:id", action="upsert", id="k", content="v")
    assert err.code == "store_error"
    assert (
        err.message
        == "could not upsert project memory: project_id must not contain ':', got 'bad:id'"
    )
