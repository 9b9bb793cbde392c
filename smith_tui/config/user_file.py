"""Writing one setting into the user's JSON config file (the welcome screen saves the URL).

The file keeps every other key as it was; it is replaced in one step (a temporary file
renamed over it), so a crash never leaves half a file.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from smith_tui.config.errors import ConfigError
from smith_tui.config.layers import read_user_file


def write_user_setting(path: Path, dotted: str, value: Any) -> None:
    """Set ``dotted`` (e.g. ``llm_config.api_url``) to ``value`` in the JSON file ``path``.

    The file and its folder are created when missing. Raises :class:`ConfigError` when
    the file cannot be read as a JSON object or cannot be written.
    """
    data = read_user_file(path)
    table = data
    *parents, leaf = dotted.split(".")
    for part in parents:
        child = table.get(part)
        if not isinstance(child, dict):
            child = {}
            table[part] = child
        table = child
    table[leaf] = value
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".config-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise ConfigError(f"Cannot write config file {path}: {exc.strerror or exc}.") from None
