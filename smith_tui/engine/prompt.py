"""System prompt assembly and the per-request message list.

The system prompt is built from blocks in a fixed order — the role profile
(``data/prompts/<profile>.md``), ``## Project information``, ``## Project
instructions`` (the ``AGENTS.md`` layers, :mod:`smith_tui.engine.instructions`),
``## Project context`` (the index file), then any extra blocks — with empty blocks
skipped and the rest joined by blank lines. It holds no clock value, so the
same inputs always give byte-identical text and the provider can reuse its
prompt cache across requests. The date travels instead in a transient
``[state snapshot]`` user message appended to the tail of each request and
never stored.

:func:`build_messages` is the one way a transcript becomes the messages of a
request: the context window is applied, every message is cut down to its wire
keys (:func:`to_wire`), the system prompt goes first and the snapshot last.
The window's budget is what is left of the context window after the system
prompt, the tool schemas, the snapshot and the output reserve
(:class:`RequestBudget`); when the window leaves out or shortens anything, the
snapshot says so in one line (:data:`PARTIAL_PREFIX`) so the model knows its
view is partial.
Reasoning is never sent back (``reasoning``, ``reasoning_content``,
``reasoning_details`` stay in the stored transcript only): DeepSeek refuses a
request whose history holds ``reasoning_content``, and the other providers in
docs/LLM.md accept a history without it.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from smith_tui.engine.instructions import instructions_block
from smith_tui.engine.prompt_images import images_of, wire_content
from smith_tui.engine.roles import RoleSpec
from smith_tui.engine.scope import TurnScope
from smith_tui.engine.window import WindowResult, WindowSettings, tokens_for_chars
from smith_tui.llm.types import WireMessage

SNAPSHOT_PREFIX = "[state snapshot]"
#: Most project notes ``## Project notes`` lists, and most characters it takes.
MAX_NOTE_TITLES = 40
MAX_NOTES_CHARS = 3_000
PARTIAL_PREFIX = "[partial view]"
#: The size the estimate gives the state snapshot (its text is about 70 characters).
SNAPSHOT_CHARS = 80

#: The keys a stored message keeps on the wire; everything else (``recall_key``,
#: ``metadata``, ``reasoning``, ``reasoning_content``, ``reasoning_details``, …) is local.
WIRE_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class PromptProfileError(LookupError):
    """A role's prompt profile file is missing from the installed package data."""


@functools.cache
def load_profile(profile: str) -> str:
    """Return the text of ``data/prompts/<profile>.md`` shipped in ``smith_tui.data``."""
    # Found by the package's spec, not importlib.resources (whose readers import zipfile).
    spec = importlib.util.find_spec("smith_tui.data")
    try:
        if spec is None or spec.origin is None:
            raise FileNotFoundError("smith_tui.data")
        resource = Path(spec.origin).with_name("prompts") / f"{profile}.md"
        return resource.read_text(encoding="utf-8").strip()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise PromptProfileError(
            f"prompt profile {profile!r} not found (expected data/prompts/{profile}.md in the "
            "smith_tui package; reinstall smith or check the role's prompt_profile)"
        ) from None


def project_information(scope: TurnScope | None) -> str:
    """Return the ``## Project information`` block, listing only what is known."""
    if scope is None:
        return ""
    rows = [
        ("CWD", scope.cwd),
        ("Repository root", scope.root),
        ("Git origin", scope.origin),
        ("Normalized origin", scope.normalized_origin),
        ("Project ID", scope.project_id),
    ]
    lines = [f"- {label}: {value}" for label, value in rows if value not in (None, "")]
    return "\n".join(["## Project information", *lines]) if lines else ""


def project_context(index_content: str | None) -> str:
    """Return the ``## Project context`` block holding the index file, or ``""``."""
    if not index_content or not index_content.strip():
        return ""
    return "## Project context\n" + index_content.strip("\n")


