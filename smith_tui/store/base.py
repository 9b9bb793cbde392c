"""The shared base of every repository: one database and its bound models."""

import peewee

from smith_tui.store.models import BoundModels


def changed_rows(query: peewee.Query) -> int:
    """Run a ``DELETE`` or ``UPDATE`` query; the number of rows it changed (peewee's
    ``execute`` is typed ``Any``: the kind of query decides what it returns)."""
    count: int = query.execute()
    return count


class Repository:
    """Holds the database handle and model classes that a repository queries."""

    def __init__(self, db: peewee.SqliteDatabase, models: BoundModels) -> None:
        self._db = db
        self._m = models
