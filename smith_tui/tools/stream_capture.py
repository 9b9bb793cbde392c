"""One output stream of a command, decoded, redacted and kept as a head and a tail.

``bash`` keeps each stream of a local run in one (stdout, stderr), and the output of a
command an editor's terminal ran in another, so both are cut and reported the same way.
"""

from __future__ import annotations

import codecs
from collections import deque

from smith_tui.config.secrets import StreamRedactor


class StreamCapture:
    """Collects one output stream, keeping at most ``keep`` characters of head and tail.

    The values in ``secrets`` are redacted as the text arrives, before it is kept or
    returned, so neither the live output nor a head/tail cut can show one.
    """

    def __init__(self, keep: int, secrets: tuple[str, ...] = ()) -> None:
        self.keep = max(keep, 1)
        self.head = ""
        self.tail: deque[str] = deque()
        self.tail_len = 0
        self.total_chars = 0
        self.total_bytes = 0
        self.total_newlines = 0
        self.dropped_chars = 0
        self.dropped_newlines = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._fresh: list[str] = []
        self._redactor = StreamRedactor(secrets, self._fresh.append)

    def feed(self, data: bytes, *, final: bool = False) -> str:
        """Add raw bytes; return the newly decoded (and redacted) text."""
        self.total_bytes += len(data)
        self._redactor.feed(self._decoder.decode(data, final))
        if final:
            self._redactor.flush()
        text = "".join(self._fresh)
        self._fresh.clear()
        if not text:
            return text
        self.total_chars += len(text)
        self.total_newlines += text.count("\n")
        room = self.keep - len(self.head)
        if room > 0:
            self.head += text[:room]
            text_rest = text[room:]
        else:
            text_rest = text
        if text_rest:
            self.tail.append(text_rest)
            self.tail_len += len(text_rest)
            while self.tail_len > self.keep:
                first = self.tail[0]
                excess = self.tail_len - self.keep
                if len(first) <= excess:
                    self.tail.popleft()
                    dropped = first
                else:
                    self.tail[0] = first[excess:]
                    dropped = first[:excess]
                self.tail_len -= len(dropped)
                self.dropped_chars += len(dropped)
                self.dropped_newlines += dropped.count("\n")
        return text

    def finish(self) -> str:
        """Flush the decoder (a trailing partial UTF-8 sequence becomes U+FFFD)."""
        return self.feed(b"", final=True)

    def section(self, name: str, budget: int) -> list[str]:
        """The result's lines for this stream: ``name: (empty)``, or a header with its size
        and the text cut to ``budget`` characters."""
        if self.total_chars == 0:
            return [f"{name}: (empty)"]
        return [f"--- {name} ({self.total_bytes:,} bytes) ---", self.render(budget).rstrip("\n")]

    def render(self, budget: int) -> str:
        """The kept text cut to ``budget`` characters, with a note saying what was left out."""
        tail = "".join(self.tail)
        if self.dropped_chars == 0 and len(self.head) + len(tail) <= budget:
            return self.head + tail
        half = max(budget // 2, 1)
        head_part = self.head[:half]
        tail_part = tail[-(budget - half) :] if budget - half > 0 else ""
        # Characters between head_part and tail_part that we are not showing.
        cut_chars = self.total_chars - len(head_part) - len(tail_part)
        cut_newlines = self.total_newlines - head_part.count("\n") - tail_part.count("\n")
        note = (
            f"\n[… {cut_chars:,} of {self.total_chars:,} characters ({cut_newlines:,} lines) cut "
            f"from the middle; total {self.total_bytes:,} bytes. Redirect to a file and read or "
            f"grep it to see more …]\n"
        )
        return head_part + note + tail_part