def project_notes(note_ids: Sequence[str]) -> str:
    """Return the ``## Project notes`` block: the ids (titles) of the project's notes (the
    ``note`` tool), so the model knows what it recorded before; ``""`` when there are none.

    ``note_ids`` come in a stable order (by id). At most :data:`MAX_NOTE_TITLES` ids and
    :data:`MAX_NOTES_CHARS` characters are listed; the block then says how many more there
    are. The notes' text stays behind ``note``.
    """
    if not note_ids:
        return ""
    head = [
        "## Project notes",
        'Notes recorded for this project in earlier work; read one with note(action="get", '
        'id="...") when it may help:',
    ]
    lines: list[str] = []
    size = sum(len(line) + 1 for line in head)
    for note_id in note_ids:
        line = f"- {note_id}"
        if len(lines) >= MAX_NOTE_TITLES or size + len(line) + 1 > MAX_NOTES_CHARS:
            break
        lines.append(line)
        size += len(line) + 1
    rest = len(note_ids) - len(lines)
    if rest:
        lines.append(f'- … and {rest} more (note(action="list") lists them all)')
    return "\n".join([*head, *lines])


PLAN_MODE_BLOCK = """## Plan mode
You are planning, not doing: the permission mode is `plan`. Only reading tools and explorer
dispatches run; edits, writes, workers and other changes are refused. Research what the
task needs, then call `present_plan` once, last, with a title, the steps in order, the
project files you expect to change or create, and the risks. The user approves, edits or
rejects the plan; nothing is changed before that."""


def plan_mode_block(permissions: Any, job_id: str | None) -> str:
    """The system-prompt block of a top-level turn in plan mode (``""`` otherwise): the
    ``permissions`` gate's mode is ``plan`` (engine/plans.py)."""
    if job_id is None and getattr(permissions, "mode", None) == "plan":
        return PLAN_MODE_BLOCK
    return ""


def build_system_prompt(
    role_spec: RoleSpec,
    scope: TurnScope | None = None,
    index_content: str | None = None,
    extra_blocks: Iterable[str] = (),
) -> str:
    """Assemble the system prompt for ``role_spec``.

    ``index_content`` defaults to ``scope.index_content``. Blocks that are
    empty (or only whitespace) are skipped; the others are joined by one
    blank line. The result depends only on the arguments.
    """
    if index_content is None and scope is not None:
        index_content = scope.index_content
    blocks = [
        # A sub-agent from an agent file brings its own profile (engine/agents.py).
        role_spec.prompt_text or load_profile(role_spec.prompt_profile),
        project_information(scope),
        instructions_block(scope.instructions) if scope is not None else "",
        project_context(index_content),
        *extra_blocks,
    ]
    return "\n\n".join(block.strip("\n") for block in blocks if block and block.strip())


def build_state_snapshot(now: datetime) -> WireMessage:
    """Return the transient ``[state snapshot]`` user message for ``now``.

    It names the calendar date, weekday and UTC offset (a naive ``now`` is
    taken as local time). The dict is wire-clean (no local marker keys) so it
    can be appended to a request as is; it must never be persisted.
    """
    if now.tzinfo is None or now.utcoffset() is None:
        now = now.astimezone()
    offset = now.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    sign = "+" if minutes >= 0 else "-"
    hours, mins = divmod(abs(minutes), 60)
    text = (
        f"{SNAPSHOT_PREFIX} date {now:%Y-%m-%d}, {_WEEKDAYS[now.weekday()]}, "
        f"timezone UTC{sign}{hours:02d}:{mins:02d}"
    )
    return {"role": "user", "content": text}


def to_wire(message: Mapping[str, Any]) -> WireMessage:
    """Return the Chat-Completions part of one stored message (a new dict).

    Only :data:`WIRE_KEYS` are kept; an empty ``tool_calls`` list and a
    ``tool_call_id`` outside a tool result are dropped, and a missing content
    becomes ``""`` except on an assistant message (which may hold only calls).
    """
    # The keys are WireMessage's by WIRE_KEYS; their values are as the transcript holds them.
    wire = cast(WireMessage, {k: v for k, v in message.items() if k in WIRE_KEYS})
    if wire.get("role") == "assistant" and not wire.get("tool_calls"):
        wire.pop("tool_calls", None)
    if wire.get("role") != "tool":
        wire.pop("tool_call_id", None)
    if wire.get("content") is None and wire.get("role") != "assistant":
        wire["content"] = ""
    images = images_of(message)
    if images:  # a prompt's images go as content parts after its text (engine/prompt_images.py)
        wire["content"] = cast(Any, wire_content(str(wire.get("content") or ""), images))
    return wire


