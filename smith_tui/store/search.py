"""Full-text search over messages and project memory (SQLite FTS5, ranked by bm25).

A user query is never handed to FTS5 as written: `to_match_expression` rewrites it into a
safe expression, so stray quotes, brackets or operators cannot cause a syntax error.
Supported: bare words (all must match), `"quoted phrases"`, a trailing `*` for prefix
matching (`deploy*`), and an upper-case `OR` between two terms.
"""

import peewee

from smith_tui.store.records import MemoryHit, MessageHit

DEFAULT_HIGHLIGHT = ("«", "»")
_ELLIPSIS = "…"
_SNIPPET_TOKENS = 12
# How many of the newest matches bm25 ranks for a very common term (see search_messages).
RANK_WINDOW = 10_000


def _has_token(text: str) -> bool:
    """Whether the unicode61 tokenizer finds any token (letters or digits) in `text`."""
    return any(char.isalnum() for char in text)


def _split(query: str) -> list[tuple[str, bool]]:
    """Split into (text, is_phrase) pieces; an unbalanced quote runs to the end."""
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


def _newest_matches_bound(
    db: peewee.SqliteDatabase, conditions: list[str], params: list[object]
) -> int | None:
    """Rowid just below the newest `RANK_WINDOW` matches, or `None` when there are fewer."""
    row = db.execute_sql(
        f"SELECT rowid FROM message_search WHERE {' AND '.join(conditions)}"
        " ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        [*params, RANK_WINDOW],
    ).fetchone()
    return None if row is None else row[0]


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
    """
    expression = to_match_expression(query)
    if expression is None or limit <= 0:
        return []
    match = f"content : ({expression})"
    if project_id is not None and _has_token(project_id):
        # Narrow by the indexed project id inside FTS5; the exact test below stays the judge.
        match = f"project_id : {_quote(project_id)} AND {match}"
    fts = ["message_search MATCH ?"]
    fts_params: list[object] = [match]
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
    if project_id is not None:
        exact.append("m.project_id = ?")
        exact_params.append(project_id)
    bound = _newest_matches_bound(db, fts, fts_params)
    if bound is not None:
        fts.append("message_search.rowid > ?")
        fts_params.append(bound)
    snippet = f"snippet(message_search, 0, ?, ?, '{_ELLIPSIS}', {_SNIPPET_TOKENS})"
    head = [highlight[0], highlight[1], *fts_params]
    passes = " AND ".join(exact) if exact else "1"
    # Fast path: rank inside the full-text table using only its own (approximate) filters,
    # join the few winners afterwards and check the exact filters on them. ORDER BY rank
    # alone lets FTS5 use its own top-k sort; ties are broken outside.
    fast = (
        f"SELECT m.conversation_id, m.id, m.position, m.role, hits.snippet, hits.rank, {passes}"
        f" FROM (SELECT rowid AS id, {snippet} AS snippet, rank FROM message_search"
        f" WHERE {' AND '.join(fts)} ORDER BY rank LIMIT ?) AS hits"
        " JOIN messages AS m ON m.id = hits.id ORDER BY hits.rank, hits.id"
    )
    # Placeholders bind in text order: the exact checks in the outer SELECT list come first.
    rows = db.execute_sql(fast, [*exact_params, *head, limit]).fetchall()
    if all(row[-1] for row in rows):
        # Every winner passed the exact filters, so they are also the winners among the
        # exact matches (a subset of what was ranked).
        return [MessageHit(*row[:-1]) for row in rows]
    exact_sql = (
        f"SELECT m.conversation_id, m.id, m.position, m.role, {snippet}, message_search.rank"
        " FROM message_search JOIN messages AS m ON m.id = message_search.rowid"
        f" WHERE {' AND '.join(fts + exact)}"
        " ORDER BY message_search.rank, m.id LIMIT ?"
    )
    rows = db.execute_sql(exact_sql, [*head, *exact_params, limit]).fetchall()
    return [MessageHit(*row) for row in rows]


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
