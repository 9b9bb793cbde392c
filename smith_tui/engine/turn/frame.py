"""The two objects a turn runs on: :class:`Turn` (what it is) and :class:`TurnServices`
(what it uses).

A :class:`Turn` is frozen: its ids, role, prompt, scope, the config snapshot and its typed
:class:`~smith_tui.config.SmithConfig`, and (once made) the model selection and the system
prompt. :class:`TurnServices` is built once per top-level turn
(:meth:`smith_tui.engine.turn.driver.TurnDriver.services_for`) and handed as is to every
turn it dispatches; it is also what the turn's tools see as ``ToolContext.services``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from smith_tui.cancel import CancelToken
from smith_tui.config import SmithConfig
from smith_tui.engine import events as ev
from smith_tui.engine.attachments import ResourceSource
from smith_tui.engine.checkpoints import TurnCheckpoint
from smith_tui.engine.hooks.hook_set import Hooks
from smith_tui.engine.messages import TranscriptMessage
from smith_tui.engine.model_select import ModelSelection
from smith_tui.engine.permission_gate import PermissionGate
from smith_tui.engine.roles import RoleSpec
from smith_tui.engine.scope import TurnScope
from smith_tui.engine.spend_limits import SpendMeter
from smith_tui.engine.turn.settings import TurnSettings
from smith_tui.engine.turn_control import TurnControl
from smith_tui.engine.usage_ledger import UsageTracker
from smith_tui.engine.user_setup import SetupCatalog
from smith_tui.llm import ChatRequest, ChatResponse, StreamHandlers
from smith_tui.tools.registry import ToolRegistry
from smith_tui.tools.spec import ToolServices


@dataclass(frozen=True)
class Turn:
    """One turn, top-level or dispatched, fixed when it begins.

    A dispatched child shares its parent's config snapshot; ``job_id`` is set for it.
    The driver adds ``selection`` and ``system_prompt`` once the model is chosen
    (``dataclasses.replace``).
    """

    turn_id: str
    conversation_id: str
    role: RoleSpec
    cancel: CancelToken
    scope: TurnScope
    config: Mapping[str, Any]
    """The effective config snapshot (the merged layers as written)."""
    config_model: SmithConfig
    """The validated, typed view of ``config``: what ``settings`` come from and what tools
    get (``ToolContext.config``)."""
    prompt: str = ""
    history: Sequence[TranscriptMessage] = ()
    requested_model: str | None = None
    pinned_model: str | None = None
    job_id: str | None = None
    """Set for a dispatched child turn (its settings are the child's)."""
    usage_scope: tuple[str, str] | None = None
    """``(conversation_id, turn_id)`` usage is recorded under (the top-level turn's, for a
    child)."""
    record: Mapping[str, Any] = field(default_factory=dict)
    """Extra fields of the turn record (a child's job id and session)."""
    tools: frozenset[str] | None = None
    """The only tools offered (``None``: all the role may use); a call to another is refused."""
    started_at: float = field(default_factory=time.time)
    images: tuple[Mapping[str, str], ...] = ()
    """The prompt's images (engine/prompt_images.py), kept with its user message."""
    handoff: Mapping[str, Any] | None = None
    """``@name``: the arguments of the dispatch the turn makes instead of asking its model
    (engine/routing.py); nothing of the prompt is attached then, the sub-agent reads."""
    control: TurnControl | None = None
    """Pause / step / resume of the turn (a dispatched child's: below its parent's)."""
    selection: ModelSelection | None = None
    """The model chosen for the turn (``None`` until the driver selected it)."""
    system_prompt: str = ""

    @property
    def role_name(self) -> str:
        """The role's name, as events and records carry it."""
        return self.role.name

    @property
    def top_level(self) -> bool:
        """Whether the user's prompt started this turn (not a dispatch)."""
        return self.job_id is None

    @cached_property
    def settings(self) -> TurnSettings:
        """The settings the loop reads, from the typed config (a child's are the child's)."""
        return TurnSettings.from_config(self.config_model, child=self.job_id is not None)

    @property
    def model(self) -> str:
        """The chosen model (``""`` before the selection)."""
        return self.selection.model if self.selection is not None else ""

    @property
    def context_window(self) -> int:
        """The chosen model's context window in tokens."""
        return self.selection.context_window if self.selection is not None else 128_000

    @property
    def max_output_tokens(self) -> int | None:
        """The chosen model's output limit, if it has one."""
        return self.selection.max_output_tokens if self.selection is not None else None

    @property
    def pricing(self) -> Mapping[str, float] | None:
        """The model's catalog prices (dollars per token), used when the provider reports
        no cost."""
        return self.selection.pricing if self.selection is not None else None

    @property
    def cwd(self) -> Path:
        """The folder the turn works in."""
        return self.scope.cwd


class TurnRecorder(Protocol):
    """Where a turn persists what happens (implemented over the store)."""

    def user_message(self, turn: Turn, message: TranscriptMessage) -> None:
        """Persist the user message that opened the turn."""

    def round(
        self,
        turn: Turn,
        round_no: int,
        messages: list[TranscriptMessage],
        usage: Mapping[str, float] | None,
    ) -> None:
        """Persist one part of a round in one transaction.

        A round with tool calls arrives in two parts: the assistant message (with the
        round's ``usage``: token counts, and ``cost`` in dollars when known) before any tool
        starts, then its tool results (``usage`` None)
        once they all finished. A round without tool calls arrives whole. A recorder may
        set each message's stored ``position`` on the dicts (compaction anchors on it).
        """

    def request_snapshot(
        self, turn: Turn, model: str, system_prompt: str, tools: list[dict[str, Any]]
    ) -> None:
        """Keep the debug snapshot of one outgoing request."""


class ChatStreamer(Protocol):
    """The model client the loop streams from (an ``LLMClient``, or a test double)."""

    async def chat_stream(self, request: ChatRequest, handlers: StreamHandlers, /) -> ChatResponse:
        """Stream one completion, calling ``handlers`` as its pieces arrive."""
        ...


def _now() -> datetime:
    return datetime.now().astimezone()


@dataclass(frozen=True, kw_only=True)
class TurnServices(ToolServices):
    """What a turn uses: the session's parts and the top-level turn's own, typed.

    The tools' part (store, permission gate, checkpoint, file backend, command runner,
    skills) is :class:`~smith_tui.tools.spec.ToolServices`; a turn's calls get this very
    object as ``ToolContext.services``, and the turns it dispatches get it too.
    """

    llm: ChatStreamer
    registry: ToolRegistry
    emit: Callable[[ev.Event], None]
    recorder: TurnRecorder
    usage: UsageTracker = field(default_factory=UsageTracker)
    now: Callable[[], datetime] = _now
    permissions: PermissionGate | None = None
    checkpoint: TurnCheckpoint | None = None
    """The top-level turn's checkpoint (its children's edits go into it)."""
    skills: SetupCatalog | None = None
    """The user's skills and sub-agents (also the system prompt's blocks about them)."""
    spend: SpendMeter | None = None
    """The top-level turn's spend against the ``budget`` limits (its children add to it)."""
    hooks: Hooks | None = None
    """The session's hooks for the top-level turn and its children (``None``: none)."""
    resources: ResourceSource | None = None
    """Where ``@server:uri`` attachments are read (the MCP servers), or ``None``."""