@dataclass(frozen=True)
class RequestBudget:
    """What one request holds besides the history, in estimated tokens.

    ``fixed`` is the system prompt, the tool schemas and the state snapshot;
    ``reserve`` is kept free for the answer: the model's max output tokens, or
    ``output_reserve_pct`` of the window when the catalog gives none (at most
    half the window either way: a catalog entry that claims the whole window
    for output would leave nothing for the prompt).
    """

    context_window: int
    fixed: int
    reserve: int

    @classmethod
    def of(
        cls,
        system_prompt: str,
        tools: Sequence[Mapping[str, Any]] | None,
        context_window: int,
        max_output_tokens: int | None = None,
        settings: WindowSettings | None = None,
    ) -> RequestBudget:
        """The budget of a request with this system prompt and these tool schemas."""
        settings = settings or WindowSettings()
        tools_chars = len(json.dumps(list(tools), default=str)) if tools else 0
        fixed = tokens_for_chars(len(system_prompt) + tools_chars + SNAPSHOT_CHARS)
        if max_output_tokens:
            reserve = max_output_tokens
        else:
            reserve = int(context_window * settings.output_reserve_pct / 100)
        return cls(context_window, fixed, min(reserve, context_window // 2))

    @property
    def overhead(self) -> int:
        """Tokens the request takes besides the history."""
        return self.fixed + self.reserve


def window_history(
    history: Sequence[Mapping[str, Any]],
    budget: RequestBudget,
    window: WindowSettings | None = None,
    *,
    trim: bool = True,
) -> WindowResult:
    """The context window applied to ``history`` within ``budget`` (``trim=False``: elide only)."""
    settings = window or WindowSettings()
    return settings.apply(
        history, budget.context_window, reserved_tokens=budget.overhead, trim=trim
    )


def estimate_request(
    history: Sequence[Mapping[str, Any]],
    budget: RequestBudget,
    window: WindowSettings | None = None,
) -> int:
    """The estimated size of a request of ``history`` before anything is dropped.

    Old tool output is elided as usual; nothing is dropped, so the figure says
    how full the window would be without the drop step (compaction compares it
    with ``compact_threshold_pct``).
    """
    return budget.overhead + window_history(history, budget, window, trim=False).estimated_tokens


def partial_line(result: WindowResult) -> str:
    """The one line telling the model its view of the history is partial (``""`` if not)."""
    parts = []
    if result.dropped_rounds:
        parts.append(f"{result.dropped_rounds} older rounds or messages left out")
    if result.elided_count:
        parts.append(f"{result.elided_count} old tool outputs elided")
    if result.cut_count:
        parts.append(f"{result.cut_count} tool outputs cut to fit")
    if result.dropped_images:
        parts.append(f"{result.dropped_images} older prompts' images left out")
    if not parts:
        return ""
    return f"{PARTIAL_PREFIX} {', '.join(parts)} to fit the context window."


def build_messages(
    system_prompt: str,
    history: Sequence[Mapping[str, Any]],
    now: datetime,
    *,
    context_window: int = 128_000,
    window: WindowSettings | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    max_output_tokens: int | None = None,
    budget: RequestBudget | None = None,
) -> list[WireMessage]:
    """Return the messages of one request: ``[system] + history + [state snapshot]``.

    ``history`` goes through the context window first (``window``, default
    settings when ``None``) within what the system prompt, the ``tools``
    schemas, the snapshot and the output reserve leave of ``context_window``
    (``budget``, computed from those when not given); the snapshot is added
    after, so the window never mistakes it for the latest user message, and it
    carries the :func:`partial_line` when the window left anything out. Every
    history message is cut to its wire form (:func:`to_wire`). ``history``
    itself is never modified.
    """
    if budget is None:
        budget = RequestBudget.of(system_prompt, tools, context_window, max_output_tokens, window)
    result = window_history(history, budget, window)
    snapshot = build_state_snapshot(now)
    line = partial_line(result)
    if line:
        snapshot["content"] = f"{snapshot['content']}\n{line}"
    return [
        {"role": "system", "content": system_prompt},
        *(to_wire(message) for message in result.messages),
        snapshot,
    ]
