"""Exceptions raised by the configuration layer.

Every message is written for the person running ``smith``: it names where the bad
value came from, the setting's dotted path, and the rule it broke.
"""

from __future__ import annotations

from dataclasses import dataclass

from smith_tui.errors import SmithError


@dataclass(frozen=True)
class ConfigProblem:
    """One broken rule: the dotted path of the setting and what is wrong with it."""

    path: str
    rule: str

    def __str__(self) -> str:
        return f"{self.path}: {self.rule}" if self.path else self.rule


class ConfigError(SmithError):
    """The configuration cannot be used; ``message`` (also ``str(error)``) is what the user sees."""

    code = "config"

    def __init__(self, message: str, problems: tuple[ConfigProblem, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems

    def __str__(self) -> str:
        return self.message


class OverrideError(ConfigError):
    """A runtime override (``/config set`` / ``unset`` / ``get``) was refused; nothing was written."""

    code = "config_override"


class FrozenConfigError(TypeError):
    """Raised on any attempt to change a frozen configuration snapshot."""
