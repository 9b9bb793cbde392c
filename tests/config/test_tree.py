"""Deep merge and dotted-path edits of nested config tables."""

from __future__ import annotations

from smith_tui.config import deep_merge, freeze
from smith_tui.config.tree import leaf_paths, lookup, with_leaf, without_leaf


def test_tables_merge_key_by_key_and_everything_else_replaces() -> None:
    base = {"a": {"x": 1, "y": {"p": 1}}, "b": [1, 2], "c": {"t": 1}, "d": 5}
    overlay = {"a": {"y": {"q": 2}, "z": 3}, "b": [9], "c": 7, "d": {"now": "table"}}
    assert deep_merge(base, overlay) == {
        "a": {"x": 1, "y": {"p": 1, "q": 2}, "z": 3},
        "b": [9],
        "c": 7,
        "d": {"now": "table"},
    }


def test_merge_copies_and_never_changes_its_inputs() -> None:
    base = {"a": {"list": [1]}}
    overlay = {"a": {"other": [2]}}
    merged = deep_merge(base, overlay)
    merged["a"]["list"].append(99)
    merged["a"]["other"].append(99)
    assert base == {"a": {"list": [1]}}
    assert overlay == {"a": {"other": [2]}}


def test_merge_accepts_frozen_inputs_and_returns_plain_containers() -> None:
    merged = deep_merge(freeze({"a": {"b": [1]}}), freeze({"a": {"c": 2}}))
    assert type(merged["a"]) is dict
    assert type(merged["a"]["b"]) is list


def test_leaf_edits() -> None:
    tree = {"a": {"b": 1}, "s": 3}
    assert with_leaf(tree, ["a", "c"], 2) == {"a": {"b": 1, "c": 2}, "s": 3}
    assert with_leaf(tree, ["s", "t"], 2) == {"a": {"b": 1}, "s": {"t": 2}}
    assert without_leaf(tree, ["a", "b"]) == {"s": 3}
    assert without_leaf(tree, ["a", "missing"]) == tree
    assert without_leaf(tree, ["s", "deeper"]) == tree
    assert tree == {"a": {"b": 1}, "s": 3}
    assert lookup(tree, ["a", "b"]) == 1
    assert lookup(tree, ["s", "t"], None) is None
    assert leaf_paths({"a": {"b": 1, "e": {}}, "c": [1]}) == ["a.b", "a.e", "c"]
