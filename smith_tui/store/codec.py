"""Encoding and validation of everything the store writes.

JSON is always emitted with sorted keys and compact separators, so equal values give equal
bytes. Records are checked against their dataclass annotations before they are written, and
structural ids (conversation, turn, project, job) are checked to be non-empty and `:`-free.
"""

import dataclasses
import functools
import json
import math
import secrets
import string
import types
import typing
from collections.abc import Callable
from typing import Any, Union

from smith_tui.store.errors import StoreError

_ID_ALPHABET = string.ascii_letters + string.digits
_ID_LENGTH = 12  # 62**12: about 71 bits


def new_id() -> str:
    """Return a fresh short random id: 12 letters and digits.

    No `-` or `_`: an id that starts with `-` would read as an option on the command line
    (`smith --resume -x…`), and plain alphanumerics survive copy and paste everywhere.
    """
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(_ID_LENGTH))


def check_structural_id(value: object, what: str) -> str:
    """Return `value` if it is a usable structural id, else raise `StoreError`.

    Structural ids are joined into composite keys elsewhere, so they must be non-empty
    strings without `:` and without surrounding whitespace.
    """
    if not isinstance(value, str) or not value:
        raise StoreError(f"{what} must be a non-empty string, got {value!r}")
    if ":" in value:
        raise StoreError(f"{what} must not contain ':', got {value!r}")
    if value != value.strip():
        raise StoreError(f"{what} must not start or end with whitespace, got {value!r}")
    return value


def dumps(value: Any, *, what: str = "value") -> str:
    """Serialise `value` to deterministic JSON text (sorted keys, no NaN, UTF-8 kept)."""
    try:
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError) as exc:
        raise StoreError(f"{what} cannot be stored as JSON: {exc}") from None


def loads(text: str | None) -> Any:
    """Parse JSON text written by `dumps`; `None` stays `None`."""
    if text is None:
        return None
    return json.loads(text)


def dumps_optional(value: Any, *, what: str = "value") -> str | None:
    """Like `dumps`, but `None` is stored as SQL NULL rather than the text `null`."""
    return None if value is None else dumps(value, what=what)


def _checker(annotation: Any) -> Callable[[Any], bool]:
    """Compile an annotation (classes, `X | None`, `list[...]`, `dict[...]`, Any) to a test."""
    if annotation is Any:
        return lambda value: True
    union = typing.get_origin(annotation) in (Union, types.UnionType)
    arms = typing.get_args(annotation) if union else (annotation,)
    want_int = int in arms
    want_float = float in arms
    plain = tuple(
        typing.get_origin(arm) or arm for arm in arms if arm is not int and arm is not float
    )
    allow_bool = bool in plain

    def check(value: Any) -> bool:
        if isinstance(value, bool):
            return allow_bool
        if want_float and isinstance(value, int | float):
            return math.isfinite(value)
        if want_int and isinstance(value, int):
            return True
        return isinstance(value, plain)

    return check


def _describe(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) if typing.get_origin(annotation) is None else None
    return text or str(annotation).replace("typing.", "")


@functools.cache
def _field_checks(record_type: type) -> tuple[tuple[str, Any, Callable[[Any], bool]], ...]:
    hints = typing.get_type_hints(record_type)
    return tuple(
        (field.name, hints[field.name], _checker(hints[field.name]))
        for field in dataclasses.fields(record_type)
    )


def validate_record(record: Any) -> Any:
    """Check every field of a record dataclass against its annotation; return the record.

    Raises `StoreError` naming the record type, the field, the expected type and the value.
    """
    if not dataclasses.is_dataclass(record) or isinstance(record, type):
        raise StoreError(f"expected a record dataclass instance, got {type(record).__name__}")
    for name, expected, check in _field_checks(type(record)):
        value = getattr(record, name)
        if not check(value):
            raise StoreError(
                f"{type(record).__name__}.{name} must be {_describe(expected)}, "
                f"got {type(value).__name__} {value!r:.80}"
            )
    return record
