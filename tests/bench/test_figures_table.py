"""docs/PERFORMANCE.md's generated table keeps a row for every benchmark run_all.py knows.

The table is rewritten by ``bench/run_all.py`` and merged like any text: a merge that takes
one side of the block can silently drop the rows of a benchmark run on the other side (the
peers' rows were lost that way once). This check makes such a loss fail instead.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.bench.bench_modules import bench_module

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run_all() -> ModuleType:
    return bench_module("run_all")


def test_every_benchmark_has_rows_in_the_generated_table(run_all: ModuleType) -> None:
    text = (ROOT / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8")
    rows = run_all.existing_rows(text)
    missing = [bench.name for bench in run_all.BENCHES if not rows.get(bench.name)]
    assert not missing, f"no generated rows for {missing}: rerun bench/run_all.py --only ..."


def test_the_check_sees_a_dropped_benchmark(run_all: ModuleType) -> None:
    text = (ROOT / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8")
    dropped = "\n".join(line for line in text.splitlines() if not line.startswith("| `peers` |"))
    assert "peers" in run_all.existing_rows(text)
    assert "peers" not in run_all.existing_rows(dropped)
