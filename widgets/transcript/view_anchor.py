"""Keep what the reader is looking at in place while content above it changes height.

Parked content is rebuilt when it comes near the view. After the terminal width changed,
a placeholder's height (measured at the old width) no longer matches what the rebuilt
widget takes, and everything below it would jump. A :class:`ViewAnchor` remembers the
widget at the top edge of the view and where it was; :meth:`ViewAnchor.restore` scrolls by
however far it moved.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.errors import NoWidget
from textual.widget import Widget

from smith_tui.widgets.textual_compat import is_pruning


def _content_top(view: Widget, widget: Widget) -> int:
    """``widget``'s top row in ``view``'s scrollable content (from the last layout).

    Everything comes from the last layout, not from ``view.scroll_y``: a scroll not laid out
    yet (a PageUp just pressed) would otherwise count as the widget moving, and restoring
    would scroll the view back.
    """
    top_level = widget
    parent = widget.parent
    while isinstance(parent, Widget) and parent is not view:
        top_level = parent
        parent = parent.parent
    return top_level.virtual_region.y + widget.region.y - top_level.region.y


@dataclass
class ViewAnchor:
    """The widget at the top edge of a scrolling view and its row in the view's content."""

    view: Widget
    widget: Widget
    top: int

    @classmethod
    def take(cls, view: Widget) -> ViewAnchor | None:
        """The innermost widget under the view's top-left cell, or None (nothing there)."""
        region = view.content_region
        if not region.height or not view.is_attached:
            return None
        try:
            widget, _ = view.screen.get_widget_at(region.x, region.y)
        except NoWidget:
            return None
        if widget is view or view not in widget.ancestors:
            return None
        return cls(view, widget, _content_top(view, widget))

    def moved(self) -> int:
        """Rows the widget moved down in the content since it was taken (0 when gone)."""
        if not self.widget.is_attached or is_pruning(self.widget):
            return 0
        return _content_top(self.view, self.widget) - self.top

    def restore(self) -> int:
        """Scroll so the widget is where it was in the view; return the rows scrolled."""
        moved = self.moved()
        if moved:
            self.view.scroll_to(y=self.view.scroll_y + moved, animate=False, immediate=True)
        return moved
