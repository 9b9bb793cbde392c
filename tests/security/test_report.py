"""docs/SECURITY.md is rendered from the runs' rows: figures per section and user."""

from __future__ import annotations

from typing import Any

from tests.security.report import render


def _run(user: str, rows: list[tuple[str, str, str, str]]) -> dict[str, Any]:
    return {
        "user": user,
        "uid": 0 if user == "root" else 999,
        "python": "3.11.7",
        "kernel": "6.1",
        "started": 0.0,
        "rows": [
            {"kind": k, "section": s, "what": w, "test": f"t.py::{w}", "outcome": o, "detail": ""}
            for k, s, w, o in rows
        ],
    }


PROSE = (
    "Intro text.\n<!-- section: sandbox -->\nSandbox prose.\n<!-- section: scope -->\nOut of scope."
)


def test_figures_count_attacks_held_and_controls_per_user() -> None:
    root = _run(
        "root",
        [
            ("attack", "sandbox", "proc write", "passed"),
            ("attack", "sandbox", "socket", "failed"),
            ("control", "sandbox", "proc write works outside", "passed"),
        ],
    )
    plain = _run("smith-plain", [("attack", "sandbox", "proc write", "passed")])
    text = render([root, plain], PROSE)
    line = next(row for row in text.splitlines() if row.startswith("| The sandbox"))
    assert "2 (root) / 1 (smith-plain)" in line
    assert "| 1 / 1 |" in line
    assert "1 of 1 / 0 of 0" in line
    assert (
        "Intro text." in text
        and "Sandbox prose." in text
        and text.rstrip().endswith("Out of scope.")
    )
    assert "| attack | socket | failed | not run | `socket` |" in text


def test_a_parametrized_row_counts_each_outcome() -> None:
    root = _run(
        "root",
        [
            ("control", "sandbox", "forms", "passed"),
            ("control", "sandbox", "forms", "passed"),
            ("control", "sandbox", "forms", "skipped"),
        ],
    )
    text = render([root], PROSE)
    assert "| control | forms | passed ×2, skipped ×1 |" in text
    line = next(row for row in text.splitlines() if row.startswith("| The sandbox"))
    assert "2 of 3" in line
