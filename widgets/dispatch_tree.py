"""The dispatch-tree pane: session → turns → dispatched sub-agent jobs, updated live.

Each top-level turn is a node labelled with the first words of its prompt; each job a
dispatched worker or explorer ran is a node under its turn (or under its parent job),
showing the role alias in its tint, status, elapsed time, tokens and task. Selecting a job
shows its report below the tree and posts :class:`DispatchTree.JobSelected` (the app opens
the child's transcript); ``x`` or ``delete`` on a running job posts
:class:`DispatchTree.CancelRequested`; ``p`` (pause or resume) and ``s`` (step) post
:class:`DispatchTree.PauseRequested`. A job (or turn) that holds shows ``paused``. On a
finished worker that ran in a worktree of its own, ``m`` (merge) and ``d`` (drop) post
:class:`DispatchTree.WorktreeRequested`.

For a child's transcript opened while the child runs, the tree keeps each running job's
conversation id and the events of the round not stored yet (:meth:`DispatchTree.live_events`,
merged and bounded as the event bridge merges them), and passes the job's later events to
whoever follows it (:meth:`DispatchTree.follow_job`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

from smith_tui.engine import events as ev
from smith_tui.engine.presentation import format_duration, format_tokens, role_label
from smith_tui.terminal_text import visible

#: Seconds between two redraws of the running jobs' elapsed time.
TICK_S = 0.25
#: Turns kept in the tree; the oldest are dropped beyond this.
MAX_TURNS = 200
#: Characters of the prompt shown in a turn's label.
PROMPT_CHARS = 40

_JOB_MARKS = {"running": "●", "ok": "✓", "partial": "◐", "blocked": "✗", "cancelled": "⊘"}
_JOB_STYLES = {
    "running": "bold yellow",
    "ok": "green",
    "partial": "yellow",
    "blocked": "bold red",
    "cancelled": "dim",
}
_TURN_MARKS = {
    None: ("●", "bold yellow"),
    "completed": ("✓", "green"),
    "error": ("✗", "bold red"),
    "cancelled": ("⊘", "dim"),
    "budget_exhausted": ("◐", "yellow"),
}
#: The mark and style of a job or turn that holds at a round boundary.
_PAUSED = ("‖", "bold magenta")
#: Report fields shown as bullet lists, in this order.
_LIST_FIELDS = ("changes", "verification", "findings", "evidence", "limitations")


def first_words(text: str, limit: int = PROMPT_CHARS) -> str:
    """The start of ``text`` on one line, cut at a word boundary near ``limit``."""
    flat = " ".join(visible(text).split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut + "…"


def report_text(job_role: str, task: str, result: dict[str, Any] | None) -> Content:
    """A job's report for the detail area: status, summary, then each non-empty list field."""
    alias, style = role_label(job_role)
    parts: list[str | tuple[str, str]] = [(alias, style)]
    if result is None:
        parts += [(" · running", _JOB_STYLES["running"]), "\n", visible(task)]
        return Content.assemble(*parts)
    status = job_status(result)
    parts.append((f" · {status}", _JOB_STYLES.get(status, "")))
    if result.get("job_id"):
        parts.append((f" · {result['job_id']}", "dim"))
    parts += ["\n", (visible(task), "italic")]
    summary = visible(str(result.get("summary") or "")).strip()
    if summary:
        parts += ["\n\n", summary]
    for name in _LIST_FIELDS:
        items = result.get(name)
        if not isinstance(items, list) or not items:
            continue
        parts += ["\n\n", (name.capitalize(), "bold")]
        parts += [visible(f"\n • {item}") for item in items]
    error = visible(str(result.get("error") or "")).strip()
    if error:
        parts += ["\n\n", ("Error: ", "bold red"), error]
    tree = result.get("worktree")
    if isinstance(tree, dict):
        files = ", ".join(str(f) for f in tree.get("files") or []) or "no files changed"
        parts += ["\n\n", ("Worktree: ", "bold"), visible(f"{tree.get('branch')} · {files}")]
        parts += [("\nm merges it into your files, d drops it", "dim")]
    usage = result.get("usage")
    if isinstance(usage, dict) and usage:
        inp, out = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
        parts += ["\n\n", (f"{format_tokens(inp)} in · {format_tokens(out)} out", "dim")]
    return Content.assemble(*parts)


