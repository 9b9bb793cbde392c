"""The config screen: every setting with its value and layer; edit, save and unset overrides.

Changes go through ``runtime.set_config`` / ``runtime.unset_config``, which validate
before anything is written: a refused value is shown under the editor and nothing is
saved. Settings off the override allowlist are shown read-only (they belong in the
config file). Secret values never appear (see :mod:`config_rows`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Footer, Input, Static

from smith_tui.app.screens.config_rows import (
    MCP_SERVERS,
    SettingRow,
    edit_text,
    lookup_row,
    setting_rows,
    value_text,
)
from smith_tui.app.screens.mcp_servers_screen import McpServersScreen
from smith_tui.app.screens.modal import SmithModal
from smith_tui.errors import error_text

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

MAX_VALUE_CELL = 48
SOURCE_STYLES = {
    "defaults": "dim",
    "user": "green",
    "env": "cyan",
    "persisted": "bold yellow",
    "ephemeral": "magenta",
}


#: Shown first, in this order: what a first session needs (where the server is, which model).
CONNECTION_PREFIXES = ("llm_config.", "default_model", "models.")


def connection_first(rows: list[SettingRow]) -> list[SettingRow]:
    """``rows`` with the connection settings first (otherwise in their order)."""

    def rank(row: SettingRow) -> int:
        for index, prefix in enumerate(CONNECTION_PREFIXES):
            if row.path.startswith(prefix):
                return index
        return len(CONNECTION_PREFIXES)

    return sorted(rows, key=rank)


def matches(row: SettingRow, words: str) -> bool:
    """Whether every word of the filter is in the row's path or description."""
    text = f"{row.path} {row.description}".lower()
    return all(word in text for word in words.lower().split())


def is_mcp_row(row: SettingRow | None) -> bool:
    """Whether ``row`` is ``mcp_servers`` or one of its servers (edited in the JSON editor)."""
    return row is not None and (row.path == MCP_SERVERS or row.path.startswith(f"{MCP_SERVERS}."))


def _cell(text: str, style: str = "") -> Text:
    if len(text) > MAX_VALUE_CELL:
        text = text[: MAX_VALUE_CELL - 1] + "…"
    return Text(text, style=style, no_wrap=True)


