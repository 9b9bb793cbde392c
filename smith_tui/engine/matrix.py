"""The global role policy: which role may dispatch to which, and use which tool.

This is the first gate of tool availability; a tool's own allow/deny lists
(``ToolSpec.role_allowlist`` / ``role_denylist``) are the second. Both must
pass before a tool is offered to a role. Anything not listed is denied.

MCP servers' tools (``mcp__<server>__<tool>``) pass this gate for every role:
which roles get them is their server's ``roles`` setting (by default direct,
worker and explorer), carried as the tool's own allowlist.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

from smith_tui.mcp import TOOL_PREFIX as MCP_TOOL_PREFIX

Decision = Literal["allow", "deny"]

ROLES = ("direct", "orchestrator", "worker", "explorer")

#: Dispatch edges: the roles each role may delegate to.
DISPATCH_TARGETS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "direct": frozenset({"worker", "explorer"}),
        "orchestrator": frozenset({"worker", "explorer"}),
        "worker": frozenset(),
        "explorer": frozenset(),
    }
)


def _rows(tools: tuple[str, ...], *allowed_roles: str) -> dict[str, frozenset[str]]:
    return {tool: frozenset(allowed_roles) for tool in tools}


_CODE_READ = ("read", "code_map", "code_grep", "code_files", "code_symbols", "code_outline")

#: Tool name → the roles allowed to use it (docs/DESIGN.md §3.2).
TOOL_MATRIX: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        **_rows(("bash",), "direct", "worker", "explorer"),
        **_rows(_CODE_READ, "direct", "orchestrator", "worker", "explorer"),
        **_rows(("git",), "orchestrator"),
        **_rows(("edit", "write"), "direct", "worker"),
        **_rows(("web_search", "web_fetch"), "direct", "explorer"),
        **_rows(("record", "recall", "note", "todo", "dispatch"), "direct", "orchestrator"),
        # Merges or drops a worker's worktree (dispatch/worktree_tool.py).
        **_rows(("worktree",), "direct", "orchestrator"),
        **_rows(("report",), "worker", "explorer"),
        **_rows(("history_search",), "direct", "orchestrator", "explorer"),
        # Registered only for a turn in plan mode (engine/plans.py).
        **_rows(("present_plan",), "direct", "orchestrator"),
        # Registered only while the project or the user has skills (engine/skills.py).
        **_rows(("skill",), "direct", "orchestrator", "worker", "explorer"),
    }
)


def check_dispatch(role: str, target: str) -> bool:
    """Return ``True`` when ``role`` may dispatch a child of role ``target``."""
    return target in DISPATCH_TARGETS.get(role, frozenset())


def check_tool(role: str, tool_name: str) -> Decision:
    """Return ``"allow"`` or ``"deny"`` for ``role`` using ``tool_name`` (unknown → deny)."""
    if tool_name.startswith(MCP_TOOL_PREFIX):
        return "allow" if role in ROLES else "deny"
    return "allow" if role in TOOL_MATRIX.get(tool_name, frozenset()) else "deny"


def allowed_tools(role: str) -> frozenset[str]:
    """Return every tool name the matrix allows for ``role`` (empty for unknown roles)."""
    return frozenset(tool for tool, roles in TOOL_MATRIX.items() if role in roles)
