"""The permission mode and the sandbox for the app's first frame, before the runtime is open.

The runtime (config schema, store, engine: about 0.4 s) opens after the first frame. The
status line's mode and sandbox come from the same layers, read raw and merged the same
way (:mod:`smith_tui.config.layers`): the user's config file, the ``/config set`` patch in
the database (opened read-only, never created), and this run's flags. A value that is
invalid or cannot be read is left out (shown once the runtime is open), never guessed. The
sandbox is bwrap's own answer: the app probes it here (the runtime reuses the cached
answer). The runtime's validated values replace these.

:func:`start_early_status` runs all of it in a thread started before Textual is imported,
so it is done (a few milliseconds) by the time the first frame is composed.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Mapping
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smith_tui.config.errors import ConfigError
from smith_tui.config.layers import merge_layers, read_user_file, user_file_path
from smith_tui.config.locations import default_db_path
from smith_tui.config.modes import PERMISSION_MODES, SANDBOX_MODES

OVERRIDES_TABLE = "config"
"""The store's table of config entries (``smith_tui.store.models.ConfigRow``)."""
OVERRIDES_KEY = "runtime_overrides"
"""Its entry holding the ``/config set`` patch (``smith_tui.store.config_entries``)."""
SANDBOX_DEFAULTS = {"mode": "auto", "network": False}
"""``sandbox.mode`` and ``sandbox.network`` when no layer sets them (the schema's
defaults; tests/app/test_early_status.py checks they agree)."""
WAIT_S = 1.0
"""How long the first frame waits for the reading thread at most (it takes milliseconds)."""


@dataclass(frozen=True)
class EarlyStatus:
    """What the status line shows before the runtime is open (``""``: not known)."""

    mode: str = ""
    sandbox: str = ""
    """The sandbox's label (``sandboxed``, ``sandbox off`` …)."""
    sandbox_active: bool = False


def read_early_status(
    *,
    config_path: str | os.PathLike[str] | None,
    db_path: str | os.PathLike[str] | None,
    ephemeral: Mapping[str, Any],
    default_mode: str,
    probe: bool = False,
) -> EarlyStatus:
    """The mode and sandbox the runtime will open with, from the raw layers.

    ``config_path``, ``db_path`` and ``ephemeral`` are what the runtime is opened with;
    ``default_mode`` is the front end's mode when no layer sets one. The sandbox is known
    without bwrap's probe only when ``sandbox.mode`` is off; else it is left out unless
    ``probe`` (the app probes: bwrap's namespaces cost its first frame about 30 ms of a
    2-core machine, and the runtime then reuses the cached answer).
    """
    try:
        user = read_user_file(user_file_path(config_path), must_exist=config_path is not None)
    except ConfigError:
        return EarlyStatus()  # the runtime reports it
    patch = _persisted_patch(db_path)
    if patch is None:
        return EarlyStatus()
    merged = merge_layers({"user": user, "persisted": patch, "ephemeral": ephemeral})
    mode = _permission_mode(merged.get("permissions", {}), default_mode)
    sandbox = _sandbox(merged.get("sandbox", {}))
    if sandbox is None or (sandbox[0] != "off" and not probe):
        return EarlyStatus(mode=mode)
    from smith_tui.tools.sandbox import sandbox_state_for

    state = sandbox_state_for(*sandbox)
    return EarlyStatus(mode=mode, sandbox=state.label(), sandbox_active=state.active)


def start_early_status(**options: Any) -> Callable[[], EarlyStatus]:
    """Run :func:`read_early_status` with ``options`` in a thread; the function returned
    waits for its answer (at most :data:`WAIT_S`; nothing is known after that)."""
    found: list[EarlyStatus] = []

    def read() -> None:
        try:
            found.append(read_early_status(**options))
        except Exception:  # anything unexpected: the runtime shows the values a moment later
            found.append(EarlyStatus())

    thread = threading.Thread(target=read, name="smith-early-status", daemon=True)
    thread.start()

    def answer() -> EarlyStatus:
        thread.join(WAIT_S)
        return found[0] if found else EarlyStatus()

    return answer


def _persisted_patch(db_path: str | os.PathLike[str] | None) -> dict[str, Any] | None:
    """The ``/config set`` patch; ``{}`` without a database, ``None`` when it cannot be read."""
    path = (Path(db_path).expanduser() if db_path is not None else default_db_path()).absolute()
    if not path.is_file():
        return {}
    # Read-only, never created. Without a write-ahead log (no smith has it open: the last
    # one to close removes it) the file is read as it is, so nothing beside it is created
    # either; with one, read-only through it (its -shm exists already).
    wal = path.with_name(path.name + "-wal")
    query = "mode=ro" if wal.exists() else "immutable=1"
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?{query}", uri=True, timeout=0.2)) as db:
            row = db.execute(
                f"SELECT value FROM {OVERRIDES_TABLE} WHERE key = ?", (OVERRIDES_KEY,)
            ).fetchone()
    except sqlite3.Error:
        return None
    if row is None:
        return {}
    try:
        patch = json.loads(row[0])
    except (TypeError, ValueError):
        return None
    return patch if isinstance(patch, dict) else None


def _permission_mode(table: Any, default_mode: str) -> str:
    if not isinstance(table, Mapping):
        return ""
    mode = table.get("mode")
    if mode is None:
        return default_mode
    return mode if isinstance(mode, str) and mode in PERMISSION_MODES else ""


def _sandbox(table: Any) -> tuple[str, bool] | None:
    if not isinstance(table, Mapping):
        return None
    mode = table.get("mode", SANDBOX_DEFAULTS["mode"])
    network = table.get("network", SANDBOX_DEFAULTS["network"])
    if not (isinstance(mode, str) and mode in SANDBOX_MODES) or not isinstance(network, bool):
        return None
    return mode, network
