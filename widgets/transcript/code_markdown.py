"""A Markdown widget whose code blocks copy their source when clicked."""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.message import Message
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownFence

from smith_tui.widgets.transcript.incremental_list import GrowingBulletList, GrowingOrderedList


class CopyableFence(MarkdownFence):
    """A highlighted code block; a click copies its code to the clipboard.

    The copied text is the code exactly as written (its own newlines only), so
    lines wrapped or clipped on screen never gain hard line breaks.
    """

    class Copied(Message):
        """The code of a block was copied to the clipboard."""

        def __init__(self, fence: CopyableFence, code: str) -> None:
            self.fence = fence
            self.code = code
            super().__init__()

    def on_mount(self) -> None:
        """Tell the user how to copy."""
        self.tooltip = "Click to copy this code block"

    def copy_code(self) -> str:
        """Copy the code to the clipboard and return it."""
        code = self.code
        self.app.copy_to_clipboard(code)
        self.post_message(self.Copied(self, code))
        return code

    def on_click(self, event: events.Click) -> None:
        """Copy on a plain click (a drag still selects text)."""
        event.stop()
        self.copy_code()
        self.notify("Code block copied", timeout=2)


class CodeMarkdown(Markdown):
    """Markdown whose code blocks copy their source on click and whose lists grow in place."""

    # Textual annotates BLOCKS as an instance attribute; it is only ever set on the class.
    BLOCKS: ClassVar[dict[str, type[MarkdownBlock]]] = {  # type: ignore[misc]
        **Markdown.BLOCKS,
        "fence": CopyableFence,
        "code_block": CopyableFence,
        "bullet_list_open": GrowingBulletList,
        "ordered_list_open": GrowingOrderedList,
    }
