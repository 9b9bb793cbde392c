"""One symbol found by heuristic extraction, and the kinds a symbol can have."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

SymbolKind = Literal[
    "function",
    "method",
    "class",
    "struct",
    "enum",
    "trait",
    "interface",
    "type",
    "impl",
    "module",
    "constant",
    "macro",
]
"""A kind a :class:`Symbol` can have."""

KINDS: tuple[str, ...] = get_args(SymbolKind)
"""Every kind a :class:`Symbol` can have."""


@dataclass(frozen=True)
class Symbol:
    """One definition found in a source file.

    ``line`` is 1-based; ``depth`` is 0 for top-level definitions; ``parent``
    is the qualified name of the enclosing definition, if any; ``signature`` is
    the (shortened) definition line.
    """

    name: str
    kind: str
    line: int
    depth: int = 0
    parent: str | None = None
    signature: str = ""

    @property
    def qualified(self) -> str:
        """``parent.name`` for nested symbols, else ``name``."""
        return f"{self.parent}.{self.name}" if self.parent else self.name


def signature_of(line: str, limit: int = 160) -> str:
    """The definition line stripped and shortened for display."""
    text = " ".join(line.strip().split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
