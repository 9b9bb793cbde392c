"""Split ``<think>…</think>`` reasoning out of streamed content.

Some servers (DeepSeek-R1 behind Together/HF, many local runners) put the
chain of thought inside ``delta.content``. When the content *starts* with
``<think>`` (leading whitespace allowed) everything up to ``</think>`` is
reasoning; tags split across chunks are handled by holding back the few
characters that could still be a tag. The whitespace right after ``<think>``
and right after ``</think>`` is dropped. A ``<think>`` appearing later in the
text is left alone (it is most likely the model talking about tags).
"""

from __future__ import annotations

OPEN = "<think>"
CLOSE = "</think>"

_START, _THINK_LEAD, _THINK, _AFTER, _TEXT = range(5)


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``tag``."""
    for k in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:k]):
            return k
    return 0


class ThinkSplitter:
    """Incremental splitter; :meth:`feed` returns ``(reasoning, text)`` pieces."""

    __slots__ = ("_pending", "state")

    def __init__(self) -> None:
        self.state = _START
        self._pending = ""

    @property
    def passthrough(self) -> bool:
        """``True`` once everything further is plain text (the fast path)."""
        return self.state == _TEXT

    def feed(self, chunk: str) -> tuple[str, str]:
        """Consume one content delta."""
        if self.state == _TEXT:
            return "", chunk
        pending = self._pending + chunk
        reasoning = ""
        text = ""
        if self.state == _START:
            stripped = pending.lstrip()
            if stripped.startswith(OPEN):
                pending = stripped[len(OPEN) :]
                self.state = _THINK_LEAD
            elif OPEN.startswith(stripped):
                self._pending = pending  # could still become "<think>"
                return "", ""
            else:
                self.state = _TEXT
                self._pending = ""
                return "", pending
        if self.state == _THINK_LEAD:
            pending = pending.lstrip()
            if not pending:
                self._pending = ""
                return "", ""
            self.state = _THINK
        if self.state == _THINK:
            end = pending.find(CLOSE)
            if end < 0:
                keep = _partial_suffix(pending, CLOSE)
                if keep:
                    reasoning, self._pending = pending[:-keep], pending[-keep:]
                else:
                    reasoning, self._pending = pending, ""
                return reasoning, ""
            reasoning = pending[:end]
            pending = pending[end + len(CLOSE) :]
            self.state = _AFTER
        if self.state == _AFTER:
            pending = pending.lstrip()
            if pending:
                self.state = _TEXT
                text = pending
            pending = ""
        self._pending = pending
        return reasoning, text

    def flush(self) -> tuple[str, str]:
        """Release whatever is held back at the end of the stream."""
        pending, self._pending = self._pending, ""
        if self.state == _START:
            return "", pending
        if self.state in (_THINK, _THINK_LEAD):
            return pending, ""
        return "", ""
