"""Compaction: the older part of a conversation summarised by the model (docs/DESIGN.md §5.4).

When a request would fill more than ``context_management.compact_threshold_pct`` of the
window (or on ``/compact``, or when the server refused a request as too long), the
conversation is cut in two at a tool-pair-safe point (:func:`choose_cut`): the older part
goes to the model in a *summary request* (no tools offered) and the newer part, the kept
tail, stays as it is. From then on every request sees ``[summary] + kept tail``
(:meth:`Compactor.view`); the stored transcript is never changed, so the pager, the
inspect screen and history search still show everything.

The compaction is durable: its :class:`CompactionRecord` (the boundary and the summary) is
the conversation note ``compaction`` (one active compaction per conversation; a new one
replaces it and summarises the old summary with what followed it). The boundary is the
stored position of the first kept message plus a check of its content, so a restart or
``--continue`` rebuilds the same view, and a boundary that cannot be found (the message
was edited or removed) means the full history is used.

What must not be lost to a summary is put back in every request after a compaction: the
project index file is part of the system prompt anyway, and the summary message carries
the active todo list and the pinned project notes (ids starting with
:data:`PINNED_NOTE_PREFIX`) read fresh each time.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from smith_tui.cancel import CancelToken
from smith_tui.engine import events as ev
from smith_tui.engine.errors import AgentFailure
from smith_tui.engine.hooks.hook_set import Asker
from smith_tui.engine.prompt import RequestBudget, estimate_request
from smith_tui.engine.retry import Attempt, RetryPolicy, call_with_retries
from smith_tui.engine.window import CHARS_PER_TOKEN, WindowSettings, message_chars
from smith_tui.errors import SmithError
from smith_tui.llm import ChatRequest, ChatResponse, StreamHandlers, WireMessage
from smith_tui.tools.builtin.todo import load_todo, render_todo

log = logging.getLogger(__name__)

COMPACTION_NOTE_ID = "compaction"
"""The conversation note holding the active :class:`CompactionRecord`."""
PINNED_NOTE_PREFIX = "pinned/"
"""Project notes whose id starts with this are put back in every request after a compaction."""
SUMMARY_PREFIX = "[conversation summary]"
KEEP_SHARE = 0.3
"""About this share of the window is kept verbatim after a compaction (the newest messages)."""
AUTO_MIN_SHARE = 0.05
"""An automatic compaction needs an older part of at least this share of the window: below
it a summary saves too little, and the window's drop and cut steps do better."""
MANUAL_KEEP_TURNS = 2
"""``/compact`` keeps this many of the newest turns verbatim (fewer when the conversation
has no more), whatever the window size: the user asked for a summary now."""
RENDER_RESULT_CHARS = 2_000
RENDER_ARGS_CHARS = 400
SUMMARY_OVERHEAD_TOKENS = 1_000
"""What the summary request holds besides the rendered conversation (instructions, slack)."""

SUMMARY_INSTRUCTIONS = """\
You write the working summary of a conversation between a user and a coding agent. The
agent continues the work from your summary and the newest messages only, so keep what it
needs: the user's goals and requests (in their words where it matters), decisions and
their reasons, files, functions and commands involved, what is done, what is left, errors
met and how they were solved, and anything the user asked to remember. Be concrete
(paths, names, numbers). Plain text, no preamble, at most about 600 words."""


class CompactionError(SmithError):
    """A compaction that could not be made; the message says why."""

    code = "compaction"


@dataclass(frozen=True)
class CompactionRecord:
    """The active compaction of a conversation: where the kept tail starts and the summary."""

    boundary_position: int
    """The stored position of the first kept message (``-1``: not stored, this turn only)."""
    boundary_check: str
    """:func:`message_check` of that message, to tell it was not edited or replaced."""
    summary: str
    reason: str
    """``auto``, ``manual`` or ``overflow``."""
    summarised: int
    """How many messages the summary stands for."""
    kept: int
    tokens_before: int
    tokens_after: int
    focus: str | None = None
    created_at: float = 0.0

    def to_json(self) -> str:
        """The note text."""
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CompactionRecord | None:
        """The record in a note, or ``None`` when the note is not one."""
        try:
            data = json.loads(text)
            return cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})
        except (TypeError, ValueError, KeyError):
            return None


