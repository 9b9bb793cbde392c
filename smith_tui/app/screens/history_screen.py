"""The history screen: conversations of this project (or all), forks under their source,
a filter over titles and every stored message (the store's full-text index), and
open / fork / rename / delete / new.

A message hit opens its conversation with the pager at that message (as a ``/search`` hit
does). The filter runs once typing pauses (``SEARCH_DELAY``), so a big store is not
searched on every keystroke.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Input, Label, OptionList, Static, Switch
from textual.widgets.option_list import Option

from smith_tui.app.screens.confirm import ConfirmScreen
from smith_tui.app.screens.history_rows import (
    SEARCH_LIMIT,
    HistoryRow,
    count_text,
    history_row,
    hit_result,
    title_result,
    top_level,
    tree_order,
)
from smith_tui.app.screens.modal import SmithModal
from smith_tui.engine import forks
from smith_tui.errors import error_text
from smith_tui.store import Conversation
from smith_tui.terminal_text import visible
from smith_tui.tools.builtin.history_search import HistoryHit, search_history

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

LIST_LIMIT = 500
SEARCH_DELAY = 0.12
"""Seconds of no typing before the filter runs."""
TITLE_WIDTH = 60


def format_time(timestamp: float) -> str:
    """Local date and time, minutes precision."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


