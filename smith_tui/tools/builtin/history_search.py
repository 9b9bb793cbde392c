"""``history_search``: the model looks up how an earlier session of this project went.

The search is the store's full-text index over every stored message (FTS5, bm25-ranked;
the query syntax of :mod:`smith_tui.store.search`). The tool searches this project's
conversations only: a model steered by a hostile file must not pull other projects'
sessions into this one. ``smith search --all`` is the user's way across projects.
:func:`search_history` and :func:`render_hits` are shared with ``smith search``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from pydantic import Field

from smith_tui.store import Store
from smith_tui.tools.args import max_output_chars
from smith_tui.tools.builtin.code.render import fit_blocks, plural
from smith_tui.tools.builtin.memory import require_project, require_store, store_errors
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

NAME = "history_search"
MAX_LIMIT = 50
DEFAULT_LIMIT = 10
MAX_QUERY_CHARS = 500


@dataclass(frozen=True)
class HistoryHit:
    """One stored message that matched, with its conversation's title and time."""

    conversation_id: str
    title: str
    updated_at: float
    position: int
    role: str
    snippet: str
    parent_id: str | None = None
    """Set for a sub-agent's conversation (its parent's id)."""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready view."""
        return asdict(self)


def search_history(
    store: Store,
    query: str,
    *,
    project_id: str | None,
    limit: int = DEFAULT_LIMIT,
    exclude: str | None = None,
) -> list[HistoryHit]:
    """Best matches first; ``project_id=None`` searches every project; ``exclude`` leaves
    one conversation out (the one asking, whose messages are already in its context)."""
    wanted = limit if exclude is None else limit * 2 + 20
    hits = [
        hit
        for hit in store.search_messages(query, project_id=project_id, limit=wanted)
        if hit.conversation_id != exclude
    ][:limit]
    conversations: dict[str, Any] = {}
    found: list[HistoryHit] = []
    for hit in hits:
        if hit.conversation_id not in conversations:
            conversations[hit.conversation_id] = store.conversations.get(hit.conversation_id)
        conv = conversations[hit.conversation_id]
        found.append(
            HistoryHit(
                conversation_id=hit.conversation_id,
                title=(conv.title if conv is not None and conv.title else "(untitled)"),
                updated_at=conv.updated_at if conv is not None else 0.0,
                position=hit.position,
                role=hit.role,
                snippet=" ".join(hit.snippet.split()),
                parent_id=conv.parent_id if conv is not None else None,
            )
        )
    return found


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if stamp else "?"


def hit_block(hit: HistoryHit) -> str:
    """Two lines: the conversation (title, id, time) and the message's matching words."""
    child = " · sub-agent" if hit.parent_id else ""
    return (
        f"‘{hit.title}’ · {hit.conversation_id} · {_when(hit.updated_at)}{child}\n"
        f"  #{hit.position} {hit.role}: {hit.snippet}"
    )


def render_hits(hits: list[HistoryHit], query: str, *, budget: int) -> tuple[str, int]:
    """The hits as text within ``budget`` characters; returns it and how many are shown."""
    if not hits:
        return f"No stored message matches {query!r}.", 0
    conversations = len({hit.conversation_id for hit in hits})
    matches = "1 match" if len(hits) == 1 else f"{len(hits)} matches"
    header = f"{matches} for {query!r} in {plural(conversations, 'conversation')}, best first:"
    blocks = [hit_block(hit) for hit in hits]
    return fit_blocks(header, blocks, budget, unit="matches", hint="narrow the query")


class Args(ToolArgs):
    """Arguments of ``history_search``."""

    query: str = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description=(
            'Words that must all appear (any order); "quoted phrase" for exact words in '
            "order, a trailing * for a prefix (deploy*), OR between two terms."
        ),
    )
    limit: int = Field(
        DEFAULT_LIMIT, ge=1, le=MAX_LIMIT, description=f"Most matches to return (≤ {MAX_LIMIT})."
    )


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Search this project's stored conversations."""
    if not args.query.strip():
        raise ToolError(
            f"{NAME}: `query` must contain a word to search for.", code="invalid_arguments"
        )
    store = require_store(ctx, NAME)
    project = require_project(ctx, NAME)
    with store_errors("search the stored conversations"):
        hits = search_history(
            store, args.query, project_id=project, limit=args.limit, exclude=ctx.conversation_id
        )
    text, shown = render_hits(hits, args.query, budget=max_output_chars(ctx, NAME))
    return ToolOutput(
        text,
        metadata={
            "matches": len(hits),
            "shown": shown,
            "conversations": sorted({hit.conversation_id for hit in hits}),
        },
    )


TOOL = ToolSpec(
    name=NAME,
    description=(
        "Full-text search over this project's earlier conversations (every stored user, "
        "assistant and tool message, sub-agents' too), best match first: how a past session "
        "solved something, what was decided, an error seen before. Returns each match's "
        "conversation title, id and time, and the matching words. Only this project's "
        "conversations are searched, not the current one."
    ),
    args=Args,
    handler=handler,
    parallel=True,
)
