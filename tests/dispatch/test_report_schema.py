"""The report schema: liberal coercion, the validation rules, the report tool over the executor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.dispatch.report_schema import (
    FIELDS,
    REPORT_INPUT_SCHEMA,
    ReportError,
    coerce_report,
    normalize_report,
)
from smith_tui.dispatch.report_tool import REPORT_TOOL
from smith_tui.engine.matrix import check_tool
from smith_tui.tools.executor import execute_tool_call
from smith_tui.tools.registry import ToolRegistry
from smith_tui.tools.spec import ToolContext


def test_bare_string_findings_become_a_list_and_missing_role_fields_empty_lists() -> None:
    report = normalize_report(
        {
            "status": "ok",
            "summary": "found it",
            "findings": "f() lives in a.py",
            "evidence": "a.py:3",
        },
        "explorer",
    )
    assert report == {
        "status": "ok",
        "summary": "found it",
        "findings": ["f() lives in a.py"],
        "evidence": ["a.py:3"],
    }
    worker = normalize_report({"status": "partial", "summary": "half done"}, "worker")
    assert worker == {
        "status": "partial",
        "summary": "half done",
        "changes": [],
        "verification": [],
    }


def test_coercion_is_liberal_about_shapes() -> None:
    report = coerce_report(
        {
            "status": "  OK ",
            "summary": ["line one", "", "line two"],
            "changes": ["a.py: added f", None, "", {"file": "b.py", "what": "fixed"}],
            "verification": ("pytest: 3 passed",),
            "limitations": 42,
            "error": "",
            "cancelled": "yes",
            "usage": "not a dict",
            "notes": "unknown keys are dropped",
        },
        "worker",
    )
    assert report == {
        "status": "ok",
        "summary": "line one\nline two",
        "changes": ["a.py: added f", '{"file": "b.py", "what": "fixed"}'],
        "verification": ["pytest: 3 passed"],
        "limitations": ["42"],
        "cancelled": True,
    }


def test_fields_of_the_other_role_are_kept_when_given() -> None:
    report = normalize_report(
        {"status": "ok", "summary": "s", "findings": ["x"], "evidence": ["y"]}, "worker"
    )
    assert report["findings"] == ["x"] and report["changes"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"summary": "s"}, "`status` must be one of ok, partial, blocked; it is missing"),
        ({"status": "done", "summary": "s"}, "got 'done'"),
        ({"status": "ok"}, "`summary` must be a non-empty string"),
        ({"status": "ok", "summary": "   "}, "`summary` must be a non-empty string"),
        (
            {"status": "ok", "summary": "s", "findings": ["x"]},
            "must include at least one `evidence` entry",
        ),
        (
            {"status": "ok", "summary": "s", "findings": "x", "evidence": ["", None]},
            "must include at least one `evidence` entry",
        ),
    ],
)
def test_validation_errors_name_the_rule(args: dict, message: str) -> None:
    with pytest.raises(ReportError, match=message.replace("(", r"\(").replace(")", r"\)")):
        normalize_report(args, "explorer")


def test_an_explorer_without_findings_needs_no_evidence() -> None:
    report = normalize_report({"status": "blocked", "summary": "no access"}, "explorer")
    assert report["findings"] == [] and report["evidence"] == []


def test_the_evidence_rule_is_explorer_only() -> None:
    report = normalize_report({"status": "ok", "summary": "s", "findings": ["x"]}, "worker")
    assert report["findings"] == ["x"]


def test_a_report_that_is_not_an_object_is_rejected() -> None:
    with pytest.raises(ReportError, match="must be an object"):
        normalize_report(["ok"], "worker")  # type: ignore[arg-type]


def test_the_tool_schema_is_generated_from_the_field_table() -> None:
    props = REPORT_INPUT_SCHEMA["properties"]
    assert REPORT_INPUT_SCHEMA["required"] == ["status", "summary"]
    assert props["status"]["enum"] == ["ok", "partial", "blocked"]
    offered = {name for name, f in FIELDS.items() if f.model_facing}
    assert set(props) == offered
    assert {"changes", "verification", "findings", "evidence", "limitations", "error"} <= offered
    assert "usage" not in props and "cancelled" not in props
    for name in ("changes", "verification", "findings", "evidence", "limitations"):
        assert props[name]["type"] == "array"


def _ctx(role: str) -> ToolContext:
    return ToolContext(role=role, turn_id="t1", cwd=Path("/"), cancel=CancelToken.new_root())


async def test_report_tool_returns_the_normalised_report() -> None:
    registry = ToolRegistry(check_tool, [REPORT_TOOL])
    args = {"status": "ok", "summary": "mapped it", "findings": "x", "evidence": "a.py:1"}
    result = await execute_tool_call(registry, "c1", "report", json.dumps(args), _ctx("explorer"))
    assert result.ok
    assert json.loads(result.content) == {
        "status": "ok",
        "summary": "mapped it",
        "findings": ["x"],
        "evidence": ["a.py:1"],
    }
    assert result.metadata["report"]["findings"] == ["x"]


async def test_a_rejected_report_is_an_error_result_the_child_can_read() -> None:
    registry = ToolRegistry(check_tool, [REPORT_TOOL])
    args = {"status": "ok", "summary": "s", "findings": ["x"]}
    result = await execute_tool_call(registry, "c1", "report", json.dumps(args), _ctx("explorer"))
    assert not result.ok
    assert result.content.startswith("error: report rejected:")
    assert "evidence" in result.content and "call report again" in result.content


async def test_user_facing_roles_cannot_report() -> None:
    registry = ToolRegistry(check_tool, [REPORT_TOOL])
    args = json.dumps({"status": "ok", "summary": "s"})
    for role in ("direct", "orchestrator"):
        result = await execute_tool_call(registry, "c1", "report", args, _ctx(role))
        assert not result.ok and "report" in result.content
