"""Keep or revert each hunk (or whole file) of one turn's changes.

Opened from the turn diff screen (``r``). Each row is one hunk of a changed file, or the
whole file where it cannot be cut (added, deleted, binary, over 2 MB). ``space`` (or
``enter``) marks a row to revert, ``f`` marks the highlighted row's whole file, ``a``
applies: the chosen hunks go back through the checkpoint store (``/undo`` takes it back),
the rest stays byte for byte, and the model hears of it at the next turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from smith_tui.app.screens.modal import SmithModal
from smith_tui.engine import review
from smith_tui.errors import error_text
from smith_tui.terminal_text import visible
from smith_tui.tools.checkpoints.hunk_review import WHOLE_FILE, ReviewFile

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

_STYLE = {"+": "green", "-": "red", "@": "cyan"}


def _row_text(item: ReviewFile, hunk_index: int | None, marked: bool) -> Text:
    box = "☒ revert" if marked else "☐ keep  "
    path = visible(item.path)
    if hunk_index is None:
        return Text(f"{box}  {path} · whole file ({item.whole_only or 'all hunks'})")
    hunk = item.hunks[hunk_index]
    text = Text(f"{box}  {path} · hunk {hunk_index + 1}/{len(item.hunks)}\n", style="bold")
    for line in item.hunk_text(hunk).splitlines():
        text.append(visible(line) + "\n", style=_STYLE.get(line[:1], "dim"))
    text.rstrip()
    return text


class HunkReviewScreen(SmithModal):
    """Choose hunks and files of the turn of ``checkpoint_id`` to revert."""

    AUTO_FOCUS = "#review-rows"
    DEFAULT_CSS = """
    #review-status { height: auto; color: $text-muted; }
    #review-rows { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("space", "flip", "Keep / revert"),
        Binding("f", "toggle_file", "Whole file"),
        Binding("a", "apply", "Apply"),
    ]

    def __init__(self, runtime: Runtime, checkpoint_id: str, title: str = "") -> None:
        super().__init__()
        self.runtime = runtime
        self.checkpoint_id = checkpoint_id
        self.title_text = title or "Review the turn's changes"
        self.files: list[ReviewFile] = []
        self.marks: dict[str, set[int] | str] = {}
        """Path → hunk indexes to revert, or ``"file"`` for the whole file."""
        self.result: Any = None
        """The last applied review (:class:`ReviewResult`)."""

    def compose(self) -> ComposeResult:
        """A status line, then one row per hunk."""
        with Vertical(id="review-dialog") as dialog:
            dialog.border_title = self.title_text
            yield Static("Reading the changes…", id="review-status", markup=False)
            yield OptionList(id="review-rows")
        yield Footer()

    def on_mount(self) -> None:
        """Read the files and hunks off the event loop."""
        self.run_worker(self._load(), exclusive=True, group="review")

    async def _load(self) -> None:
        status = self.query_one("#review-status", Static)
        try:
            self.files = await review.files(self.runtime, self.checkpoint_id)
        except Exception as exc:
            status.set_class(True, "error")
            status.update(error_text(exc))
            return
        if not self.query("#review-rows"):
            return  # closed while the files were read (Esc right after applying)
        self.marks = {}
        self._render_rows()
        if not self.files:
            status.update("The files are as they were before this turn: nothing to review.")
        elif self.result is None:
            status.update(
                "space: keep or revert the highlighted hunk · f: the whole file · a: apply · "
                "esc: close without changes"
            )

    def _rows(self) -> list[tuple[str, ReviewFile, int | None]]:
        rows: list[tuple[str, ReviewFile, int | None]] = []
        for number, item in enumerate(self.files):
            if item.whole_only or not item.hunks:
                rows.append((f"{number}:file", item, None))
            else:
                rows += [(f"{number}:{h.index}", item, h.index) for h in item.hunks]
        return rows

    def _marked(self, item: ReviewFile, hunk_index: int | None) -> bool:
        chosen = self.marks.get(item.path)
        if chosen == WHOLE_FILE:
            return True
        return isinstance(chosen, set) and hunk_index in chosen

    def _render_rows(self) -> None:
        rows = self.query_one("#review-rows", OptionList)
        keep = rows.highlighted
        rows.clear_options()
        rows.add_options(
            [Option(_row_text(item, hunk, self._marked(item, hunk)), id=key)
             for key, item, hunk in self._rows()]
        )  # fmt: skip
        if self._rows():
            rows.highlighted = min(keep or 0, len(self._rows()) - 1)

    def _current(self) -> tuple[ReviewFile, int | None] | None:
        rows = self.query_one("#review-rows", OptionList)
        if rows.highlighted is None or not self._rows():
            return None
        _, item, hunk = self._rows()[rows.highlighted]
        return item, hunk

    def action_flip(self) -> None:
        """Mark the highlighted hunk to revert, or unmark it."""
        current = self._current()
        if current is None:
            return
        item, hunk = current
        if hunk is None:
            self._flip_file(item)
            return
        chosen = self.marks.get(item.path)
        picked: set[int] = (
            set(range(len(item.hunks))) if chosen == WHOLE_FILE
            else set(chosen) if isinstance(chosen, set) else set()
        )  # fmt: skip
        picked ^= {hunk}
        if picked:
            self.marks[item.path] = picked
        else:
            self.marks.pop(item.path, None)
        self._render_rows()

    def _flip_file(self, item: ReviewFile) -> None:
        if self.marks.get(item.path) == WHOLE_FILE:
            self.marks.pop(item.path)
        else:
            self.marks[item.path] = WHOLE_FILE
        self._render_rows()

    def action_toggle_file(self) -> None:
        """Mark the highlighted row's whole file to revert, or unmark it."""
        current = self._current()
        if current is not None:
            self._flip_file(current[0])

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter (or a click) on a row flips it, as space does."""
        event.stop()
        self.action_flip()

    def action_apply(self) -> None:
        """Revert what is marked (off the event loop)."""
        status = self.query_one("#review-status", Static)
        if not self.marks:
            status.update("Nothing is marked: space marks a hunk to revert, f a whole file.")
            return
        status.update("Reverting…")
        self.run_worker(self._apply(dict(self.marks)), exclusive=True, group="review")

    async def _apply(self, marks: dict[str, set[int] | str]) -> None:
        status = self.query_one("#review-status", Static)
        runtime = self.runtime
        try:
            result = await review.apply(
                runtime,
                runtime.store,
                runtime.conversations.conversation_id,
                self.checkpoint_id,
                marks,
            )
        except Exception as exc:
            status.set_class(True, "error")
            status.update(error_text(exc))
            return
        self.result = result
        status.set_class(False, "error")
        hunks = sum(len(what) for what in result.reverted.values())
        status.update(
            f"Reverted {hunks} hunk{'s' if hunks != 1 else ''} in "
            f"{len(result.reverted)} file{'s' if len(result.reverted) != 1 else ''}; the rest "
            "is as the turn left it. The model hears of it with your next prompt; "
            "/undo takes it back."
        )
        await self._load()