class ConfigScreen(SmithModal):
    """View the effective configuration and change runtime overrides."""

    AUTO_FOCUS = "#config-table"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("ctrl+s", "save", "Save"),
        # Not a letter: typed letters go to the filter (a letter key once sent the rest
        # of a word into the value box of whatever row was highlighted).
        Binding("delete", "unset", "Unset"),
        Binding("slash", "filter", "Filter"),
    ]

    def __init__(self, runtime: Runtime) -> None:
        super().__init__()
        self.runtime = runtime
        self.rows: list[SettingRow] = []

    def compose(self) -> ComposeResult:
        """Table, description, editor, messages, footer."""
        with Vertical(id="config-dialog") as dialog:
            dialog.border_title = "Settings"
            yield Input(
                placeholder="filter settings (/ or type): e.g. url, timeout, model",
                id="config-filter",
                select_on_focus=False,
            )
            yield DataTable(id="config-table", cursor_type="row", zebra_stripes=True)
            with Vertical(id="config-editor"):
                yield Static("", id="config-about", markup=False)
                with Horizontal(id="config-edit-row"):
                    yield Input(placeholder="setting path", id="config-path", select_on_focus=False)
                    yield Input(placeholder="new value (JSON or text)", id="config-value")
                    yield Button("Save", variant="primary", id="config-save")
                    yield Button("Unset", id="config-unset")
                yield Static("", id="config-error", markup=False)
                yield Static("", id="config-status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        """Fill the table."""
        table = self.query_one("#config-table", DataTable)
        table.add_column("Setting", key="path")
        table.add_column("Value", key="value")
        table.add_column("Source", key="source")
        self.refresh_rows()

    # -- table ----------------------------------------------------------------------------

    def refresh_rows(self, keep: str | None = None) -> None:
        """Rebuild the rows from the runtime's config; keep the cursor on ``keep``."""
        words = self.query_one("#config-filter", Input).value
        mode = str(getattr(getattr(self.runtime, "options", None), "permission_mode", ""))
        self.rows = [
            r
            for r in connection_first(setting_rows(self.runtime.config, mode))
            if matches(r, words)
        ]
        table = self.query_one("#config-table", DataTable)
        table.clear()
        for row in self.rows:
            if row.is_template:
                value = _cell("add one: type models.KEY and a model id", "dim italic")
            elif row.value is None and row.absent_means:
                value = _cell(row.absent_means)
            elif row.value is None:
                value = _cell("absent", "dim")
            else:
                value = _cell(value_text(row.value))
            table.add_row(
                _cell(row.path, "" if row.editable else "dim"),
                value,
                _cell(row.source, SOURCE_STYLES.get(row.source, "")),
                key=row.path,
            )
        if keep is not None:
            for index, row in enumerate(self.rows):
                if row.path == keep:
                    table.move_cursor(row=index)
                    break
        self.show_row(self.selected_row)

    @property
    def selected_row(self) -> SettingRow | None:
        """The row under the table cursor."""
        table = self.query_one("#config-table", DataTable)
        if not self.rows or table.cursor_row < 0 or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row]

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Describe the highlighted setting and prefill the editor."""
        row = lookup_row(self.rows, str(event.row_key.value))
        self.show_row(row)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row: edit it."""
        event.stop()
        self.action_edit()

    def show_row(self, row: SettingRow | None) -> None:
        """Describe ``row`` and prefill the editor with its path and value."""
        about = self.query_one("#config-about", Static)
        path_box = self.query_one("#config-path", Input)
        value_box = self.query_one("#config-value", Input)
        if row is None:
            about.update("")
            path_box.value = value_box.value = ""
            return
        if is_mcp_row(row):
            access = "enter: edit every server as JSON (saved in the config file)"
        elif row.editable:
            access = "editable here"
        else:
            access = "read-only here: set it in the config file"
        default = f"unset: {row.absent_means}" if row.absent_means else f"default {row.default}"
        about.update(f"{row.path} — {row.description}\n{default} · {access}")
        path_box.value = "models." if row.is_template else row.path
        value_box.value = edit_text(row.value) if row.editable else ""
        self._set_error("")

    # -- editing --------------------------------------------------------------------------

    def action_edit(self) -> None:
        """Move to the value box (the path box for a new ``models.<key>``; the MCP editor)."""
        row = self.selected_row
        if is_mcp_row(row):
            self.app.push_screen(McpServersScreen(self.runtime), self._mcp_saved)
        elif row is not None and row.is_template:
            self.query_one("#config-path", Input).focus()
        else:
            self.query_one("#config-value", Input).focus()

    async def edit_externally(self) -> None:
        """The editor key: edit the value box in ``$VISUAL`` / ``$EDITOR`` (enter saves)."""
        from smith_tui.app.external_editor import edit_input

        await edit_input(self.app, self.query_one("#config-value", Input))

    def _mcp_saved(self, changed: list[str] | None) -> None:
        """After the MCP editor: show the new rows and say how to apply the change."""
        if changed is None:
            return
        self.refresh_rows(keep=MCP_SERVERS)
        path = self.runtime.config.user_config_path
        if not changed:
            self._set_status(f"mcp_servers unchanged in {path}")
            return
        running = [name for name in changed if name in self._configured_servers()]
        advice = "; ".join(f"/mcp restart {name}" for name in running)
        self._set_status(
            f"Saved mcp_servers in {path} (changed: {', '.join(changed)})"
            + (f". To apply, run {advice}" if advice else "")
        )

    def _configured_servers(self) -> set[str]:
        return set(self.runtime.config.effective.get(MCP_SERVERS) or {})

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the path box moves on; enter in the value box saves."""
        event.stop()
        if event.input.id == "config-filter":
            self.query_one("#config-table", DataTable).focus()
        elif event.input.id == "config-path":
            self.query_one("#config-value", Input).focus()
        else:
            self.action_save()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Save or unset."""
        event.stop()
        if event.button.id == "config-save":
            self.action_save()
        elif event.button.id == "config-unset":
            self.action_unset()

    def on_key(self, event: events.Key) -> None:
        """Text typed on the table goes to the filter, the field that shows it."""
        table = self.query_one("#config-table", DataTable)
        if (
            self.focused is table
            and event.is_printable
            and event.character
            and event.key != "slash"  # the filter's own key
        ):
            event.stop()
            event.prevent_default()
            box = self.query_one("#config-filter", Input)
            box.focus()
            box.insert_text_at_cursor(event.character)

    def action_filter(self) -> None:
        """Type in the filter box (enter goes back to the table)."""
        self.query_one("#config-filter", Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        """Show only the settings that match the filter."""
        if event.input.id == "config-filter":
            event.stop()
            self.refresh_rows()

    def _path(self) -> str:
        return self.query_one("#config-path", Input).value.strip()

    def action_save(self) -> None:
        """Validate and save the value in the editor (nothing is saved when it is refused)."""
        path = self._path()
        raw = self.query_one("#config-value", Input).value.strip()
        if not path or path.endswith("."):
            self._set_error("Type the setting's path first (e.g. models.worker).")
            return
        if not raw:
            self._set_error(f"Type a value for {path}, or press Unset to drop the override.")
            return
        try:
            value = self.runtime.set_config(path, raw)
        except Exception as exc:  # the runtime explains what to fix
            self._set_error(error_text(exc))
            return
        self.refresh_rows(keep=path)
        self._set_status(f"Saved {path} = {value_text(value)}")

    def action_unset(self) -> None:
        """Drop the runtime override of the path in the editor."""
        path = self._path()
        if not path or path.endswith("."):
            self._set_error("Choose the setting to unset first.")
            return
        try:
            self.runtime.unset_config(path)
        except Exception as exc:
            self._set_error(error_text(exc))
            return
        self.refresh_rows(keep=path)
        self._set_status(f"Unset {path}: back to the value from the lower layers")

    def _set_error(self, text: str) -> None:
        error = self.query_one("#config-error", Static)
        error.update(text)
        error.set_class(bool(text), "-shown")
        if text:
            self.query_one("#config-status", Static).update("")

    def _set_status(self, text: str) -> None:
        self._set_error("")
        self.query_one("#config-status", Static).update(text)
