"""The rewind screen: the project's checkpoints, newest first; restore one's files.

Enter restores the files of the highlighted checkpoint (to before its turn), ``c`` also
cuts the conversation back to before that turn, ``d`` shows the turn's combined diff. Both go through the ``/rewind`` command, so
the transcript says what was restored and ``/undo`` can take it back.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Footer, Static

from smith_tui.app.screens.modal import SmithModal
from smith_tui.engine.checkpoints import (
    TurnLabels,
    label_entries,
    rewind_entries,
    runtime_checkpoints,
)
from smith_tui.errors import error_text

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

FILES_SHOWN = 8
"""Files listed under the table for the highlighted checkpoint."""


class RewindScreen(SmithModal):
    """Pick a checkpoint and restore the project's files to it.

    Dismisses with the ``CommandOutput`` of the restore, or ``None`` when closed.
    """

    AUTO_FOCUS = "#rewind-table"
    DEFAULT_CSS = """
    #rewind-table { height: 1fr; }
    #rewind-scroll { height: auto; max-height: 50%; }
    #rewind-files { height: auto; color: $text-muted; }
    #rewind-error { height: auto; color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("enter", "restore", "Restore files"),
        Binding("c", "restore_all", "Files + conversation"),
        Binding("d", "diff", "Diff"),
    ]

    def __init__(self, runtime: Runtime) -> None:
        super().__init__()
        self.runtime = runtime
        self.entries: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        """The table of checkpoints, the files of the highlighted one, an error line."""
        with Vertical(id="rewind-dialog") as dialog:
            dialog.border_title = "Checkpoints"
            yield DataTable(id="rewind-table", cursor_type="row")
            with VerticalScroll(id="rewind-scroll"):
                yield Static("Loading checkpoints…", id="rewind-files", markup=False)
            yield Static("", id="rewind-error", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        """Load the checkpoints off the event loop (each needs a git call)."""
        self.run_worker(self._load(), exclusive=True, group="rewind-load")

    async def _load(self) -> None:
        try:
            checkpoints = runtime_checkpoints(self.runtime)
            entries = await asyncio.to_thread(rewind_entries, checkpoints)
            label_entries(entries, TurnLabels(self.runtime.store))
        except Exception as exc:
            self._error(error_text(exc))
            return
        self.show_entries(entries)

    def show_entries(self, entries: list[dict[str, Any]]) -> None:
        """Fill the table with ``entries`` (as :func:`rewind_entries` gives them)."""
        self.entries = entries
        table = self.query_one("#rewind-table", DataTable)
        table.clear(columns=True)
        for label, key in (("Time", "time"), ("Turn", "turn")):
            table.add_column(label, key=key)
        table.add_column("Files", key="files")
        for entry in entries:
            label = entry.get("label") or entry["prompt"] or entry["kind"]
            table.add_row(
                time.strftime("%Y-%m-%d %H:%M", time.localtime(entry["created_at"])),
                Text(label, no_wrap=True, overflow="ellipsis"),
                Text(str(len(entry["files"])), justify="right"),
                key=entry["id"],
            )
        if not entries:
            self.query_one("#rewind-files", Static).update("No checkpoints yet in this project.")
        else:
            self._show_files(0)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Show the files of the highlighted checkpoint."""
        event.stop()
        self._show_files(event.cursor_row)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row restores its files."""
        event.stop()
        self.action_restore()

    def _show_files(self, row: int) -> None:
        if not 0 <= row < len(self.entries):
            return
        files = self.entries[row]["files"]
        lines = [f"{status} {path}" for status, path in files[:FILES_SHOWN]]
        if len(files) > FILES_SHOWN:
            lines.append(f"… and {len(files) - FILES_SHOWN} more")
        head = "Changed by this turn:" if files else "This turn changed no files."
        self.query_one("#rewind-files", Static).update("\n".join([head, *lines]))

    def action_diff(self) -> None:
        """Show the combined diff of the highlighted checkpoint's turn."""
        entry = self._selected()
        if entry is not None:
            self.run_worker(self._diff(entry), exclusive=True, group="rewind-diff")

    async def _diff(self, entry: dict[str, Any]) -> None:
        try:
            checkpoints = runtime_checkpoints(self.runtime)
            text = await asyncio.to_thread(checkpoints.diff, entry["before"], entry["after"])
        except Exception as exc:
            self._error(error_text(exc))
            return
        shown = self.query_one("#rewind-files", Static)
        shown.update(text or "This turn changed no files.")

    def _selected(self) -> dict[str, Any] | None:
        table = self.query_one("#rewind-table", DataTable)
        if not self.entries or not 0 <= table.cursor_row < len(self.entries):
            return None
        return self.entries[table.cursor_row]

    def action_restore(self) -> None:
        """Restore the files to before the highlighted checkpoint's turn."""
        self._restore(conversation=False)

    def action_restore_all(self) -> None:
        """Restore the files and cut the conversation back to before that turn."""
        self._restore(conversation=True)

    def _restore(self, *, conversation: bool) -> None:
        entry = self._selected()
        if entry is None:
            return
        line = f"/rewind {entry['id']}" + (" --conversation" if conversation else "")
        self.run_worker(self._submit(line), exclusive=True, group="rewind-restore")

    async def _submit(self, line: str) -> None:
        try:
            out = await self.runtime.submit(line)
        except Exception as exc:
            self._error(error_text(exc))
            return
        if not out.ok:
            self._error(out.text)
            return
        self.dismiss(out)

    def _error(self, text: str) -> None:
        self.query_one("#rewind-error", Static).update(text)
