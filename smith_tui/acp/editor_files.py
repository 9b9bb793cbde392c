"""The editor's buffers as the file backend of ``read``, ``edit`` and ``write``.

Tools run their file I/O in worker threads; the ACP connection lives on the event
loop. :class:`EditorFiles` bridges the two: each call is a coroutine run on the loop
(``fs/read_text_file`` / ``fs/write_text_file``) whose answer the thread waits for.
Any failure declines, so the tool falls back to the disk and reports the usual errors.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

TIMEOUT_S = 30.0
"""How long a tool waits for the editor to answer one file request."""


class EditorFiles:
    """A :class:`smith_tui.tools.ports.FileBackend` over the client's ``fs/*`` methods."""

    def __init__(
        self,
        conn: Any,
        session_id: str,
        loop: asyncio.AbstractEventLoop,
        *,
        read: bool,
        write: bool,
    ) -> None:
        self.conn = conn
        self.session_id = session_id
        self.loop = loop
        self.read = read
        self.write = write
        self._loop_thread = threading.get_ident()

    def _call(self, coro: Any) -> Any:
        if threading.get_ident() == self._loop_thread:  # waiting here would block the loop
            coro.close()
            raise RuntimeError("the editor's files are not reachable from the event loop")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(TIMEOUT_S)

    def read_text(self, path: Path) -> str | None:
        """The editor's text of ``path`` (unsaved changes included), else ``None``."""
        if not self.read:
            return None
        try:
            response = self._call(
                self.conn.read_text_file(session_id=self.session_id, path=str(path))
            )
        except Exception as exc:  # not open, not found, refused: the disk decides
            log.info("fs/read_text_file %s declined: %s", path, exc)
            return None
        return str(response.content)

    def write_text(self, path: Path, text: str) -> bool:
        """Write ``text`` through the editor; ``False`` when it cannot (the disk is used)."""
        if not self.write:
            return False
        try:
            self._call(
                self.conn.write_text_file(session_id=self.session_id, path=str(path), content=text)
            )
        except Exception as exc:
            log.info("fs/write_text_file %s failed, writing the disk: %s", path, exc)
            return False
        return True
