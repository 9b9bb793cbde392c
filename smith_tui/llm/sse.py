"""An incremental Server-Sent-Events parser.

It cuts the byte stream at line ends itself (``\\n``, ``\\r\\n`` or ``\\r``)
and decodes only complete lines, so multi-byte UTF-8 characters and JSON
objects split across network reads are reassembled before anything is
decoded. Comment lines (``: keep-alive``) are skipped but still count as
activity for stall detection (:attr:`SSEParser.lines_seen`). As a leniency, a
bare line starting with ``{`` is taken as a complete data payload, so
JSON-lines bodies (one chunk per line, no ``data:`` prefix) parse too.

Memory stays bounded whatever the server sends: the part of a line not yet ended is
kept as the reads that brought it (joined once, when its end arrives: joining at every
read is quadratic in the line's length), and a line or an event passing
:data:`MAX_EVENT_BYTES` is a protocol error instead of a growing buffer.
"""

from __future__ import annotations

from smith_tui.llm.errors import PROTOCOL, LLMError

Event = tuple[str | None, str]
"""``(event name or None, data)``."""

MAX_EVENT_BYTES = 16 * 1024 * 1024
"""Bytes one SSE line, and the data of one event, may hold. Eight times what a reply
keeps of its text (``stream.MAX_MESSAGE_CHARS``): room for a whole capped answer in one
chunk even with every character escaped, far below what a hostile server could send."""


def _too_large() -> LLMError:
    return LLMError(
        PROTOCOL,
        "event_too_large",
        f"a stream event passed {MAX_EVENT_BYTES:,} bytes without ending; "
        "the server's stream is not a Chat-Completions stream",
        origin="stream",
    )


class SSEParser:
    """Feed bytes with :meth:`feed`; get back complete events."""

    __slots__ = ("_cr", "_data", "_data_size", "_event", "_held", "_parts", "lines_seen")

    def __init__(self) -> None:
        self._parts: list[bytes] = []  # the line not yet ended, as it arrived
        self._held = 0  # bytes in _parts
        self._cr = False  # _parts ends with "\r" (perhaps the first half of "\r\n")
        self._event: str | None = None
        self._data: list[str] = []
        self._data_size = 0
        self.lines_seen = 0

    def _hold(self, piece: bytes) -> None:
        self._held += len(piece)
        if self._held > MAX_EVENT_BYTES:
            raise _too_large()
        self._parts.append(piece)

    def feed(self, chunk: bytes) -> list[Event]:
        """Consume one network read; return the events it completed.

        Raises :class:`LLMError` (``event_too_large``) when a line or an event passes
        :data:`MAX_EVENT_BYTES`."""
        if not self._cr and b"\n" not in chunk and b"\r" not in chunk:
            if chunk:
                self._hold(chunk)
            return []
        data = b"".join((*self._parts, chunk)) if self._parts else chunk
        self._parts = []
        self._held = 0
        if b"\r" in data:
            held = b""
            if data.endswith(b"\r"):  # may be the first half of "\r\n"
                data, held = data[:-1], b"\r"
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            cut = data.rfind(b"\n")
            rest = (data[cut + 1 :] if cut >= 0 else data) + held
        else:
            cut = data.rfind(b"\n")
            rest = data[cut + 1 :] if cut >= 0 else data
        self._cr = rest.endswith(b"\r")
        if rest:
            self._hold(rest)
        if cut < 0:
            return []
        lines = data[:cut].decode("utf-8", "replace").split("\n")
        self.lines_seen += len(lines)
        return self._lines(lines)

    def _lines(self, lines: list[str]) -> list[Event]:
        events: list[Event] = []
        append = events.append
        pending = self._data
        for line in lines:
            if not line:
                if pending:
                    append((self._event, pending[0] if len(pending) == 1 else "\n".join(pending)))
                    pending = self._data = []
                    self._data_size = 0
                    self._event = None
                elif self._event is not None:
                    self._event = None
                continue
            if line.startswith("data:"):
                self._data_size += len(line)
                if self._data_size > MAX_EVENT_BYTES:  # many data lines, no blank line
                    raise _too_large()
                pending.append(line[6:] if line[5:6] == " " else line[5:])
                continue
            first = line[0]
            if first == ":":  # comment / heartbeat
                continue
            if first == "{" and not pending:  # JSON-lines body
                append((self._event, line))
                self._event = None
            elif line.startswith("event:"):
                self._event = line[6:].strip()
            # id:, retry: and unknown fields do not matter here
        return events

    def close(self) -> list[Event]:
        """End of body: flush a last line without newline and a pending event."""
        events: list[Event] = []
        if self._parts:
            tail = b"".join(self._parts).rstrip(b"\r")
            self._parts, self._held, self._cr = [], 0, False
            if tail:
                self.lines_seen += 1
                events.extend(self._lines([tail.decode("utf-8", "replace")]))
        if self._data:
            events.append((self._event, "\n".join(self._data)))
            self._data = []
            self._data_size = 0
            self._event = None
        return events
