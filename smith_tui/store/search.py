"""Full-text search over messages and project memory (SQLite FTS5, ranked by bm25).

A user query is never handed to FTS5 as written: `to_match_expression` rewrites it into a
safe expression, so stray quotes, brackets or operators cannot cause a syntax error.
Supported: bare words (all must match), `"quoted phrases"`, a trailing `*` for prefix
matching (`deploy*`), and an upper-case `OR` between two terms.
"""

import re

import peewee

from smith_tui.store.records import MemoryHit, MessageHit

_WORD = re.compile(r"\w", re.UNICODE)
DEFAULT_HIGHLIGHT = ("«", "»")
_ELLIPSIS = "…"
_SNIPPET_TOKENS = 12


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
        if not _WORD.search(body):
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


def search_messages(
    db: peewee.SqliteDatabase,
    query: str,
    *,
    project_id: str | None = None,
    conversation_id: str | None = None,
    limit: int = 20,
    highlight: tuple[str, str] = DEFAULT_HIGHLIGHT,
) -> list[MessageHit]:
    """Best-ranked messages matching `query`, optionally within one project or conversation."""
    expression = to_match_expression(query)
    if expression is None or limit <= 0:
        return []
    sql = [
        "SELECT m.conversation_id, m.id, m.position, m.role,",
        f" snippet(message_search, 0, ?, ?, '{_ELLIPSIS}', {_SNIPPET_TOKENS}), message_search.rank",
        " FROM message_search JOIN messages AS m ON m.id = message_search.rowid",
    ]
    params: list[object] = [highlight[0], highlight[1]]
    if project_id is not None:
        sql.append(" JOIN conversations AS c ON c.id = m.conversation_id")
    sql.append(" WHERE message_search MATCH ?")
    params.append(expression)
    if conversation_id is not None:
        sql.append(" AND m.conversation_id = ?")
        params.append(conversation_id)
    if project_id is not None:
        sql.append(" AND c.project_id = ?")
        params.append(project_id)
    sql.append(" ORDER BY message_search.rank, m.id LIMIT ?")
    params.append(limit)
    rows = db.execute_sql("".join(sql), params).fetchall()
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
