"""The inspect view (alt+i): the persisted messages of the conversation, editable.

Edits and deletions are written through the store and the live session is rebuilt
from it (``runtime.conversations.reload``), so the next request sends what is shown
here. A second tab shows each request's debug snapshot (model, system prompt, tools).
ctrl+o on a ``dispatch`` call or result opens that sub-agent's transcript. ``f`` forks the
conversation up to the end of the highlighted message's turn (``/fork N``, files optionally
put back too).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import (
    Button,
    Footer,
    OptionList,
    Static,
    TabbedContent,
    TabPane,
    TextArea,
)
from textual.widgets.option_list import Option

from smith_tui.app.screens.confirm import ConfirmScreen
from smith_tui.app.screens.fork_question import ForkQuestion
from smith_tui.app.screens.message_removal import plan_removal
from smith_tui.app.screens.modal import SmithModal
from smith_tui.engine import events as ev
from smith_tui.engine import forks
from smith_tui.engine.persistence import message_dict
from smith_tui.engine.transcript_text import message_label, message_preview, tool_call_parts
from smith_tui.errors import error_text
from smith_tui.store import Message, RequestSnapshot

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

BUSY = "A turn is running: wait for it or cancel it before changing messages."
ROLE_STYLES = {"user": "bold green", "assistant": "bold cyan", "tool": "yellow", "system": "dim"}


def request_text(snapshot: RequestSnapshot, number: int, total: int) -> str:
    """The full debug view of one request snapshot."""
    tools = snapshot.tool_schemas or []
    names = [str((t.get("function") or t).get("name", "?")) for t in tools if isinstance(t, dict)]
    lines = [
        f"request {number} of {total}",
        f"model: {snapshot.model}",
        f"tools offered ({len(tools)}): {', '.join(names) or 'none'}",
        "",
        "── system prompt " + "─" * 30,
        snapshot.system_prompt,
        "",
        "── tool schemas " + "─" * 31,
        json.dumps(tools, indent=2, ensure_ascii=False),
    ]
    return "\n".join(lines) + "\n"


class InspectScreen(SmithModal):
    """Inspect, edit and delete the persisted messages of the active conversation."""

    AUTO_FOCUS = "#inspect-list"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("ctrl+s", "save", "Save edit"),
        Binding("delete", "delete", "Delete message"),
        Binding("ctrl+t", "switch_tab", "Messages/Requests"),
        Binding("ctrl+o", "open_child", "Sub-agent"),
        Binding("f", "fork", "Fork here"),
    ]

    def __init__(self, runtime: Runtime) -> None:
        super().__init__()
        self.runtime = runtime
        self.stored: list[Message] = []
        self.snapshots: list[RequestSnapshot] = []
        self.current_id: int | None = None
        self.drafts: dict[int, str] = {}
        """Unsaved editor text by message id (kept while moving through the list)."""
        self._loading = False

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Two tabs: messages (list + editor) and request snapshots (list + detail)."""
        with Vertical(id="inspect-dialog") as dialog:
            dialog.border_title = "Inspect & edit"
            with TabbedContent(id="inspect-tabs"):
                with TabPane("Messages", id="inspect-messages-tab"):
                    with Horizontal(id="inspect-body"):
                        yield OptionList(id="inspect-list")
                        with Vertical(id="inspect-detail"):
                            yield Static("", id="inspect-meta", markup=False)
                            yield TextArea(id="inspect-editor", soft_wrap=True)
                            with Horizontal(id="inspect-buttons"):
                                yield Button("Save", variant="primary", id="inspect-save")
                                yield Button("Revert", id="inspect-revert")
                                yield Button("Delete", variant="error", id="inspect-delete")
                            yield Static("", id="inspect-error", markup=False)
                            yield Static("", id="inspect-status", markup=False)
                with TabPane("Requests", id="inspect-requests-tab"):
                    with Horizontal(id="requests-body"):
                        yield OptionList(id="requests-list")
                        yield TextArea(id="request-detail", read_only=True, soft_wrap=True)
        yield Footer()

    def on_mount(self) -> None:
        """Load messages and snapshots."""
        self.load()

    # -- loading --------------------------------------------------------------------------

    @property
    def conversation_id(self) -> str | None:
        """The conversation being inspected."""
        return self.runtime.conversations.conversation_id

    def load(self, keep: int | None = None) -> None:
        """(Re)read messages and snapshots from the store; keep message ``keep`` selected."""
        conv = self.conversation_id
        store = self.runtime.store
        self.stored = store.conversations.list_messages(conv) if conv else []
        self.snapshots = store.snapshots.list_for_conversation(conv) if conv else []
        self.drafts = {k: v for k, v in self.drafts.items() if any(m.id == k for m in self.stored)}
        messages = self.query_one("#inspect-list", OptionList)
        messages.set_options(self._message_option(m) for m in self.stored)
        requests = self.query_one("#requests-list", OptionList)
        total = len(self.snapshots)
        requests.set_options(
            Option(f"#{i} {s.model} · {len(s.tool_schemas or [])} tools", id=str(s.id))
            for i, s in enumerate(self.snapshots, 1)
        )
        if not self.stored:
            self.current_id = None
            self._show_message(None)
            self._set_status(
                "No messages yet: send a prompt first." if conv else "No conversation yet."
            )
        else:
            ids = [m.id for m in self.stored]
            index = ids.index(keep) if keep in ids else 0
            messages.highlighted = index
            self._show_message(self.stored[index])
        if total:
            requests.highlighted = total - 1
        else:
            self.query_one("#request-detail", TextArea).load_text("No requests recorded yet.")

    def _message_option(self, message: Message) -> Option:
        mark = "*" if message.id in self.drafts else " "
        prompt = Text.assemble(
            (f"{mark}#{message.position:<4}", "dim"),
            (f"{message_label(message_dict(message)):<11}", ROLE_STYLES.get(message.role, "")),
            " ",
            message_preview(message_dict(message), 48),
            no_wrap=True,
            overflow="ellipsis",
        )
        return Option(prompt, id=str(message.id))

    @property
    def current(self) -> Message | None:
        """The message in the editor."""
        return next((m for m in self.stored if m.id == self.current_id), None)

    def action_open_child(self) -> None:
        """ctrl+o on a ``dispatch`` call or its result: that sub-agent's transcript (live
        while it runs, from the store after)."""
        from smith_tui.app.screens.child_transcript import dispatch_call_ids, open_child

        message = self.current
        calls = dispatch_call_ids(message_dict(message)) if message is not None else []
        if not calls:
            self.notify("Highlight a dispatch call or its result to open its sub-agent.")
            return
        open_child(self, self.runtime, calls[0], [message_dict(m) for m in self.stored])

    def _show_message(self, message: Message | None) -> None:
        editor = self.query_one("#inspect-editor", TextArea)
        meta = self.query_one("#inspect-meta", Static)
        self._set_error("")
        self._loading = True
        try:
            if message is None:
                self.current_id = None
                meta.update("")
                editor.load_text("")
                editor.disabled = True
                return
            editor.disabled = False
            self.current_id = message.id
            editor.load_text(self.drafts.get(message.id, message.content or ""))
        finally:
            self._loading = False
        meta.update(self._meta_text(message))

    def _meta_text(self, message: Message) -> str:
        lines = [f"#{message.position} {message_label(message_dict(message))}"]
        if message.tool_call_id:
            lines[0] += f" · answers {message.tool_call_id}"
        for call in message.tool_calls or []:
            call_id, name, arguments = tool_call_parts(call)
            if len(arguments) > 80:
                arguments = arguments[:79] + "…"
            lines.append(f"→ {name} {arguments} [{call_id}]")
        if message.reasoning:
            lines.append(f"reasoning: {len(message.reasoning)} chars (not editable here)")
        if message.id in self.drafts:
            lines.append("unsaved edit: ctrl+s saves, Revert drops it")
        return "\n".join(lines)

    # -- events ---------------------------------------------------------------------------

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """Show the highlighted message or request."""
        event.stop()
        option_id = event.option.id
        if option_id is None:
            return
        if event.option_list.id == "inspect-list":
            message = next((m for m in self.stored if str(m.id) == option_id), None)
            self._show_message(message)
        elif event.option_list.id == "requests-list":
            self._show_request(option_id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on a message: move into the editor."""
        event.stop()
        if event.option_list.id == "inspect-list" and self.current is not None:
            self.query_one("#inspect-editor", TextArea).focus()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        """Keep the draft of the message being edited."""
        message = self.current
        if self._loading or message is None or event.text_area.id != "inspect-editor":
            return
        had_draft = message.id in self.drafts
        if event.text_area.text == (message.content or ""):
            self.drafts.pop(message.id, None)
        else:
            self.drafts[message.id] = event.text_area.text
        if had_draft != (message.id in self.drafts):
            self._refresh_option(message)

    def _refresh_option(self, message: Message) -> None:
        self.query_one("#inspect-list", OptionList).replace_option_prompt(
            str(message.id), self._message_option(message).prompt
        )
        self.query_one("#inspect-meta", Static).update(self._meta_text(message))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Save, revert or delete."""
        event.stop()
        actions = {
            "inspect-save": self.action_save,
            "inspect-revert": self.action_revert,
            "inspect-delete": self.action_delete,
        }
        action = actions.get(event.button.id or "")
        if action is not None:
            action()

    def _show_request(self, option_id: str) -> None:
        for number, snapshot in enumerate(self.snapshots, 1):
            if str(snapshot.id) == option_id:
                text = request_text(snapshot, number, len(self.snapshots))
                self.query_one("#request-detail", TextArea).load_text(text)
                return

    # -- actions --------------------------------------------------------------------------

    def action_switch_tab(self) -> None:
        """Switch between the messages and the request snapshots."""
        tabs = self.query_one("#inspect-tabs", TabbedContent)
        if tabs.active == "inspect-messages-tab":
            tabs.active = "inspect-requests-tab"
            self.query_one("#requests-list", OptionList).focus()
        else:
            tabs.active = "inspect-messages-tab"
            self.query_one("#inspect-list", OptionList).focus()

    def action_save(self) -> None:
        """Write the edited content of the current message and rebuild the session."""
        message = self.current
        if message is None:
            self._set_error("Choose a message first.")
            return
        if self.runtime.busy:
            self._set_error(BUSY)
            return
        text = self.query_one("#inspect-editor", TextArea).text
        if text == (message.content or ""):
            self.drafts.pop(message.id, None)
            self._set_status(f"Message #{message.position} is unchanged.")
            return
        if message.role == "user" and not text.strip():
            self._set_error("A user message cannot be empty: delete it instead.")
            return
        content: str | None = text
        if not text and message.tool_calls:
            content = None
        try:
            self.runtime.store.conversations.update_message(message.id, content=content)
        except Exception as exc:
            self._set_error(error_text(exc))
            return
        self.drafts.pop(message.id, None)
        self._after_write(f"Saved message #{message.position}.", keep=message.id)

    def action_revert(self) -> None:
        """Drop the unsaved edit of the current message."""
        message = self.current
        if message is None:
            return
        self.drafts.pop(message.id, None)
        self._show_message(message)
        self._refresh_option(message)
        self._set_status(f"Reverted message #{message.position}.")

    def action_delete(self) -> None:
        """Delete the current message (after confirmation), keeping the transcript valid."""
        message = self.current
        if message is None:
            self._set_error("Choose a message first.")
            return
        if self.runtime.busy:
            self._set_error(BUSY)
            return
        plan = plan_removal(self.stored, message.id)
        if not plan.allowed:
            self._set_error(plan.refusal)
            return
        index = self.stored.index(message)

        def answered(confirmed: bool | None) -> None:
            if not confirmed:
                self._set_status("Nothing deleted.")
                return
            try:
                with self.runtime.store.atomic():
                    for message_id in plan.ids:
                        self.runtime.store.conversations.delete_message(message_id)
            except Exception as exc:
                self._set_error(error_text(exc))
                return
            for message_id in plan.ids:
                self.drafts.pop(message_id, None)
            remaining = [m for m in self.stored if m.id not in plan.ids]
            keep = remaining[min(index, len(remaining) - 1)].id if remaining else None
            count = len(plan.ids)
            self._after_write(f"Deleted {count} message{'s' if count > 1 else ''}.", keep=keep)

        self.app.push_screen(ConfirmScreen(plan.question), answered)

    def turn_of(self, message: Message) -> str | None:
        """The turn ``message`` belongs to (for one stored without a turn, the latest turn
        before it); ``None`` when no turn starts at or before it."""
        turn: str | None = None
        for stored in self.stored:
            turn = stored.turn_id or turn
            if stored.id == message.id:
                return turn
        return None

    def action_fork(self) -> None:
        """Fork the conversation up to the end of the current message's turn (``/fork N``),
        asking first whether the project's files go back to that turn too."""
        message = self.current
        conversation = self.conversation_id
        if message is None or conversation is None:
            self._set_error("Choose a message first.")
            return
        if self.runtime.busy:
            self._set_error(BUSY)
            return
        if self.drafts:
            self._set_error("Save or revert the unsaved edits first: a fork copies what is stored.")
            return
        turn = self.turn_of(message)
        turns = forks.turn_ids(self.runtime.store, conversation)
        if turn not in turns:
            self._set_error(f"Message #{message.position} comes before the first turn.")
            return
        number = turns.index(turn) + 1
        line = f"/fork {number}"

        def answered(answer: str | bool | None) -> None:
            if not answer:
                self._set_status("Nothing forked.")
                return
            app, runtime = self.app, self.runtime
            command = line + (" --files" if answer == "files" else "")

            async def run() -> None:
                # /fork reports its own errors as its output; this is anything else.
                try:
                    await runtime.submit(command)
                except Exception as exc:
                    app.notify(error_text(exc), title="Could not fork", severity="error")

            self.dismiss(None)
            app.run_worker(run(), group="turn", exit_on_error=False)

        if number == len(turns):
            question = (
                f"Fork the conversation into a new one, whole (message #{message.position} is "
                f"in turn {number}, its last)?"
            )
            self.app.push_screen(
                ConfirmScreen(question, confirm_label="Fork", title="Fork"), answered
            )
            return
        question = (
            f"Fork the conversation into a new one up to the end of turn {number} of "
            f"{len(turns)} (message #{message.position})?\n\nAlso put the project's files "
            f"back as turn {number} left them? Later turns' changes to them are undone "
            "(the checkpoints keep them)."
        )
        self.app.push_screen(ForkQuestion(question), answered)

    def _after_write(self, status: str, keep: int | None) -> None:
        """Rebuild the live session from the store and tell the front end."""
        self.runtime.conversations.reload()
        if self.conversation_id:
            self.runtime.emit(
                ev.ConversationChanged(
                    conversation_id=self.conversation_id,
                    reason="edited",
                    role=self.runtime.active_role,
                )
            )
        self.load(keep=keep)
        self._set_status(status)

    def action_close(self) -> None:
        """Close; unsaved edits are confirmed first."""
        if not self.drafts:
            self.dismiss(None)
            return
        count = len(self.drafts)
        question = f"Discard {count} unsaved edit{'s' if count > 1 else ''}?"

        def answered(confirmed: bool | None) -> None:
            if confirmed:
                self.dismiss(None)

        self.app.push_screen(ConfirmScreen(question, confirm_label="Discard"), answered)

    def _set_error(self, text: str) -> None:
        error = self.query_one("#inspect-error", Static)
        error.update(text)
        error.set_class(bool(text), "-shown")
        if text:
            self.query_one("#inspect-status", Static).update("")

    def _set_status(self, text: str) -> None:
        self._set_error("")
        self.query_one("#inspect-status", Static).update(text)
