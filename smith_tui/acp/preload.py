"""Load the engine in the background once the handshake is answered.

``smith acp`` answers ``initialize`` with the protocol SDK alone; the engine (config, store,
tools, the LLM client) is several times heavier. Importing it in a thread right after the
answer went out uses the time the client spends before ``session/new``, and keeps the
import off the event loop. A session that opens before the thread is done imports what is
missing itself (the import system lets one thread finish a module the other started).
"""

from __future__ import annotations

import importlib
import logging
import threading

log = logging.getLogger(__name__)

MODULES = ("smith_tui.engine.runtime", "smith_tui.acp.session")
"""What a session needs first, heaviest first."""

_started = threading.Event()


def start() -> None:
    """Import :data:`MODULES` in a daemon thread (once per process)."""
    if _started.is_set():
        return
    _started.set()
    threading.Thread(target=_load, name="smith-acp-preload", daemon=True).start()


def _load() -> None:
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # the session's own import reports it to the client
            log.exception("preloading %s failed", name)
