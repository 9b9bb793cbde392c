"""Full-text search over messages and project memory (SQLite FTS5, ranked by bm25).

A user query is never handed to FTS5 as written: `to_match_expression` rewrites it into a
safe expression, so stray quotes, brackets or operators cannot cause a syntax error.
Supported: bare words (all must match), `"quoted phrases"`, a trailing `*` for prefix
matching (`deploy*`), and an upper-case `OR` between two terms. Control characters (NUL
included) and lone surrogates separate words like spaces do.
"""

import re

import peewee

from smith_tui.store.records import MemoryHit, MessageHit

DEFAULT_HIGHLIGHT = ("«", "»")
_ELLIPSIS = "…"
_SNIPPET_TOKENS = 12
# How many of the newest matches bm25 ranks for a very common term (see search_messages).
RANK_WINDOW = 10_000
# Up to this many matches in all, a project filter is checked per match (see search_messages).
FEW_MATCHES = 2_000
_SNIPPET_BATCH = 500


def _has_token(text: str) -> bool:
    """Whether the unicode61 tokenizer finds any token (letters or digits) in `text`."""
    return any(char.isalnum() for char in text)


def _has_phrase(query: str) -> bool:
    """Whether some term of `query` is several tokens, i.e. an FTS5 phrase ("a b", a-b)."""
    return any(len(re.findall(r"[^\W_]+", text)) > 1 for text, _ in _split(query))


# C0 and C1 control characters, DEL and lone surrogates. FTS5 reads its query as a C string
# (a NUL cuts it: "unterminated string") and SQLite cannot encode a lone surrogate; the
# unicode61 tokenizer separates words at all of them anyway.
_NOT_TEXT = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _split(query: str) -> list[tuple[str, bool]]:
    """Split into (text, is_phrase) pieces; an unbalanced quote runs to the end."""
    query = _NOT_TEXT.sub(" ", query)
    pieces: list[tuple[str, bool]] = []
    index = 0
    while index < len(query):
        char = query[index]
        if char.isspace():
            index += 1
        elif char == '"':
            end = query.find('"', index + 1)
            end = len(query) if end < 0 else end
            pieces.append((query[index + 1 : end], True))
            index = end + 1
        else:
            end = index
            while end < len(query) and not query[end].isspace() and query[end] != '"':
                end += 1
            pieces.append((query[index:end], False))
            index = end
    return pieces


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def to_match_expression(query: str) -> str | None:
    """Rewrite a user query into a safe FTS5 expression; `None` when it has no searchable word."""
    terms: list[str] = []
    pending_or = False
    for text, is_phrase in _split(query):
        if not is_phrase and text == "OR":
            pending_or = bool(terms)
            continue
        prefix = not is_phrase and text.endswith("*")
        body = text.rstrip("*") if prefix else text
        if not _has_token(body):
            continue
        term = _quote(body) + ("*" if prefix else "")
        if pending_or:
            terms[-1] = f"{terms[-1]} OR {term}"
            pending_or = False
        else:
            terms.append(term)
    if not terms:
        return None
    return " AND ".join(f"({term})" if " OR " in term else term for term in terms)


def _snippets(
    db: peewee.SqliteDatabase,
    fts: list[str],
    fts_params: list[object],
    ids: list[int],
    highlight: tuple[str, str],
    *,
    has_phrase: bool,
) -> dict[int, str]:
    """Snippets of the messages `ids`, all of which match the conditions `fts`, by id.

    snippet() tokenises the whole message, so it only runs on the few winners. They are
    found by walking the index once over the rowid range they span (at most the ranked
    window), except for phrases, whose matching is costly per row: those are looked up
    one rowid at a time instead.
    """
    found: dict[int, str] = {}
    ordered = sorted(ids)
    # In slices, to stay far below SQLite's limit on bound parameters for a huge `limit`.
    for start in range(0, len(ordered), _SNIPPET_BATCH):
        batch = ordered[start : start + _SNIPPET_BATCH]
        marks = ", ".join("?" * len(batch))
        if has_phrase:
            lookup, bounds = f"rowid IN ({marks})", []
        else:
            # `+rowid` keeps the IN list from FTS5, which would restart the query per id.
            lookup = f"rowid BETWEEN ? AND ? AND +rowid IN ({marks})"
            bounds = [min(batch), max(batch)]
        rows = db.execute_sql(
            f"SELECT rowid, snippet(message_search, 0, ?, ?, '{_ELLIPSIS}', {_SNIPPET_TOKENS})"
            f" FROM message_search WHERE {' AND '.join(fts)} AND {lookup}",
            [highlight[0], highlight[1], *fts_params, *bounds, *batch],
        ).fetchall()
        found.update(rows)
    return found


