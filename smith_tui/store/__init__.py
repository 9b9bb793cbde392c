"""Persistence for Smith: one SQLite file (peewee, WAL) with typed repositories.

Open it with `Store.open(path)`; see `Store` for the repositories. Project identity (which
repository a working directory belongs to) is in `smith_tui.store.project_identity`.
"""

from smith_tui.store.errors import StoreError
from smith_tui.store.paths import default_db_path
from smith_tui.store.project_identity import ProjectInfo, discover_project, project_id_for
from smith_tui.store.records import (
    Conversation,
    MemoryHit,
    MemoryNote,
    Message,
    MessageHit,
    Note,
    RequestSnapshot,
    Turn,
    UsageRecord,
    UsageTotals,
)
from smith_tui.store.repair import TOOL_OUTCOME_UNKNOWN
from smith_tui.store.store import Store

__all__ = [
    "TOOL_OUTCOME_UNKNOWN",
    "Conversation",
    "MemoryHit",
    "MemoryNote",
    "Message",
    "MessageHit",
    "Note",
    "ProjectInfo",
    "RequestSnapshot",
    "Store",
    "StoreError",
    "Turn",
    "UsageRecord",
    "UsageTotals",
    "default_db_path",
    "discover_project",
    "project_id_for",
]
