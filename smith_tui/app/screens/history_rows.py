"""What the history screen lists: a conversation as a row (its turns, tokens, title and
fork link), the rows in fork-tree order, and the text of filter results.

Nothing here is a widget: it reads the store and returns values the screen puts in its
table and result list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text

from smith_tui.engine import forks
from smith_tui.engine.persistence import message_dict
from smith_tui.engine.transcript_text import message_preview
from smith_tui.store import Conversation, Store
from smith_tui.store.search import DEFAULT_HIGHLIGHT
from smith_tui.terminal_text import visible
from smith_tui.tools.builtin.history_search import HistoryHit

HIGHLIGHT = DEFAULT_HIGHLIGHT
"""How the store's snippets mark the matched words (we ask for its default)."""
SEARCH_LIMIT = 50
"""Most message hits one filter shows."""


@dataclass(frozen=True)
class HistoryRow:
    """One conversation as the table shows it."""

    conversation: Conversation
    title: str
    """The title, or a preview of the first message when there is none."""
    titled: bool
    turns: int
    tokens: int
    messages: int
    depth: int = 0
    """How many forks deep under its source (0: not shown under another row)."""
    fork_turn: int | None = None
    """For a fork: the source's turn (1-based) it was cut after."""
    forked: bool = False


def fork_source(conv: Conversation) -> str | None:
    """The conversation ``conv`` was forked from (``None``: not a fork)."""
    link = conv.metadata.get(forks.FORKED_FROM)
    source = link.get("conversation") if isinstance(link, dict) else None
    return source if isinstance(source, str) else None


def tree_order(conversations: list[Conversation]) -> list[tuple[Conversation, int]]:
    """``conversations`` (newest first) with each fork right under its source, newest fork
    first, and its depth; a fork whose source is not listed stays a top-level row."""
    ids = {conv.id for conv in conversations}
    children: dict[str, list[Conversation]] = {}
    roots: list[Conversation] = []
    for conv in conversations:
        source = fork_source(conv)
        if source in ids and source != conv.id:
            children.setdefault(source, []).append(conv)
        else:
            roots.append(conv)
    ordered: list[tuple[Conversation, int]] = []
    seen: set[str] = set()

    def add(conv: Conversation, depth: int) -> None:
        if conv.id in seen:
            return
        seen.add(conv.id)
        ordered.append((conv, depth))
        for child in children.get(conv.id, []):
            add(child, depth + 1)

    for conv in roots:
        add(conv, 0)
    for conv in conversations:  # a cycle of links (a hand-edited store) still shows up
        add(conv, 0)
    return ordered


def snippet_text(snippet: str) -> Text:
    """A search snippet with the matched words (between « and ») highlighted."""
    text = Text(no_wrap=True, overflow="ellipsis")
    rest = snippet.replace("\n", " ")
    while HIGHLIGHT[0] in rest:
        before, _, after = rest.partition(HIGHLIGHT[0])
        match, _, rest = after.partition(HIGHLIGHT[1])
        text.append(before)
        text.append(match, style="bold reverse")
    text.append(rest)
    return text


def history_row(
    store: Store, conv: Conversation, depth: int, turns_of: dict[str, list[str]]
) -> HistoryRow:
    """``conv`` as the table shows it; ``turns_of`` caches the turn ids of fork sources."""
    turns = len(store.turns.list_for_conversation(conv.id))
    tokens = sum(t.total_tokens for t in store.usage.totals_by_role(conv.id).values())
    count = store.conversations.count_messages(conv.id)
    title = (conv.title or "").strip()
    titled = bool(title)
    if not titled:
        first = store.conversations.list_messages(conv.id, limit=1)
        title = message_preview(message_dict(first[0]), 50) if first else "(empty)"
    source = fork_source(conv)
    fork_turn = None
    if source is not None:
        # A fork's copied turns have no records of their own (their usage stays the
        # source's): count them by its messages.
        turns = len(forks.turn_ids(store, conv.id))
        if source not in turns_of:
            turns_of[source] = forks.turn_ids(store, source)
        turn = conv.metadata[forks.FORKED_FROM].get("turn")
        if turn in turns_of[source]:
            fork_turn = turns_of[source].index(turn) + 1
    return HistoryRow(
        conv, title, titled, turns, tokens, count, depth, fork_turn, source is not None
    )


def top_level(store: Store, conversation_id: str) -> str:
    """The top-level conversation a (sub-agent's) conversation belongs to."""
    seen = {conversation_id}
    conv = store.conversations.get(conversation_id)
    while conv is not None and conv.parent_id is not None and conv.parent_id not in seen:
        seen.add(conv.parent_id)
        conversation_id = conv.parent_id
        conv = store.conversations.get(conversation_id)
    return conversation_id


def title_result(row: HistoryRow, time_format: Callable[[float], str]) -> Text:
    """A filter result for a conversation whose title matches."""
    title = Text(visible(row.title), style="bold", no_wrap=True, overflow="ellipsis")
    turns = f"{row.turns} turn{'s' if row.turns != 1 else ''}"
    title.append(f"  title · {turns} · {time_format(row.conversation.updated_at)}", style="dim")
    return title


def hit_result(hit: HistoryHit, title: str) -> Text:
    """A filter result for a matching message of the conversation called ``title``."""
    child = " (sub-agent)" if hit.parent_id else ""
    return Text.assemble(
        (visible(title)[:30] + child, "bold"),
        (f"  #{hit.position} {hit.role}: ", "dim"),
        snippet_text(visible(hit.snippet)),
        no_wrap=True,
        overflow="ellipsis",
    )


def count_text(hits: int, titles: int) -> str:
    """The status line under the filter results."""
    if not hits and not titles:
        return "No messages match."
    text = f"{hits} match{'es' if hits != 1 else ''}" if hits else "No messages match"
    if hits == SEARCH_LIMIT:
        text += f" (first {SEARCH_LIMIT})"
    if titles:
        text += f" · {titles} title{'s' if titles != 1 else ''}"
    return text + ". Enter opens the conversation at the message."
