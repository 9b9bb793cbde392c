"""Deep-frozen containers for the configuration snapshot a turn observes.

``freeze`` turns dicts into ``FrozenDict`` and lists/tuples into ``FrozenList``,
recursively; ``thaw`` gives back plain, mutable ``dict``/``list`` copies. Every
mutating operation on a frozen container raises ``FrozenConfigError`` (a ``TypeError``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NoReturn

from smith_tui.config.errors import FrozenConfigError


def _refuse(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise FrozenConfigError("the configuration snapshot is frozen and cannot be changed")


class FrozenDict(Mapping[str, Any]):
    """A read-only mapping; its values are frozen too when built through ``freeze``."""

    __slots__ = ("_data", "_hash")
    _data: dict[str, Any]
    _hash: int | None

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self, "_data", dict(data or {}))
        object.__setattr__(self, "_hash", None)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"

    def __hash__(self) -> int:
        cached = self._hash
        if cached is None:
            cached = hash(frozenset(self._data.items()))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __or__(self, other: Mapping[str, Any]) -> FrozenDict:
        return FrozenDict({**self._data, **other})

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (self._data,))

    __setitem__ = _refuse
    __delitem__ = _refuse
    __setattr__ = _refuse
    __delattr__ = _refuse
    __ior__ = _refuse
    update = _refuse
    pop = _refuse
    popitem = _refuse
    clear = _refuse
    setdefault = _refuse


class FrozenList(tuple[Any, ...]):
    """A tuple that also refuses the list mutators (``append``, ``+=``, …) loudly."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"FrozenList({list(self)!r})"

    def __eq__(self, other: object) -> bool:
        # Compares equal to a list with the same items, like the JSON it came from.
        if isinstance(other, list):
            return list(self) == other
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = tuple.__hash__

    append = _refuse
    extend = _refuse
    insert = _refuse
    remove = _refuse
    pop = _refuse
    clear = _refuse
    sort = _refuse
    reverse = _refuse
    __setitem__ = _refuse
    __delitem__ = _refuse
    __iadd__ = _refuse
    __imul__ = _refuse


def freeze(obj: Any) -> Any:
    """Return a deep-frozen copy of ``obj``: mappings, lists and tuples recursively.

    Sets become ``frozenset``; scalars are returned unchanged.
    """
    if isinstance(obj, Mapping):
        return FrozenDict({key: freeze(value) for key, value in obj.items()})
    if isinstance(obj, list | tuple):
        return FrozenList(freeze(item) for item in obj)
    if isinstance(obj, set):
        return frozenset(obj)
    return obj


def thaw(obj: Any) -> Any:
    """Return a plain, mutable deep copy: mappings become dicts, sequences become lists."""
    if isinstance(obj, Mapping):
        return {key: thaw(value) for key, value in obj.items()}
    if isinstance(obj, list | tuple):
        return [thaw(item) for item in obj]
    if isinstance(obj, frozenset):
        return set(obj)
    return obj
