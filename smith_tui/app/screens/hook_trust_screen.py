"""The question a repository's hooks get before they may run (README, Hooks).

A repository's ``.smith/settings.json`` can name programs to run at points of a session.
They would run as the user, outside the sandbox, so they run only once the user has
seen exactly what they are and trusted them. The screen lists every command; it
dismisses with ``True`` (trust), ``False`` (do not run them: remembered) or ``None``
(escape: not now, asked again next time). "Do not run" has the focus, so an accidental
enter trusts nothing.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Static

from smith_tui.app.screens.modal import SmithModal
from smith_tui.engine.hooks import ProjectHooks
from smith_tui.terminal_text import visible


def hook_listing(project: ProjectHooks) -> str:
    """One line per hook: its event, the tools it is for, the command it runs."""
    lines = []
    for event, matcher, command in project.commands():
        scope = f" [{matcher}]" if matcher.strip() not in ("", "*") else ""
        lines.append(f"{event}{scope}: {command}")
    return visible("\n".join(lines))


class HookTrustScreen(SmithModal):
    """Shows what a repository's settings file would run and asks whether to trust it."""

    AUTO_FOCUS = "#hook-trust-no"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Not now"),
        Binding("n", "answer(False)", "Don't run them"),
    ]
    DEFAULT_CSS = """
    HookTrustScreen { align: center middle; }
    #hook-trust-dialog {
        width: 90; max-width: 95%; height: auto; max-height: 90%;
        border: round $warning; border-title-color: $warning; padding: 1 2;
        background: $surface;
    }
    #hook-trust-intro { width: 100%; margin-bottom: 1; }
    #hook-trust-list { height: auto; max-height: 16; border: round $panel-lighten-2; }
    #hook-trust-commands { width: 100%; }
    #hook-trust-buttons { height: auto; align-horizontal: right; margin-top: 1; }
    #hook-trust-buttons Button { margin-left: 2; }
    """

    def __init__(self, project: ProjectHooks) -> None:
        super().__init__()
        self.project = project

    def compose(self) -> ComposeResult:
        """The file, its commands and the two answers."""
        count = len(self.project.commands())
        intro = (
            f"{visible(str(self.project.path))} asks to run {count} hook command(s). They "
            "would run as you, outside the sandbox, with your files and network, at the "
            "events below. Trust them only if you trust this repository. A change to the "
            "file asks again."
        )
        with Vertical(id="hook-trust-dialog") as dialog:
            dialog.border_title = "Run this repository's hooks?"
            yield Static(intro, id="hook-trust-intro", markup=False)
            with VerticalScroll(id="hook-trust-list"):
                yield Static(hook_listing(self.project), id="hook-trust-commands", markup=False)
            with Horizontal(id="hook-trust-buttons"):
                yield Button("Trust and run them", variant="warning", id="hook-trust-yes")
                yield Button("Don't run them", id="hook-trust-no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Answer with the pressed button."""
        event.stop()
        self.dismiss(event.button.id == "hook-trust-yes")

    def action_answer(self, trusted: bool) -> None:
        """Answer from the keyboard."""
        self.dismiss(trusted)
