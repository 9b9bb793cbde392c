"""The typed events the engine emits; every front end subscribes to these.

One vocabulary serves the Textual app, the headless printer and the
``stream-json`` output. Every event names the role that produced it and, for
work done inside a dispatched sub-agent, the job id (``None`` at top level).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

Status = Literal["thinking", "streaming", "tool", "idle", "error", "cancelled"]
StopReason = Literal["completed", "cancelled", "error", "budget_exhausted"]


@dataclass(frozen=True, kw_only=True)
class Event:
    """Base of all engine events."""

    type: ClassVar[str] = "event"
    role: str = "direct"
    job_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict with a ``type`` key (for ``stream-json``)."""
        data = {"type": self.type}
        data.update(dataclasses.asdict(self))
        return data


@dataclass(frozen=True, kw_only=True)
class SessionStarted(Event):
    """The runtime's session started."""

    type: ClassVar[str] = "session_started"
    session_id: str


@dataclass(frozen=True, kw_only=True)
class SessionFinished(Event):
    """The session stopped or failed."""

    type: ClassVar[str] = "session_finished"
    session_id: str
    status: Literal["stopped", "failed"]
    reason: str | None = None
    error: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class TurnStarted(Event):
    """A turn began (top-level turn, or a child turn when ``job_id`` is set)."""

    type: ClassVar[str] = "turn_started"
    turn_id: str
    conversation_id: str
    prompt: str
    attachments: list[dict[str, Any]] = field(default_factory=list)
    """Files attached with ``@path`` (``path``, ``lines``, ``chars``, ``cut``)."""


@dataclass(frozen=True, kw_only=True)
class TurnFinished(Event):
    """A turn ended; ``text`` is the final assistant text."""

    type: ClassVar[str] = "turn_finished"
    turn_id: str
    conversation_id: str
    stop_reason: StopReason
    text: str = ""
    error: dict[str, Any] | None = None
    usage: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class StatusChanged(Event):
    """The prompt status changed (thinking, streaming, tool, idle, error, cancelled)."""

    type: ClassVar[str] = "status"
    status: Status
    detail: str = ""


@dataclass(frozen=True, kw_only=True)
class TurnPaused(Event):
    """A paused turn (with ``job_id``: a sub-agent) holds at a gate of its loop
    (:mod:`smith_tui.engine.turn_control`): before a model request (``at="request"``, after
    ``rounds`` rounds) or before the tool calls of round ``rounds`` (``at="tools"``)."""

    type: ClassVar[str] = "turn_paused"
    turn_id: str
    at: Literal["request", "tools"]
    rounds: int


@dataclass(frozen=True, kw_only=True)
class TurnResumed(Event):
    """A held turn goes on: ``resumed``, ``stepped`` (one more round, then it holds
    again) or ``cancelled`` (it ends now)."""

    type: ClassVar[str] = "turn_resumed"
    turn_id: str
    how: Literal["resumed", "stepped", "cancelled"]


@dataclass(frozen=True, kw_only=True)
class LLMRequestStarted(Event):
    """A request to the model is about to be sent."""

    type: ClassVar[str] = "llm_request_started"
    turn_id: str
    model: str
    attempt: int = 1


@dataclass(frozen=True, kw_only=True)
class TextDelta(Event):
    """A piece of assistant text arrived."""

    type: ClassVar[str] = "text_delta"
    turn_id: str
    text: str


@dataclass(frozen=True, kw_only=True)
class ReasoningDelta(Event):
    """A piece of model reasoning arrived."""

    type: ClassVar[str] = "reasoning_delta"
    turn_id: str
    text: str


@dataclass(frozen=True, kw_only=True)
class AssistantMessage(Event):
    """A complete assistant message (text and tool calls) of one round."""

    type: ClassVar[str] = "assistant_message"
    turn_id: str
    content: str
    reasoning: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class StreamReset(Event):
    """Discard the partial output shown for this request: it is being retried."""

    type: ClassVar[str] = "stream_reset"
    turn_id: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class RetryScheduled(Event):
    """A failed or empty model call will be retried after ``delay_s``."""

    type: ClassVar[str] = "retry_scheduled"
    turn_id: str
    attempt: int
    delay_s: float
    reason: str
    layer: Literal["transport", "empty_response"] = "transport"


@dataclass(frozen=True, kw_only=True)
class ToolCallStarted(Event):
    """A tool call is about to run."""

    type: ClassVar[str] = "tool_call_started"
    turn_id: str
    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True, kw_only=True)
class ToolOutputDelta(Event):
    """Live output of a running tool (the tail shown in the activity pane)."""

    type: ClassVar[str] = "tool_output"
    turn_id: str
    call_id: str
    text: str


@dataclass(frozen=True, kw_only=True)
class ToolCallFinished(Event):
    """A tool call finished (successfully or not)."""

    type: ClassVar[str] = "tool_call_finished"
    turn_id: str
    call_id: str
    name: str
    ok: bool
    duration_s: float
    summary: str
    content: str = ""
    error: str | None = None
    cancelled: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class UsageUpdated(Event):
    """Token usage changed: ``delta`` for the last call, ``totals`` per role."""

    type: ClassVar[str] = "usage"
    turn_id: str
    model: str
    delta: dict[str, int]
    totals: dict[str, dict[str, int]]
    context_tokens: int = 0
    context_window: int = 0
    cost: float | None = None
    """Dollars of the last call: the provider's reported cost, else catalog prices, else None."""


