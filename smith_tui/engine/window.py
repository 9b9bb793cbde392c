"""The context-window policy applied to the model-bound copy of a transcript.

Before every model call :func:`smith_tui.engine.prompt.build_messages` runs the
history through :func:`apply_window` (with :class:`WindowSettings`, and the system
prompt's share taken off the window), which has two layers (docs/DESIGN.md §5.4):

1. **Elide** old tool output: tool results outside the most recent
   ``tool_output_keep_rounds`` tool-call rounds that are longer than
   ``tool_output_elide_over_chars`` become a short placeholder. When the
   message carries a ``recall_key`` the placeholder says how to get it back.
2. **Drop** under token pressure: when the chars/4 estimate exceeds
   ``context_window * trim_threshold_pct / 100`` (less ``reserved_tokens``, the
   share the system prompt, tool schemas, snapshot and output reserve take) the
   oldest whole rounds and messages are dropped until it fits. Images go first: when
   something would be dropped, the images of older user messages (engine/prompt_images.py,
   counted as :func:`~smith_tui.engine.prompt_images.image_tokens` each) are left out, oldest
   first, each leaving a line ``[image shot.png left out to fit the context window]``,
   until the rest fits or none is left but the latest prompt's.

Invariants: the first system message, the most recent user message, any
message marked ``transient`` and a tool-call round that is the newest unit
are always kept; when that round does not fit, its tool results
are cut to fit with a marker naming the ``recall`` key of the whole output
(:func:`cut_marker`). An assistant ``tool_calls``
message is kept only together with all of its results, and a tool result only
together with its assistant message. The input list and its dicts are never
mutated; rewritten messages are shallow copies, untouched ones are returned as
the same objects.

Messages are Chat-Completions wire dicts that may carry extra local keys such
as ``recall_key``; :func:`smith_tui.engine.prompt.to_wire` strips those when
:func:`smith_tui.engine.prompt.build_messages` builds a request.
"""

from __future__ import annotations

import dataclasses
import json
import math
import operator
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from smith_tui.config.schema import ContextManagement, SmithConfig
from smith_tui.engine.prompt_images import image_tokens, images_of, without_images

Message = Mapping[str, Any]

#: Characters per estimated token (no tokenizer is available).
CHARS_PER_TOKEN = 4

_CALL_ID = operator.itemgetter("id")

#: Elision placeholders by size, or by ``(size, recall_key)``; see :func:`_placeholder`.
_PLACEHOLDERS: dict[int | tuple[int, str], str] = {}
_PLACEHOLDERS_MAX = 1 << 15


@dataclass(frozen=True)
class WindowResult:
    """The outcome of :func:`apply_window`.

    ``dropped_rounds`` counts dropped units (a whole tool-call round or a single
    message). ``dropped_invalid`` counts messages removed from the kept part
    because they broke the call/result pairing in the input (orphan results,
    unanswered calls); anything before the drop point is dropped anyway.
    ``estimated_tokens`` is the chars/4 estimate of the returned messages.
    ``cut_count`` counts tool results of the newest round cut to fit.
    """

    messages: list[Message]
    elided_count: int
    dropped_rounds: int
    estimated_tokens: int
    dropped_invalid: int = 0
    cut_count: int = 0
    dropped_images: int = 0
    """Images of older prompts left out (the messages themselves kept)."""

    @property
    def partial(self) -> bool:
        """Whether the model sees less than the whole history (dropped, elided or cut)."""
        return bool(
            self.dropped_rounds or self.elided_count or self.cut_count or self.dropped_images
        )