class HistoryScreen(SmithModal):
    """Browse, search, open, rename and delete conversations.

    Dismisses with the id of the conversation that is active afterwards when one was
    opened or created, else ``None``.
    """

    AUTO_FOCUS = "#history-table"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("enter", "open", "Open"),
        Binding("f", "fork", "Fork"),
        Binding("r", "rename", "Rename"),
        Binding("d,delete", "delete", "Delete"),
        Binding("n", "new", "New"),
        Binding("a", "toggle_all", "All projects"),
        Binding("slash", "focus_search", "Search"),
    ]

    def __init__(
        self, runtime: Runtime, *, time_format: Callable[[float], str] = format_time
    ) -> None:
        super().__init__()
        self.runtime = runtime
        self.time_format = time_format
        self.rows: list[HistoryRow] = []
        self.hits: list[HistoryHit] = []
        """The messages matching the filter, best first."""
        self.title_hits: list[HistoryRow] = []
        """The listed conversations whose title matches the filter."""
        self.shown_query = ""
        """The filter the hits shown are for (it lags the box while typing)."""
        self._search_timer: Timer | None = None
        self.all_projects = False
        self._renaming: str | None = None

    def compose(self) -> ComposeResult:
        """Search bar with the scope switch, the table, search results, rename box."""
        with Vertical(id="history-dialog") as dialog:
            dialog.border_title = "Conversations"
            with Horizontal(id="history-top"):
                yield Input(placeholder="search titles and all messages…", id="history-search")
                yield Label("all projects", id="history-scope-label")
                yield Switch(False, id="history-all")
            yield DataTable(id="history-table", cursor_type="row")
            yield OptionList(id="history-hits")
            yield Input(placeholder="new title (empty clears it)", id="history-rename")
            yield Static("", id="history-error", markup=False)
            yield Static("", id="history-status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        """Fill the table."""
        self.query_one("#history-hits").display = False
        self.query_one("#history-rename").display = False
        self.refresh_rows(keep=self.runtime.conversations.conversation_id)

    # -- data -----------------------------------------------------------------------------

    def _conversations(self) -> list[Conversation]:
        conversations = self.runtime.store.conversations
        if self.all_projects:
            return conversations.list_all(limit=LIST_LIMIT)
        return conversations.list_for_project(self.runtime.project_id, limit=LIST_LIMIT)

    def _title_cell(self, row: HistoryRow) -> Text:
        conv = row.conversation
        marker = "● " if conv.id == self.runtime.conversations.conversation_id else "  "
        indent = "  " * max(row.depth - 1, 0) + ("↳ " if row.depth else "")
        note = ""
        if row.forked:
            note = f"  fork at turn {row.fork_turn}" if row.fork_turn else "  fork"
        title = Text(marker + indent, no_wrap=True, overflow="ellipsis")
        room = max(TITLE_WIDTH - len(title) - len(note), 8)
        name = visible(row.title)
        if len(name) > room:
            name = name[: room - 1] + "…"
        title.append(name, style="" if row.titled else "italic dim")
        title.append(note, style="dim")
        return title

    def refresh_rows(self, keep: str | None = None) -> None:
        """Reload the conversations; keep the cursor on ``keep`` (or the same row)."""
        table = self.query_one("#history-table", DataTable)
        if keep is None and self.selected_row is not None:
            keep = self.selected_row.conversation.id
        turns_of: dict[str, list[str]] = {}
        self.rows = [
            history_row(self.runtime.store, conv, depth, turns_of)
            for conv, depth in tree_order(self._conversations())
        ]
        table.clear(columns=True)
        table.add_column("Title", key="title")
        table.add_column("Updated", key="updated")
        table.add_column("Turns", key="turns")
        table.add_column("Tokens", key="tokens")
        if self.all_projects:
            table.add_column("Project", key="project")
        for row in self.rows:
            conv = row.conversation
            cells: list[Any] = [
                self._title_cell(row),
                self.time_format(conv.updated_at),
                Text(str(row.turns), justify="right"),
                Text(f"{row.tokens:,}", justify="right"),
            ]
            if self.all_projects:
                cells.append(Text(conv.project_id, style="dim", no_wrap=True))
            table.add_row(*cells, key=conv.id)
        ids = [row.conversation.id for row in self.rows]
        if keep in ids:
            table.move_cursor(row=ids.index(keep))
        scope = "all projects" if self.all_projects else "this project"
        if not self.rows:
            self._set_status(f"No conversations in {scope} yet.")

    @property
    def selected_row(self) -> HistoryRow | None:
        """The conversation under the table cursor."""
        table = self.query_one("#history-table", DataTable)
        if not self.rows or not 0 <= table.cursor_row < len(self.rows):
            return None
        return self.rows[table.cursor_row]

    @property
    def selected_hit(self) -> HistoryRow | HistoryHit | None:
        """The highlighted filter result (a title match or a message), when filtering."""
        hits = self.query_one("#history-hits", OptionList)
        results: list[HistoryRow | HistoryHit] = [*self.title_hits, *self.hits]
        if not hits.display or hits.highlighted is None or hits.highlighted >= len(results):
            return None
        return results[hits.highlighted]

    def selected_id(self) -> str | None:
        """The conversation the keys act on: the search hit when searching, else the row
        (for a sub-agent's message, the conversation that started it)."""
        hits = self.query_one("#history-hits", OptionList)
        if hits.display:
            hit = self.selected_hit
            if isinstance(hit, HistoryRow):
                return hit.conversation.id
            return top_level(self.runtime.store, hit.conversation_id) if hit is not None else None
        row = self.selected_row
        return row.conversation.id if row else None

    def _hit_title(self, hit: HistoryHit) -> str:
        return self._title_of(hit.conversation_id) if not hit.parent_id else hit.title

    def _title_of(self, conversation_id: str) -> str:
        row = next((r for r in self.rows if r.conversation.id == conversation_id), None)
        if row is not None:
            return row.title
        conv = self.runtime.store.conversations.get(conversation_id)
        return (conv.title if conv else None) or "(untitled)"

    # -- search ---------------------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        """Filter once typing pauses (an emptied box shows the table at once)."""
        if event.input.id == "history-search":
            event.stop()
            if self._search_timer is not None:
                self._search_timer.stop()
                self._search_timer = None
            if not event.value.strip():
                self.search("")
                return
            value = event.value
            self._search_timer = self.set_timer(SEARCH_DELAY, lambda: self.search(value))

    def search(self, query: str) -> None:
        """Show the conversations whose title and the messages whose words match ``query``
        (the table again when it is empty)."""
        hits_list = self.query_one("#history-hits", OptionList)
        table = self.query_one("#history-table", DataTable)
        self.shown_query = query
        if not query.strip():
            self.hits = []
            self.title_hits = []
            hits_list.display = False
            table.display = True
            self._set_status("")
            return
        project = None if self.all_projects else self.runtime.project_id
        try:
            self.hits = search_history(
                self.runtime.store, query, project_id=project, limit=SEARCH_LIMIT
            )
        except Exception as exc:
            self._set_error(error_text(exc))
            return
        needle = query.strip().casefold()
        self.title_hits = [
            row for row in self.rows if row.titled and needle in row.title.casefold()
        ]
        options = [Option(title_result(row, self.time_format)) for row in self.title_hits]
        options += [Option(hit_result(hit, self._hit_title(hit))) for hit in self.hits]
        hits_list.set_options(options)
        hits_list.display = True
        table.display = False
        if options:
            hits_list.highlighted = 0
        self._set_status(count_text(len(self.hits), len(self.title_hits)))

    def action_focus_search(self) -> None:
        """Put the cursor in the search box."""
        self.query_one("#history-search", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the search box goes to the results; in the rename box it renames."""
        event.stop()
        if event.input.id == "history-search":
            hits = self.query_one("#history-hits", OptionList)
            if hits.display and self.hits:
                hits.focus()
        elif event.input.id == "history-rename":
            self._finish_rename(event.value)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on a search hit opens its conversation."""
        event.stop()
        self.action_open()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row opens it."""
        event.stop()
        self.action_open()

    def on_switch_changed(self, event: Switch.Changed) -> None:
        """The scope switch."""
        event.stop()
        if event.value != self.all_projects:
            self.all_projects = event.value
            self.refresh_rows()
            self.search(self.query_one("#history-search", Input).value)

    # -- actions --------------------------------------------------------------------------

    def action_toggle_all(self) -> None:
        """This project ↔ all projects."""
        self.query_one("#history-all", Switch).toggle()

    def action_open(self) -> None:
        """Make the selected conversation the active one and close; for a message hit, the
        pager then opens at that message."""
        conv = self.selected_id()
        if conv is None:
            return
        hit = self.selected_hit
        if conv != self.runtime.conversations.conversation_id:
            try:
                self.runtime.conversations.load(conv)
            except Exception as exc:
                self._set_error(error_text(exc))
                return
        self.dismiss(conv)
        if isinstance(hit, HistoryHit):
            from smith_tui.app.screens.search_hits import hit_pager

            self.app.push_screen(hit_pager(self.runtime, hit.to_dict(), self.shown_query))

    def action_fork(self) -> None:
        """Fork the selected conversation whole and open the fork."""
        conv = self.selected_id()
        if conv is None:
            return
        if self.runtime.busy:
            self._set_error("A turn is running: wait for it or cancel it before forking.")
            return
        try:
            fork = forks.fork_conversation(self.runtime.store, conv)
            self.runtime.conversations.load(fork)
        except Exception as exc:
            self._set_error(error_text(exc))
            return
        self.dismiss(fork)

    def action_new(self) -> None:
        """Start a new conversation and close."""
        try:
            conv = self.runtime.conversations.new()
        except Exception as exc:
            self._set_error(error_text(exc))
            return
        self.dismiss(conv)

    def action_rename(self) -> None:
        """Edit the title of the selected conversation."""
        conv = self.selected_id()
        if conv is None:
            return
        record = self.runtime.store.conversations.get(conv)
        box = self.query_one("#history-rename", Input)
        self._renaming = conv
        box.value = (record.title if record else None) or ""
        box.display = True
        box.focus()
        self._set_status("Type the new title; enter saves, escape cancels.")

    def _finish_rename(self, value: str) -> None:
        conv = self._renaming
        self._end_rename()
        if conv is None:
            return
        title = value.strip() or None
        try:
            self.runtime.store.conversations.rename(conv, title)
        except Exception as exc:
            self._set_error(error_text(exc))
            return
        self.refresh_rows(keep=conv)
        self.search(self.query_one("#history-search", Input).value)
        self._set_status(f"Renamed to “{title}”." if title else "Title cleared.")

    def _end_rename(self) -> None:
        self._renaming = None
        box = self.query_one("#history-rename", Input)
        box.display = False
        self.query_one("#history-table", DataTable).focus()

    def action_delete(self) -> None:
        """Delete the selected conversation (after confirmation)."""
        conv = self.selected_id()
        if conv is None:
            return
        active = conv == self.runtime.conversations.conversation_id
        if active and self.runtime.busy:
            self._set_error("A turn is running in this conversation: cancel it first.")
            return
        count = self.runtime.store.conversations.count_messages(conv)
        question = (
            f"Delete the conversation “{self._title_of(conv)}” with its {count} "
            f"message{'s' if count != 1 else ''}? This cannot be undone."
        )
        if active:
            question += " A new conversation starts in its place."

        def answered(confirmed: bool | None) -> None:
            if not confirmed:
                self._set_status("Nothing deleted.")
                return
            try:
                self.runtime.store.conversations.delete(conv)
                if active:
                    self.runtime.conversations.new()
            except Exception as exc:
                self._set_error(error_text(exc))
                return
            self.refresh_rows()
            self.search(self.query_one("#history-search", Input).value)
            self._set_status("Conversation deleted.")

        self.app.push_screen(ConfirmScreen(question), answered)

    def action_close(self) -> None:
        """Escape cancels a rename or clears the search first; otherwise closes."""
        if self._renaming is not None:
            self._end_rename()
            self._set_status("Rename cancelled.")
            return
        search = self.query_one("#history-search", Input)
        if search.value:
            search.value = ""
            self.search("")
            self.query_one("#history-table", DataTable).focus()
            return
        self.dismiss(None)

    def _set_error(self, text: str) -> None:
        error = self.query_one("#history-error", Static)
        error.update(text)
        error.set_class(bool(text), "-shown")
        if text:
            self.query_one("#history-status", Static).update("")

    def _set_status(self, text: str) -> None:
        self._set_error("")
        self.query_one("#history-status", Static).update(text)
