"""Every stored snapshot belongs to a test that still exists.

A serial run has syrupy fail on a snapshot no test used; under ``pytest -n`` (the README's
test command) syrupy leaves that check out, so this one stands in for it: a snapshot whose
test module or test function is gone (renamed, removed) is reported here. Parameter ids
are not checked (that needs a collection; a serial run's syrupy still does it).
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _test_functions(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    }


def test_every_snapshot_has_its_test() -> None:
    stale: list[str] = []
    snapshots = sorted(TESTS.rglob("__snapshots__/*/*.svg"))
    assert snapshots, "no snapshot found under tests/**/__snapshots__"
    for snapshot in snapshots:
        module = snapshot.parents[2] / f"{snapshot.parent.name}.py"
        name = snapshot.stem.split("[", 1)[0]
        if not module.is_file() or name not in _test_functions(module):
            stale.append(str(snapshot.relative_to(TESTS)))
    assert not stale, f"snapshots without their test (remove them or the rename): {stale}"
