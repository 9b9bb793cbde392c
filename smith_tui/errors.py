"""The root of Smith's own errors, and the one way to put any exception into words.

Every error Smith raises for a person to read - the configuration's, the store's, the
LLM client's, a tool's, a slash command's, a compaction's, the runtime's - is a
:class:`SmithError`: ``message`` is the sentence to show, ``code`` a stable name for it.
Code that catches these reads ``.message``; code that catches anything at all (a worker's
last line of defence) asks :func:`error_text`.

This module imports nothing else of smith_tui, so every layer may use it - the ``llm``
package, which stands alone, included (tests/test_import_graph.py).
"""

from __future__ import annotations


class SmithError(Exception):
    """A failure Smith explains in words: ``message`` says what went wrong and what to fix.

    ``code`` is a stable machine name (each kind of error has its own default; a subclass
    may set one per instance, e.g. the LLM client's ``http_429``).
    """

    code: str = "error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


def error_text(exc: BaseException) -> str:
    """What went wrong, for the user: a :class:`SmithError`'s message, else the exception's
    own text, else (an exception with no text) the name of its type."""
    if isinstance(exc, SmithError):
        return exc.message or type(exc).__name__
    return str(exc) or type(exc).__name__
