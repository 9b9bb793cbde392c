"""A sub-agent's own transcript: what one dispatched job said, thought, ran and got back.

Opened from the dispatch tree (enter on a job). The child's messages come from its own
conversation in the store; while the job runs, the screen follows its live events as the
main transcript follows the top level's: streamed text and reasoning, tool calls with the
last lines of their output, results. ``p`` shows the same messages in the pager.

A running job's current round is not in the store yet: the dispatch tree keeps its events
(:meth:`~smith_tui.widgets.dispatch_tree.DispatchTree.live_events`) and they are replayed
after the stored messages, so nothing between the last stored reply and the screen's
opening is missed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Footer, Static

from smith_tui.app.formatting import role_label
from smith_tui.app.screens.modal import SmithModal
from smith_tui.engine import events as ev
from smith_tui.engine.persistence import message_dict
from smith_tui.widgets.dispatch_tree import DispatchTree, JobInfo, first_words
from smith_tui.widgets.transcript import Transcript
from smith_tui.widgets.transcript.event_router import route_event

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

#: Stored messages of a child read at most (a child's step budget keeps it far below).
MAX_MESSAGES = 2000


def child_conversation(runtime: Runtime, job: JobInfo) -> str | None:
    """The id of ``job``'s own conversation: from its first event, else from the store (a
    child conversation of the active one whose metadata names the job)."""
    if job.conversation_id:
        return job.conversation_id
    parent = runtime.conversation_id
    if not parent:
        return None
    for child in runtime.store.conversations.children(parent):
        if (child.metadata or {}).get("job_id") == job.job_id:
            return child.id
    return None


class ChildTranscriptScreen(SmithModal):
    """One dispatched job's transcript, live while it runs, from the store after."""

    AUTO_FOCUS = "#child-transcript"
    DEFAULT_CSS = """
    #child-header {
        height: auto;
        margin-bottom: 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("p", "open_pager", "Pager"),
        Binding("e", "toggle_tool_results", "Tool results"),
    ]

    def __init__(self, runtime: Runtime, tree: DispatchTree, job_id: str) -> None:
        super().__init__()
        self.runtime = runtime
        self.dispatch = tree
        self.job_id = job_id
        self.conversation_id: str | None = None
        self._unfollow: Any = None
        self._stored_prompt = False
        self._stored_calls: set[str] = set()
        """Tool calls shown already (stored, or started live)."""
        self._answered: set[str] = set()
        """Tool calls whose result is stored."""

    @property
    def job(self) -> JobInfo | None:
        """The job as the dispatch tree knows it (``None`` once the tree dropped it)."""
        return self.dispatch.jobs.get(self.job_id)

    @property
    def transcript(self) -> Transcript:
        """The child's transcript view."""
        return self.query_one("#child-transcript", Transcript)

    def compose(self) -> ComposeResult:
        """A header line (role, status, task), the transcript, the keys."""
        with Vertical(id="child-dialog") as dialog:
            dialog.border_title = "Sub-agent"
            yield Static("", id="child-header", markup=False)
            yield Transcript(id="child-transcript", first_page=MAX_MESSAGES)
        yield Footer()

    def on_mount(self) -> None:
        """Show the stored messages, then the unstored round, then follow the job."""
        job = self.job
        if job is None:
            self.query_one("#child-header", Static).update("This job is no longer listed.")
            return
        self.transcript.role = job.role
        self.conversation_id = child_conversation(self.runtime, job)
        messages = self.stored_messages()
        self._note_stored(messages)
        self.transcript.load_messages(messages)
        for event in self.dispatch.live_events(self.job_id):
            self._route(event)
        self._unfollow = self.dispatch.follow_job(self.job_id, self._live)
        self._show_header()

    def on_unmount(self) -> None:
        """Stop following the job."""
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None

    def stored_messages(self) -> list[dict[str, Any]]:
        """The child's stored messages, oldest first (none before its conversation exists)."""
        if not self.conversation_id:
            return []
        found = self.runtime.store.conversations.list_messages(
            self.conversation_id, limit=MAX_MESSAGES
        )
        return [dict(message_dict(m)) for m in found]

    def _note_stored(self, messages: list[dict[str, Any]]) -> None:
        """Remember what the loaded messages show, so live events do not repeat it."""
        self._stored_prompt = any(m.get("role") == "user" for m in messages)
        self._stored_calls = {
            str(call.get("id"))
            for m in messages
            for call in (m.get("tool_calls") or [])
            if isinstance(call, dict)
        }
        self._answered = {str(m.get("tool_call_id")) for m in messages if m.get("role") == "tool"}

    def _show_header(self) -> None:
        job = self.job
        if job is None:
            return
        alias, style = role_label(job.role)
        header = Text.assemble((alias, style), f" · {job.status} · ", first_words(job.task, 200))
        self.query_one("#child-header", Static).update(header)

    def _live(self, event: ev.Event) -> None:
        if not self.is_attached:
            return
        if isinstance(event, ev.DispatchFinished):
            self._show_header()
            return
        if isinstance(event, ev.DispatchStarted):
            return  # a grandchild: its call and card show in this transcript
        self._route(event)
        if isinstance(event, ev.TurnFinished | ev.StatusChanged):
            self._show_header()

    def _route(self, event: ev.Event) -> None:
        """Show one of the job's events; what the store already shows is not added twice."""
        if isinstance(event, ev.TurnStarted) and self._stored_prompt:
            return
        if isinstance(event, ev.ToolCallStarted):
            if event.call_id in self._stored_calls:
                return
            self._stored_calls.add(event.call_id)
        elif isinstance(event, ev.ToolCallFinished | ev.ToolOutputDelta):
            if event.call_id in self._answered:
                return  # finished before the screen opened: the store has its result
        route_event(self.transcript, event)

    def action_open_pager(self) -> None:
        """The child's messages in the pager."""
        from smith_tui.app.screens.pager_screen import PagerScreen

        self.app.push_screen(PagerScreen(self.runtime, messages=self.stored_messages()))

    def action_toggle_tool_results(self) -> None:
        """Expand or collapse every tool call of this transcript."""
        self.transcript.toggle_tool_results()
