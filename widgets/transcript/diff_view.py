"""A coloured view of what an ``edit`` or ``write`` call changed."""

from __future__ import annotations

import difflib
import re
from typing import Any, Literal

from rich.text import Text
from textual.widgets import Static

from smith_tui.engine.presentation import parse_arguments
from smith_tui.terminal_text import visible
from smith_tui.widgets.transcript.entries import ToolEntry

LineKind = Literal["added", "removed", "hunk", "header", "context"]

_STYLES: dict[LineKind, str] = {
    "added": "green",
    "removed": "red",
    "hunk": "cyan",
    "header": "bold",
    "context": "",
}
_NUMBERED = re.compile(r"\s*(\d+)\t")


def classify_diff(diff: str) -> list[tuple[LineKind, str]]:
    """Split a unified diff into lines tagged with their kind."""
    out: list[tuple[LineKind, str]] = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            out.append(("header", line))
        elif line.startswith("@@"):
            out.append(("hunk", line))
        elif line.startswith("+"):
            out.append(("added", line))
        elif line.startswith("-"):
            out.append(("removed", line))
        else:
            out.append(("context", line))
    return out


def change_lines(entry: ToolEntry) -> list[tuple[LineKind, str]] | None:
    """The coloured lines for an edit/write result, or None when there is nothing to colour.

    Uses, in order: a ``diff`` in the metadata; ``before``/``after`` texts; for
    ``edit``, the numbered context of the result with the changed range marked;
    for ``write``, the written content as added lines.
    """
    meta: dict[str, Any] = entry.metadata or {}
    path = str(meta.get("path") or parse_arguments(entry.arguments).get("path") or "file")
    diff = meta.get("diff")
    if isinstance(diff, str) and diff.strip():
        return classify_diff(diff)
    before, after = meta.get("before"), meta.get("after")
    if isinstance(before, str) and isinstance(after, str):
        lines = difflib.unified_diff(
            before.splitlines(), after.splitlines(), f"a/{path}", f"b/{path}", lineterm=""
        )
        return classify_diff("\n".join(lines))
    if entry.name == "edit" and entry.ok and entry.content:
        return _edit_context(entry.content, meta)
    if entry.name == "write" and entry.ok:
        written = parse_arguments(entry.arguments).get("content")
        if isinstance(written, str):
            head: list[tuple[LineKind, str]] = [("header", f"+++ b/{path}")]
            return head + [("added", "+" + line) for line in written.splitlines()]
    return None


def _edit_context(content: str, meta: dict[str, Any]) -> list[tuple[LineKind, str]]:
    start, end = meta.get("affected_start"), meta.get("affected_end")
    out: list[tuple[LineKind, str]] = []
    for line in content.splitlines():
        match = _NUMBERED.match(line)
        if match is None:
            out.append(("header", line))
            continue
        number = int(match.group(1))
        changed = isinstance(start, int) and isinstance(end, int) and start <= number <= end
        out.append(("added" if changed else "context", line.expandtabs(2)))
    return out


def render_lines(lines: list[tuple[LineKind, str]]) -> Text:
    """Rich text for tagged lines."""
    text = Text(no_wrap=True, overflow="ellipsis")
    for index, (kind, line) in enumerate(lines):
        if index:
            text.append("\n")
        text.append(visible(line), style=_STYLES[kind])
    return text


class DiffView(Static):
    """Coloured change lines (green added, red removed, cyan hunks)."""

    DEFAULT_CSS = """
    DiffView {
        height: auto;
    }
    """

    def __init__(self, lines: list[tuple[LineKind, str]]) -> None:
        super().__init__(render_lines(lines), markup=False, classes="diff")
        self.lines = lines
