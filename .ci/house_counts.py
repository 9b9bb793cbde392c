"""Print the house counts issue 21 tracks, for a closing note's before → after table.

Run from the repository root: ``python .ci/house_counts.py``. Each figure is read off the
source with ``ast`` (or a plain text search where the figure is about text), so two runs on two
checkouts compare like with like.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "smith_tui"
TURN_TYPES = re.compile(
    r"^(ExecutionContext|ActiveTurn|TurnPlan|TurnSetup|TurnSettings|TurnDeps|TurnHooks|TurnScope"
    r"|Turn|TurnServices)$"
)

SERVICE_LOOKUP = re.compile(r"services(?:\.get\(|\[)[\"']")
FALLBACK = 'getattr(exc, "message"'


def _sources() -> list[tuple[Path, str, ast.Module]]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        found.append((path, text, ast.parse(text)))
    return found


def main() -> None:
    """Print one line per count."""
    sources = _sources()
    turn_types: set[str] = set()
    long_functions = 0
    big_classes = 0
    for _path, _text, tree in sources:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                if TURN_TYPES.match(node.name):
                    turn_types.add(node.name)
                if (node.end_lineno or node.lineno) - node.lineno + 1 > 400:
                    big_classes += 1
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if (node.end_lineno or node.lineno) - node.lineno + 1 > 60:
                    long_functions += 1
    text_all = "\n".join(text for _p, text, _t in sources)
    names = Counter(
        p.name for p, _t, _tree in sources if p.name not in {"__init__.py", "errors.py"}
    )
    repeated = sorted(name for name, n in names.items() if n > 1)
    print(f"turn types: {len(turn_types)} ({', '.join(sorted(turn_types))})")
    lookups = len(SERVICE_LOOKUP.findall(text_all))
    fallbacks = text_all.count(FALLBACK)
    print(f"services lookups by string: {lookups}")
    print(f"runtime: Any: {len(re.findall(r'runtime: Any', text_all))}")
    print(f"type: ignore: {text_all.count('type: ignore')}")
    print(f"getattr(exc, 'message') fallbacks: {fallbacks}")
    print(f"functions over 60 lines: {long_functions}")
    print(f"classes over 400 lines: {big_classes}")
    print(f"module names repeated across packages: {len(repeated)} ({', '.join(repeated)})")


if __name__ == "__main__":
    main()
