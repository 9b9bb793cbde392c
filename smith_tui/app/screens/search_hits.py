"""The ``/search`` hits as a list; choosing one opens the pager at that message.

The hit's conversation may be another one of the project: the pager shows the stored
messages of the hit's conversation (read-only), scrolled to the message, its match current.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from textual.content import Content

from smith_tui.app.screens.pager_screen import PagerScreen
from smith_tui.app.screens.picker_screen import PickerScreen
from smith_tui.engine.persistence import message_dict
from smith_tui.terminal_text import visible

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

_MARKED = re.compile(r"«([^»]+)»")
"""A term the store's snippet marks as matched."""


def matched_term(snippet: str, query: str) -> str:
    """The words to find in the message: the snippet's first marked term, else the query."""
    found = _MARKED.search(snippet)
    return found.group(1) if found else query


def search_picker(runtime: Runtime, data: Mapping[str, Any]) -> PickerScreen:
    """The picker of ``/search``'s hits (``data['hits']``); keys are hit indexes."""
    hits = [hit for hit in data.get("hits") or [] if isinstance(hit, Mapping)]
    active = runtime.conversations.conversation_id
    titles: dict[str, str] = {}
    rows: list[tuple[str, Content | str]] = []
    for index, hit in enumerate(hits):
        conversation = str(hit.get("conversation_id") or "")
        if conversation not in titles:
            found = runtime.store.conversations.get(conversation)
            titles[conversation] = (found.title if found else None) or "(untitled)"
        where = "this conversation" if conversation == active else titles[conversation]
        label = Content.assemble(
            (f"#{hit.get('position')} {hit.get('role')}", "bold"),
            (f"  {visible(where)}", "$text-muted"),
            "\n  ",
            visible(str(hit.get("snippet") or "")),
        )
        rows.append((str(index), label))
    note = "Enter opens the pager at the highlighted message."
    return PickerScreen(f"Search: {len(hits)} hits", rows, note=note)


def hit_pager(runtime: Runtime, hit: Mapping[str, Any], query: str) -> PagerScreen:
    """The pager on the hit's conversation, opened at the hit's message, its match current."""
    conversation = str(hit.get("conversation_id") or "")
    # From the store, as the hit was: its messages carry the positions the hit names.
    stored = runtime.store.conversations.list_messages(conversation)
    messages = [dict(message_dict(message)) for message in stored]
    position = hit.get("position")
    return PagerScreen(
        runtime,
        messages=messages,
        at_position=int(position) if isinstance(position, int) else None,
        find=matched_term(str(hit.get("snippet") or ""), query),
    )
