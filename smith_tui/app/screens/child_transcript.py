"""A sub-agent's own transcript: what one dispatched job said, thought, ran and got back.

Opened from the dispatch tree (enter on a job), and from the pager and inspect (``o`` on a
``dispatch`` call: :func:`child_of_call` finds its job, running or stored). The child's
messages come from its own
conversation in the store; while the job runs, the screen follows its live events as the
main transcript follows the top level's: streamed text and reasoning, tool calls with the
last lines of their output, results. ``p`` shows the same messages in the pager.

A running job's current round is not in the store yet: the dispatch tree keeps its events
(:meth:`~smith_tui.widgets.dispatch_tree.DispatchTree.live_events`) and they are replayed
after the stored messages, so nothing between the last stored reply and the screen's
opening is missed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Footer, Static

from smith_tui.app.screens.modal import SmithModal
from smith_tui.engine import events as ev
from smith_tui.engine.persistence import message_dict
from smith_tui.engine.presentation import role_label
from smith_tui.widgets.dispatch_tree import DispatchTree, JobInfo, first_words
from smith_tui.widgets.transcript import Transcript
from smith_tui.widgets.transcript.event_router import route_event

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

#: Stored messages of a child read at most (a child's step budget keeps it far below).
MAX_MESSAGES = 2000
#: Levels of sub-agents under the active conversation searched for a stored job.
MAX_DEPTH = 4


def child_conversation(runtime: Runtime, job: JobInfo) -> str | None:
    """The id of ``job``'s own conversation: from its first event, else from the store (a
    child conversation of the active one whose metadata names the job)."""
    if job.conversation_id:
        return job.conversation_id
    parent = runtime.conversations.conversation_id
    if not parent:
        return None
    for child in runtime.store.conversations.children(parent):
        if (child.metadata or {}).get("job_id") == job.job_id:
            return child.id
    return None


def child_of_call(
    runtime: Runtime,
    tree: DispatchTree | None,
    call_id: str,
    messages: Sequence[Mapping[str, Any]] = (),
    parent_job: str | None = None,
) -> tuple[str, str | None] | None:
    """``(job id, child conversation id)`` of the job the ``dispatch`` call ``call_id``
    made by ``parent_job`` (``None``: the top level) started: from the dispatch tree while
    it knows the job (a running one), else from the call's result in ``messages`` or stored
    in the active conversation (after it ended, after a restart); ``None`` when none knows.
    (Call ids repeat across conversations: a sub-agent's first call is ``call_1`` too.)"""
    if tree is not None:
        for job in tree.jobs.values():
            if job.call_id == call_id and job.parent_job_id == parent_job:
                return job.job_id, child_conversation(runtime, job)
    job_id = _job_of_result(messages, call_id)
    if job_id is None and parent_job is None and runtime.conversations.conversation_id:
        stored = runtime.store.conversations.list_messages(runtime.conversations.conversation_id)
        job_id = _job_of_result([message_dict(m) for m in stored], call_id)
    if job_id is None:
        return None
    conversation = _conversation_of_job(runtime, job_id)
    return (job_id, conversation) if conversation else None


def _job_of_result(messages: Sequence[Mapping[str, Any]], call_id: str) -> str | None:
    """The job id a stored ``dispatch`` result names (its result JSON's ``job_id``)."""
    for message in messages:
        if message.get("tool_call_id") != call_id or message.get("name") != "dispatch":
            continue
        try:
            result = json.loads(str(message.get("content") or ""))
        except ValueError:
            return None
        job_id = result.get("job_id") if isinstance(result, dict) else None
        return str(job_id) if job_id else None
    return None


def _conversation_of_job(runtime: Runtime, job_id: str) -> str | None:
    """The sub-agent conversation under the active one (children, their children…) whose
    metadata names ``job_id``: only the store's link opens a transcript, not the text."""
    parents = (
        [runtime.conversations.conversation_id] if runtime.conversations.conversation_id else []
    )
    for _ in range(MAX_DEPTH):
        children = [c for parent in parents for c in runtime.store.conversations.children(parent)]
        for child in children:
            if (child.metadata or {}).get("job_id") == job_id:
                return child.id
        parents = [child.id for child in children]
    return None


def dispatch_call_ids(message: Mapping[str, Any]) -> list[str]:
    """The ids of the ``dispatch`` calls a message made or answers (tool calls of an
    assistant message, the call a ``dispatch`` result answers)."""
    if message.get("role") == "tool":
        answered = message.get("tool_call_id")
        return [str(answered)] if message.get("name") == "dispatch" and answered else []
    return [
        str(call.get("id"))
        for call in message.get("tool_calls") or []
        if isinstance(call, dict) and (call.get("function") or {}).get("name") == "dispatch"
    ]


def open_child(
    screen: Any,
    runtime: Runtime,
    call_id: str,
    messages: Sequence[Mapping[str, Any]] = (),
    parent_job: str | None = None,
) -> bool:
    """Push the transcript of the sub-agent ``dispatch`` call ``call_id`` started over
    ``screen`` (``False``, with a notice, when it cannot be found); ``messages`` are the
    ones ``screen`` shows, ``parent_job`` the job they are of (``None``: the top level)."""
    main = getattr(screen.app, "main_screen", None)
    found_tree = main.query(DispatchTree) if main is not None else None
    tree = found_tree.first() if found_tree else None
    found = child_of_call(runtime, tree, call_id, messages, parent_job)
    if found is None:
        screen.notify("That sub-agent's transcript is not known (yet).", severity="warning")
        return False
    job_id, conversation_id = found
    screen.app.push_screen(
        ChildTranscriptScreen(runtime, tree, job_id, conversation_id=conversation_id)
    )
    return True


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

    def __init__(
        self,
        runtime: Runtime,
        tree: DispatchTree | None,
        job_id: str,
        *,
        conversation_id: str | None = None,
    ) -> None:
        """The transcript of job ``job_id``: followed live while ``tree`` knows it, else
        the stored messages of ``conversation_id`` (a job of an earlier session)."""
        super().__init__()
        self.runtime = runtime
        self.dispatch = tree
        self.job_id = job_id
        self.conversation_id: str | None = conversation_id
        self._unfollow: Any = None
        self._stored_prompt = False
        self._stored_calls: set[str] = set()
        """Tool calls shown already (stored, or started live)."""
        self._answered: set[str] = set()
        """Tool calls whose result is stored."""

    @property
    def job(self) -> JobInfo | None:
        """The job as the dispatch tree knows it (``None`` once the tree dropped it)."""
        return self.dispatch.jobs.get(self.job_id) if self.dispatch is not None else None

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
        if job is None or self.dispatch is None:
            self._show_stored()
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

    def _show_stored(self) -> None:
        """A job the tree does not know (an earlier session's): its stored messages."""
        header = self.query_one("#child-header", Static)
        found = (
            self.runtime.store.conversations.get(self.conversation_id)
            if self.conversation_id
            else None
        )
        if found is None:
            header.update("This job is no longer listed.")
            return
        role = str((found.metadata or {}).get("role") or "worker")
        self.transcript.role = role
        self.transcript.load_messages(self.stored_messages())
        alias, style = role_label(role)
        title = (found.title or "").split(": ", 1)[-1]
        header.update(Text.assemble((alias, style), " · finished · ", first_words(title, 200)))

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
        """The child's messages in the pager (the app opens it: the pager opens this screen
        in turn, so neither module imports the other)."""
        show = getattr(self.app, "show_pager", None)
        if show is None:
            self.notify("The pager is not available here.", timeout=3)
            return
        show(self.stored_messages(), self.job_id)

    def action_toggle_tool_results(self) -> None:
        """Expand or collapse every tool call of this transcript."""
        self.transcript.toggle_tool_results()