class WindowSettings(ContextManagement):
    """The ``context_management.*`` settings :func:`apply_window` takes.

    The schema's table itself (frozen, typed), so its defaults are the schema's.
    """

    @classmethod
    def from_config(cls, config: SmithConfig) -> WindowSettings:
        """The ``context_management`` table of a validated config."""
        return cls.model_validate(config.context_management.model_dump())

    def apply(
        self,
        messages: Sequence[Message],
        context_window: int,
        *,
        reserved_tokens: int = 0,
        trim: bool = True,
    ) -> WindowResult:
        """:func:`apply_window` with these settings (``trim=False``: elide only, drop nothing)."""
        return apply_window(
            messages,
            enabled=self.enabled,
            tool_output_keep_rounds=self.tool_output_keep_rounds,
            tool_output_elide_over_chars=self.tool_output_elide_over_chars,
            trim_threshold_pct=self.trim_threshold_pct,
            context_window=context_window,
            reserved_tokens=reserved_tokens if trim else 0,
            trim=trim,
        )


def tokens_for_chars(chars: int) -> int:
    """Return the chars/4 token estimate for ``chars`` characters (rounded up)."""
    return -(-chars // CHARS_PER_TOKEN)


def message_chars(message: Message) -> int:
    """Return the size in characters the estimate counts for one message.

    Counts the text content (string or text parts) plus, for assistant tool
    calls, each function name and its arguments.
    """
    content = message.get("content")
    size = len(content) if type(content) is str else _parts_chars(content)
    calls = message.get("tool_calls")
    if calls:
        size += _calls_chars(calls)
    if "metadata" in message:
        size += image_chars(message)
    return size


def image_chars(message: Message) -> int:
    """The characters the estimate counts for a user message's images (their
    :func:`~smith_tui.engine.prompt_images.image_tokens` × :data:`CHARS_PER_TOKEN`)."""
    return CHARS_PER_TOKEN * sum(map(image_tokens, images_of(message)))


def estimate_tokens(messages: Sequence[Message]) -> int:
    """Return the chars/4 token estimate for a list of messages."""
    return tokens_for_chars(sum(map(message_chars, messages)))


def elision_placeholder(chars: int, recall_key: str | None = None) -> str:
    """Return the text that replaces an elided tool result of ``chars`` characters."""
    if recall_key:
        return (
            f"[elided {chars} chars of tool output; retrieve with recall(key={_quote(recall_key)})]"
        )
    return f"[elided {chars} chars of tool output]"


def cut_marker(shown: int, chars: int, recall_key: Any = None) -> str:
    """The line that ends a tool result cut to ``shown`` of its ``chars`` characters."""
    where = (
        f"the whole output: recall(key={_quote(recall_key)})"
        if isinstance(recall_key, str) and recall_key
        else "the rest did not fit the context window"
    )
    return f"\n[cut to fit: {shown} of {chars} chars shown; {where}]"


def _placeholder(chars: int, recall_key: Any) -> str:
    """Return ``elision_placeholder(chars, recall_key)``, remembered in ``_PLACEHOLDERS``.

    The same old outputs are elided again before every model call, so their
    placeholders are kept (up to ``_PLACEHOLDERS_MAX`` of them) rather than
    formatted anew each time.
    """
    if not recall_key:
        slot: int | tuple[int, str] = chars
    elif type(recall_key) is str:
        slot = (chars, recall_key)
    else:
        return elision_placeholder(chars, recall_key)
    text = _PLACEHOLDERS.get(slot)
    if text is None:
        if len(_PLACEHOLDERS) >= _PLACEHOLDERS_MAX:
            _PLACEHOLDERS.clear()
        text = _PLACEHOLDERS[slot] = elision_placeholder(chars, recall_key)
    return text


def _quote(text: str) -> str:
    """Quote ``text`` as a JSON string literal (cheaper than ``json.dumps`` for plain keys)."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return json.dumps(text)


def apply_window(
    messages: Sequence[Message],
    *,
    enabled: bool = True,
    tool_output_keep_rounds: int = 7,
    tool_output_elide_over_chars: int = 1024,
    trim_threshold_pct: float = 90,
    context_window: int = 128_000,
    reserved_tokens: int = 0,
    trim: bool = True,
) -> WindowResult:
    """Elide old tool output and drop old rounds so the transcript fits the window.

    With ``enabled=False`` the messages come back unchanged (in a new list),
    with the token estimate filled in. A placeholder is only used when it is
    shorter than the output it replaces. ``reserved_tokens`` come off the
    budget (what the request holds besides these messages). With
    ``trim=False`` nothing is dropped or cut (the estimate after elision).
    When even the kept messages alone do not fit, they are returned anyway:
    the budget is met whenever possible.
    """
    _check_settings(
        tool_output_keep_rounds, tool_output_elide_over_chars, trim_threshold_pct, context_window
    )
    if not enabled:
        msgs = list(messages)
        return WindowResult(msgs, 0, 0, estimate_tokens(msgs))
    msgs = messages if type(messages) is list else list(messages)  # _walk only reads it
    # ceil(chars / 4) <= budget  <=>  chars <= 4 * floor(budget)
    if trim:
        budget = math.floor(context_window * trim_threshold_pct / 100) - max(0, reserved_tokens)
        limit = CHARS_PER_TOKEN * max(0, budget)
    else:
        limit = sys.maxsize
    keep, elide_over = tool_output_keep_rounds, tool_output_elide_over_chars
    result = _fitted(msgs, keep, elide_over, limit)
    if result.dropped_rounds:
        result = _drop_old_images(msgs, keep, elide_over, limit, result)
    return result


def _fitted(msgs: list[Message], keep: int, elide_over: int, limit: int) -> WindowResult:
    """:func:`_walk`, again with every pinned index given when the lazy walk could not."""
    result = _walk(msgs, keep, elide_over, limit, None)
    if result is None:
        result = _walk(msgs, keep, elide_over, limit, _pinned_indices(msgs))
        assert result is not None  # given every pinned index, the walk always ends in a window
    return result


IMAGE_LEFT_OUT = "[image {name} left out to fit the context window]"
"""The line a message gets in place of an image the window left out."""


def _drop_old_images(
    msgs: list[Message], keep: int, elide_over: int, limit: int, result: WindowResult
) -> WindowResult:
    """Leave out the images of older user messages, oldest first, while the window would
    drop a message: the first fit wins; with every old image out, that window."""
    latest = max((i for i in _fixed_pinned(msgs) if msgs[i].get("role") == "user"), default=-1)
    holders = [
        i
        for i, msg in enumerate(msgs)
        if i != latest and "metadata" in msg and msg.get("role") == "user" and images_of(msg)
    ]
    if not holders:
        return result
    work = list(msgs)
    for count, idx in enumerate(holders, 1):
        msg = work[idx]
        names = [str(image.get("name") or "image") for image in images_of(msg)]
        content = msg.get("content")
        if isinstance(content, str):
            lines = "\n".join(IMAGE_LEFT_OUT.format(name=name) for name in names)
            content = f"{content}\n{lines}" if content else lines
        metadata = msg.get("metadata")
        work[idx] = {
            **msg,
            "content": content,
            "metadata": without_images(
                metadata if isinstance(metadata, Mapping) else {}, "left out"
            ),
        }
        fewer = _fitted(work, keep, elide_over, limit)
        if not fewer.dropped_rounds or count == len(holders):
            return dataclasses.replace(fewer, dropped_images=count)
    return result


def _walk(
    msgs: list[Message], keep_rounds: int, elide_over: int, limit: int, pinned: set[int] | None
) -> WindowResult | None:
    """Keep the newest units that fit in ``limit`` chars, walking back from the end.

    Units (a single message, or an assistant ``tool_calls`` message with its
    results) are kept while they fit next to the pinned messages; the first
    unit that does not fit ends the walk, and everything older is dropped
    except the pinned messages. Keeping the longest newest suffix that fits is
    the same as dropping the oldest units one at a time until the rest fits,
    but it never touches the dropped part beyond a role count. ``msgs`` is only
    read: elided copies go into a copy of it, which the kept part is sliced from.

    With ``pinned=None`` transient messages are not looked for up front (that
    is a pass over every message): the walk pins each one it meets, and looks
    for them only in the dropped part at the end. Since the kept size only
    grows, counting a pinned message late changes nothing as long as the total
    still fits; when it does not, this returns ``None`` and the caller walks
    again with every pinned index given.
    """
    lazy = pinned is None
    if pinned is None:
        pinned = _fixed_pinned(msgs)
    total = sum(message_chars(msgs[i]) for i in pinned)
    work = msgs.copy()
    invalid: list[int] = []  # indices of messages removed for broken pairing
    placeholders = _PLACEHOLDERS
    rounds_seen = elided = cut = 0
    newest = True  # the newest unit: when it is a tool round, it is kept whatever its size
    end = 0  # messages before this index are dropped (pinned ones excepted)
    j = len(msgs) - 1
    while j >= 0:
        msg = msgs[j]
        role = msg.get("role")
        if role != "tool":
            if j in pinned:
                if not msg.get("transient"):
                    newest = False  # the latest user message is newer than any round
            elif role == "assistant" and msg.get("tool_calls"):
                invalid.append(j)  # calls without any result
            elif lazy and msg.get("transient") and not msg.get("tool_calls"):
                total += message_chars(msg)  # pinned, as _pinned_indices would have it
                if total > limit:
                    return None
            else:
                content = msg.get("content")
                if type(content) is not str:
                    size = message_chars(msg)
                elif "metadata" in msg:
                    size = len(content) + image_chars(msg)
                else:
                    size = len(content)
                if total + size > limit:
                    end = j + 1
                    break
                total += size
                newest = False
            j -= 1
            continue

        # A block of tool results msgs[head + 1 : j + 1]; msgs[head] should hold the calls.
        head = j - 1
        while head >= 0:
            head_msg = msgs[head]
            role = head_msg.get("role")
            if role != "tool":
                break
            head -= 1
        if head < 0 or role != "assistant" or not (calls := head_msg.get("tool_calls")):
            invalid.extend(range(head + 1, j + 1))  # tool results with no assistant call
            j = head
            continue
        eliding = rounds_seen >= keep_rounds
        n = j - head
        size = 0
        k = head + 1

        # Fast path for the usual round: dict calls with distinct string ids, string
        # names and arguments, answered one by one in call order by string results. On
        # any other shape it stops short (k <= j) and _general_round does the round.
        if type(calls) is list and len(calls) == n:
            try:
                for call in calls:
                    if type(call) is not dict:
                        break
                    result = msgs[k]
                    cid = call["id"]
                    fn = call["function"]
                    content = result.get("content")
                    if (
                        type(cid) is not str
                        or type(fn) is not dict
                        or type(content) is not str
                        or cid != result.get("tool_call_id")
                    ):
                        break
                    name = fn["name"]
                    args = fn["arguments"]
                    if type(name) is not str or type(args) is not str:
                        break
                    chars = len(content)
                    if eliding and chars > elide_over:
                        key = result.get("recall_key")
                        text = None if key else placeholders.get(chars)
                        if text is None:
                            text = _placeholder(chars, key)
                        if (shorter := len(text)) < chars:
                            work[k] = dict(result, content=text)
                            chars = shorter
                            elided += 1
                    size += len(name) + len(args) + chars
                    k += 1
            except KeyError:
                pass
            if (
                k > j
                and n > 1
                and (
                    calls[0]["id"] == calls[1]["id"]
                    if n == 2
                    else len(set(map(_CALL_ID, calls))) != n
                )
            ):
                k = head  # duplicate ids: the general path rejects the round
        if k <= j:
            elided -= _restore(work, msgs, head + 1, j + 1)
            general = _general_round(calls, msgs, work, head, j, elide_over if eliding else None)
            if general is None:
                invalid.extend(range(head, j + 1))
                j = head - 1
                continue
            size, round_elided, unpaired = general
            elided += round_elided
            invalid.extend(unpaired)
        rounds_seen += 1

        content = head_msg.get("content")
        if type(content) is str:
            size += len(content)
        elif content is not None:
            size += _parts_chars(content)
        if total + size > limit:
            if not newest:
                elided -= _restore(work, msgs, head + 1, j + 1)  # this round is not kept
                end = j + 1
                break
            gone = set(invalid)
            results = [idx for idx in range(head + 1, j + 1) if idx not in gone]
            size, round_cut = _cut_round(work, results, size, limit - total)
            cut += round_cut
        total += size
        newest = False
        j = head - 1

    dropped = 0
    if end:
        if lazy and (older := [i for i in _transient_indices(msgs, end) if i not in pinned]):
            total += sum(message_chars(msgs[i]) for i in older)
            if total > limit:
                return None
            pinned.update(older)
        older_pinned = sorted(i for i in pinned if i < end)
        roles = [m.get("role") for m in msgs[:end]]
        dropped = len(roles) - roles.count("tool") - len(older_pinned)
    out = work[end:] if end else work
    if invalid:
        gone = set(invalid)
        out = [m for idx, m in enumerate(out, end) if idx not in gone]
    if end:
        out[:0] = [msgs[i] for i in older_pinned]
    return WindowResult(out, elided, dropped, tokens_for_chars(total), len(invalid), cut)


def _cut_round(work: list[Message], results: list[int], size: int, room: int) -> tuple[int, int]:
    """Cut the string results ``work[results]`` so the round (``size`` chars) fits ``room``.

    The room left for results is shared out smallest first, so a small result stays
    whole and the big ones get equal shares. Each cut result ends with :func:`cut_marker`.
    Returns the round's new size and how many results were cut.
    """
    sizes = {}
    for idx in results:
        content = work[idx].get("content")
        if type(content) is str:
            sizes[idx] = len(content)
    left = max(0, room - (size - sum(sizes.values())))
    cut = 0
    order = sorted(sizes, key=sizes.__getitem__)
    for rank, idx in enumerate(order):
        chars = sizes[idx]
        share = left // (len(order) - rank)
        if chars <= share:
            left -= chars
            continue
        result = work[idx]
        content = result["content"]
        marker = cut_marker(0, chars, result.get("recall_key"))
        shown = max(0, share - len(marker))
        marker = cut_marker(shown, chars, result.get("recall_key"))
        text = content[:shown] + marker
        if len(text) >= chars:
            left -= min(share, chars)  # too short to gain anything by cutting
            continue
        work[idx] = dict(result, content=text)
        size += len(text) - chars
        left -= min(share, len(text))
        cut += 1
    return size, cut


def _restore(work: list[Message], msgs: list[Message], lo: int, hi: int) -> int:
    """Put back the originals of ``work[lo:hi]`` and return how many were elided copies."""
    restored = 0
    for idx in range(lo, hi):
        if work[idx] is not msgs[idx]:
            work[idx] = msgs[idx]
            restored += 1
    return restored


def _general_round(
    calls: Any,
    msgs: list[Message],
    work: list[Message],
    head: int,
    last: int,
    elide_over: int | None,
) -> tuple[int, int, list[int]] | None:
    """Pair and size the round ``msgs[head : last + 1]`` whatever its shape.

    Returns the size of the calls and kept results, how many results were
    elided (only when ``elide_over`` is not ``None``; the copies are put in
    ``work``) and the indices of the results left out (duplicates and results
    of no call); or ``None`` when the results cannot be paired with the calls.
    """
    if last == head + 1 and len(calls) == 1 and _answers(calls[0], msgs[last]):
        results: Sequence[int] | None = (last,)
    else:
        results = _pair_results(calls, msgs, head + 1, last + 1)
    if results is None:
        return None
    size = _calls_chars(calls)
    elided = 0
    for idx in results:
        result = msgs[idx]
        content = result.get("content")
        chars = len(content) if type(content) is str else _parts_chars(content)
        if elide_over is not None and chars > elide_over:
            text = elision_placeholder(chars, result.get("recall_key"))
            if len(text) < chars:
                work[idx] = dict(result, content=text)
                chars = len(text)
                elided += 1
        size += chars
    kept = set(results)
    return size, elided, [idx for idx in range(head + 1, last + 1) if idx not in kept]


def _answers(call: Any, result: Message) -> bool:
    """Whether ``result`` is the tool result of ``call``."""
    call_id = call.get("id") if type(call) is dict else None
    return call_id is not None and call_id == result.get("tool_call_id")


def _pair_results(calls: Any, msgs: list[Message], lo: int, hi: int) -> Sequence[int] | None:
    """Match the tool messages ``msgs[lo:hi]`` to ``calls``.

    Returns the indices of the results to keep (the first result per call, in
    transcript order) or ``None`` when some call has no result, or the calls
    cannot be paired (missing or duplicate ids).
    """
    try:
        expected = {call["id"] for call in calls}
    except (TypeError, KeyError):
        return None
    if len(expected) != len(calls) or None in expected:
        return None
    if (
        hi - lo == len(expected)
        and {msgs[k].get("tool_call_id") for k in range(lo, hi)} == expected
    ):
        return range(lo, hi)
    answered: set[Any] = set()
    keep: list[int] = []
    for k in range(lo, hi):
        call_id = msgs[k].get("tool_call_id")
        if call_id in expected and call_id not in answered:
            answered.add(call_id)
            keep.append(k)
    return keep if answered == expected else None


def _pinned_indices(msgs: list[Message]) -> set[int]:
    """The first system message, the latest user message and any transient message."""
    return _fixed_pinned(msgs).union(_transient_indices(msgs, len(msgs)))


def _fixed_pinned(msgs: list[Message]) -> set[int]:
    """The first system message and the latest user message that is not transient."""
    pinned: set[int] = set()
    for idx, msg in enumerate(msgs):
        if msg.get("role") == "system":
            pinned.add(idx)
            break
    for idx in range(len(msgs) - 1, -1, -1):
        msg = msgs[idx]
        if msg.get("role") == "user" and not msg.get("transient"):
            pinned.add(idx)
            break
    return pinned


def _transient_indices(msgs: list[Message], stop: int) -> list[int]:
    """Indices below ``stop`` of the transient messages that are pinned.

    A transient tool result or message with tool calls is not pinned: it has
    to stay with the rest of its round.
    """
    return [
        idx
        for idx in [idx for idx, msg in enumerate(msgs[:stop]) if "transient" in msg]
        if msgs[idx].get("transient")
        and msgs[idx].get("role") != "tool"
        and not msgs[idx].get("tool_calls")
    ]


def _parts_chars(content: Any) -> int:
    """Size of non-string content: the text of its parts (images are not estimated)."""
    if not content:
        return 0
    if isinstance(content, list):
        total = 0
        for part in content:
            if isinstance(part, Mapping):
                text = part.get("text")
                if isinstance(text, str):
                    total += len(text)
            elif isinstance(part, str):
                total += len(part)
        return total
    return len(str(content))


def _calls_chars(calls: Any) -> int:
    """Size of tool calls: each function name plus its arguments."""
    total = 0
    for call in calls:
        fn = call.get("function") if type(call) is dict else None
        if type(fn) is not dict:
            continue
        name = fn.get("name")
        args = fn.get("arguments")
        if type(name) is str:
            total += len(name)
        if type(args) is str:
            total += len(args)
        elif args is not None:
            total += len(json.dumps(args, default=str))
    return total


def _check_settings(keep_rounds: int, elide_over: int, pct: float, context_window: int) -> None:
    """Raise ``ValueError`` naming every out-of-range setting."""
    problems = []
    if keep_rounds < 0:
        problems.append(
            f"context_management.tool_output_keep_rounds must be >= 0, got {keep_rounds}"
        )
    if elide_over < 0:
        problems.append(
            f"context_management.tool_output_elide_over_chars must be >= 0, got {elide_over}"
        )
    if not 0 < pct <= 100:
        problems.append(f"context_management.trim_threshold_pct must be in (0, 100], got {pct}")
    if context_window <= 0:
        problems.append(f"the model's context window must be positive, got {context_window}")
    if problems:
        raise ValueError("; ".join(problems))