def load_record(store: Any, conversation_id: str) -> CompactionRecord | None:
    """The active compaction of ``conversation_id`` (``None`` when there is none)."""
    note = store.notes.get(conversation_id, COMPACTION_NOTE_ID)
    return None if note is None else CompactionRecord.from_json(note.content)


def save_record(store: Any, conversation_id: str, record: CompactionRecord) -> None:
    """Make ``record`` the active compaction of ``conversation_id``."""
    store.notes.put(conversation_id, COMPACTION_NOTE_ID, record.to_json())


def message_check(message: Mapping[str, Any]) -> str:
    """A short digest of what a message says (role, content, call ids)."""
    calls = [c.get("id") for c in message.get("tool_calls") or () if isinstance(c, Mapping)]
    content = message.get("content")
    text = json.dumps(
        [message.get("role"), content if isinstance(content, str) else str(content), calls,
         message.get("tool_call_id")],
        ensure_ascii=False,
    )  # fmt: skip
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def find_boundary(messages: Sequence[Mapping[str, Any]], record: CompactionRecord) -> int | None:
    """The index in ``messages`` where the record's kept tail starts, or ``None``."""
    position = record.boundary_position
    for index in range(len(messages) - 1, -1, -1):
        found = messages[index].get("position")
        if found == position:
            return index if message_check(messages[index]) == record.boundary_check else None
        if isinstance(found, int) and found < position:
            break
    return None


def choose_cut(messages: Sequence[Mapping[str, Any]], lo: int, keep_chars: int) -> int | None:
    """Where the kept tail should start: after ``lo``, tool-pair safe, about ``keep_chars`` long.

    The tail is the newest messages up to ``keep_chars`` characters, moved to the nearest
    safe point: newer first (so the tail does not grow past the budget, but it always
    holds the newest unit), else older. A tail never starts on a tool result, and no
    call before the cut may have a result after it (strict providers refuse a result
    without its call, and a call without its results). ``None`` when no safe cut leaves
    something older to summarise.

    Walks back from the end only as far as the answer, so the cost follows the kept
    tail, not the length of the conversation.
    """
    count = len(messages)
    if count - lo < 2:
        return None
    newest = count - 1  # the newest unit: the last message, or the last calls with results
    while newest > lo and messages[newest].get("role") == "tool":
        newest -= 1
    size = 0
    start = count
    while start > lo + 1:
        size += message_chars(messages[start - 1])
        if size > keep_chars:
            break
        start -= 1
    start = min(start, newest)

    pending: set[Any] = set()  # results at or after the index whose call is not yet seen
    known_calls: set[Any] | None = None  # every call id, gathered only if a result is pending
    best: int | None = None
    for index in range(count - 1, lo, -1):
        message = messages[index]
        role = message.get("role")
        if role == "tool":
            pending.add(message.get("tool_call_id"))
            continue
        for call in message.get("tool_calls") or ():
            if isinstance(call, Mapping):
                pending.discard(call.get("id"))
        if pending:
            if known_calls is None:
                known_calls = {
                    call.get("id")
                    for m in messages
                    for call in m.get("tool_calls") or ()
                    if isinstance(call, Mapping)
                }
            pending &= known_calls  # a result no call asked for ties nothing to the cut
            if pending:
                continue  # a call before this index has a result after it
        if index <= newest:
            if index >= start:
                best = index  # keep walking: a smaller safe index may still be >= start
            else:
                return best if best is not None else index
    return best


