"""The todo list of the current turn, shown above the prompt while it has items."""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widgets import Static

from smith_tui.engine import events as ev

_MARKS = {
    "done": ("✔", "$success"),
    "in_progress": ("▶", "bold $warning"),
    "pending": ("○", "dim"),
}


class TodoPanel(Static):
    """Renders ``TodoUpdated`` lists; hidden while the list is empty."""

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

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("", id=id, classes=classes)
        self.items: list[dict[str, Any]] = []

    def set_items(self, items: list[dict[str, Any]]) -> None:
        """Show ``items`` (dicts with ``content`` and ``status``); an empty list hides the panel."""
        self.items = [dict(item) for item in items]
        self.set_class(bool(self.items), "-has-items")
        self.update(self._render_items())

    def handle_event(self, event: ev.Event) -> None:
        """Follow the top-level todo list; a new top-level turn starts with an empty plan."""
        if event.job_id is not None:
            return
        if isinstance(event, ev.TodoUpdated):
            self.set_items(list(event.items))
        elif isinstance(event, ev.TurnStarted) and self.items:
            self.set_items([])

    def _render_items(self) -> Content:
        done = sum(1 for item in self.items if item.get("status") == "done")
        parts: list[str | tuple[str, str]] = [(f"Todo {done}/{len(self.items)}", "bold")]
        for item in self.items:
            status = str(item.get("status", "pending"))
            mark, style = _MARKS.get(status, ("?", ""))
            text = str(item.get("content", "")).splitlines()[0:1] or [""]
            text_style = "strike dim" if status == "done" else ""
            parts += ["\n", (f"{mark} ", style), (text[0], text_style)]
        return Content.assemble(*parts)
