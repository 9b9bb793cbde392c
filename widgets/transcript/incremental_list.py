"""List blocks that grow in place while a streamed answer appends items.

Textual's Markdown rebuilds the last block on every append; for a list that means
every item again, so a long list costs more with each new line. While text only
grows at the end, the rows before the last one cannot change: these blocks keep
them and rebuild only the last row and the new ones.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from smith_tui.widgets.textual_compat import (
    InPlaceBlockUpdate,
    block_items,
    copy_block_context,
    pending_children,
    set_block_items,
)
from smith_tui.widgets.transcript.list_rows import flattened

# The list block classes are not exported by name; the public BLOCKS table has them.
_BulletList = Markdown.BLOCKS["bullet_list_open"]
_OrderedList = Markdown.BLOCKS["ordered_list_open"]


def _row_symbol(row: Widget) -> str | None:
    """The bullet symbol of a list row (mounted or just composed)."""
    own = getattr(row, "symbol", None)  # a ListRow draws its own bullet
    if isinstance(own, str):
        return own
    children = list(row.children) or pending_children(row)
    symbol = getattr(children[0], "symbol", None) if children else None
    return symbol if isinstance(symbol, str) else None


async def grow_list(old: MarkdownBlock, new: MarkdownBlock) -> bool:
    """Turn the mounted list ``old`` into ``new`` by replacing its last row and adding rows.

    Returns False (nothing changed) when that is not possible: a different kind of
    block, fewer rows, or bullets that changed (an ordered list reaching 10 items
    widens every number).
    """
    if type(new) is not type(old):
        return False
    old_rows = list(old.children)
    items = block_items(new)
    new_rows = list(new.compose())  # (compose consumes the block's items)
    keep = len(old_rows) - 1
    if (
        keep < 0
        or len(new_rows) < len(old_rows)
        or any(_row_symbol(a) != _row_symbol(b) for a, b in zip(old_rows, new_rows, strict=False))
    ):
        set_block_items(new, items)  # give them back: the caller mounts ``new`` instead
        return False
    copy_block_context(old, new)
    await old_rows[-1].remove()
    await old.mount_all(new_rows[keep:])
    return True


class GrowingBulletList(InPlaceBlockUpdate, _BulletList):  # type: ignore[misc,valid-type]
    """A bullet list that grows in place while streaming (one-paragraph items as ListRows)."""

    def compose(self) -> ComposeResult:
        """Textual's rows, each one-paragraph item drawn by one widget."""
        for row in super().compose():
            yield flattened(row)

    async def update_in_place(self, block: MarkdownBlock) -> bool:
        """Grow this list into ``block`` (False: Textual replaces it)."""
        return await grow_list(self, block)


class GrowingOrderedList(InPlaceBlockUpdate, _OrderedList):  # type: ignore[misc,valid-type]
    """An ordered list that grows in place while streaming (one-paragraph items as ListRows)."""

    def compose(self) -> ComposeResult:
        """Textual's rows, each one-paragraph item drawn by one widget."""
        for row in super().compose():
            yield flattened(row)

    async def update_in_place(self, block: MarkdownBlock) -> bool:
        """Grow this list into ``block`` (False: Textual replaces it)."""
        return await grow_list(self, block)
