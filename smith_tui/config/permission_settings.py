"""The ``permissions`` table: the permission mode and the allow/deny rules.

The rules' grammar is checked here (a tool name, optionally a pattern in
parentheses); what a pattern matches is :mod:`smith_tui.tools.permission_policy`.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from smith_tui.config.modes import (  # re-exported: the one list of modes lives there
    MODE_TEXT,
    MODES_USAGE,
    PERMISSION_MODES,
    PermissionMode,
)
from smith_tui.config.section import Section

_PERMISSION_RULE = re.compile(r"[A-Za-z0-9_*?\-]+(\(.+\))?", re.DOTALL)


def _permission_rule(value: str) -> str:
    if not _PERMISSION_RULE.fullmatch(value.strip()):
        raise ValueError(
            "a permission rule is a tool name, optionally with a pattern in parentheses: "
            f"bash(git status*), edit(src/**), web_fetch(docs.python.org); got {value!r}"
        )
    return value.strip()


PermissionRule = Annotated[str, AfterValidator(_permission_rule)]
"""One ``permissions.allow`` / ``permissions.deny`` entry."""


class PermissionsConfig(Section):
    """Which tool calls run, ask first, or are refused (see README, Safety)."""

    mode: PermissionMode | None = Field(
        None,
        description=(
            "'read-only': no edit/write, bash only sandboxed with the project read-only, no "
            "workers; 'ask': bash, edit, write, web_fetch, dispatch and MCP tools ask first; "
            "'auto-edit': edits inside the project go through, the rest asks; 'yolo': nothing "
            "asks; 'plan': only reading tools and explorers run, and the turn ends with a plan "
            "for the user to approve. Absent: ask in the app, yolo headless (smith -p)."
        ),
    )
    allow: list[PermissionRule] = Field(
        default_factory=list,
        description=(
            "Calls that go through without asking, e.g. bash(git status*), edit(src/**), "
            "web_fetch(docs.python.org), dispatch(explorer)."
        ),
    )
    deny: list[PermissionRule] = Field(
        default_factory=list,
        description="Calls that are always refused, in every mode (deny wins over allow).",
    )


__all__ = [
    "MODES_USAGE",
    "MODE_TEXT",
    "PERMISSION_MODES",
    "PermissionMode",
    "PermissionRule",
    "PermissionsConfig",
]
