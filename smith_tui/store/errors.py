"""The one exception type the store raises for anything a user or caller must fix."""


class StoreError(Exception):
    """A storage problem explained in words: what went wrong, where, and what to do."""