def job_status(result: dict[str, Any]) -> str:
    """The status a finished job shows: its report status, or ``cancelled``."""
    if result.get("cancelled"):
        return "cancelled"
    return str(result.get("status") or "blocked")


@dataclass
class JobInfo:
    """One dispatched job as the tree shows it."""

    job_id: str
    role: str
    """The child's role (worker, explorer)."""
    task: str
    turn_id: str
    parent_job_id: str | None
    started: float
    finished: float | None = None
    status: str = "running"
    tokens: int = 0
    result: dict[str, Any] | None = None
    node: TreeNode[tuple[str, str]] | None = None
    conversation_id: str | None = None
    """The child's own conversation (from its first turn's event)."""
    call_id: str | None = None
    """The parent's ``dispatch`` tool call that started the job."""
    duration_s: float | None = None
    """How long its ``dispatch`` call took, without the permission questions' waits (from
    the call's result); until then the tree's own clock."""
    unstored: list[ev.Event] = field(default_factory=list)
    """The job's events since its last stored reply, merged (while it runs)."""
    paused: bool = False
    """It holds at a round boundary (``TurnPaused`` until ``TurnResumed``)."""


JobListener = Callable[[ev.Event], None]


@dataclass
class TurnInfo:
    """One top-level turn as the tree shows it."""

    turn_id: str
    number: int
    role: str
    prompt: str
    stop_reason: ev.StopReason | None = None
    tokens: int = 0
    jobs: list[str] = field(default_factory=list)
    node: TreeNode[tuple[str, str]] | None = None
    paused: bool = False
    """It holds at a round boundary (``TurnPaused`` until ``TurnResumed``)."""
    plan: str | None = None
    """Plan mode: the title of the plan this turn presented, or of the plan it runs."""
    planned_in: str | None = None
    """The planning turn whose approved plan this turn runs (shown under it)."""


