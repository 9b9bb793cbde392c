"""The database layout as SQL: the version-1 baseline and the later migration steps.

The DDL is written out by hand (not generated from the peewee models) so that each schema
version is frozen text: a database created by an older Smith is upgraded by exactly the steps
listed in `MIGRATIONS`, and a fresh database is the baseline plus every step.

Full-text tables use FTS5 with external content, kept in step with their source tables by
triggers, so every insert, update and delete (including cascaded deletes) reaches the index.
"""

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import peewee

# 'SMTH' as a big-endian 32-bit integer, stored in the SQLite header (PRAGMA application_id).
APPLICATION_ID = 0x534D5448

BASELINE_VERSION = 1

_BASELINE_V1 = (
    f"PRAGMA application_id = {APPLICATION_ID}",
    """CREATE TABLE meta (
        key TEXT PRIMARY KEY NOT NULL,
        value TEXT NOT NULL
    )""",
    """CREATE TABLE config (
        key TEXT PRIMARY KEY NOT NULL,
        value TEXT NOT NULL,
        updated_at REAL NOT NULL
    )""",
    """CREATE TABLE conversations (
        id TEXT PRIMARY KEY NOT NULL,
        project_id TEXT NOT NULL,
        title TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        parent_id TEXT REFERENCES conversations (id) ON DELETE CASCADE,
        pinned_model TEXT,
        metadata TEXT NOT NULL DEFAULT '{}'
    )""",
    "CREATE INDEX conversations_project_updated ON conversations (project_id, updated_at)",
    "CREATE INDEX conversations_parent ON conversations (parent_id)",
    "CREATE INDEX conversations_updated ON conversations (updated_at)",
    """CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        project_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT,
        reasoning TEXT,
        tool_calls TEXT,
        tool_call_id TEXT,
        name TEXT,
        turn_id TEXT,
        round INTEGER,
        recall_key TEXT,
        metadata TEXT NOT NULL DEFAULT '{}',
        created_at REAL NOT NULL,
        UNIQUE (conversation_id, position)
    )""",
    """CREATE TABLE turns (
        id TEXT PRIMARY KEY NOT NULL,
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        status TEXT NOT NULL,
        stop_reason TEXT,
        error TEXT,
        started_at REAL NOT NULL,
        finished_at REAL
    )""",
    "CREATE INDEX turns_conversation ON turns (conversation_id, started_at)",
    """CREATE TABLE notes (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        note_id TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        UNIQUE (conversation_id, note_id)
    )""",
    """CREATE TABLE usage (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        turn_id TEXT NOT NULL,
        role TEXT NOT NULL,
        job_id TEXT,
        model TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        total_tokens INTEGER NOT NULL,
        cost REAL,
        created_at REAL NOT NULL
    )""",
    "CREATE INDEX usage_conversation ON usage (conversation_id, role)",
    "CREATE INDEX usage_turn ON usage (turn_id, role)",
    """CREATE TABLE project_memory (
        id INTEGER PRIMARY KEY,
        project_id TEXT NOT NULL,
        note_id TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        UNIQUE (project_id, note_id)
    )""",
    # project_id is indexed too, as a cheap prefilter for project-scoped searches; it
    # weighs nothing in bm25. messages.project_id is copied from the conversation on insert
    # and never changes, so the 'delete' rows below always repeat what was indexed.
    """CREATE VIRTUAL TABLE message_search USING fts5 (
        content, project_id, content='messages', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    )""",
    "INSERT INTO message_search (message_search, rank) VALUES ('rank', 'bm25(1.0, 0.0)')",
    """CREATE TRIGGER message_search_insert AFTER INSERT ON messages BEGIN
        INSERT INTO message_search (rowid, content, project_id)
        VALUES (new.id, new.content, new.project_id);
    END""",
    """CREATE TRIGGER message_search_delete AFTER DELETE ON messages BEGIN
        INSERT INTO message_search (message_search, rowid, content, project_id)
        VALUES ('delete', old.id, old.content, old.project_id);
    END""",
    """CREATE TRIGGER message_search_update AFTER UPDATE OF content, project_id ON messages BEGIN
        INSERT INTO message_search (message_search, rowid, content, project_id)
        VALUES ('delete', old.id, old.content, old.project_id);
        INSERT INTO message_search (rowid, content, project_id)
        VALUES (new.id, new.content, new.project_id);
    END""",
    """CREATE VIRTUAL TABLE project_memory_search USING fts5 (
        note_id, content, content='project_memory', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    )""",
    """CREATE TRIGGER project_memory_search_insert AFTER INSERT ON project_memory BEGIN
        INSERT INTO project_memory_search (rowid, note_id, content)
        VALUES (new.id, new.note_id, new.content);
    END""",
    """CREATE TRIGGER project_memory_search_delete AFTER DELETE ON project_memory BEGIN
        INSERT INTO project_memory_search (project_memory_search, rowid, note_id, content)
        VALUES ('delete', old.id, old.note_id, old.content);
    END""",
    """CREATE TRIGGER project_memory_search_update AFTER UPDATE ON project_memory BEGIN
        INSERT INTO project_memory_search (project_memory_search, rowid, note_id, content)
        VALUES ('delete', old.id, old.note_id, old.content);
        INSERT INTO project_memory_search (rowid, note_id, content)
        VALUES (new.id, new.note_id, new.content);
    END""",
)

