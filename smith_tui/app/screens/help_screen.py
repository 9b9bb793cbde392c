"""The help screen: every key in effect and every slash command."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Footer, Static

from smith_tui.app.bindings import APP_BINDINGS, CONFIGURABLE, normalize_key
from smith_tui.app.screens.child_transcript import ChildTranscriptScreen
from smith_tui.app.screens.config_screen import ConfigScreen
from smith_tui.app.screens.history_screen import HistoryScreen
from smith_tui.app.screens.inspect_screen import InspectScreen
from smith_tui.app.screens.modal import SmithModal
from smith_tui.app.screens.pager_screen import PagerScreen
from smith_tui.config.service_options import KeyBindings
from smith_tui.engine.slash import COMMANDS

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

SCREEN_KEYS: tuple[tuple[str, type[SmithModal]], ...] = (
    ("Transcript pager", PagerScreen),
    ("Inspect & edit", InspectScreen),
    ("Conversations", HistoryScreen),
    ("Settings", ConfigScreen),
    ("a sub-agent's transcript", ChildTranscriptScreen),
)


def configured_keys(keys: Any) -> list[tuple[str, str]]:
    """``(key, what it does)`` for every ``services.ui.keys`` entry, as configured."""
    rows = []
    for name, field in KeyBindings.model_fields.items():
        value = getattr(keys, name, None) or field.default
        rows.append((normalize_key(str(value)).replace(",", " / "), field.description or name))
    return rows


def fixed_app_keys() -> list[tuple[str, str]]:
    """The app's other keys (not configurable)."""
    configurable = set(CONFIGURABLE.values())
    return [
        (binding.key.replace(",", " / "), binding.description)
        for binding in APP_BINDINGS
        if binding.id not in configurable
    ]


def screen_keys(screen: type[SmithModal]) -> list[tuple[str, str]]:
    """The keys a screen binds (with a description)."""
    rows = []
    for binding in screen.BINDINGS:
        if isinstance(binding, Binding) and binding.description:
            key = binding.key.replace("slash", "/").replace(",", " / ")
            rows.append((key, binding.description))
    return rows


#: How to get around with the keyboard alone (the mouse is optional).
GETTING_AROUND: tuple[tuple[str, str], ...] = (
    ("pageup / pagedown", "scroll the transcript (while typing in the prompt too)"),
    ("home / end", "in the empty prompt: the first message / the newest output"),
    ("tab / shift+tab", "move the focus: prompt, transcript, tool calls, panes"),
    ("enter", "on a tool call: expand its full result (edit/write: the diff)"),
    ("enter / d", "on a turn's \"N files changed\" mark: the turn's combined diff"),
    ("esc / ctrl+c", "interrupt the running turn"),
    (
        "esc (vim keys)",
        "with services.ui.vim on: the prompt's NORMAL mode (hjkl w b e, d c y p, u / ctrl+r "
        "redo; esc again interrupts); i a o… back to typing",
    ),
    ("enter while busy", "queue the prompt; it is sent when the turn ends (↑ takes it back)"),
    ("/copy [N]", "copy the last answer, or its Nth code block"),
    ("@name at start", "hand the prompt to that sub-agent (/agents lists them)"),
    ("ctrl+c", "when idle: copy the selected text"),
    ("enter on a job", "in the dispatch tree: that sub-agent's transcript, live while it runs"),
    ("o / ctrl+o", "pager / inspect: the transcript of the sub-agent a dispatch call started"),
    ("/models, /search", "a list: enter pins that model / opens the pager at that hit"),
)


def _table(title: str, rows: list[tuple[str, str]], first: str) -> Table:
    table = Table(
        title=title,
        title_justify="left",
        title_style="bold",
        box=None,
        show_header=False,
        padding=(0, 2, 0, 0),
        expand=False,
    )
    table.add_column(first, style="bold cyan", no_wrap=True, min_width=14)
    table.add_column("what")
    for key, text in rows:
        table.add_row(Text(key), Text(text))
    return table


def help_renderable(keys: Any, user_commands: list[tuple[str, str]] | None = None) -> Group:
    """Everything the help screen shows, as one Rich renderable (``user_commands``: the
    command files' ``(name, what)``, shown after the built-in commands when there are any)."""
    parts: list[Any] = [
        _table("Getting around", list(GETTING_AROUND), "key"),
        Text(""),
        _table("Keys", configured_keys(keys) + fixed_app_keys(), "key"),
        Text(""),
        _table("Commands", list(COMMANDS.items()), "command"),
    ]
    if user_commands:
        parts += [Text(""), _table("Your commands (command files)", user_commands, "command")]
    for title, screen in SCREEN_KEYS:
        parts += [Text(""), _table(f"In {title}", screen_keys(screen), "key")]
    parts += [
        Text(""),
        Text(
            "Keys are configured under services.ui.keys in the config file; "
            "the command palette (and its theme switcher) is on the palette key.",
            style="dim",
        ),
    ]
    return Group(*parts)


class HelpScreen(SmithModal):
    """Every key (as configured) and every command."""

    AUTO_FOCUS = "#help-scroll"

    def __init__(self, runtime: Runtime) -> None:
        super().__init__()
        self.runtime = runtime

    def _user_commands(self) -> list[tuple[str, str]]:
        from smith_tui.engine.setup_commands import command_about

        service = getattr(getattr(self.runtime, "services", None), "command", None)
        if service is None or not hasattr(service, "file_commands"):
            return []
        rows = [command_about(c).split(" — ", 1) for c in service.file_commands().values()]
        return [(head, text) for head, text in rows]

    def compose(self) -> ComposeResult:
        """One scrollable page."""
        with Vertical(id="help-dialog") as dialog:
            dialog.border_title = "Help"
            with VerticalScroll(id="help-scroll"):
                yield Static(
                    help_renderable(
                        self.runtime.config.model.services.ui.keys, self._user_commands()
                    )
                )
        yield Footer()
