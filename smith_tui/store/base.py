"""The shared base of every repository: one database and its bound models."""

import peewee

from smith_tui.store.models import BoundModels


class Repository:
    """Holds the database handle and model classes that a repository queries."""

    def __init__(self, db: peewee.SqliteDatabase, models: BoundModels) -> None:
        self._db = db
        self._m = models
