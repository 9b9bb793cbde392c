"""The user's answers about repositories' hooks, kept with the user's data, never in a repo.

One JSON file, ``<data_dir>/hook_trust.json``: by project path (resolved), the SHA-256 of
the settings file the user saw and whether they trusted it. A record counts only for that
path *and* those bytes, so a changed file asks again. The file is written atomically
with mode 0600; one that cannot be read counts as no answer (ask again), never as trust.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from smith_tui.config.locations import data_dir

TRUST_FILE_NAME = "hook_trust.json"
Answer = Literal["trusted", "refused", "unknown"]


def default_trust_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the answers are kept: the user's data folder (``XDG_DATA_HOME``)."""
    return data_dir(env) / TRUST_FILE_NAME


class TrustStore:
    """Reads and records the user's trust answers (:data:`Answer`)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> dict[str, dict[str, object]]:
        try:
            with open(self.path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        return projects if isinstance(projects, dict) else {}

    @staticmethod
    def _key(root: Path) -> str:
        return os.path.realpath(root)

    def answer(self, root: Path, digest: str) -> Answer:
        """What the user said about ``root``'s settings file with content ``digest``."""
        record = self._load().get(self._key(root))
        if not isinstance(record, dict) or not digest or record.get("sha256") != digest:
            return "unknown"
        return "trusted" if record.get("trusted") is True else "refused"

    def record(self, root: Path, digest: str, trusted: bool) -> None:
        """Keep the answer for ``root`` at ``digest`` (replacing an older one for ``root``)."""
        projects = self._load()
        projects[self._key(root)] = {"sha256": digest, "trusted": trusted, "at": time.time()}
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temp = tempfile.mkstemp(prefix=".hook-trust-", suffix=".json", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"projects": projects}, handle, indent=2)
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
