"""The machine-readable figures line every benchmark prints for ``bench/run_all.py``.

A benchmark keeps printing its own human-readable report and ends with one line::

    BENCH-FIGURES {"bench": "headless", "load": [..], "figures": [{...}, ...]}

Each figure is a :class:`Figure`: what was measured, our value, the baseline measured in
the same run (if any), their ratio and the target, all as display strings except the
numbers ``value``/``baseline``/``ratio`` kept for whoever wants to compute with them.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from typing import Any

PREFIX = "BENCH-FIGURES "


@dataclass
class Figure:
    """One row of the figures table."""

    figure: str
    """What was measured, e.g. "smith -p hi, whole process: wall"."""
    value: float | None
    """``None``: not measured (the figure's text says why)."""
    unit: str
    target: str = "—"
    """The target as text, e.g. "≤ 0.5 s" ("—" when there is none)."""
    baseline: float | None = None
    baseline_name: str = ""
    """What the baseline is, e.g. "bare httpx one-shot"."""
    ratio: float | None = None
    """``value / baseline`` unless the benchmark says otherwise."""
    met: bool | None = None
    """Whether the target is met (``None`` when there is no target)."""

    def __post_init__(self) -> None:
        if self.ratio is None and self.baseline and self.value is not None:
            self.ratio = self.value / self.baseline


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages (empty where the OS does not say)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def emit(bench: str, figures: list[Figure], **extra: Any) -> None:
    """Print the figures line for ``bench``; ``extra`` goes into the JSON object as is."""
    payload = {"bench": bench, "load": load_average(), "figures": [asdict(f) for f in figures]}
    payload.update(extra)
    print(PREFIX + json.dumps(payload, ensure_ascii=False), flush=True)


def parse(output: str) -> list[dict[str, Any]]:
    """Every figures object printed in ``output`` (a benchmark's stdout)."""
    found = []
    for line in output.splitlines():
        if line.startswith(PREFIX):
            found.append(json.loads(line[len(PREFIX) :]))
    return found
