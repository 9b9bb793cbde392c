"""An incremental Server-Sent-Events parser working on raw bytes.

It splits lines itself (``\\n``, ``\\r\\n`` or ``\\r``), so multi-byte UTF-8
characters and JSON objects cut across network reads are reassembled before
anything is decoded. Comment lines (``: keep-alive``) are skipped but still
count as activity for stall detection. As a leniency, a bare line starting
with ``{`` is taken as a complete data payload, so JSON-lines bodies (one
chunk per line, no ``data:`` prefix) parse too.
"""

from __future__ import annotations

Event = tuple[str | None, bytes]
"""``(event name or None, data bytes)``."""


class SSEParser:
    """Feed bytes with :meth:`feed`; get back complete events."""

    __slots__ = ("_buf", "_data", "_event", "lines_seen")

    def __init__(self) -> None:
        self._buf = b""
        self._event: str | None = None
        self._data: list[bytes] = []
        self.lines_seen = 0

    def feed(self, chunk: bytes) -> list[Event]:
        """Consume one network read; return the events it completed."""
        data = self._buf + chunk if self._buf else chunk
        if b"\r" in data:
            held = b""
            if data.endswith(b"\r"):  # may be the first half of "\r\n"
                data, held = data[:-1], b"\r"
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            lines = data.split(b"\n")
            self._buf = lines.pop() + held
        else:
            lines = data.split(b"\n")
            self._buf = lines.pop()
        if not lines:
            return []
        self.lines_seen += len(lines)
        return self._lines(lines)

    def _lines(self, lines: list[bytes]) -> list[Event]:
        events: list[Event] = []
        pending = self._data
        for line in lines:
            if not line:
                if pending:
                    events.append(
                        (self._event, pending[0] if len(pending) == 1 else b"\n".join(pending))
                    )
                    pending = self._data = []
                    self._event = None
                elif self._event is not None:
                    self._event = None
                continue
            first = line[0]
            if first == 100 and line.startswith(b"data:"):  # "d"
                value = line[5:]
                if value[:1] == b" ":
                    value = value[1:]
                pending.append(value)
            elif first == 58:  # ":" comment / heartbeat
                continue
            elif first == 123 and not pending:  # "{" JSON-lines body
                events.append((self._event, line))
                self._event = None
            elif line.startswith(b"event:"):
                self._event = line[6:].strip().decode("utf-8", "replace")
            # id:, retry: and unknown fields do not matter here
        return events

    def close(self) -> list[Event]:
        """End of body: flush a last line without newline and a pending event."""
        events: list[Event] = []
        if self._buf:
            tail, self._buf = self._buf.rstrip(b"\r"), b""
            if tail:
                self.lines_seen += 1
                events.extend(self._lines([tail]))
        if self._data:
            events.append((self._event, b"\n".join(self._data)))
            self._data = []
            self._event = None
        return events
