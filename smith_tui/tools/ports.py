"""What a front end or the engine plugs into the tools: the file backend and the skills.

Protocols only (no tool imports), so :mod:`smith_tui.tools.spec` can type
:class:`~smith_tui.tools.spec.ToolServices` with them while the tools that use them
import the spec. The command runner's protocol is :mod:`smith_tui.tools.command_runner`'.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol


class FileBackend(Protocol):
    """Where ``read``, ``edit`` and ``write`` get and put file text instead of the disk.

    An editor front end (ACP) offers its buffers, so unsaved changes are seen and
    writes land in the editor. Both methods are called from worker threads and may
    decline: ``None`` / ``False`` means "use the disk".
    """

    def read_text(self, path: Path) -> str | None:
        """The text of ``path`` (an absolute, policy-checked path), or ``None``."""
        ...

    def write_text(self, path: Path, text: str) -> bool:
        """Write ``text`` to ``path``; ``False`` when the disk should be written instead."""
        ...


class SkillEntry(Protocol):
    """One skill as the ``skill`` tool needs it."""

    @property
    def name(self) -> str: ...
    @property
    def folder(self) -> Path: ...


class SkillSource(Protocol):
    """The skills the turn may load (the engine's discovery)."""

    @property
    def skills(self) -> Sequence[SkillEntry]: ...
