"""``smith search QUERY``: full-text search over the stored conversations, headless.

This project's conversations by default (the project of the current folder, as a session
there would see it), every project's with ``--all``; text or ``--json``. Exit 0 when
something matched, 1 when nothing did, 2 for a usage or database error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from smith_tui.terminal_text import visible

EXIT_NO_MATCH = 1
EXIT_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    """The options of ``smith search``."""
    parser = argparse.ArgumentParser(
        prog="smith search",
        description='Search the stored conversations (words, "phrases", prefix*, a OR b).',
    )
    parser.add_argument("query", nargs="+", help="what to search for")
    parser.add_argument("--json", action="store_true", help="print the matches as JSON")
    parser.add_argument(
        "--all", dest="all_projects", action="store_true", help="search every project"
    )
    parser.add_argument("--limit", type=int, default=20, help="most matches to show (1-500)")
    parser.add_argument("--db", metavar="PATH", help="SQLite database path")
    return parser


def _fail(message: str) -> int:
    sys.stderr.write(f"smith search: {visible(message)}\n")
    return EXIT_ERROR


def main(argv: Sequence[str]) -> int:
    """Run ``smith search ARGV``; returns the exit code."""
    args = build_parser().parse_args(list(argv))
    query = " ".join(args.query)
    if not query.strip():
        return _fail("the query is empty: give a word to search for")
    if not 1 <= args.limit <= 500:
        return _fail(f"--limit must be between 1 and 500, got {args.limit}")
    from smith_tui.store import Store, StoreError, default_db_path
    from smith_tui.store.project_identity import discover_project
    from smith_tui.tools.builtin.history_search import render_hits, search_history

    path = Path(args.db) if args.db else default_db_path()
    if not path.exists():
        return _fail(f"no database at {path} yet: nothing has been stored (or pass --db PATH)")
    project = None if args.all_projects else discover_project(Path.cwd()).project_id
    try:
        with Store.open(path) as store:
            hits = search_history(store, query, project_id=project, limit=args.limit)
    except StoreError as exc:
        return _fail(exc.message)
    if args.json:
        body = {"query": query, "project_id": project, "hits": [h.to_dict() for h in hits]}
        sys.stdout.write(json.dumps(body, ensure_ascii=False, indent=2) + "\n")
    else:
        text, _ = render_hits(hits, query, budget=1_000_000)
        where = "every project" if project is None else "this project"
        sys.stdout.write(visible(text) + (f"\n(searched {where})\n" if hits else "\n"))
    return 0 if hits else EXIT_NO_MATCH
