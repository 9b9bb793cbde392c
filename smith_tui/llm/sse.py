"""An incremental Server-Sent-Events parser.

It cuts the byte stream at line ends itself (``\\n``, ``\\r\\n`` or ``\\r``)
and decodes only complete lines, so multi-byte UTF-8 characters and JSON
objects split across network reads are reassembled before anything is
decoded. Comment lines (``: keep-alive``) are skipped but still count as
activity for stall detection (:attr:`SSEParser.lines_seen`). As a leniency, a
bare line starting with ``{`` is taken as a complete data payload, so
JSON-lines bodies (one chunk per line, no ``data:`` prefix) parse too.
"""

from __future__ import annotations

Event = tuple[str | None, str]
"""``(event name or None, data)``."""


class SSEParser:
    """Feed bytes with :meth:`feed`; get back complete events."""

    __slots__ = ("_buf", "_data", "_event", "lines_seen")

    def __init__(self) -> None:
        self._buf = b""
        self._event: str | None = None
        self._data: list[str] = []
        self.lines_seen = 0

    def feed(self, chunk: bytes) -> list[Event]:
        """Consume one network read; return the events it completed."""
        data = self._buf + chunk if self._buf else chunk
        if b"\r" in data:
            held = b""
            if data.endswith(b"\r"):  # may be the first half of "\r\n"
                data, held = data[:-1], b"\r"
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            cut = data.rfind(b"\n")
            self._buf = (data[cut + 1 :] if cut >= 0 else data) + held
        else:
            cut = data.rfind(b"\n")
            self._buf = data[cut + 1 :] if cut >= 0 else data
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
                    self._event = None
                elif self._event is not None:
                    self._event = None
                continue
            if line.startswith("data:"):
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
        if self._buf:
            tail, self._buf = self._buf.rstrip(b"\r"), b""
            if tail:
                self.lines_seen += 1
                events.extend(self._lines([tail.decode("utf-8", "replace")]))
        if self._data:
            events.append((self._event, "\n".join(self._data)))
            self._data = []
            self._event = None
        return events