def _has_at_most(
    db: peewee.SqliteDatabase, fts: list[str], params: list[object], most: int
) -> bool:
    """Whether at most `most` messages match the conditions `fts` (reads at most most + 1)."""
    (count,) = db.execute_sql(
        f"SELECT count(*) FROM (SELECT 1 FROM message_search WHERE {' AND '.join(fts)} LIMIT ?)",
        [*params, most + 1],
    ).fetchone()
    return bool(count <= most)


def _best_matches(
    db: peewee.SqliteDatabase,
    window_from: str,
    window_where: list[str],
    window_params: list[object],
    checks: list[str],
    check_params: list[object],
    limit: int,
) -> list[tuple[int, float, str, int, str]]:
    """(id, rank, conversation id, position, role) of the best `limit` matches in the window.

    The window is the newest `RANK_WINDOW` rows of `window_from` meeting `window_where`;
    `checks` are conditions on the message (`m`) that the window did not test exactly.
    """
    # One pass from the newest match down, each scored as it goes. Sorting by rank outside
    # FTS5 matters: its own ORDER BY rank runs bm25's whole-index statistics twice.
    window = (
        "SELECT message_search.rowid AS id, message_search.rank AS rank"
        f" FROM {window_from} WHERE {' AND '.join(window_where)}"
        " ORDER BY message_search.rowid DESC LIMIT ?"
    )
    window_params = [*window_params, RANK_WINDOW]
    passes = " AND ".join(checks) if checks else "1"
    # Fast path: take the best `limit` of the window, then join those few and check them.
    fast = (
        f"SELECT hits.id, hits.rank, m.conversation_id, m.position, m.role, {passes}"
        f" FROM (SELECT id, rank FROM ({window}) ORDER BY rank, id LIMIT ?) AS hits"
        " JOIN messages AS m ON m.id = hits.id ORDER BY hits.rank, hits.id"
    )
    # Placeholders bind in text order: the checks in the outer SELECT list come first.
    rows = db.execute_sql(fast, [*check_params, *window_params, limit]).fetchall()
    if all(row[-1] for row in rows):
        # Every winner passed, so they are also the winners among the matches that pass
        # (a subset of what was ranked).
        return [row[:-1] for row in rows]
    # A winner failed (a project id that tokenises like another one), so check the whole
    # window: the best exact matches are ranked among it.
    exact_sql = (
        "SELECT hits.id, hits.rank, m.conversation_id, m.position, m.role"
        f" FROM ({window}) AS hits JOIN messages AS m ON m.id = hits.id"
        f" WHERE {passes} ORDER BY hits.rank, hits.id LIMIT ?"
    )
    exact: list[tuple[int, float, str, int, str]] = db.execute_sql(
        exact_sql, [*window_params, *check_params, limit]
    ).fetchall()
    return exact


