"""Benchmark the context-window policy on a 20,000-message transcript.

Run with ``.venv/bin/python bench/window.py``. Prints the median time per
``apply_window`` call for a few settings and compares it with a naive
deepcopy-based implementation of the same policy measured in the same run.
"""

from __future__ import annotations

import copy
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from figures import Figure, emit

from smith_tui.engine.window import apply_window, elision_placeholder

MESSAGES = 20_000
REPEATS = 21


def build_transcript(count: int, seed: int = 7, max_output: int = 6000) -> list[dict[str, Any]]:
    """Return a realistic transcript: turns of user text, tool rounds and answers."""
    rng = random.Random(seed)
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are Smith. " * 200}]
    call = 0
    while len(msgs) < count:
        msgs.append(
            {"role": "user", "content": "please fix the failing test " * rng.randint(1, 20)}
        )
        for _ in range(rng.randint(1, 6)):
            calls = []
            results = []
            for _ in range(rng.randint(1, 3)):
                call += 1
                cid = f"call_{call}"
                calls.append(
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command": "pytest -q"}'},
                    }
                )
                result = {
                    "role": "tool",
                    "tool_call_id": cid,
                    "content": "x" * rng.randint(50, max_output),
                }
                if rng.random() < 0.2:
                    result["recall_key"] = f"dispatch/{cid}"
                results.append(result)
            msgs.append({"role": "assistant", "content": None, "tool_calls": calls})
            msgs.extend(results)
        msgs.append({"role": "assistant", "content": "Done. " * rng.randint(5, 80)})
    return msgs[:count] if msgs[count - 1]["role"] != "tool" else msgs[: count + 5]


def naive_window(
    messages: list[dict[str, Any]],
    *,
    tool_output_keep_rounds: int,
    tool_output_elide_over_chars: int,
    trim_threshold_pct: float,
    context_window: int,
) -> list[dict[str, Any]]:
    """The same policy written the obvious way: deepcopy everything, then edit."""
    msgs = copy.deepcopy(messages)
    groups: list[list[dict[str, Any]]] = []
    for m in msgs:
        if m["role"] == "tool" and groups and groups[-1][0].get("tool_calls"):
            groups[-1].append(m)
        else:
            groups.append([m])
    rounds = [g for g in groups if g[0].get("tool_calls")]
    for g in rounds[: max(0, len(rounds) - tool_output_keep_rounds)]:
        for m in g[1:]:
            if len(m["content"]) > tool_output_elide_over_chars:
                m["content"] = elision_placeholder(len(m["content"]), m.get("recall_key"))

    def size(m: dict[str, Any]) -> int:
        n = len(m.get("content") or "")
        for c in m.get("tool_calls") or []:
            n += len(c["function"]["name"]) + len(c["function"]["arguments"])
        return n

    last_user = max(i for i, g in enumerate(groups) if g[0]["role"] == "user")
    total = sum(size(m) for g in groups for m in g)
    budget = context_window * trim_threshold_pct / 100
    kept = list(range(len(groups)))
    pos = 1
    while -(-total // 4) > budget and pos < len(kept):
        if kept[pos] == last_user:
            pos += 1
            continue
        total -= sum(size(m) for m in groups[kept[pos]])
        del kept[pos]
    return [m for i in kept for m in groups[i]]


def median_ms(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    """Return the median wall time of ``fn()`` in milliseconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    """Run every scenario and print the figures."""
    big = build_transcript(MESSAGES)
    small = build_transcript(MESSAGES, seed=11, max_output=200)
    for name, msgs in (("big", big), ("small", small)):
        chars = sum(len(m.get("content") or "") for m in msgs)
        print(f"{name} transcript: {len(msgs)} messages, {chars / 1e6:.1f} M chars of content")
    print(f"median of {REPEATS} calls (naive: of 5)\n")
    base = dict(tool_output_keep_rounds=7, tool_output_elide_over_chars=1024, trim_threshold_pct=80)
    scenarios = [
        ("big, 128k window (elide + drop)", big, dict(context_window=128_000)),
        ("big, 1M window (elide + drop)", big, dict(context_window=1_000_000)),
        ("big, 10M window (elide, no drop)", big, dict(context_window=10_000_000)),
        ("small, 1M window (fits, no-op)", small, dict(context_window=1_000_000)),
        (
            "big, keep all rounds, 100M (no-op)",
            big,
            dict(context_window=100_000_000, tool_output_keep_rounds=10**9),
        ),
    ]
    print(f"{'scenario':36} {'apply_window':>13} {'naive':>10} {'ratio':>7}")
    rows = []
    for name, msgs, extra in scenarios:
        opts = {**base, **extra}
        fast = median_ms(lambda msgs=msgs, opts=opts: apply_window(msgs, **opts))
        slow = median_ms(lambda msgs=msgs, opts=opts: naive_window(msgs, **opts), repeats=5)
        print(f"{name:36} {fast:10.2f} ms {slow:7.1f} ms {slow / fast:6.1f}x")
        rows.append(
            Figure(
                f"`apply_window`, 20,000 messages: {name}",
                fast,
                "ms",
                "< 20 ms",
                slow,
                "naive deepcopy policy",
                met=fast < 20,
            )
        )
    off = median_ms(lambda: apply_window(big, enabled=False))
    print(f"{'enabled=false (copy + estimate)':36} {off:10.2f} ms")
    rows.append(Figure("`apply_window`, enabled=false (copy + estimate)", off, "ms"))
    emit("window", rows)


if __name__ == "__main__":
    main()
