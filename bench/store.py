"""Benchmark the store: round writes, then full-text query latency over what was written.

Run with ``.venv/bin/python bench/store.py`` (1,000,000 messages) or
``.venv/bin/python bench/store.py --messages 50000`` for a quick run. Building the million
takes minutes: ``--db /tmp/smith-1m.db --reuse`` builds that file once and keeps it, and
later runs with the same options only time the searches on it. Messages are written in
rounds of 10 (assistant tool call, tool results, assistant text), each round with its usage
record in one transaction, as the turn engine writes them. Then a mix of searches is timed:
common, mid-frequency and rare words, two-word queries, phrases, prefixes, with and without
a project filter, and finally how long opening the finished database takes.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from figures import Figure, emit

from smith_tui.store import Store

ROUND_SIZE = 10
MESSAGES_PER_CONVERSATION = 1_000
PROJECTS = 10
VOCABULARY = 30_000
SYLLABLES = [a + b for a in "bcdfghjklmnprstvwz" for b in "aeiou"] + ["th", "st", "er", "on"]


def make_vocabulary(rng: random.Random) -> list[str]:
    """Distinct pseudo-words; index 0 is the most frequent under the Zipf weights below."""
    words: set[str] = set()
    ordered: list[str] = []
    while len(ordered) < VOCABULARY:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in words:
            words.add(word)
            ordered.append(word)
    return ordered


class TextMaker:
    """Zipf-distributed text over the vocabulary (frequency ~ 1 / rank)."""

    def __init__(self, vocabulary: list[str], rng: random.Random) -> None:
        self.vocabulary = vocabulary
        self.rng = rng
        self.cumulative = list(
            itertools.accumulate(1.0 / (rank + 1) for rank in range(len(vocabulary)))
        )

    def words(self, count: int) -> str:
        top = self.cumulative[-1]
        picks = [bisect.bisect_left(self.cumulative, self.rng.random() * top) for _ in range(count)]
        return " ".join(self.vocabulary[i] for i in picks)


def make_round(text: TextMaker, rng: random.Random, serial: int) -> list[dict[str, Any]]:
    """Ten messages: a tool-call round with four results, text, and a second short round."""
    calls = [
        {
            "id": f"call_{serial}_{i}",
            "type": "function",
            "function": {"name": "bash", "arguments": '{"command": "pytest -q"}'},
        }
        for i in range(4)
    ]
    round_messages: list[dict[str, Any]] = [
        {"role": "user", "content": text.words(rng.randint(8, 30))},
        {"role": "assistant", "content": None, "tool_calls": calls},
    ]
    round_messages += [
        {"role": "tool", "tool_call_id": call["id"], "content": text.words(rng.randint(20, 120))}
        for call in calls
    ]
    round_messages += [
        {"role": "assistant", "content": text.words(rng.randint(10, 60))},
        {"role": "user", "content": text.words(rng.randint(5, 20))},
        {"role": "assistant", "content": text.words(rng.randint(10, 60))},
        {"role": "assistant", "content": text.words(rng.randint(5, 30)), "reasoning": "short"},
    ]
    assert len(round_messages) == ROUND_SIZE
    return round_messages


def write(store: Store, total: int, text: TextMaker, rng: random.Random) -> dict[str, float]:
    """Write `total` messages; time only the store calls, not the text generation."""
    rounds = total // ROUND_SIZE
    per_conversation = MESSAGES_PER_CONVERSATION // ROUND_SIZE
    conversation = ""
    turn = ""
    in_store = 0.0
    started = last_report = time.perf_counter()
    for number in range(rounds):
        messages = make_round(text, rng, number)
        before = time.perf_counter()
        if number % per_conversation == 0:
            project = f"project{number // per_conversation % PROJECTS}"
            conversation = store.conversations.create(project)
            turn = store.turns.start(conversation, "smith")
        with store.atomic():
            store.conversations.append_messages(conversation, messages, turn, number)
            store.usage.record(conversation, turn, "smith", "bench-model", 1000, 200)
        now = time.perf_counter()
        in_store += now - before
        if now - last_report > 15:
            done = number + 1
            print(
                f"  {done * ROUND_SIZE:>9,} messages, {done / in_store:,.0f} rounds/s", flush=True
            )
            last_report = now
    return {
        "rounds": rounds,
        "seconds": in_store,
        "wall_seconds": time.perf_counter() - started,
        "rounds_per_second": rounds / in_store,
    }


def report_write(written: dict[str, float], db: Path) -> None:
    size_mb = db.stat().st_size / 1e6
    print(
        f"write: {written['rounds']:,.0f} rounds in {written['seconds']:.1f} s of store time "
        f"({written['wall_seconds']:.1f} s wall incl. text generation) = "
        f"{written['rounds_per_second']:,.0f} rounds/s "
        f"({written['rounds_per_second'] * ROUND_SIZE:,.0f} messages/s); file {size_mb:,.0f} MB"
    )


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def build_queries(
    vocabulary: list[str], conversations: list[str], rng: random.Random, count: int
) -> dict[str, list[tuple[str, dict[str, str]]]]:
    """Query mixes by kind; each query comes with its filter keyword arguments."""
    common = vocabulary[:50]
    mid = vocabulary[500:5000]
    rare = vocabulary[10_000:]
    per_kind = max(1, count // 9)

    def project() -> dict[str, str]:
        return {"project_id": f"project{rng.randrange(PROJECTS)}"}

    def conversation() -> dict[str, str]:
        return {"conversation_id": rng.choice(conversations)}

    return {
        "common word": [(rng.choice(common), {}) for _ in range(per_kind)],
        "mid word": [(rng.choice(mid), {}) for _ in range(per_kind)],
        "rare word": [(rng.choice(rare), {}) for _ in range(per_kind)],
        "two words": [(f"{rng.choice(mid)} {rng.choice(common)}", {}) for _ in range(per_kind)],
        "phrase": [(f'"{rng.choice(common)} {rng.choice(common)}"', {}) for _ in range(per_kind)],
        "prefix": [(rng.choice(mid)[:4] + "*", {}) for _ in range(per_kind)],
        "mid word + project": [(rng.choice(mid), project()) for _ in range(per_kind)],
        "common word + project": [(rng.choice(common), project()) for _ in range(per_kind)],
        "common + conversation": [(rng.choice(common), conversation()) for _ in range(per_kind)],
    }


def query(store: Store, mixes: dict[str, list[tuple[str, dict[str, str]]]]) -> list[float]:
    every: list[float] = []
    print(f"{'query kind':<22}{'p50 ms':>9}{'p95 ms':>9}{'avg hits':>10}")
    for kind, queries in mixes.items():
        timings: list[float] = []
        hits = 0
        for text, filters in queries:
            started = time.perf_counter()
            found = store.search_messages(text, limit=20, **filters)
            timings.append((time.perf_counter() - started) * 1000)
            hits += len(found)
        every += timings
        print(
            f"{kind:<22}{percentile(timings, 0.5):>9.2f}{percentile(timings, 0.95):>9.2f}{hits / len(queries):>10.1f}"
        )
    return every


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--messages", type=int, default=1_000_000, help="messages to insert (default 1,000,000)"
    )
    parser.add_argument("--queries", type=int, default=450, help="searches to time (default 450)")
    parser.add_argument(
        "--db", type=Path, help="database file (default: a temporary one, deleted after)"
    )
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--query-only",
        action="store_true",
        help="skip writing; time searches on an existing --db written by this script",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="with --db: time searches on that file if it exists, else write it and keep it",
    )
    args = parser.parse_args()
    if args.messages < ROUND_SIZE:
        parser.error(f"--messages must be at least {ROUND_SIZE}")
    if args.query_only and (args.db is None or not args.db.is_file()):
        parser.error("--query-only needs --db naming a database this script wrote")
    if args.reuse and args.db is None:
        parser.error("--reuse needs --db PATH (the file to build once and keep)")
    if args.reuse and args.db.is_file() and args.db.stat().st_size > 0:
        print(f"reusing {args.db} ({args.db.stat().st_size / 1e6:,.0f} MB); not writing")
        args.query_only = True

    workdir = None
    if args.db is None:
        workdir = Path(tempfile.mkdtemp(prefix="smith-bench-"))
        args.db = workdir / "smith.db"
    rng = random.Random(args.seed)
    vocabulary = make_vocabulary(rng)
    text = TextMaker(vocabulary, rng)
    try:
        if not args.query_only:
            print(f"writing {args.messages:,} messages in rounds of {ROUND_SIZE} to {args.db}")
            with Store.open(args.db) as store:
                written = write(store, args.messages, text, rng)
                store.database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            report_write(written, args.db)
        started = time.perf_counter()
        with Store.open(args.db) as store:
            opened = (time.perf_counter() - started) * 1000
            store.search_messages("warmup")
            conversations = [c.id for c in store.conversations.list_all()]
            mixes = build_queries(
                vocabulary, conversations, random.Random(args.seed + 1), args.queries
            )
            timings = query(store, mixes)
        print(
            f"search overall: p50 {percentile(timings, 0.5):.2f} ms, p95 {percentile(timings, 0.95):.2f} ms "
            f"over {len(timings)} queries (target p50 < 20 ms)"
        )
        print(f"open (read-only check incl. quick_check, then read-write): {opened:.0f} ms")
        size = f"{args.messages:,} messages"
        p50, p95 = percentile(timings, 0.5), percentile(timings, 0.95)
        emit(
            "store",
            [
                Figure(
                    f"search p50, {len(timings)} queries over {size}",
                    p50,
                    "ms",
                    "< 20 ms",
                    met=p50 < 20,
                ),
                Figure(f"search p95, {len(timings)} queries over {size}", p95, "ms"),
                Figure(f"`Store.open` of {size}", opened, "ms"),
            ],
        )
    finally:
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
