"""Pure operations on nested config tables: deep merge and dotted-path access."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from smith_tui.config.frozen import thaw

_MISSING = object()
_ABSENT = object()


def deep_merge(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``overlay`` onto ``base``: tables merge key by key, anything else replaces.

    Neither input is changed; the result is a plain, independent ``dict``.
    """
    merged: dict[str, Any] = thaw(base)
    for key, value in overlay.items():
        current = merged.get(key)
        if isinstance(value, Mapping) and isinstance(current, dict):
            merged[key] = deep_merge(current, value)
        else:
            merged[key] = thaw(value)
    return merged


def split_path(path: str) -> list[str]:
    """Split ``"a.b.c"`` into stripped segments; empty ones are kept so callers can reject them."""
    return [part.strip() for part in path.split(".")]


def lookup(tree: Mapping[str, Any], parts: Sequence[str], default: Any = _MISSING) -> Any:
    """Return the value at ``parts``; ``default`` (or ``KeyError``) when any segment is absent."""
    node: Any = tree
    for part in parts:
        if not isinstance(node, Mapping) or part not in node:
            if default is _MISSING:
                raise KeyError(".".join(parts))
            return default
        node = node[part]
    return node


def contains(tree: Mapping[str, Any], parts: Sequence[str]) -> bool:
    """Whether the full path ``parts`` is present in ``tree``."""
    return lookup(tree, parts, _ABSENT) is not _ABSENT


def with_leaf(tree: Mapping[str, Any], parts: Sequence[str], value: Any) -> dict[str, Any]:
    """A copy of ``tree`` with ``value`` set at ``parts``, creating (or replacing) tables on the way."""
    result: dict[str, Any] = thaw(tree)
    node = result
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = thaw(value)
    return result


def without_leaf(tree: Mapping[str, Any], parts: Sequence[str]) -> dict[str, Any]:
    """A copy of ``tree`` without the value at ``parts``; tables left empty are pruned."""
    result: dict[str, Any] = thaw(tree)
    trail: list[tuple[dict[str, Any], str]] = []
    node: Any = result
    for part in parts:
        if not isinstance(node, dict) or part not in node:
            return result
        trail.append((node, part))
        node = node[part]
    parent, key = trail.pop()
    del parent[key]
    while trail and not parent:
        parent, key = trail.pop()
        del parent[key]
    return result


def leaf_paths(tree: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted paths of every non-table value in ``tree`` (empty tables count as leaves)."""
    paths: list[str] = []
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            paths.extend(leaf_paths(value, f"{path}."))
        else:
            paths.append(path)
    return paths
