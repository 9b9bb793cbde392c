"""Plan → approve → run (README "Plan mode").

In ``plan`` permission mode a top-level turn is offered ``present_plan``
(:mod:`smith_tui.tools.builtin.plan`) and told to research and end with it. When it does, the
:class:`Planner` stores the plan as the conversation note ``plan`` and emits
:class:`~smith_tui.engine.events.PlanPresented`; the front end shows it (the app's plan
screen, ``smith -p`` prints it). Then:

- :meth:`Planner.approve` runs it as a new turn in the mode the user picked (``auto-edit``
  by default): with ``fresh`` in a new conversation whose only context is the plan, the
  project instructions (the system prompt) and the files it names (attached), linked to
  the planning turn (conversation metadata, the turn record, a notice); else in the same
  conversation. Its steps become the todo list, checked off with the ``todo`` tool.
- :meth:`Planner.reject` sends the user's feedback back to the model, still planning.

The engine never imports Textual: the screen is the app's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from smith_tui.engine import events as ev
from smith_tui.engine.attachments import MAX_ATTACHMENTS
from smith_tui.engine.errors import UserRequestError
from smith_tui.tools.builtin import todo as todo_tool

if TYPE_CHECKING:
    from smith_tui.engine.active_conversation import Conversations
    from smith_tui.engine.scope import TurnScope
    from smith_tui.engine.services import ServiceHandles
    from smith_tui.engine.turn.stop import TurnResult
    from smith_tui.store import Store
    from smith_tui.tools.builtin.plan import Plan
    from smith_tui.tools.spec import ToolSpec

PLAN_MODE = "plan"
DEFAULT_RUN_MODE = "auto-edit"
PLANNED_IN_KEY = "planned_in"
"""Conversation metadata and turn-record key: where the plan that runs here was made."""
PLAN_NOTICE = "plan"
"""``CommandOutput.command`` of the plan notices (a fresh run's link to its planning)."""
PLAN_NOTE_ID = "plan"
"""The conversation note a presented (or approved) plan is kept under, as JSON."""


class PlanHost(Protocol):
    """What the planner uses of its runtime (:class:`~smith_tui.engine.runtime.Runtime`)."""

    services: ServiceHandles
    store: Store
    scope: TurnScope
    conversations: Conversations
    """The active conversation (its id, todo list; a fresh one for a ``fresh`` run)."""

    @property
    def permission_mode(self) -> str: ...
    @property
    def active_role(self) -> str: ...
    def emit(self, event: ev.Event) -> None: ...
    def set_permission_mode(self, mode: str) -> str: ...
    async def run_turn(
        self,
        prompt: str,
        *,
        todo: list[dict[str, str]] | None = None,
        record: Mapping[str, Any] | None = None,
    ) -> TurnResult: ...


@dataclass(frozen=True)
class PresentedPlan:
    """A plan the model presented, and the turn that made it."""

    plan: Plan
    conversation_id: str
    turn_id: str

    def origin(self) -> dict[str, str]:
        """The link a run of this plan keeps to its planning turn."""
        return {"conversation_id": self.conversation_id, "turn_id": self.turn_id}


def todo_items(plan: Plan) -> list[dict[str, str]]:
    """The plan's steps as a todo list, all pending."""
    return [{"content": step, "status": "pending"} for step in plan.steps]


def run_prompt(plan: Plan, *, fresh: bool, attach: list[str]) -> str:
    """The prompt of the turn that carries the plan out."""
    intro = (
        "Carry out this approved plan. Its steps are your todo list: mark each in_progress "
        "when you start it and done when it is finished (the todo tool)."
    )
    if not fresh:
        intro = "The user approved the plan (below, as approved, maybe edited). " + intro
    from smith_tui.tools.builtin.plan import render_plan

    parts = [intro, "", render_plan(plan).rstrip()]
    if attach:
        parts += ["", "The files the plan names, as they are now: " + " ".join(attach)]
    return "\n".join(parts)


def reject_prompt(feedback: str) -> str:
    """The prompt that sends the user's feedback on a rejected plan back to the model."""
    feedback = feedback.strip() or "(no reason given)"
    return (
        "The user rejected the plan. Their feedback:\n\n"
        f"{feedback}\n\n"
        "Revise the plan (research more if needed) and present it again with present_plan."
    )


def attachable(plan: Plan, root: Path | None) -> list[str]:
    """``@path`` tokens for the plan's files that exist in the project now (the attach step
    applies the read tool's path policy to each)."""
    if root is None:
        return []
    tokens = []
    for name in plan.files:
        if any(ch.isspace() for ch in name) or name.startswith("@"):
            continue
        try:
            if (root / name).is_file():
                tokens.append("@" + name)
        except OSError:
            continue
    return tokens[:MAX_ATTACHMENTS]


class Planner:
    """The runtime's plan mode: offers ``present_plan``, keeps what was presented, runs it."""

    def __init__(self, runtime: PlanHost) -> None:
        self.runtime = runtime
        self.pending: PresentedPlan | None = None
        """The plan presented last and not yet approved or rejected."""
        self.offered: ToolSpec[Any] | None = None
        """``present_plan`` while it is registered (plan mode). Its module, with the plan's
        model, is imported by the first turn in plan mode, not by a session that never plans."""

    # -- the planning turn ----------------------------------------------------------------
    def offer_tool(self) -> None:
        """Offer ``present_plan`` to the next turn only in plan mode."""
        registry = self.runtime.services.tool
        if self.runtime.permission_mode == PLAN_MODE:
            from smith_tui.tools.builtin.plan import TOOL

            registry.register(TOOL)
            self.offered = TOOL
        elif self.offered is not None:
            registry.unregister(self.offered.name)
            self.offered = None

    def finished(self, result: TurnResult, conversation_id: str, turn_id: str, role: str) -> None:
        """After a top-level turn: when it ended with ``present_plan``, keep the plan (the
        conversation note ``plan``) and emit :class:`~smith_tui.engine.events.PlanPresented`."""
        terminal = result.terminal
        if self.offered is None or terminal is None or terminal.name != self.offered.name:
            return
        data = terminal.metadata.get("plan") if terminal.metadata else None
        if not isinstance(data, Mapping):
            return
        from smith_tui.tools.builtin.plan import Plan, render_plan

        plan = Plan.model_validate(dict(data))
        self.pending = PresentedPlan(plan, conversation_id, turn_id)
        self._store(conversation_id, plan, "presented", self.pending.origin())
        self.runtime.emit(
            ev.PlanPresented(
                turn_id=turn_id,
                conversation_id=conversation_id,
                plan=plan.to_dict(),
                text=render_plan(plan),
                role=role,
            )
        )

    def _store(
        self, conversation_id: str, plan: Plan, status: str, origin: Mapping[str, str] | None
    ) -> None:
        note = {"plan": plan.to_dict(), "status": status, "at": time.time(), "origin": origin}
        self.runtime.store.notes.put(
            conversation_id, PLAN_NOTE_ID, json.dumps(note, ensure_ascii=False, sort_keys=True)
        )

    def stored(self, conversation_id: str | None = None) -> dict[str, Any] | None:
        """The ``plan`` note of a conversation (the active one by default), or ``None``."""
        conversation_id = conversation_id or self.runtime.conversations.conversation_id
        if conversation_id is None:
            return None
        note = self.runtime.store.notes.get(conversation_id, PLAN_NOTE_ID)
        try:
            return json.loads(note.content) if note is not None else None
        except ValueError:
            return None

    # -- the decisions --------------------------------------------------------------------
    async def approve(
        self, plan: Plan, *, mode: str = DEFAULT_RUN_MODE, fresh: bool = True
    ) -> TurnResult:
        """Run ``plan`` (as approved, maybe edited) in ``mode``: a new turn, in a fresh
        conversation when ``fresh``, its steps the todo list."""
        runtime = self.runtime
        if mode == PLAN_MODE:
            raise UserRequestError(
                "a plan runs in a mode that may change files: choose read-only, ask, "
                "auto-edit or yolo"
            )
        runtime.set_permission_mode(mode)
        origin = self.pending.origin() if self.pending is not None else None
        self.pending = None
        if fresh:
            runtime.conversations.new(f"Plan: {plan.title}"[:120])
        conversation_id = runtime.conversations.ensure()
        if fresh and origin is not None:
            conv = runtime.store.conversations.get(conversation_id)
            metadata = dict(conv.metadata or {}) if conv is not None else {}
            metadata[PLANNED_IN_KEY] = origin
            runtime.store.conversations.set_metadata(conversation_id, metadata)
        if origin is not None:
            where = "in a fresh context" if fresh else "here"
            runtime.emit(
                ev.CommandOutput(
                    command=PLAN_NOTICE,
                    text=(
                        f"running the plan “{plan.title}” {where} (planned in turn "
                        f"{origin['turn_id']} of conversation {origin['conversation_id'][:8]})"
                    ),
                    data={PLANNED_IN_KEY: origin, "title": plan.title, "fresh": fresh},
                    role=runtime.active_role,
                )
            )
        self._store(conversation_id, plan, "approved", origin)
        if fresh and origin is not None:  # the planning conversation's note says so too
            self._store(origin["conversation_id"], plan, "approved", origin)
        attach = attachable(plan, runtime.scope.project_root) if fresh else []
        return await runtime.run_turn(
            run_prompt(plan, fresh=fresh, attach=attach),
            todo=todo_items(plan),
            record={PLANNED_IN_KEY: origin} if origin else None,
        )

    async def reject(self, feedback: str) -> TurnResult:
        """Send the user's feedback on the presented plan back to the model (still planning)."""
        if self.pending is not None:
            self._store(
                self.pending.conversation_id, self.pending.plan, "rejected", self.pending.origin()
            )
        self.pending = None
        if self.runtime.permission_mode != PLAN_MODE:
            self.runtime.set_permission_mode(PLAN_MODE)
        return await self.runtime.run_turn(reject_prompt(feedback))

    def start_todo(self, items: list[dict[str, str]], role: str) -> None:
        """Make ``items`` the active conversation's todo list (a plan's run starts)."""
        conversation_id = self.runtime.conversations.ensure()
        todo_tool.save_todo(self.runtime.store, conversation_id, items)
        self.runtime.conversations.todo = list(items)
        self.runtime.emit(ev.TodoUpdated(items=list(items), role=role))
