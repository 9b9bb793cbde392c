"""The deep-frozen snapshot: every way of writing to it raises."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from smith_tui.config import FrozenConfigError, FrozenDict, FrozenList, freeze, thaw

SOURCE = {"a": {"b": [1, {"c": 2}], "d": "x"}, "e": (3, 4), "f": {5, 6}}


@pytest.fixture
def frozen() -> Any:
    return freeze(SOURCE)


def _setitem(f: Any) -> None:
    f["z"] = 1


def _nested_setitem(f: Any) -> None:
    f["a"]["d"] = "y"


def _deep_setitem(f: Any) -> None:
    f["a"]["b"][1]["c"] = 3


def _delitem(f: Any) -> None:
    del f["a"]


def _nested_delitem(f: Any) -> None:
    del f["a"]["b"][0]


def _list_setitem(f: Any) -> None:
    f["a"]["b"][0] = 9


def _ior(f: Any) -> None:
    value = f["a"]
    value |= {"q": 1}


def _iadd(f: Any) -> None:
    value = f["a"]["b"]
    value += [1]


def _imul(f: Any) -> None:
    value = f["a"]["b"]
    value *= 2


def _setattr(f: Any) -> None:
    f._data = {}


MUTATIONS: list[Callable[[Any], Any]] = [
    _setitem,
    _nested_setitem,
    _deep_setitem,
    _delitem,
    _nested_delitem,
    _list_setitem,
    _ior,
    _iadd,
    _imul,
    _setattr,
    lambda f: f.update({"z": 1}),
    lambda f: f["a"].update(d="y"),
    lambda f: f.pop("a"),
    lambda f: f.popitem(),
    lambda f: f.clear(),
    lambda f: f.setdefault("z", 1),
    lambda f: f["a"]["b"].append(3),
    lambda f: f["a"]["b"].extend([3]),
    lambda f: f["a"]["b"].insert(0, 3),
    lambda f: f["a"]["b"].remove(1),
    lambda f: f["a"]["b"].pop(),
    lambda f: f["a"]["b"].clear(),
    lambda f: f["a"]["b"].sort(),
    lambda f: f["a"]["b"].reverse(),
    lambda f: f["e"].append(5),
]


@pytest.mark.parametrize("mutate", MUTATIONS)
def test_every_mutation_raises(frozen: Any, mutate: Callable[[Any], Any]) -> None:
    before = thaw(frozen)
    with pytest.raises(FrozenConfigError, match="frozen"):
        mutate(frozen)
    assert thaw(frozen) == before


def test_the_error_is_a_type_error() -> None:
    assert issubclass(FrozenConfigError, TypeError)
    with pytest.raises(TypeError):
        freeze({"a": []})["a"].append(1)


def test_freeze_is_deep_and_reads_like_the_source(frozen: Any) -> None:
    assert isinstance(frozen, FrozenDict)
    assert isinstance(frozen["a"], FrozenDict)
    assert isinstance(frozen["a"]["b"], FrozenList)
    assert isinstance(frozen["a"]["b"][1], FrozenDict)
    assert isinstance(frozen["f"], frozenset)
    assert frozen["a"]["b"] == [1, {"c": 2}]
    assert frozen == {"a": {"b": [1, {"c": 2}], "d": "x"}, "e": [3, 4], "f": {5, 6}}
    assert frozen.get("missing") is None
    assert list(frozen) == ["a", "e", "f"]


def test_freeze_copies_so_later_changes_to_the_source_do_not_leak() -> None:
    source = {"a": [1]}
    frozen = freeze(source)
    source["a"].append(2)
    assert frozen["a"] == [1]


def test_thaw_gives_independent_plain_containers(frozen: Any) -> None:
    thawed = thaw(frozen)
    assert type(thawed) is dict
    assert type(thawed["a"]["b"]) is list
    thawed["a"]["b"].append(3)
    assert frozen["a"]["b"] == [1, {"c": 2}]
    json.dumps(thaw(freeze({"a": [1, {"b": None}]})))


def test_frozen_values_hash_copy_and_pickle() -> None:
    frozen = freeze({"a": [1, 2], "b": {"c": "d"}})
    assert hash(frozen) == hash(freeze({"a": [1, 2], "b": {"c": "d"}}))
    assert copy.deepcopy(frozen) == frozen
    assert pickle.loads(pickle.dumps(frozen)) == frozen
    merged = frozen | {"e": 1}
    assert merged["e"] == 1
    assert "e" not in frozen
