"""Where the database lives when the caller does not say."""

import os
from pathlib import Path


def default_db_path() -> Path:
    """Return `$XDG_DATA_HOME/smith/smith.db`, falling back to `~/.local/share/smith/smith.db`.

    An empty or relative `XDG_DATA_HOME` is ignored, as the XDG base-directory spec asks.
    """
    base = os.environ.get("XDG_DATA_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "smith" / "smith.db"