def search_messages(
    db: peewee.SqliteDatabase,
    query: str,
    *,
    project_id: str | None = None,
    conversation_id: str | None = None,
    limit: int = 20,
    highlight: tuple[str, str] = DEFAULT_HIGHLIGHT,
) -> list[MessageHit]:
    """Best-ranked messages matching `query`, optionally within one project or conversation.

    bm25 has to score every match before it can sort, so a term found in more than
    `RANK_WINDOW` messages (a near stop-word) is ranked among its newest `RANK_WINDOW`
    matches only; that keeps such searches in tens of milliseconds on a million messages.
    Ties in rank go to the older message.
    """
    expression = to_match_expression(query)
    if expression is None or limit <= 0:
        return []
    has_phrase = _has_phrase(query)
    content = f"content : ({expression})"
    fts = ["message_search MATCH ?"]
    fts_params: list[object] = [content]
    exact: list[str] = []
    exact_params: list[object] = []
    if conversation_id is not None:
        # FTS5 narrows a rowid range cheaply; message ids of one conversation sit close together.
        low, high = db.execute_sql(
            "SELECT MIN(id), MAX(id) FROM messages WHERE conversation_id = ?", (conversation_id,)
        ).fetchone()
        if low is None:
            return []
        fts.append("message_search.rowid BETWEEN ? AND ?")
        fts_params += [low, high]
        exact.append("m.conversation_id = ?")
        exact_params.append(conversation_id)
    check_each = False
    if project_id is not None:
        exact.append("m.project_id = ?")
        exact_params.append(project_id)
        # With few matches in all (so fewer than RANK_WINDOW), the window holds every match
        # either way, and checking each one's project in the messages table is cheapest.
        # Otherwise the indexed project id narrows inside FTS5 (the exact check stays the
        # judge), at a price: bm25 then also counts every message of the project. Phrases
        # are not counted first: that can cost as much as the search.
        few = min(FEW_MATCHES, RANK_WINDOW)
        check_each = not has_phrase and _has_at_most(db, fts, fts_params, few)
        if not check_each and _has_token(project_id):
            fts_params[0] = f"project_id : {_quote(project_id)} AND {content}"
    if check_each:
        joined = "message_search JOIN messages AS m ON m.id = message_search.rowid"
        rows = _best_matches(db, joined, fts + exact, fts_params + exact_params, [], [], limit)
    else:
        rows = _best_matches(db, "message_search", fts, fts_params, exact, exact_params, limit)
    snippets = _snippets(
        db, fts, fts_params, [row[0] for row in rows], highlight, has_phrase=has_phrase
    )
    return [
        MessageHit(conversation, message_id, position, role, snippets[message_id], rank)
        for message_id, rank, conversation, position, role in rows
        # A message deleted by another connection since it was ranked has no snippet.
        if message_id in snippets
    ]


def search_project_memory(
    db: peewee.SqliteDatabase,
    query: str,
    project_id: str,
    *,
    limit: int = 20,
    highlight: tuple[str, str] = DEFAULT_HIGHLIGHT,
) -> list[MemoryHit]:
    """Best-ranked memory notes of a project matching `query` (in note id or content)."""
    expression = to_match_expression(query)
    if expression is None or limit <= 0:
        return []
    rows = db.execute_sql(
        "SELECT p.project_id, p.note_id,"
        f" snippet(project_memory_search, -1, ?, ?, '{_ELLIPSIS}', {_SNIPPET_TOKENS}),"
        " project_memory_search.rank"
        " FROM project_memory_search JOIN project_memory AS p"
        " ON p.id = project_memory_search.rowid"
        " WHERE project_memory_search MATCH ? AND p.project_id = ?"
        " ORDER BY project_memory_search.rank, p.id LIMIT ?",
        (highlight[0], highlight[1], expression, project_id, limit),
    ).fetchall()
    return [MemoryHit(*row) for row in rows]


def rebuild_message_search_index(db: peewee.SqliteDatabase) -> None:
    """Rebuild `message_search` from the messages table."""
    db.execute_sql("INSERT INTO message_search (message_search) VALUES ('rebuild')")


def rebuild_project_memory_search_index(db: peewee.SqliteDatabase) -> None:
    """Rebuild `project_memory_search` from the project_memory table."""
    db.execute_sql("INSERT INTO project_memory_search (project_memory_search) VALUES ('rebuild')")
