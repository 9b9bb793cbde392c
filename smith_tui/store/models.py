"""peewee models mirroring the tables in `schema.py` (used for queries, never for DDL).

peewee binds a model class to one database, so each open `Store` gets its own subclasses
from `bind_models`; several stores can then be open in one process at once.
"""

from dataclasses import dataclass

import peewee


class _Base(peewee.Model):
    class Meta:
        legacy_table_names = False


class MetaRow(_Base):
    key = peewee.TextField(primary_key=True)
    value = peewee.TextField()

    class Meta:
        table_name = "meta"


class ConfigRow(_Base):
    key = peewee.TextField(primary_key=True)
    value = peewee.TextField()
    updated_at = peewee.FloatField()

    class Meta:
        table_name = "config"


class ConversationRow(_Base):
    id = peewee.TextField(primary_key=True)
    project_id = peewee.TextField()
    title = peewee.TextField(null=True)
    created_at = peewee.FloatField()
    updated_at = peewee.FloatField()
    parent_id = peewee.TextField(null=True)
    pinned_model = peewee.TextField(null=True)
    metadata = peewee.TextField()

    class Meta:
        table_name = "conversations"


class MessageRow(_Base):
    id = peewee.AutoField()
    conversation_id = peewee.TextField()
    project_id = peewee.TextField()
    position = peewee.IntegerField()
    role = peewee.TextField()
    content = peewee.TextField(null=True)
    reasoning = peewee.TextField(null=True)
    tool_calls = peewee.TextField(null=True)
    tool_call_id = peewee.TextField(null=True)
    name = peewee.TextField(null=True)
    turn_id = peewee.TextField(null=True)
    round = peewee.IntegerField(null=True)
    recall_key = peewee.TextField(null=True)
    metadata = peewee.TextField()
    created_at = peewee.FloatField()

    class Meta:
        table_name = "messages"


class TurnRow(_Base):
    id = peewee.TextField(primary_key=True)
    conversation_id = peewee.TextField()
    role = peewee.TextField()
    status = peewee.TextField()
    stop_reason = peewee.TextField(null=True)
    error = peewee.TextField(null=True)
    started_at = peewee.FloatField()
    finished_at = peewee.FloatField(null=True)

    class Meta:
        table_name = "turns"


class NoteRow(_Base):
    id = peewee.AutoField()
    conversation_id = peewee.TextField()
    note_id = peewee.TextField()
    content = peewee.TextField()
    created_at = peewee.FloatField()
    updated_at = peewee.FloatField()

    class Meta:
        table_name = "notes"


class UsageRow(_Base):
    id = peewee.AutoField()
    conversation_id = peewee.TextField()
    turn_id = peewee.TextField()
    role = peewee.TextField()
    job_id = peewee.TextField(null=True)
    model = peewee.TextField()
    input_tokens = peewee.IntegerField()
    output_tokens = peewee.IntegerField()
    total_tokens = peewee.IntegerField()
    cost = peewee.FloatField(null=True)
    created_at = peewee.FloatField()

    class Meta:
        table_name = "usage"


class MemoryRow(_Base):
    id = peewee.AutoField()
    project_id = peewee.TextField()
    note_id = peewee.TextField()
    content = peewee.TextField()
    created_at = peewee.FloatField()
    updated_at = peewee.FloatField()

    class Meta:
        table_name = "project_memory"


class PayloadRow(_Base):
    id = peewee.AutoField()
    digest = peewee.TextField(unique=True)
    system_prompt = peewee.TextField()
    tool_schemas = peewee.TextField()

    class Meta:
        table_name = "request_payloads"


class SnapshotRow(_Base):
    id = peewee.AutoField()
    conversation_id = peewee.TextField()
    turn_id = peewee.TextField(null=True)
    created_at = peewee.FloatField()
    model = peewee.TextField()
    payload_id = peewee.IntegerField()

    class Meta:
        table_name = "request_snapshots"


ALL_MODELS: tuple[type[_Base], ...] = (
    MetaRow,
    ConfigRow,
    ConversationRow,
    MessageRow,
    TurnRow,
    NoteRow,
    UsageRow,
    MemoryRow,
    SnapshotRow,
    PayloadRow,
)


@dataclass(frozen=True)
class BoundModels:
    """The model classes of one open database."""

    meta: type[MetaRow]
    config: type[ConfigRow]
    conversation: type[ConversationRow]
    message: type[MessageRow]
    turn: type[TurnRow]
    note: type[NoteRow]
    usage: type[UsageRow]
    memory: type[MemoryRow]
    snapshot: type[SnapshotRow]
    payload: type[PayloadRow]


def _bind(model: type[_Base], db: peewee.Database) -> type:
    meta = type("Meta", (), {"database": db, "table_name": model._meta.table_name})
    return type(model.__name__, (model,), {"Meta": meta, "__module__": __name__})


def bind_models(db: peewee.Database) -> BoundModels:
    """Return fresh subclasses of every model bound to `db`."""
    return BoundModels(*(_bind(model, db) for model in ALL_MODELS))
