"""The combined diff of one turn's file changes (from the transcript's files-changed mark);
``r`` opens its per-hunk review (:mod:`smith_tui.app.screens.hunk_review_screen`).

The diff is the one the rewind screen's ``d`` shows: the turn's checkpoint (the files
before it) against how the turn left them, read from the shadow repository off the event loop.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Footer, Static

from smith_tui.app.screens.modal import SmithModal
from smith_tui.engine.checkpoints import runtime_checkpoints, turn_diff
from smith_tui.errors import error_text
from smith_tui.widgets.transcript.diff_view import DiffView, classify_diff

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime


class TurnDiffScreen(SmithModal):
    """Read the combined diff of the turn whose checkpoint is ``checkpoint_id``."""

    AUTO_FOCUS = "#turn-diff-scroll"
    DEFAULT_CSS = """
    #turn-diff-scroll { height: 1fr; }
    #turn-diff-status { height: auto; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("r", "review", "Keep or revert hunks"),
    ]

    def __init__(self, runtime: Runtime, checkpoint_id: str, title: str = "") -> None:
        super().__init__()
        self.runtime = runtime
        self.checkpoint_id = checkpoint_id
        self.title_text = title or "Turn diff"
        self.diff_text: str | None = None
        """The diff once read (``None`` until then, or when it could not be)."""

    def compose(self) -> ComposeResult:
        """A status line, then the diff (scrollable)."""
        with Vertical(id="turn-diff-dialog") as dialog:
            dialog.border_title = self.title_text
            yield Static("Reading the diff…", id="turn-diff-status", markup=False)
            yield VerticalScroll(id="turn-diff-scroll", can_focus=True)
        yield Footer()

    def on_mount(self) -> None:
        """Read the diff off the event loop (a git call)."""
        self.run_worker(self._load(), exclusive=True, group="turn-diff")

    def action_review(self) -> None:
        """Open the per-hunk review of this turn (keep or revert each hunk or file)."""
        from smith_tui.app.screens.hunk_review_screen import HunkReviewScreen

        title = f"Review: {self.title_text}"
        self.app.push_screen(HunkReviewScreen(self.runtime, self.checkpoint_id, title))

    async def _load(self) -> None:
        status = self.query_one("#turn-diff-status", Static)
        try:
            checkpoints = runtime_checkpoints(self.runtime)
            text = await asyncio.to_thread(turn_diff, checkpoints, self.checkpoint_id)
        except Exception as exc:
            status.set_class(True, "error")
            status.update(error_text(exc))
            return
        self.diff_text = text
        if not text.strip():
            status.update("The files are as they were before this turn: no diff.")
            return
        status.update(f"checkpoint {self.checkpoint_id} · r: keep or revert hunks · esc closes")
        await self.query_one("#turn-diff-scroll", VerticalScroll).mount(
            DiffView(classify_diff(text))
        )
