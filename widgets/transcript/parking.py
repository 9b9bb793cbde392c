"""Park content far from the viewport behind placeholders of the same height.

Textual lays out, styles and composites every mounted widget on each layout
pass, so a long transcript (or one long answer) made of thousands of Markdown
block widgets slows every frame. Content more than a screen away from the view
is therefore replaced by a single blank widget of exactly its height, and built
again from its source when the user scrolls near it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from textual.geometry import Size
from textual.widget import Widget


def parked_height(widget: Widget) -> int:
    """The rows a placeholder needs to stand in for ``widget``.

    Placeholders have no margins, so the widget's top margin is counted in (exact
    as long as siblings have no bottom margins, as in the transcript's styles).
    """
    return widget.outer_size.height + widget.styles.margin.top


class Placeholder(Widget):
    """A blank widget of a fixed height standing in for parked content."""

    DEFAULT_CSS = """
    Placeholder {
        height: auto;
    }
    """

    def __init__(self, height: int) -> None:
        super().__init__(classes="parked")
        self.parked_height = height

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """Exactly the parked content's height (stream layouts ignore inline styles)."""
        return self.parked_height

    def render(self) -> str:
        """Nothing to show."""
        return ""


def child_offsets(children: Iterable[Widget]) -> list[tuple[Widget, int, int]]:
    """``(child, top, height)`` for displayed children stacked vertically.

    Mirrors the vertical/stream layouts: adjacent margins collapse to the larger
    one. Heights are those of the last layout (0 for a widget not laid out yet).
    """
    out: list[tuple[Widget, int, int]] = []
    y = 0
    previous_bottom: int | None = None
    for child in children:
        if not child.display:
            continue
        top, _, bottom, _ = child.styles.margin
        y += top if previous_bottom is None else max(top, previous_bottom)
        height = child.outer_size.height
        if not height and isinstance(child, Placeholder):
            height = child.parked_height  # mounted but not laid out yet
        out.append((child, y, height))
        y += height
        previous_bottom = bottom
    return out


def is_near(top: int, height: int, window: tuple[int, int]) -> bool:
    """True when the span ``[top, top + height)`` meets ``window`` (or was never laid out)."""
    if height <= 0:
        return True
    start, end = window
    return top < end and top + height > start


#: The longest :func:`one_update` holds the screen (seconds). Work inside it awaits mounts
#: and renders; should one never come, the whole screen (keys, status line, every pane)
#: would stand still: past this the screen paints what there is, and the work goes on.
HOLD_LIMIT_S = 3.0


@contextmanager
def one_update(widget: Widget, limit_s: float = HOLD_LIMIT_S) -> Iterator[None]:
    """Hold screen updates (``App.batch_update``) and wake the screen afterwards; at most
    ``limit_s`` seconds when used in a running event loop.

    A screen that was asked to refresh during the batch only looks again when its
    own queue goes idle; without the nudge it may not repaint until some other
    message reaches it.
    """
    batch = widget.app.batch_update()
    batch.__enter__()
    released = False

    def release() -> None:
        nonlocal released
        if released:
            return
        released = True
        batch.__exit__(None, None, None)
        try:
            widget.screen.check_idle()
        except Exception:  # not on a screen any more: nothing to wake
            pass

    try:
        limit = asyncio.get_running_loop().call_later(limit_s, release)
    except RuntimeError:  # no loop: nothing can wait inside
        limit = None
    try:
        yield
    finally:
        if limit is not None:
            limit.cancel()
        release()


async def swap_widgets(parent: Widget, swaps: list[tuple[Widget, Widget]]) -> None:
    """Replace each ``old`` child of ``parent`` by ``new``, in place and in one update."""
    await replace_widgets(parent, [([old], [new]) for old, new in swaps])


async def replace_widgets(
    parent: Widget, replacements: list[tuple[list[Widget], list[Widget]]]
) -> None:
    """Replace each run of adjacent ``old`` children of ``parent`` by the ``new`` widgets, in
    place and in one update.

    Both calls are made before awaiting, so no one ever sees both sets live.
    """
    with one_update(parent):
        mounts = [parent.mount_all(new, before=old[0]) for old, new in replacements if new]
        removal = parent.remove_children([widget for old, _ in replacements for widget in old])
        for mounted in mounts:
            await mounted
        await removal
