"""The todo list of the current turn, shown above the prompt while it has items."""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widgets import Static

from smith_tui.engine import events as ev
from smith_tui.terminal_text import visible

#: status → (mark, mark style, text style)
_MARKS: dict[str, tuple[str, str, str]] = {
    "done": ("[x]", "$success", "dim strike"),
    "in_progress": ("[~]", "bold $warning", "bold"),
    "pending": ("[ ]", "dim", ""),
}


class TodoPanel(Static):
    """Renders the items of the last ``TodoUpdated``; hidden (``display: none``) while empty."""

    DEFAULT_CSS = """
    TodoPanel {
        display: none;
        height: auto;
        max-height: 10;
        padding: 0 1;
        border-top: solid $panel-lighten-2;
    }
    TodoPanel.-has-items {
        display: block;
    }
    """

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__("", name=name, id=id, classes=classes)
        self.items: list[dict[str, Any]] = []
        """The items shown (dicts with ``content`` and ``status``)."""

    def set_items(self, items: list[dict[str, Any]]) -> None:
        """Show ``items``; an empty list hides the panel."""
        self.items = [dict(item) for item in items]
        self.set_class(bool(self.items), "-has-items")
        self.update(self.render_items())

    def handle_event(self, event: ev.Event) -> None:
        """Show each ``TodoUpdated`` list; a new top-level turn starts with an empty plan."""
        if isinstance(event, ev.TodoUpdated):
            self.set_items(list(event.items))
        elif isinstance(event, ev.TurnStarted) and event.job_id is None and self.items:
            self.set_items([])

    def item_lines(self) -> list[str]:
        """The plain lines of the list: ``[x] done item``, ``[~] …``, ``[ ] …``."""
        lines = []
        for item in self.items:
            mark = _MARKS.get(str(item.get("status", "pending")), ("[?]", "", ""))[0]
            lines.append(f"{mark} {_first_line(item.get('content'))}")
        return lines

    def render_items(self) -> Content:
        """The list with a ``Todo done/total`` header, one styled line per item."""
        done = sum(1 for item in self.items if item.get("status") == "done")
        parts: list[str | tuple[str, str]] = [(f"Todo {done}/{len(self.items)}", "bold")]
        for item in self.items:
            mark, mark_style, text_style = _MARKS.get(
                str(item.get("status", "pending")), ("[?]", "", "")
            )
            parts += ["\n", (mark, mark_style), " ", (_first_line(item.get("content")), text_style)]
        return Content.assemble(*parts)


def _first_line(content: Any) -> str:
    lines = visible(str(content or "")).strip().splitlines()
    return lines[0] if lines else ""
