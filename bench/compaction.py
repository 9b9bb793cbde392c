"""Benchmark compaction on a 20,000-message conversation, the model call excluded.

Run with ``.venv/bin/python bench/compaction.py [--messages N] [--repeats N]``. Uses the
transcript of bench/window.py (user prompts, tool rounds of 1-3 calls with outputs up to
6,000 characters, answers) with stored positions, and times, as medians:

* the tool-pair-safe cut alone (:func:`choose_cut`);
* the plan: cut plus the older part rendered for the summary request;
* the threshold check of the request that compacts (the elided estimate of the whole
  history: the raw-size shortcut does not apply once the window is full);
* ``Compactor.compact`` after that check, with a model that answers at once and the
  record written to a real SQLite store; and a second compaction;
* the per-request cost once compacted: the view ``[summary] + tail`` and its estimate.

The target is < 50 ms for a compaction excluding the model call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from figures import Figure, emit
from window import build_transcript, median_ms

from smith_tui.engine.compaction import (
    COMPACTION_NOTE_ID,
    KEEP_SHARE,
    CompactionContext,
    Compactor,
    choose_cut,
    save_record,
)
from smith_tui.engine.prompt import RequestBudget, estimate_request
from smith_tui.engine.window import CHARS_PER_TOKEN, WindowSettings
from smith_tui.store import Store

WINDOW = 128_000
TARGET_MS = 50.0


class InstantModel:
    """A model that answers every summary request at once (the call is not measured)."""

    async def chat_stream(self, request: Any, handlers: Any) -> Any:
        return SimpleNamespace(content="Summary: the user asked for fixes; tests pass now.")


def conversation(count: int, ids: str = "") -> list[dict[str, Any]]:
    """The bench/window.py transcript without its system prompt, with stored positions
    (``ids`` prefixes the call ids, which are unique in a real conversation)."""
    msgs = [m for m in build_transcript(count + 1) if m["role"] != "system"]
    for position, message in enumerate(msgs):
        message["position"] = position
        if message["role"] == "assistant" and message.get("content") is None:
            message["content"] = ""
        for call in message.get("tool_calls") or ():
            call["id"] = ids + call["id"]
        if message["role"] == "tool":
            message["tool_call_id"] = ids + message["tool_call_id"]
    return msgs


def compactor(store: Store | None, conversation_id: str) -> Compactor:
    budget = RequestBudget(WINDOW, 6_000, WINDOW // 10)
    return Compactor(
        CompactionContext(
            conversation_id=conversation_id,
            llm=InstantModel(),
            model="bench",
            budget=budget,
            window=WindowSettings(),
            emit=lambda event: None,
            store=store,
        )
    )


def main() -> None:
    """Run the scenarios and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    msgs = conversation(args.messages)
    chars = sum(len(m.get("content") or "") for m in msgs)
    print(f"{len(msgs)} messages, {chars / 1e6:.1f} M chars of content; window {WINDOW}")
    print(f"median of {args.repeats} runs\n")
    keep_chars = int(WINDOW * KEEP_SHARE) * CHARS_PER_TOKEN
    rows: list[tuple[str, float, bool]] = []

    cut_ms = median_ms(lambda: choose_cut(msgs, 0, keep_chars), args.repeats)
    rows.append(("tool-pair-safe cut (`choose_cut`)", cut_ms, True))
    plan_ms = median_ms(lambda: compactor(None, "c").plan(msgs), args.repeats)
    rows.append(("cut + older part rendered for the summary request", plan_ms, True))

    with tempfile.TemporaryDirectory() as folder:
        store = Store.open(Path(folder) / "bench.db")
        conv = store.conversations.create("bench-project", "bench")

        def fresh() -> Compactor:
            store.notes.delete(conv, COMPACTION_NOTE_ID)  # a conversation never compacted
            return compactor(store, conv)

        def check() -> None:
            fresh().over_threshold(msgs)

        loop = asyncio.new_event_loop()

        def compaction_ms(messages: list[dict[str, Any]], earlier: Any = None) -> float:
            """Median time of ``compact`` alone, after the threshold check a turn makes
            (``earlier``: the compaction record the conversation starts from)."""
            times = []
            for _ in range(args.repeats):
                live = fresh()
                if earlier is not None:
                    save_record(store, conv, earlier)
                live.over_threshold(messages)
                start = time.perf_counter()
                loop.run_until_complete(live.compact(messages, reason="auto"))
                times.append((time.perf_counter() - start) * 1000)
            return statistics.median(times)

        check_ms = median_ms(check, args.repeats)
        first_ms = compaction_ms(msgs)
        rows.append(
            ("threshold check that finds the window full (one window pass)", check_ms, False)
        )
        rows.append(
            ("compaction after it (cut, render, record stored, new estimate)", first_ms, True)
        )

        grown = msgs + conversation(2_000, ids="n")
        for position, message in enumerate(grown):
            message["position"] = position
        earlier = loop.run_until_complete(fresh().compact(msgs, reason="auto"))
        second_ms = compaction_ms(grown, earlier)
        rows.append(("second compaction (summary + 2,000 newer messages)", second_ms, True))

        live = compactor(store, conv)
        loop.run_until_complete(live.compact(msgs, reason="auto"))
        loop.close()
        view_ms = median_ms(
            lambda: estimate_request(live.view(msgs), live.context.budget, WindowSettings()),
            args.repeats,
        )
        rows.append(("per request once compacted: view + estimate", view_ms, False))
        store.close()

    figures = []
    for name, value, targeted in rows:
        met = value < TARGET_MS if targeted else None
        mark = "" if met is None else ("  ok" if met else "  OVER TARGET")
        print(f"{name:58} {value:8.2f} ms{mark}")
        figures.append(
            Figure(
                f"compaction, {len(msgs):,} messages: {name}",
                value,
                "ms",
                f"< {TARGET_MS:.0f} ms" if targeted else "—",
                met=met,
            )
        )
    emit("compaction", figures)


if __name__ == "__main__":
    main()
