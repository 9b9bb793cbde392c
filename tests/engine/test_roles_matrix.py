"""The policy matrix, checked cell by cell against the literal docs/DESIGN.md §3.2 table."""

from __future__ import annotations

import itertools

import pytest

from smith_tui.engine.matrix import (
    DISPATCH_TARGETS,
    TOOL_MATRIX,
    allowed_tools,
    check_dispatch,
    check_tool,
)
from smith_tui.engine.roles import list_roles

ROLES = ["direct", "orchestrator", "worker", "explorer"]

# tool: (direct, orchestrator, worker, explorer), "A" = allow, "D" = deny
TABLE = {
    "bash": "ADAA",
    "read": "AAAA",
    "code_map": "AAAA",
    "code_grep": "AAAA",
    "code_files": "AAAA",
    "code_symbols": "AAAA",
    "code_outline": "AAAA",
    "git": "DADD",
    "edit": "ADAD",
    "write": "ADAD",
    "web_search": "ADDA",
    "web_fetch": "ADDA",
    "record": "AADD",
    "recall": "AADD",
    "note": "AADD",
    "todo": "AADD",
    "dispatch": "AADD",
    "worktree": "AADD",
    "report": "DDAA",
    "history_search": "AADA",
    "present_plan": "AADD",
    "skill": "AAAA",
}

DISPATCH = {
    ("direct", "worker"),
    ("direct", "explorer"),
    ("orchestrator", "worker"),
    ("orchestrator", "explorer"),
}


@pytest.mark.parametrize(("tool", "role"), itertools.product(TABLE, ROLES))
def test_every_cell_of_the_tool_matrix(tool: str, role: str) -> None:
    expected = {"A": "allow", "D": "deny"}[TABLE[tool][ROLES.index(role)]]
    assert check_tool(role, tool) == expected


def test_matrix_lists_exactly_the_design_tools() -> None:
    assert set(TOOL_MATRIX) == set(TABLE)


@pytest.mark.parametrize(
    ("role", "tool"),
    [("root", "bash"), ("Smith", "read"), ("", "read"), ("direct", "rm"), ("worker", "")],
)
def test_unknown_role_or_tool_is_denied(role: str, tool: str) -> None:
    assert check_tool(role, tool) == "deny"


@pytest.mark.parametrize(("role", "target"), itertools.product([*ROLES, "nobody"], repeat=2))
def test_every_dispatch_edge(role: str, target: str) -> None:
    assert check_dispatch(role, target) is ((role, target) in DISPATCH)


def test_allowed_tools_per_role() -> None:
    for role in ROLES:
        expected = {t for t, row in TABLE.items() if row[ROLES.index(role)] == "A"}
        assert allowed_tools(role) == expected
    assert allowed_tools("nobody") == frozenset()


def test_role_catalog_agrees_with_dispatch_edges() -> None:
    for spec in list_roles():
        assert set(spec.dispatch_targets) == DISPATCH_TARGETS[spec.name]
        assert spec.can_dispatch == bool(spec.dispatch_targets)
