"""The shape of a tool: its spec, the context a handler runs in, and its result."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from smith_tui.cancel import CancelToken

MutationState = Literal["none", "attempted", "unknown"]


class ToolError(Exception):
    """A clean failure the model should see as the tool result (no traceback)."""

    def __init__(self, message: str, *, code: str = "tool_error", data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.data = data


@dataclass
class ToolContext:
    """What a tool handler may use while it runs.

    ``services`` holds store-backed handles (notes, scratchpad, …) keyed by name;
    tools look them up lazily so the tools layer needs no engine import.
    """

    role: str
    turn_id: str
    cwd: Path
    cancel: CancelToken
    config: Mapping[str, Any] = field(default_factory=dict)
    conversation_id: str | None = None
    project_id: str | None = None
    project_root: Path | None = None
    services: Mapping[str, Any] = field(default_factory=dict)
    on_output: Callable[[str], None] | None = None

    def is_cancelled(self) -> bool:
        """Return ``True`` once the turn (or this call) was cancelled."""
        return self.cancel.is_cancelled()


@dataclass
class ToolOutput:
    """What a handler returns: content for the model plus structured metadata."""

    content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    mutation_state: MutationState = "none"
    ok: bool = True
    error: str | None = None


Handler = Callable[[dict[str, Any], ToolContext], Awaitable["ToolOutput | str"]]


@dataclass(frozen=True)
class ToolSpec:
    """A registered tool.

    ``input_schema`` is the JSON schema the model sees; ``description`` tells the
    model when and how to use the tool. ``role_allowlist`` / ``role_denylist``
    are the tool's own gate, checked after the global role matrix.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    role_allowlist: frozenset[str] | None = None
    role_denylist: frozenset[str] = frozenset()
    is_terminal: bool = False
    mutating: bool = False
    parallel: bool = False
    """Calls of a parallel tool in one round may run concurrently (e.g. ``dispatch``)."""


@dataclass
class ToolResult:
    """The normalised outcome of one tool call (docs/DESIGN.md §5.6)."""

    call_id: str
    name: str
    ok: bool
    content: str
    error: str | None = None
    cancelled: bool = False
    mutation_state: MutationState = "none"
    metadata: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
