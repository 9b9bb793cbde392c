"""The permission question: may this tool call run?

Shown by the app's ask port (:meth:`smith_tui.app.app.SmithApp.ask_permission`) while the
turn waits. It names the role asking, the tool and why it asks, shows the command or a
diff of the change, and answers with a :class:`PermissionReply`: ``y`` allow once, ``a``
allow the shown rule for the session, ``n`` deny (a reason typed then goes to the model),
``escape`` deny at once. Asked again for a call the user already denied in this turn, it
says so and offers ``s``: deny and stop the turn.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Input, Static

from smith_tui.app.screens.modal import SmithModal
from smith_tui.engine.permission_gate import PermissionReply, PermissionRequest, ReplyDecision
from smith_tui.engine.presentation import role_label
from smith_tui.terminal_text import visible

_LINE_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "cyan"), ("+", "green"), ("-", "red"))


def preview_text(request: PermissionRequest) -> Text:
    """The preview, a diff coloured by line (a command or arguments stay plain)."""
    diff = request.tool in ("edit", "write") and request.preview.startswith("---")
    text = Text(no_wrap=False)
    for line in visible(request.preview).splitlines() or [""]:
        style = ""
        if diff:
            style = next((s for prefix, s in _LINE_STYLES if line.startswith(prefix)), "")
        text.append(line + "\n", style=style)
    text.rstrip()
    return text


class PermissionScreen(SmithModal):
    """Ask whether ``request`` may run; dismisses with a :class:`PermissionReply`."""

    AUTO_FOCUS = "#permission-preview"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "deny", "Deny"),
        Binding("y", "allow_once", "Allow once"),
        Binding("a", "allow_session", "Allow for the session"),
        Binding("n", "ask_reason", "Deny…"),
        Binding("s", "deny_stop", "Deny and stop the turn", show=False),
    ]

    def __init__(self, request: PermissionRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        """Who asks for what, the preview, the keys and the (hidden) reason field."""
        request = self.request
        alias, style = role_label(request.role)
        with Vertical(id="permission-dialog") as dialog:
            dialog.border_title = "Permission"
            asker = Text.assemble((alias, style), f" ({request.role}) wants to run ")
            asker.append(request.tool, style="bold")
            if request.subject and request.tool != "bash":
                asker.append(visible(f": {request.subject}"))
            yield Static(asker, id="permission-asker")
            yield Static(Text(visible(request.reason), style="dim"), id="permission-reason")
            if request.denied_before:
                yield Static(
                    Text(
                        "You denied this same call before in this turn; "
                        "s denies it and stops the turn.",
                        style="bold yellow",
                    ),
                    id="permission-again",
                )
            with VerticalScroll(id="permission-preview"):
                yield Static(preview_text(request), id="permission-preview-text")
            keys = Text.assemble(
                ("y", "bold"),
                " allow once   ",
                ("a", "bold"),
                f" allow {visible(request.grant)} for this session   ",
                ("n", "bold"),
                " deny with a reason   ",
                ("esc", "bold"),
                " deny",
            )
            if request.denied_before:
                keys.append("   ")
                keys.append("s", style="bold")
                keys.append(" deny and stop the turn")
            yield Static(keys, id="permission-keys")
            yield Input(
                placeholder="Why not? (sent to the model; enter to deny, esc to deny without it)",
                id="permission-why",
            )

    def on_mount(self) -> None:
        """The reason field appears only after ``n``."""
        self.query_one("#permission-why", Input).display = False

    def _reply(self, decision: ReplyDecision, reason: str = "") -> None:
        self.dismiss(PermissionReply(decision, reason))

    def action_allow_once(self) -> None:
        """Run this call."""
        self._reply("once")

    def action_allow_session(self) -> None:
        """Run it, and every call the shown rule covers, for the rest of the conversation."""
        self._reply("session")

    def action_ask_reason(self) -> None:
        """Show the reason field; enter there denies with the reason."""
        why = self.query_one("#permission-why", Input)
        why.display = True
        why.focus()

    def action_deny(self) -> None:
        """Deny without a reason."""
        self._reply("deny")

    def action_deny_stop(self) -> None:
        """Deny and stop the turn (offered when this call was denied before)."""
        if self.request.denied_before:
            self._reply("stop")

    def action_close(self) -> None:
        """Escape denies."""
        self._reply("deny")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Deny with the typed reason."""
        event.stop()
        self._reply("deny", event.value.strip())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While the reason is typed, letters are text: only escape stays a key."""
        if action == "deny_stop" and not self.request.denied_before:
            return False
        if action in ("allow_once", "allow_session", "ask_reason", "deny_stop"):
            why = self.query_one("#permission-why", Input)
            return not why.has_focus
        return True