_TO_V2 = (
    """CREATE TABLE request_snapshots (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        turn_id TEXT,
        created_at REAL NOT NULL,
        model TEXT NOT NULL,
        system_prompt TEXT NOT NULL,
        tool_schemas TEXT NOT NULL
    )""",
    "CREATE INDEX request_snapshots_conversation ON request_snapshots (conversation_id)",
    "CREATE INDEX request_snapshots_created ON request_snapshots (created_at)",
    "CREATE INDEX messages_turn ON messages (turn_id)",
)


# Version 3 stores each distinct (system prompt, tool schemas) pair once: a long session sends
# the same ~18 KB with every request, and storing it per request made these debug rows most
# of the database. A trigger drops a payload once no snapshot refers to it (prunes and the
# conversation cascade both delete snapshots).
_TO_V3_TABLES = (
    """CREATE TABLE request_payloads (
        id INTEGER PRIMARY KEY,
        digest TEXT NOT NULL UNIQUE,
        system_prompt TEXT NOT NULL,
        tool_schemas TEXT NOT NULL
    )""",
    """CREATE TABLE request_snapshots_v3 (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        turn_id TEXT,
        created_at REAL NOT NULL,
        model TEXT NOT NULL,
        payload_id INTEGER NOT NULL REFERENCES request_payloads (id)
    )""",
)

_TO_V3_SWAP = (
    "DROP TABLE request_snapshots",
    "ALTER TABLE request_snapshots_v3 RENAME TO request_snapshots",
    "CREATE INDEX request_snapshots_conversation ON request_snapshots (conversation_id)",
    "CREATE INDEX request_snapshots_created ON request_snapshots (created_at)",
    "CREATE INDEX request_snapshots_payload ON request_snapshots (payload_id)",
    """CREATE TRIGGER request_payloads_unused AFTER DELETE ON request_snapshots BEGIN
        DELETE FROM request_payloads WHERE id = old.payload_id AND NOT EXISTS (
            SELECT 1 FROM request_snapshots WHERE payload_id = old.payload_id
        );
    END""",
)


# Version 4 indexes the tool calls and the tool results of each conversation: every open
# checks for calls without a result (store/conversations.py, _ORPHAN_IDS_SQL), and without
# these indexes that check read every row of the conversation, its answers included
# (0.06-0.4 s and 14 MB of page cache for 20,000 messages); with them it reads the indexes.
_TO_V4 = (
    "CREATE INDEX messages_tool_calls ON messages (conversation_id, role, tool_calls) "
    "WHERE tool_calls IS NOT NULL",
    "CREATE INDEX messages_tool_results ON messages (conversation_id, role, tool_call_id) "
    "WHERE tool_call_id IS NOT NULL",
)


def payload_digest(system_prompt: str, tool_schemas_json: str) -> str:
    """The key under which one (system prompt, tool schemas JSON) pair is stored once."""
    hasher = hashlib.sha256(system_prompt.encode("utf-8", "surrogatepass"))
    hasher.update(b"\0")
    hasher.update(tool_schemas_json.encode("utf-8", "surrogatepass"))
    return hasher.hexdigest()


def _to_v3(db: peewee.SqliteDatabase) -> None:
    _run_all(db, _TO_V3_TABLES)
    rows = db.execute_sql(
        "SELECT id, conversation_id, turn_id, created_at, model, system_prompt, tool_schemas "
        "FROM request_snapshots ORDER BY id"
    ).fetchall()
    for row_id, conversation_id, turn_id, created_at, model, prompt, schemas in rows:
        digest = payload_digest(prompt, schemas)
        db.execute_sql(
            "INSERT INTO request_payloads (digest, system_prompt, tool_schemas) VALUES (?, ?, ?) "
            "ON CONFLICT (digest) DO NOTHING",
            (digest, prompt, schemas),
        )
        (payload_id,) = db.execute_sql(
            "SELECT id FROM request_payloads WHERE digest = ?", (digest,)
        ).fetchone()
        db.execute_sql(
            "INSERT INTO request_snapshots_v3 "
            "(id, conversation_id, turn_id, created_at, model, payload_id) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (row_id, conversation_id, turn_id, created_at, model, payload_id),
        )
    _run_all(db, _TO_V3_SWAP)


@dataclass(frozen=True)
class Migration:
    """One upgrade step: applying it to a database at `to_version - 1` yields `to_version`."""

    to_version: int
    description: str
    apply: Callable[[peewee.SqliteDatabase], None]


def _run_all(db: peewee.SqliteDatabase, statements: tuple[str, ...]) -> None:
    # One statement at a time: sqlite3's executescript() would COMMIT the open transaction.
    for statement in statements:
        db.execute_sql(statement)


def create_baseline(db: peewee.SqliteDatabase) -> None:
    """Create the version-1 tables, indexes, search tables and triggers (no version row)."""
    _run_all(db, _BASELINE_V1)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        2,
        "request_snapshots debug table and messages-by-turn index",
        lambda db: _run_all(db, _TO_V2),
    ),
    Migration(
        3,
        "request snapshots keep each distinct system prompt and tool schemas once",
        _to_v3,
    ),
    Migration(
        4,
        "indexes of each conversation's tool calls and tool results",
        lambda db: _run_all(db, _TO_V4),
    ),
)

LATEST_VERSION = MIGRATIONS[-1].to_version if MIGRATIONS else BASELINE_VERSION
