"""Plain records of what the transcript shows, one per top-level widget.

Widgets are built from these records and keep them up to date, so a widget pruned
from the top of the window can be rebuilt later from its record alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from smith_tui.widgets.output_tail import OutputTail


@dataclass
class UserEntry:
    """A message the user sent."""

    text: str
    position: int | None = None
    images: list[dict[str, Any]] = field(default_factory=list)
    """Its image attachments (``kind: "image"``: size and thumbnail) for thumbnails."""


@dataclass
class AssistantEntry:
    """An assistant answer: Markdown text and optional reasoning."""

    role: str = "direct"
    text: str = ""
    reasoning: str = ""
    job_id: str | None = None
    position: int | None = None


@dataclass
class ToolEntry:
    """One tool call and, once finished, its outcome."""

    call_id: str
    name: str
    arguments: str | dict[str, Any] = ""
    finished: bool = False
    ok: bool = True
    duration_s: float | None = None
    summary: str = ""
    content: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    position: int | None = None
    expanded: bool = False
    """The full result is shown (kept when the widget is parked and rebuilt)."""
    output: OutputTail | None = None
    """The last lines of a running call's live output (dropped when it finishes)."""


@dataclass
class DispatchEntry:
    """The normalised result of a dispatched sub-agent."""

    result: dict[str, Any]
    position: int | None = None


@dataclass
class NoticeEntry:
    """A line from the app itself (command output, error, retry); never stored."""

    text: str
    style: str = "info"
    position: int | None = None


@dataclass
class ChangesEntry:
    """The files a turn changed (its checkpoint records them): the turn's combined diff is a
    key away. Rebuilt on load from the turn's stored record."""

    checkpoint: str
    turn_id: str
    files: list[tuple[str, str]]
    """``(status, path)``: ``A`` added, ``M`` modified, ``D`` deleted."""
    position: int | None = None


Entry = UserEntry | AssistantEntry | ToolEntry | DispatchEntry | NoticeEntry | ChangesEntry
