"""Every tool's JSON schema is derived from its pydantic ``Args`` model.

The schemas must stay usable as Chat-Completions ``parameters`` (a plain,
self-contained JSON-schema object) and keep what the hand-written schemas
promised: the same arguments, the same required ones, enums and bounds.
Validation errors are one style: code ``invalid_arguments``, the tool's name,
the argument, what was wrong and what is expected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.dispatch.dispatch_tool import DispatchService
from smith_tui.dispatch.report_tool import REPORT_TOOL
from smith_tui.tools.builtin import builtin_tools
from smith_tui.tools.executor import execute_tool_call
from smith_tui.tools.registry import ToolRegistry
from smith_tui.tools.spec import ToolContext, ToolError, ToolSpec

# The arguments and the required ones of the hand-written schemas this replaced.
OLD_SCHEMAS: dict[str, tuple[set[str], list[str]]] = {
    "bash": ({"command", "timeout_s"}, ["command"]),
    "code_files": ({"max_results", "query"}, ["query"]),
    "code_grep": (
        {
            "case_insensitive",
            "context",
            "fixed_strings",
            "glob",
            "max_results",
            "path",
            "pattern",
        },
        ["pattern"],
    ),
    "code_map": ({"depth", "max_files", "path"}, []),
    "code_outline": ({"path"}, ["path"]),
    "code_symbols": ({"kind", "max_results", "name"}, ["name"]),
    "dispatch": (
        {"allow_raw_transcript", "context", "files", "model", "target_role", "task", "worktree"},
        ["target_role", "task", "context"],
    ),
    "edit": (
        {"end_line", "expected_hash", "operation", "path", "start_line", "text"},
        ["path", "expected_hash", "operation", "start_line"],
    ),
    "git": ({"args", "command"}, ["command"]),
    "history_search": ({"limit", "query"}, ["query"]),
    "note": ({"action", "content", "id", "limit", "prefix", "query"}, ["action"]),
    "read": ({"limit", "offset", "path"}, ["path"]),
    "recall": ({"key", "prefix"}, ["key"]),
    "record": ({"key", "value"}, ["key", "value"]),
    "report": (
        {
            "changes",
            "error",
            "evidence",
            "findings",
            "limitations",
            "status",
            "summary",
            "verification",
        },
        ["status", "summary"],
    ),
    "todo": ({"items"}, ["items"]),
    "web_fetch": ({"url"}, ["url"]),
    "web_search": ({"query"}, ["query"]),
    "write": ({"content", "path"}, ["path", "content"]),
}
# Tools whose old schema refused unknown arguments (all but the engine's two).
CLOSED = set(OLD_SCHEMAS) - {"dispatch", "report"}


async def _never(*_: Any) -> Any:
    raise AssertionError("not called")


def all_tools() -> list[ToolSpec[Any]]:
    dispatch = DispatchService(_never, lambda parent, child: True).tool()
    return [*builtin_tools(), REPORT_TOOL, dispatch]


def _walk(node: Any) -> list[dict[str, Any]]:
    """Every schema object below ``node`` (properties, items, branches)."""
    found = []
    if isinstance(node, dict):
        found.append(node)
        for key, value in node.items():
            if key == "properties":
                for prop in value.values():
                    found += _walk(prop)
            elif key in ("items", "anyOf", "oneOf", "allOf"):
                found += _walk(value)
    elif isinstance(node, list):
        for item in node:
            found += _walk(item)
    return found


def test_every_tool_is_covered() -> None:
    assert {tool.name for tool in all_tools()} == set(OLD_SCHEMAS)


@pytest.mark.parametrize("tool", all_tools(), ids=lambda tool: tool.name)
def test_schema_is_a_compact_chat_completions_object(tool: ToolSpec[Any]) -> None:
    schema = tool.input_schema
    dumped = json.dumps(schema)
    assert json.loads(dumped) == schema
    assert schema["type"] == "object"
    assert isinstance(schema["properties"], dict)
    assert set(schema.get("required", [])) <= set(schema["properties"])
    for key in ('"$ref"', '"$defs"', '"title"', '"definitions"'):
        assert key not in dumped, f"{tool.name}: {key} in {dumped}"
    for node in _walk(schema):
        assert "type" in node or "anyOf" in node or "enum" in node, (tool.name, node)
        assert node.get("type") != "null" and {"type": "null"} not in node.get("anyOf", [])
        for bad in ("ge", "le", "gt", "lt"):  # pydantic spellings that are not JSON schema
            assert bad not in node, (tool.name, node)
    for name, prop in schema["properties"].items():
        assert prop.get("description"), f"{tool.name}.{name} has no description"


@pytest.mark.parametrize("tool", all_tools(), ids=lambda tool: tool.name)
def test_schema_keeps_the_old_arguments_and_required_ones(tool: ToolSpec[Any]) -> None:
    properties, required = OLD_SCHEMAS[tool.name]
    assert set(tool.input_schema["properties"]) == properties
    assert tool.input_schema.get("required", []) == required
    closed = tool.input_schema.get("additionalProperties") is False
    assert closed == (tool.name in CLOSED)


def test_enums_and_bounds_are_kept() -> None:
    tools = {tool.name: tool.input_schema["properties"] for tool in all_tools()}
    assert tools["edit"]["operation"]["enum"] == ["replace", "insert", "delete"]
    assert tools["edit"]["start_line"]["minimum"] == 1
    assert tools["edit"]["end_line"] == {
        "type": "integer",
        "minimum": 1,
        "description": tools["edit"]["end_line"]["description"],
    }
    assert tools["bash"]["timeout_s"]["exclusiveMinimum"] == 0
    assert tools["read"]["offset"]["minimum"] == 1
    assert tools["note"]["limit"]["maximum"] == 50
    assert tools["code_grep"]["context"]["minimum"] == 0
    assert tools["code_grep"]["context"]["maximum"] == 10
    assert tools["code_grep"]["glob"]["anyOf"][1]["items"] == {"type": "string"}
    assert tools["todo"]["items"]["maxItems"] == 100
    assert tools["todo"]["items"]["items"]["required"] == ["content", "status"]
    assert tools["todo"]["items"]["items"]["properties"]["status"]["enum"] == [
        "pending",
        "in_progress",
        "done",
    ]
    assert tools["dispatch"]["target_role"]["enum"] == ["worker", "explorer"]
    assert tools["dispatch"]["context"]["required"] == ["user_request_summary"]
    assert tools["report"]["status"]["enum"] == ["ok", "partial", "blocked"]


def _ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(
        role="worker",
        turn_id="t1",
        cwd=tmp_path,
        cancel=CancelToken.new_root(),
        project_root=tmp_path,
    )


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("read", {}, "read: missing required argument `path` (a string)."),
        (
            "read",
            {"path": "a.txt", "offset": 0},
            "read: `offset` must be an integer >= 1, got 0.",
        ),
        (
            "read",
            {"path": "a.txt", "lines": 3},
            "read: unknown argument `lines` (accepted: path, offset, limit).",
        ),
        (
            "edit",
            {"path": "a", "expected_hash": "0" * 64, "operation": "move", "start_line": 1},
            "edit: `operation` must be one of replace, insert, delete, got 'move'.",
        ),
        ("bash", {"command": "true", "timeout_s": True}, "`timeout_s` must be a number > 0"),
        ("write", {"path": " ", "content": ""}, "write: `path` must not be empty."),
    ],
)
async def test_the_executor_reports_bad_arguments_in_one_style(
    tmp_path: Path, name: str, arguments: dict[str, Any], expected: str
) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    registry = ToolRegistry(tools=builtin_tools())
    result = await execute_tool_call(registry, "c1", name, json.dumps(arguments), _ctx(tmp_path))
    assert not result.ok
    assert result.metadata["error_code"] == "invalid_arguments"
    assert expected in result.content
    assert result.mutation_state == "none"  # nothing ran
    assert (tmp_path / "a.txt").read_text() == "x\n"


async def test_lenient_numbers_and_null_reach_the_handler_validated(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    registry = ToolRegistry(tools=builtin_tools())
    # A digit string is read as the integer it spells; null is the same as leaving it out.
    arguments = {"path": "a.txt", "offset": "2", "limit": None}
    result = await execute_tool_call(registry, "c1", "read", json.dumps(arguments), _ctx(tmp_path))
    assert result.ok, result.content
    assert (result.metadata["start_line"], result.metadata["end_line"]) == (2, 3)
    arguments["limit"] = 1.0  # an integral float is an integer
    result = await execute_tool_call(registry, "c1", "read", json.dumps(arguments), _ctx(tmp_path))
    assert result.ok and result.metadata["end_line"] == 2


def test_dispatch_arguments_are_checked_in_the_same_style() -> None:
    dispatch = DispatchService(_never, lambda parent, child: True).tool()
    with pytest.raises(ToolError) as caught:
        dispatch.parse_arguments({"target_role": "ghost", "task": "x"})
    assert caught.value.code == "invalid_arguments"
    assert caught.value.message == (
        "dispatch: `target_role` must be one of worker, explorer, got 'ghost'; "
        "missing required argument `context` (an object with user_request_summary)."
    )
    # Role aliases, a bare string for files and "true" for a flag are still accepted.
    args = dispatch.parse_arguments(
        {
            "target_role": "Niobe",
            "task": "t",
            "context": {"user_request_summary": "s"},
            "files": "a.py",
            "allow_raw_transcript": "true",
        }
    )
    assert args.files == ["a.py"] and args.allow_raw_transcript is True
