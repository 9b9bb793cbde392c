"""What an editor session keeps with its conversation besides what the engine keeps (the
messages, the turns' records, the commands' output): the permission mode the session was
switched to, which ``session/load`` restores.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

log = logging.getLogger(__name__)

MODE_KEY = "permission_mode"
"""The conversation metadata key of the session's permission mode."""


def remember_mode(runtime: Runtime, mode: str) -> bool:
    """Keep ``mode`` as the session's permission mode (restored by a load); ``False`` when
    the conversation is not stored yet (it is with its first message: call again then)."""
    if not runtime.conversations.saved or not runtime.conversations.conversation_id:
        return False
    try:
        conversation_id = runtime.conversations.conversation_id
        store = runtime.store.conversations
        conversation = store.get(conversation_id)
        metadata = dict(conversation.metadata or {}) if conversation is not None else {}
        if metadata.get(MODE_KEY) != mode:
            store.set_metadata(conversation_id, {**metadata, MODE_KEY: mode})
    except Exception:
        log.exception("keeping the permission mode %s failed", mode)
    return True


def stored_mode(runtime: Runtime) -> str | None:
    """The permission mode the active conversation's session was switched to, if any."""
    conversation_id = runtime.conversations.conversation_id
    conversation = runtime.store.conversations.get(conversation_id) if conversation_id else None
    mode = (conversation.metadata or {}).get(MODE_KEY) if conversation is not None else None
    return mode if isinstance(mode, str) else None