@dataclass(frozen=True, kw_only=True)
class BudgetUpdated(Event):
    """Spend of the top-level turn (sub-agents included) against each ``budget`` limit set.

    ``spend`` maps a limit key (``turn_tokens``, ``conversation_tokens``, ``turn_cost_usd``,
    ``conversation_cost_usd``) to ``{"used", "limit"}``; ``unpriced`` says some call had no
    known cost.
    """

    type: ClassVar[str] = "budget"
    turn_id: str
    spend: dict[str, dict[str, float]]
    unpriced: bool = False


@dataclass(frozen=True, kw_only=True)
class BudgetWarning(Event):
    """A ``budget`` limit is 80% used (once per limit and turn); ``message`` says which."""

    type: ClassVar[str] = "budget_warning"
    turn_id: str
    limit: str
    used: float
    maximum: float
    message: str


@dataclass(frozen=True, kw_only=True)
class ScopeWarning(Event):
    """Something about the project was ignored while preparing a top-level turn.

    One per ``TurnScope.warnings`` entry (e.g. an index file that is a FIFO, too
    large or not UTF-8), sent right after ``TurnStarted``; the turn goes on.
    """

    type: ClassVar[str] = "scope_warning"
    turn_id: str
    message: str


@dataclass(frozen=True, kw_only=True)
class DispatchStarted(Event):
    """A sub-agent job was dispatched (``role`` is the parent's role)."""

    type: ClassVar[str] = "dispatch_started"
    turn_id: str
    target_role: str
    task: str
    parent_job_id: str | None = None
    call_id: str | None = None
    """The parent's ``dispatch`` tool call that started the job."""


@dataclass(frozen=True, kw_only=True)
class DispatchFinished(Event):
    """A dispatched job ended with its normalised result."""

    type: ClassVar[str] = "dispatch_finished"
    target_role: str
    status: str
    summary: str
    result: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class TodoUpdated(Event):
    """The todo list changed (whole-list replace)."""

    type: ClassVar[str] = "todo_updated"
    items: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class CommandOutput(Event):
    """Output of a slash command, for display."""

    type: ClassVar[str] = "command_output"
    command: str
    text: str
    ok: bool = True
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ConversationChanged(Event):
    """The active conversation changed (new, load, resume, clear)."""

    type: ClassVar[str] = "conversation_changed"
    conversation_id: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class SandboxStatus(Event):
    """Whether ``bash`` commands run sandboxed; sent at session start and when it changes.

    ``label`` is a few words for a status line. ``notice`` is set the first time
    the sandbox is wanted but cannot be used (said once per session), else empty.
    """

    type: ClassVar[str] = "sandbox"
    mode: str
    active: bool
    label: str
    notice: str = ""


@dataclass(frozen=True, kw_only=True)
class PermissionMode(Event):
    """The permission mode in effect (``permissions.mode``); at session start and on change."""

    type: ClassVar[str] = "permission_mode"
    mode: str


@dataclass(frozen=True, kw_only=True)
class PermissionDenied(Event):
    """A tool call was refused by the permission policy, the user, or because it would ask
    where nobody can answer (headless). ``reason`` is what the model was told."""

    type: ClassVar[str] = "permission_denied"
    tool: str
    subject: str
    reason: str
    call_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class PlanPresented(Event):
    """A plan-mode turn ended with ``present_plan``: the plan waits for the user's approval.

    ``plan`` is its data (title, steps, files, risks), ``text`` its Markdown."""

    type: ClassVar[str] = "plan_presented"
    turn_id: str
    conversation_id: str
    plan: dict[str, Any] = field(default_factory=dict)
    text: str = ""


@dataclass(frozen=True, kw_only=True)
class ContextCompacted(Event):
    """The older part of a conversation was summarised (compaction, docs/DESIGN.md §5.4).

    ``reason`` is ``auto`` (the window filled up), ``manual`` (``/compact``) or
    ``overflow`` (the server refused a request as too long). ``summarised`` messages are
    now the ``summary``; the newest ``kept`` messages go on as they are. The stored
    history is unchanged.
    """

    type: ClassVar[str] = "context_compacted"
    conversation_id: str
    reason: str
    summarised: int
    kept: int
    tokens_before: int
    tokens_after: int
    summary: str = ""
    turn_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class HookRun(Event):
    """A hook command ran (README, Hooks): for which event, how it ended.

    ``outcome`` is ``ok``, ``blocked``, ``allowed``, ``denied``, ``ask``, ``stopped``,
    ``notice`` (it failed; the turn went on), ``timeout`` or ``cancelled``. ``source`` is
    ``user`` (the config file) or ``project`` (a trusted ``.smith/settings.json``).
    ``call_id``/``tool`` name the tool call it ran for, if any.
    """

    type: ClassVar[str] = "hook_run"
    event: str
    command: str
    outcome: str
    source: str = "user"
    exit_code: int | None = None
    duration_s: float = 0.0
    message: str = ""
    turn_id: str | None = None
    call_id: str | None = None
    tool: str | None = None