def turn_cut(messages: Sequence[Mapping[str, Any]], lo: int, keep_turns: int) -> int | None:
    """Where the newest ``keep_turns`` turns start (a turn starts at a user message),
    keeping at least one turn after ``lo`` to summarise; ``None`` when there is none.

    A user message is tool-pair safe: every call before it has its results before it.
    """
    starts = [
        index
        for index in range(lo + 1, len(messages))
        if messages[index].get("role") == "user" and not messages[index].get("transient")
    ]
    if not starts:
        return None
    return starts[max(0, len(starts) - keep_turns)]


def measured_context(store: Any, conversation_id: str) -> int | None:
    """The context of the conversation's last top-level request as the server counted it
    (prompt plus answer tokens; the usage pane's gauge), or ``None`` before any, or when
    a compaction came after it (the figure no longer describes the view)."""
    if store is None:
        return None
    try:
        records = store.usage.list_for_conversation(conversation_id)
        record = load_record(store, conversation_id)
    except Exception:
        log.exception("reading the usage of %s failed", conversation_id)
        return None
    top = [r for r in records if r.job_id is None]
    if not top or (record is not None and record.created_at >= top[-1].created_at):
        return None
    return int(top[-1].input_tokens or 0) + int(top[-1].output_tokens or 0) or None


def render_older(
    messages: Sequence[Mapping[str, Any]],
    lo: int,
    hi: int,
    limit_chars: int,
    previous: str | None = None,
) -> str:
    """``messages[lo:hi]`` as plain text for the summary request, newest kept when too long.

    Tool results and call arguments are shortened; when everything does not fit
    ``limit_chars`` the oldest messages are left out (and said so). ``previous`` is the
    summary of what came before ``lo``, put first.
    """
    head = f"Summary of the earlier part:\n{previous.strip()}\n\n" if previous else ""
    room = max(0, limit_chars - len(head))
    parts: list[str] = []
    used = 0
    index = hi
    while index > lo:
        text = _render(messages[index - 1])
        if text is None:
            index -= 1
            continue
        if used + len(text) + 2 > room and parts:
            break
        parts.append(text)
        used += len(text) + 2
        index -= 1
    skipped = sum(1 for m in messages[lo:index] if not m.get("transient"))
    if skipped:
        parts.append(f"[{skipped} older messages left out: they did not fit]")
    return head + "\n\n".join(reversed(parts))


def _render(message: Mapping[str, Any]) -> str | None:
    if message.get("transient"):
        return None
    role = message.get("role")
    content = message.get("content")
    text = content if isinstance(content, str) else ("" if content is None else str(content))
    if role == "tool":
        name = message.get("name") or "tool"
        if len(text) > RENDER_RESULT_CHARS:
            text = text[:RENDER_RESULT_CHARS] + f"… ({len(text)} chars in all)"
        return f"Tool result ({name}):\n{text}"
    lines = [f"{'User' if role == 'user' else 'Assistant'}: {text}".rstrip()]
    for call in message.get("tool_calls") or ():
        fn = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(fn, Mapping):
            args = str(fn.get("arguments") or "")
            if len(args) > RENDER_ARGS_CHARS:
                args = args[:RENDER_ARGS_CHARS] + "…"
            lines.append(f"  -> {fn.get('name')}({args})")
    return "\n".join(lines)