class DispatchTree(Widget, can_focus=False):
    """Live tree of the session's turns and the sub-agent jobs they dispatched."""

    DEFAULT_CSS = """
    DispatchTree {
        height: 1fr;
        layout: vertical;
    }
    DispatchTree > Tree {
        height: 1fr;
        padding: 0;
        overflow-x: hidden;
        background: transparent;
    }
    DispatchTree > #dispatch-detail {
        display: none;
        height: auto;
        max-height: 60%;
        border-top: dashed $panel-lighten-2;
    }
    DispatchTree.-detail > #dispatch-detail {
        display: block;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("x", "cancel_job", "Cancel job", show=False),
        Binding("delete", "cancel_job", "Cancel job", show=False),
        Binding("p", "pause_job", "Pause / resume job", show=False),
        Binding("s", "step_job", "Step job", show=False),
        Binding("m", "merge_job", "Merge worker's worktree", show=False),
        Binding("d", "drop_job", "Drop worker's worktree", show=False),
        Binding("escape", "hide_detail", "Hide report", show=False),
    ]

    class JobSelected(Message):
        """The user selected a job; ``result`` is its report (``None`` while it runs)."""

        def __init__(self, job_id: str, result: dict[str, Any] | None) -> None:
            super().__init__()
            self.job_id = job_id
            self.result = result

    class CancelRequested(Message):
        """The user asked to cancel a running job."""

        def __init__(self, job_id: str) -> None:
            super().__init__()
            self.job_id = job_id

    class PauseRequested(Message):
        """The user asked to pause or resume (``step`` False) or step a running job."""

        def __init__(self, job_id: str, *, step: bool = False) -> None:
            super().__init__()
            self.job_id = job_id
            self.step = step

    class WorktreeRequested(Message):
        """The user asked to merge (``action`` ``merge``) or drop a finished worker's worktree."""

        def __init__(self, job_id: str, action: str) -> None:
            super().__init__()
            self.job_id = job_id
            self.action = action

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        tick_s: float = TICK_S,
        max_turns: int = MAX_TURNS,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """Create the pane.

        Args:
            clock: Seconds, monotonic; injected for deterministic tests.
            tick_s: Interval of the elapsed-time redraw while a job runs.
            max_turns: Turns kept; the oldest are dropped with their jobs.
        """
        super().__init__(name=name, id=id, classes=classes)
        self.clock = clock
        self.tick_s = tick_s
        self.max_turns = max_turns
        self.jobs: dict[str, JobInfo] = {}
        """Every job in the tree, by job id."""
        self.turns: dict[str, TurnInfo] = {}
        """Every top-level turn in the tree, by turn id."""
        self.selected_job: str | None = None
        """The job whose report the detail area shows."""
        self._turn_count = 0
        self._last_turn: str | None = None
        self._dropped: TurnInfo | None = None
        self._plan_run: tuple[str, str] | None = None
        self._pending_tokens: dict[str, int] = {}
        self._listeners: dict[str, list[JobListener]] = {}
        self._ticker: Timer | None = None
        self.job_tree: Tree[tuple[str, str]] = Tree(Text("Session", "bold"), ("session", ""))
        """The tree widget itself."""
        self.job_tree.root.expand()
        self.job_tree.guide_depth = 2
        self.detail = Static("", id="dispatch-detail-text")
        """The report of the selected job."""

    def compose(self) -> ComposeResult:
        """The tree and the (hidden) report area."""
        yield self.job_tree
        with VerticalScroll(id="dispatch-detail"):
            yield self.detail

    def on_mount(self) -> None:
        """Start ticking if jobs arrived before the pane was mounted."""
        self._update_ticker()

    # -- queries --------------------------------------------------------------------------
    def job_label(self, job_id: str) -> str:
        """The plain text of a job's node label."""
        return self._job_label(self.jobs[job_id]).plain

    def turn_label(self, turn_id: str) -> str:
        """The plain text of a turn's node label."""
        return self._turn_label(self.turns[turn_id]).plain

    @property
    def running_jobs(self) -> list[str]:
        """Ids of the jobs still running."""
        return [job.job_id for job in self.jobs.values() if job.status == "running"]

    @property
    def ticking(self) -> bool:
        """Whether the elapsed-time timer is active."""
        return self._ticker is not None

    def live_events(self, job_id: str) -> list[ev.Event]:
        """The events of running job ``job_id`` not in the store yet (merged)."""
        job = self.jobs.get(job_id)
        return list(job.unstored) if job is not None else []

    def follow_job(self, job_id: str, listener: JobListener) -> Callable[[], None]:
        """Call ``listener`` with each later event of ``job_id``; returns the unfollow."""
        self._listeners.setdefault(job_id, []).append(listener)

        def unfollow() -> None:
            listeners = self._listeners.get(job_id, [])
            if listener in listeners:
                listeners.remove(listener)
            if not listeners:
                self._listeners.pop(job_id, None)

        return unfollow

    def focus_tree(self) -> None:
        """Focus the tree with the cursor on the newest job (or the root)."""
        newest = next(reversed(self.jobs.values()), None)
        if newest is not None and newest.node is not None:
            # Textual numbers a tree's lines when it next draws them, and move_cursor goes
            # by that number: a job added since the last paint (panes hidden, a busy
            # machine) would put the cursor on the first line. Asking for the lines
            # numbers them now.
            _ = self.job_tree.last_line
            self.job_tree.move_cursor(newest.node)
        self.job_tree.focus()

    def _job_event(self, event: ev.Event) -> None:
        """Keep a running job's unstored events; hand the event to its followers."""
        from smith_tui.widgets.event_batches import coalesce

        job_id = str(event.job_id)
        job = self.jobs.get(job_id)
        if job is not None:
            if isinstance(event, ev.TurnStarted) and job.conversation_id is None:
                job.conversation_id = event.conversation_id
            if isinstance(event, ev.AssistantMessage):
                job.unstored = []  # the reply is on record now; only its calls are not
            elif job.status == "running" and not isinstance(
                event, ev.DispatchStarted | ev.DispatchFinished
            ):
                job.unstored = coalesce([*job.unstored, event])
        for listener in list(self._listeners.get(job_id, ())):
            listener(event)

    # -- events ---------------------------------------------------------------------------
    def handle_event(self, event: ev.Event) -> None:
        """Follow turns, dispatches and usage; every other event is ignored."""
        if event.job_id is not None:
            self._job_event(event)
        if isinstance(event, ev.TurnStarted) and event.job_id is None:
            self._turn_started(event)
        elif isinstance(event, ev.TurnFinished) and event.job_id is None:
            turn = self.turns.get(event.turn_id)
            if turn is not None:
                turn.stop_reason = event.stop_reason
                if not turn.jobs and turn.plan is None:
                    # Only turns that dispatched something are shown (and kept): the
                    # tree is about sub-agents, and a turn per prompt would push them out.
                    # (Plan mode's turns stay: the run is linked to its planning turn.)
                    self._dropped = self.turns.pop(turn.turn_id)
                    if self._last_turn == turn.turn_id:
                        self._last_turn = None
                self._relabel_turn(turn)
        elif isinstance(event, ev.DispatchStarted) and event.job_id:
            self._dispatch_started(event)
        elif isinstance(event, ev.DispatchFinished) and event.job_id:
            self._dispatch_finished(event)
        elif isinstance(event, ev.UsageUpdated):
            self._usage(event)
        elif isinstance(event, ev.PlanPresented) and event.job_id is None:
            self._plan_presented(event)
        elif isinstance(event, ev.CommandOutput) and event.command == "plan":
            origin = event.data.get("planned_in") or {}
            if origin.get("turn_id"):
                self._plan_run = (str(origin["turn_id"]), str(event.data.get("title") or ""))
        elif isinstance(event, ev.TurnPaused | ev.TurnResumed):
            self._held(event.job_id, event.turn_id, isinstance(event, ev.TurnPaused))
        elif isinstance(event, ev.ToolCallFinished) and event.name == "dispatch":
            self._dispatch_call_finished(event)

    def _held(self, job_id: str | None, turn_id: str, paused: bool) -> None:
        """A job (or a top-level turn) holds at a round boundary, or goes on."""
        if job_id is not None:
            job = self.jobs.get(job_id)
            if job is not None:
                job.paused = paused
                self._relabel_job(job)
            return
        turn = self.turns.get(turn_id)
        if turn is not None:
            turn.paused = paused
            self._relabel_turn(turn)

    def _dispatch_call_finished(self, event: ev.ToolCallFinished) -> None:
        """The ``dispatch`` call's duration leaves out the questions its sub-agent asked."""
        # Call ids repeat across conversations: the call is the one its maker's job made.
        job = next(
            (
                j
                for j in self.jobs.values()
                if j.call_id == event.call_id and j.parent_job_id == event.job_id
            ),
            None,
        )
        if job is not None:
            job.duration_s = event.duration_s
            self._relabel_job(job)

    def _turn_started(self, event: ev.TurnStarted) -> None:
        self._turn_count += 1
        turn = TurnInfo(event.turn_id, self._turn_count, event.role, event.prompt)
        self.turns[event.turn_id] = turn
        self._last_turn = event.turn_id
        while len(self.turns) > self.max_turns:
            self._drop_turn(next(iter(self.turns)))
        if self._plan_run is not None and event.job_id is None:
            # The run of an approved plan: shown at once, under the turn that planned it.
            (turn.planned_in, turn.plan), self._plan_run = self._plan_run, None
            self._turn_node(turn)

    def _plan_presented(self, event: ev.PlanPresented) -> None:
        """A turn ended with a plan: keep it in the tree (its run goes under it)."""
        turn = self.turns.get(event.turn_id)
        if turn is None and self._dropped is not None and self._dropped.turn_id == event.turn_id:
            turn = self.turns[event.turn_id] = self._dropped
        if turn is None:
            return
        turn.plan = str(event.plan.get("title") or "")
        self._turn_node(turn)
        self._relabel_turn(turn)

    def _turn_node(self, turn: TurnInfo) -> TreeNode[tuple[str, str]]:
        """The turn's node, added when its first job is placed."""
        if turn.node is None:
            planning = self.turns.get(turn.planned_in or "")
            parent = planning.node if planning is not None else None
            turn.node = (parent or self.job_tree.root).add(
                self._turn_label(turn), ("turn", turn.turn_id), expand=True
            )
        return turn.node

    def _drop_turn(self, turn_id: str) -> None:
        turn = self.turns.pop(turn_id)
        for job_id in turn.jobs:
            self.jobs.pop(job_id, None)
        if turn.node is not None:
            turn.node.remove()
        if self.selected_job and self.selected_job not in self.jobs:
            self.action_hide_detail()

    def _turn_for(self, turn_id: str) -> TurnInfo:
        turn = self.turns.get(turn_id)
        if turn is None and self._last_turn in self.turns:
            turn = self.turns[self._last_turn]  # a child's turn id, or a turn we never saw
        if turn is None:
            self._turn_started(
                ev.TurnStarted(turn_id=turn_id, conversation_id="", prompt="(earlier turn)")
            )
            turn = self.turns[turn_id]
        return turn

    def _dispatch_started(self, event: ev.DispatchStarted) -> None:
        job_id = str(event.job_id)
        if job_id in self.jobs:
            return
        job = JobInfo(
            job_id=job_id,
            role=event.target_role,
            task=event.task,
            turn_id=event.turn_id,
            parent_job_id=event.parent_job_id,
            started=self.clock(),
            tokens=self._pending_tokens.pop(job_id, 0),
            call_id=event.call_id,
        )
        self._place_job(job)
        self._update_ticker()

    def _place_job(self, job: JobInfo) -> None:
        parent_job = self.jobs.get(job.parent_job_id) if job.parent_job_id else None
        turn = self._turn_for(parent_job.turn_id if parent_job else job.turn_id)
        job.turn_id = turn.turn_id
        parent_node = parent_job.node if parent_job and parent_job.node else self._turn_node(turn)
        parent_node.allow_expand = True
        parent_node.expand()
        job.node = parent_node.add(self._job_label(job), ("job", job.job_id), expand=True)
        job.node.allow_expand = False
        self.jobs[job.job_id] = job
        turn.jobs.append(job.job_id)
        turn.tokens += job.tokens
        self._relabel_turn(turn)

    def _dispatch_finished(self, event: ev.DispatchFinished) -> None:
        job_id = str(event.job_id)
        job = self.jobs.get(job_id)
        if job is None:
            task = str(event.result.get("task") or event.summary or "")
            job = JobInfo(job_id, event.target_role, task, "", None, self.clock())
            self._place_job(job)
        result = dict(event.result) or {"status": event.status, "summary": event.summary}
        job.result = result
        job.status = job_status(result)
        job.finished = self.clock()
        job.paused = False
        job.unstored = []  # the child's messages are all on record
        self._relabel_job(job)
        if self.selected_job == job_id:
            self._show_detail(job)
        self._update_ticker()

    def _usage(self, event: ev.UsageUpdated) -> None:
        tokens = int(event.delta.get("total_tokens", 0) or 0)
        if not tokens:
            return
        if event.job_id is None:
            turn = self.turns.get(event.turn_id)
            if turn is not None:
                turn.tokens += tokens
                self._relabel_turn(turn)
            return
        job = self.jobs.get(event.job_id)
        if job is None:
            self._pending_tokens[event.job_id] = self._pending_tokens.get(event.job_id, 0) + tokens
            return
        job.tokens += tokens
        self._relabel_job(job)
        turn = self.turns.get(job.turn_id)
        if turn is not None:
            turn.tokens += tokens
            self._relabel_turn(turn)

    # -- labels ---------------------------------------------------------------------------
    def _turn_label(self, turn: TurnInfo) -> Text:
        mark, style = _TURN_MARKS.get(turn.stop_reason, ("?", ""))
        held = turn.paused and turn.stop_reason is None
        if held:
            mark, style = _PAUSED
        text = Text.assemble((mark, style), " ", (f"#{turn.number} ", "dim"))
        if held:
            text.append("paused ", style)
        if turn.role != "direct":
            alias, alias_style = role_label(turn.role)
            text.append(f"{alias} ", alias_style)
        if turn.planned_in is not None:
            text.append("runs the plan ", "dim")
            text.append(first_words(turn.plan or ""))
        else:
            text.append(first_words(turn.prompt))
            if turn.plan is not None:
                text.append(" · plan: ", "dim")
                text.append(first_words(turn.plan))
        if turn.tokens:
            text.append(f" · {format_tokens(turn.tokens)} tok", "dim")
        return text

    def _job_label(self, job: JobInfo) -> Text:
        alias, alias_style = role_label(job.role)
        end = job.finished if job.finished is not None else self.clock()
        took = job.duration_s if job.duration_s is not None else end - job.started
        style = _JOB_STYLES.get(job.status, "")
        mark, status = _JOB_MARKS.get(job.status, "?"), job.status
        if job.paused and job.status == "running":
            (mark, style), status = _PAUSED, "paused"
        text = Text.assemble(
            (mark, style),
            " ",
            (alias, alias_style),
            " ",
            (status, style),
            (f" {format_duration(took)}", "dim"),
        )
        if job.tokens:
            text.append(f" {format_tokens(job.tokens)} tok", "dim")
        text.append(" · ")
        text.append(first_words(job.task))
        return text

    def _relabel_turn(self, turn: TurnInfo) -> None:
        if turn.node is not None:
            turn.node.set_label(self._turn_label(turn))

    def _relabel_job(self, job: JobInfo) -> None:
        if job.node is not None:
            job.node.set_label(self._job_label(job))

    # -- timer ----------------------------------------------------------------------------
    def _update_ticker(self) -> None:
        running = any(job.status == "running" for job in self.jobs.values())
        if running and self._ticker is None and self.is_attached:
            self._ticker = self.set_interval(self.tick_s, self._tick, name="dispatch-elapsed")
        elif not running and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def _tick(self) -> None:
        running = [job for job in self.jobs.values() if job.status == "running"]
        for job in running:
            self._relabel_job(job)
        if not running:
            self._update_ticker()

    # -- selection, cancel, detail --------------------------------------------------------
    def on_tree_node_highlighted(self, message: Tree.NodeHighlighted[tuple[str, str]]) -> None:
        """Show the whole task or prompt of the node under the cursor as a tooltip."""
        message.stop()
        data = message.node.data or ("", "")
        if data[0] == "job" and data[1] in self.jobs:
            self.job_tree.tooltip = self.jobs[data[1]].task
        elif data[0] == "turn" and data[1] in self.turns:
            self.job_tree.tooltip = self.turns[data[1]].prompt
        else:
            self.job_tree.tooltip = None

    def on_tree_node_selected(self, message: Tree.NodeSelected[tuple[str, str]]) -> None:
        """Show the selected job's report and tell the app about it."""
        message.stop()
        data = message.node.data
        if not data or data[0] != "job" or data[1] not in self.jobs:
            self.action_hide_detail()
            return
        job = self.jobs[data[1]]
        self.select_job(job.job_id)

    def select_job(self, job_id: str) -> None:
        """Show ``job_id``'s report and post :class:`JobSelected`."""
        job = self.jobs[job_id]
        self.selected_job = job_id
        self._show_detail(job)
        self.post_message(self.JobSelected(job_id, job.result))

    def _show_detail(self, job: JobInfo) -> None:
        self.detail.update(report_text(job.role, job.task, job.result))
        self.add_class("-detail")

    def action_hide_detail(self) -> None:
        """Hide the report area."""
        self.selected_job = None
        self.remove_class("-detail")

    def _running_job(self) -> JobInfo | None:
        """The job under the cursor when it still runs (a bell when it does not)."""
        node = self.job_tree.cursor_node
        data = node.data if node is not None else None
        if not data or data[0] != "job":
            return None
        job = self.jobs.get(data[1])
        if job is None or job.status != "running":
            self.app.bell()
            return None
        return job

    def action_cancel_job(self) -> None:
        """Ask the app to cancel the job under the cursor (when it is still running)."""
        job = self._running_job()
        if job is not None:
            self.post_message(self.CancelRequested(job.job_id))

    def action_pause_job(self) -> None:
        """Ask the app to pause the running job under the cursor, or resume it."""
        job = self._running_job()
        if job is not None:
            self.post_message(self.PauseRequested(job.job_id))

    def _worktree_job(self) -> JobInfo | None:
        """The finished job under the cursor when it ran in a worktree (a bell when not)."""
        node = self.job_tree.cursor_node
        data = node.data if node is not None else None
        job = self.jobs.get(data[1]) if data and data[0] == "job" else None
        if job is None or not isinstance((job.result or {}).get("worktree"), dict):
            self.app.bell()
            return None
        return job

    def action_merge_job(self) -> None:
        """Ask the app to merge the worktree of the finished worker under the cursor."""
        job = self._worktree_job()
        if job is not None:
            self.post_message(self.WorktreeRequested(job.job_id, "merge"))

    def action_drop_job(self) -> None:
        """Ask the app to drop the worktree of the finished worker under the cursor."""
        job = self._worktree_job()
        if job is not None:
            self.post_message(self.WorktreeRequested(job.job_id, "drop"))

    def action_step_job(self) -> None:
        """Ask the app to let the job under the cursor run one more round."""
        job = self._running_job()
        if job is not None:
            self.post_message(self.PauseRequested(job.job_id, step=True))
