"""The one exception type the store raises for anything a user or caller must fix."""

from smith_tui.errors import SmithError


class StoreError(SmithError):
    """A storage problem explained in words: what went wrong, where, and what to do."""

    code = "store"