def summary_message(
    record: CompactionRecord,
    todo: Sequence[Mapping[str, Any]] = (),
    pinned: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    """The transient message that stands for the summarised part in every request after it."""
    parts = [
        f"{SUMMARY_PREFIX} The earlier part of this conversation ({record.summarised} "
        "messages) was summarised to save context; the full history stays on record.",
        record.summary.strip(),
    ]
    if todo:
        parts.append("Current todo list:\n" + render_todo([dict(item) for item in todo]))
    if pinned:
        parts.append(
            "Pinned project notes:\n" + "\n\n".join(f"[{nid}]\n{text}" for nid, text in pinned)
        )
    return {"role": "user", "content": "\n\n".join(parts), "transient": True}


@dataclass(frozen=True)
class CompactionContext:
    """What a compaction needs: where it is stored, the model, the request budget."""

    conversation_id: str
    llm: Any
    model: str
    budget: RequestBudget
    window: WindowSettings
    emit: Callable[[ev.Event], None]
    store: Any = None
    project_id: str | None = None
    role: str = "direct"
    job_id: str | None = None
    turn_id: str | None = None
    cancel: CancelToken | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_output_tokens: int | None = None
    hooks: Any = None
    """The session's hooks (``engine.hooks.Hooks``): ``PreCompact`` runs first, and may block."""


class RequestModel(Protocol):
    """The model a request goes to and its limits (a ``ModelSelection``, a turn's setup)."""

    @property
    def model(self) -> str: ...
    @property
    def context_window(self) -> int: ...
    @property
    def max_output_tokens(self) -> int | None: ...


def build_compactor(
    conversation_id: str,
    target: RequestModel,
    *,
    system_prompt: str,
    tools: Sequence[Mapping[str, Any]] | None,
    window: WindowSettings,
    retry: RetryPolicy,
    role: str,
    project_id: str | None,
    llm: Any,
    emit: Callable[[ev.Event], None],
    store: Any,
    hooks: Any,
    turn_id: str | None = None,
    job_id: str | None = None,
    cancel: CancelToken | None = None,
) -> Compactor:
    """The compactor of requests to ``target`` with this system prompt and these tools.

    The one place a :class:`Compactor` is wired: a turn's model requests (automatic
    compaction, with the turn's id, job and cancel token) and ``/compact`` (none of those).
    Its request budget (``compactor.context.budget``) is the one those requests have.
    """
    budget = RequestBudget.of(
        system_prompt, tools, target.context_window, target.max_output_tokens, window
    )
    return Compactor(
        CompactionContext(
            conversation_id=conversation_id,
            llm=llm,
            model=target.model,
            budget=budget,
            window=window,
            emit=emit,
            store=store,
            project_id=project_id,
            role=role,
            job_id=job_id,
            turn_id=turn_id,
            cancel=cancel,
            retry=retry,
            max_output_tokens=target.max_output_tokens,
            hooks=hooks,
        )
    )


class Compactor:
    """The compaction state of one conversation as a turn (or ``/compact``) sees it."""

    def __init__(self, context: CompactionContext) -> None:
        self.context = context
        self.record: CompactionRecord | None = None
        self._boundary: int | None = None
        """Where the kept tail starts in the transcript (it only grows, so the index holds)."""
        self._loaded = False
        self.auto_failed = False
        """An automatic compaction failed in this turn; it is not tried again."""
        self._estimated: tuple[tuple[int, int | None], int] | None = None
        self._raw: tuple[int | None, int, int] = (None, 0, 0)
        """``(boundary, counted up to, chars)``: the raw size of the tail, kept up to date as
        the transcript grows, so most requests need no estimate pass over the history."""

    # -- the view -----------------------------------------------------------------------
    def boundary(self, transcript: Sequence[Mapping[str, Any]]) -> int | None:
        """Where the kept tail starts in ``transcript`` (``None``: no compaction applies)."""
        if self._boundary is not None:
            return self._boundary
        if not self._loaded:
            self._loaded = True
            store = self.context.store
            if store is not None:
                try:
                    self.record = load_record(store, self.context.conversation_id)
                except Exception:
                    log.exception(
                        "reading the compaction of %s failed", self.context.conversation_id
                    )
            if self.record is not None:
                self._boundary = find_boundary(transcript, self.record)
        return self._boundary

    def view(self, transcript: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """What requests see: ``[summary] + kept tail`` after a compaction, else everything."""
        start = self.boundary(transcript)
        if start is None or self.record is None:
            return list(transcript)
        todo, pinned = self._reinjected()
        return [summary_message(self.record, todo, pinned), *transcript[start:]]

    def _reinjected(self) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
        store = self.context.store
        if store is None:
            return [], []
        try:
            todo = load_todo(store, self.context.conversation_id)
            notes = (
                store.project_memory.list(self.context.project_id, prefix=PINNED_NOTE_PREFIX)
                if self.context.project_id
                else []
            )
        except Exception:
            log.exception("reading the todo list and pinned notes failed")
            return [], []
        return todo, [(n.note_id, n.content) for n in notes]

    def estimate(self, transcript: Sequence[Mapping[str, Any]]) -> int:
        """The request estimate of the current view, nothing dropped.

        The last figure is kept, so the compaction that follows a threshold check does
        not make the same pass over the history again.
        """
        key = (len(transcript), self.boundary(transcript))
        if self._estimated is not None and self._estimated[0] == key:
            return self._estimated[1]
        value = estimate_request(self.view(transcript), self.context.budget, self.context.window)
        self._estimated = (key, value)
        return value

    def over_threshold(self, transcript: Sequence[Mapping[str, Any]]) -> bool:
        """Whether the view passes ``compact_threshold_pct`` of the window.

        The raw size of the view (nothing elided) is an upper bound kept up to date as
        the transcript grows; only when it passes the threshold is the estimate made
        (an elision pass over the history).
        """
        budget = self.context.budget
        limit = budget.context_window * self.context.window.compact_threshold_pct / 100
        start = self.boundary(transcript)
        lo = start or 0
        known, upto, chars = self._raw
        if known != start or upto > len(transcript):
            upto, chars = lo, 0
        chars += sum(message_chars(m) for m in transcript[upto:])
        self._raw = (start, len(transcript), chars)
        if self.record is not None and start is not None:
            chars += message_chars(summary_message(self.record, *self._reinjected()))
        if budget.overhead + chars // CHARS_PER_TOKEN + 1 <= limit:
            return False
        return self.estimate(transcript) > limit

    # -- compacting ---------------------------------------------------------------------
    def plan(
        self,
        transcript: Sequence[Mapping[str, Any]],
        min_older_tokens: int = 0,
        keep_turns: int | None = None,
    ) -> tuple[int, int, str]:
        """Where to cut and the text of the summary request: ``(lo, cut, rendered)``.

        The kept tail is about :data:`KEEP_SHARE` of the window; with ``keep_turns`` it
        is at most the newest ``keep_turns`` turns (``/compact``), so a large window
        does not keep everything. Raises :class:`CompactionError` when there is nothing
        older to summarise, or less than ``min_older_tokens`` of it.
        """
        budget = self.context.budget
        lo = self.boundary(transcript) or 0
        keep_chars = int(budget.context_window * KEEP_SHARE) * CHARS_PER_TOKEN
        cut = choose_cut(transcript, lo, keep_chars)
        if keep_turns is not None:
            by_turns = turn_cut(transcript, lo, keep_turns)
            if by_turns is not None and (cut is None or by_turns > cut):
                cut = by_turns
        if cut is None:
            raise CompactionError(
                "there is nothing older to summarise: the conversation since the last "
                "compaction is a single exchange"
            )
        if min_older_tokens > 0:
            older = 0
            for message in transcript[lo:cut]:
                older += message_chars(message)
                if older >= min_older_tokens * CHARS_PER_TOKEN:
                    break
            else:
                raise CompactionError(
                    "the older part is too small to be worth a summary "
                    f"(about {older // CHARS_PER_TOKEN} tokens)"
                )
        room = int(budget.context_window * 0.9) - budget.reserve - SUMMARY_OVERHEAD_TOKENS
        previous = self.record.summary if self.record is not None and lo else None
        rendered = render_older(
            transcript, lo, cut, max(4_000, room * CHARS_PER_TOKEN), previous=previous
        )
        return lo, cut, rendered

    async def _pre_compact(self, reason: str, focus: str | None) -> None:
        """``PreCompact`` hooks; one that blocks (exit 2, ``decision: block``) stops it."""
        ctx = self.context
        asker = Asker(ctx.role, ctx.job_id, ctx.turn_id, None, ctx.cancel)
        answer = await ctx.hooks.pre_compact(reason, focus, asker)
        if answer.blocked or answer.stop:
            raise CompactionError(
                f"a PreCompact hook blocked compaction: {answer.reason or 'no reason given'}"
            )

    async def compact(
        self,
        transcript: Sequence[Mapping[str, Any]],
        *,
        reason: str,
        focus: str | None = None,
        min_older_tokens: int = 0,
        keep_turns: int | None = None,
        measured_before: int | None = None,
    ) -> CompactionRecord:
        """Summarise the older part of ``transcript``; the new record is active from then on.

        ``keep_turns``: see :meth:`plan`. ``measured_before``: the context as the server
        counted it (:func:`measured_context`); the before and after figures are then in
        its terms (the estimates' ratio applied to it), so they match the usage pane.
        Raises :class:`CompactionError` when there is nothing (or less than
        ``min_older_tokens``) to summarise or the summary request fails.
        """
        ctx = self.context
        before = self.estimate(transcript)
        _, cut, rendered = self.plan(transcript, min_older_tokens, keep_turns)
        if ctx.hooks is not None:
            await self._pre_compact(reason, focus)
        summary = await self._summarise(rendered, focus)
        first = transcript[cut]
        position = first.get("position")
        record = CompactionRecord(
            boundary_position=position if isinstance(position, int) else -1,
            boundary_check=message_check(first),
            summary=summary,
            reason=reason,
            summarised=cut,
            kept=len(transcript) - cut,
            tokens_before=before,
            tokens_after=0,
            focus=focus,
            created_at=time.time(),
        )
        self.record, self._boundary, self._loaded = record, cut, True
        after = self.estimate(transcript)
        if measured_before and before > 0:
            before, after = measured_before, round(after * measured_before / before)
        record = CompactionRecord(
            **{**asdict(record), "tokens_before": before, "tokens_after": after}
        )
        self.record = record
        if ctx.store is not None and record.boundary_position >= 0:
            save_record(ctx.store, ctx.conversation_id, record)
        ctx.emit(
            ev.ContextCompacted(
                conversation_id=ctx.conversation_id,
                turn_id=ctx.turn_id,
                reason=reason,
                summarised=record.summarised,
                kept=record.kept,
                tokens_before=before,
                tokens_after=after,
                summary=summary,
                role=ctx.role,
                job_id=ctx.job_id,
            )
        )
        return record

    async def _summarise(self, rendered: str, focus: str | None) -> str:
        ctx = self.context
        instructions = SUMMARY_INSTRUCTIONS
        if focus:
            instructions += f"\n\nThe user asks the summary to focus on: {focus}"
        messages: list[WireMessage] = [
            {"role": "system", "content": instructions},
            {"role": "user", "content": "Summarise this conversation:\n\n" + rendered},
        ]
        cancel = ctx.cancel or CancelToken.new_root()
        try:
            response: ChatResponse = await call_with_retries(
                functools.partial(self._attempt, messages, cancel),
                lambda r: not (r.content or "").strip(),
                ctx.retry,
                cancel,
                lambda *_: None,
                lambda _: None,
            )
        except AgentFailure as exc:
            raise CompactionError(f"the summary request failed: {exc.error.message}") from None
        return (response.content or "").strip()

    async def _attempt(
        self, messages: list[WireMessage], cancel: CancelToken, attempt: Attempt
    ) -> ChatResponse:
        ctx = self.context
        request = ChatRequest(
            model=ctx.model,
            messages=messages,
            tools=None,
            stream=True,
            max_new_tokens=ctx.max_output_tokens or None,
            cancel=cancel,
        )
        response: ChatResponse = await ctx.llm.chat_stream(request, StreamHandlers())
        return response
