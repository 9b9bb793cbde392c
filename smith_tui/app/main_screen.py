"""The main screen: transcript, side panes, todo list, status line, prompt and footer."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static

from smith_tui.engine import events as ev
from smith_tui.widgets.completion.menu import CompletionMenu
from smith_tui.widgets.matrix_rain import MatrixRain
from smith_tui.widgets.prompt_input import PromptInput
from smith_tui.widgets.status_line import StatusLine
from smith_tui.widgets.todo_panel import TodoPanel

if TYPE_CHECKING:
    from smith_tui.app.app import SmithApp


class PendingPane(Static):
    """Stands in for a pane that is not built yet; ignores events."""

    def __init__(self, title: str, *, id: str | None = None) -> None:
        super().__init__(f"{title}\n[dim](coming soon)[/dim]", id=id)
        self.border_title = title

    def handle_event(self, event: ev.Event) -> None:
        """Ignore ``event``."""

    def load_messages(self, messages: list[dict[str, Any]]) -> None:
        """Ignore ``messages``."""


#: The panes other modules provide: id → (module, class, title).
PANES: dict[str, tuple[str, str, str]] = {
    "transcript": ("smith_tui.widgets.transcript", "Transcript", "Transcript"),
    "tools": ("smith_tui.widgets.tool_activity", "ToolActivity", "Tools"),
    "dispatch": ("smith_tui.widgets.dispatch_tree", "DispatchTree", "Dispatch"),
    "usage": ("smith_tui.widgets.usage_pane", "UsagePane", "Usage"),
}


def make_pane(pane_id: str, runtime: Any) -> Widget:
    """The widget for ``pane_id`` (a :class:`PendingPane` until its module exists)."""
    module_name, class_name, title = PANES[pane_id]
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError):
        return PendingPane(title, id=pane_id)
    try:
        widget = cls(id=pane_id)
    except TypeError:
        widget = cls(runtime, id=pane_id)
    widget.border_title = title
    return widget


class MainScreen(Screen):
    """Where the conversation happens."""

    AUTO_FOCUS = "#prompt"

    def __init__(self, runtime: Any) -> None:
        super().__init__(id="main")
        self.runtime = runtime
        self._failed_panes: set[str] = set()

    @property
    def smith(self) -> SmithApp:
        """The app, typed."""
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        """Build the layout."""
        with Horizontal(id="body"):
            with Vertical(id="transcript-column"):
                yield make_pane("transcript", self.runtime)
                yield MatrixRain(id="rain")
            with Vertical(id="side"):
                yield make_pane("tools", self.runtime)
                yield make_pane("dispatch", self.runtime)
                yield make_pane("usage", self.runtime)
        yield TodoPanel(id="todo")
        yield CompletionMenu(id="completion")
        yield StatusLine(id="status")
        yield PromptInput(id="prompt", completer=self.smith.completer)
        yield Footer()

    def on_mount(self) -> None:
        """Wire the prompt to its menu and show the active conversation."""
        prompt = self.query_one(PromptInput)
        prompt.menu = self.query_one(CompletionMenu)
        status = self.query_one(StatusLine)
        status.role = self.runtime.active_role
        status.model = self.runtime.model or self._configured_model()
        self.show_conversation()

    def _configured_model(self) -> str:
        value = self.runtime.config.effective.get("default_model")
        return str(value) if value else ""

    @property
    def sinks(self) -> list[Widget]:
        """The widgets that follow engine events, in delivery order."""
        ids = ("transcript", "tools", "dispatch", "usage", "status", "todo", "rain")
        return [self.query_one(f"#{pane_id}") for pane_id in ids]

    def show_conversation(self) -> None:
        """Load the active conversation into the panes (after mount, load, new, clear)."""
        runtime = self.runtime
        messages = list(runtime.messages)
        for pane in self.sinks:
            loader = getattr(pane, "load_messages", None)
            if loader is not None:
                self._guarded(pane, loader, messages)
        self.query_one(TodoPanel).set_items(list(getattr(runtime, "todo", []) or []))
        history = [
            str(m.get("content") or "")
            for m in messages
            if m.get("role") == "user" and m.get("content")
        ]
        self.query_one(PromptInput).load_history(history)
        self.refresh_title()

    def refresh_title(self) -> None:
        """Show the conversation's title in the status line."""
        runtime = self.runtime
        title = ""
        if runtime.conversation_id:
            conversation = runtime.store.conversations.get(runtime.conversation_id)
            if conversation is not None:
                title = conversation.title or ""
        self.query_one(StatusLine).title = title

    def apply_events(self, events: list[ev.Event]) -> None:
        """Deliver a batch of engine events to every pane."""
        sinks = self.sinks
        for event in events:
            for pane in sinks:
                self._guarded(pane, pane.handle_event, event)  # type: ignore[attr-defined]
            if isinstance(event, ev.ConversationChanged):
                self.show_conversation()
            elif isinstance(event, ev.TurnFinished) and event.job_id is None:
                self.refresh_title()
                self.query_one(StatusLine).model = self.runtime.model or ""

    def _guarded(self, pane: Widget, method: Any, argument: Any) -> None:
        """Call a pane; one failing pane must not take the session down."""
        try:
            method(argument)
        except Exception as exc:
            self.log.error(f"{type(pane).__name__} failed on {argument!r:.200}: {exc!r}")
            name = type(pane).__name__
            if name not in self._failed_panes:
                self._failed_panes.add(name)
                self.notify(f"{name} could not show an update: {exc}", severity="error")

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        """Send the prompt to the runtime (or put it back when it cannot run now)."""
        if not self.smith.submit_line(message.text):
            message.prompt.load_text(message.text)
            message.prompt.move_cursor(message.prompt.document.end)
