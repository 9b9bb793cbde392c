"""The tool registry: register, look up and offer tools per role.

Availability is a dual gate: the global role policy (the engine's tool matrix,
injected as ``policy``) and then the spec's own allow/deny lists.
"""

from __future__ import annotations

import builtins  # the class's list() method shadows the builtin in its annotations
from collections.abc import Callable, Iterable
from typing import Any

from smith_tui.tools.spec import ToolError, ToolSpec

PolicyCheck = Callable[[str, str], str]


def _allow_all(role: str, name: str) -> str:
    return "allow"


class ToolRegistry:
    """Holds the tools known to a runtime."""

    def __init__(
        self, policy: PolicyCheck = _allow_all, tools: Iterable[ToolSpec[Any]] = ()
    ) -> None:
        self._tools: dict[str, ToolSpec[Any]] = {}
        self.policy = policy
        for tool in tools:
            self.register(tool)

    def register(self, spec: ToolSpec[Any]) -> None:
        """Add ``spec``; a second tool with the same name replaces the first."""
        self._tools[spec.name] = spec

    def unregister(self, name: str) -> None:
        """Remove the tool named ``name`` (an MCP server's tool when its server stops)."""
        self._tools.pop(name, None)

    def get(self, name: str) -> ToolSpec[Any] | None:
        """Return the tool named ``name`` regardless of role, or ``None``."""
        return self._tools.get(name)

    def is_available(self, spec: ToolSpec[Any], role: str) -> bool:
        """Return whether ``role`` may use ``spec`` under both gates."""
        if self.policy(role, spec.name) != "allow":
            return False
        if spec.role_allowlist is not None and role not in spec.role_allowlist:
            return False
        return role not in spec.role_denylist

    def resolve(self, name: str, role: str) -> ToolSpec[Any]:
        """Return the tool for ``role`` or raise :class:`ToolError` saying why not."""
        spec = self._tools.get(name)
        if spec is None:
            known = ", ".join(s.name for s in self.list(role)) or "none"
            raise ToolError(
                f"unknown tool {name!r}; tools available to you: {known}", code="unknown_tool"
            )
        if not self.is_available(spec, role):
            raise ToolError(
                f"tool {name!r} is not available to the {role} role", code="tool_denied"
            )
        return spec

    def list(self, role: str | None = None) -> list[ToolSpec[Any]]:
        """Return the registered tools, only those ``role`` may use when given."""
        specs = sorted(self._tools.values(), key=lambda s: s.name)
        if role is None:
            return specs
        return [s for s in specs if self.is_available(s, role)]

    def llm_specs(self, role: str) -> builtins.list[dict[str, Any]]:
        """Return the Chat-Completions ``tools`` array offered to ``role``."""
        return [
            {
                "type": "function",
                "function": {
                    "name": spec.name,
                    "description": spec.description,
                    "parameters": spec.input_schema,
                },
            }
            for spec in self.list(role)
        ]
