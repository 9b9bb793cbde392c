"""A wrapper that keeps the API key out of reprs, logs and error messages.

Every :class:`Secret` registers its value so that :func:`redact` can scrub it
from any text, even text a server echoed back to us.
"""

from __future__ import annotations

from typing import Any

_MIN_SECRET_LEN = 4
_KNOWN: set[str] = set()
MASK = "***"


class Secret:
    """Holds a sensitive string; ``str()``/``repr()`` never show it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError("Secret value must be a string")
        self._value = value
        if len(value) >= _MIN_SECRET_LEN:
            _KNOWN.add(value)

    def reveal(self) -> str:
        """Return the real value (only for building the Authorization header)."""
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __repr__(self) -> str:
        return f"Secret({MASK!r})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def __reduce__(self) -> Any:  # pickling would write the key to disk
        raise TypeError("Secret values cannot be pickled")


def redact(value: Any) -> Any:
    """Return ``value`` with every known secret replaced by ``***``.

    Strings are scrubbed; dicts, lists and tuples are copied and scrubbed
    recursively; anything else is returned unchanged.
    """
    if not _KNOWN:
        return value
    if isinstance(value, str):
        for secret in _KNOWN:
            if secret in value:
                value = value.replace(secret, MASK)
        return value
    if isinstance(value, dict):
        return {redact(k): redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact(v) for v in value)
    return value
