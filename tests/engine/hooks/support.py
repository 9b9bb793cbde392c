"""Hook scripts in a tmp folder and a runtime that runs them (tests of engine/hooks)."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

from smith_tui.engine.runtime import Runtime
from tests.support.runtime import Recorder, open_runtime


def python_hook(folder: Path, name: str, body: str) -> str:
    """Write a Python hook script ``name`` with ``body``; return the command that runs it.

    The body has ``data`` (the stdin JSON) and ``log`` (appends one JSON line to
    ``<folder>/<name>.jsonl``) at hand.
    """
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / f"{name}.py"
    prelude = f"""\
import json, os, sys, time
data = json.load(sys.stdin)
def log(value):
    with open({str(folder / (name + ".jsonl"))!r}, "a") as handle:
        handle.write(json.dumps(value) + "\\n")
"""
    script.write_text(prelude + textwrap.dedent(body))
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def logged(folder: Path, name: str) -> list[dict[str, Any]]:
    """The JSON lines the hook ``name`` logged."""
    path = folder / f"{name}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def hooks_runtime(
    tmp_path: Path,
    api_url: str,
    hooks: dict[str, Any],
    *,
    config: dict[str, Any] | None = None,
    **options: Any,
) -> tuple[Runtime, Recorder]:
    """A runtime whose user config has ``hooks`` (its data folder in ``tmp_path``)."""
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "HOME": str(tmp_path / "home")}
    merged = {"hooks": hooks, **(config or {})}
    return open_runtime(tmp_path, api_url, config=merged, env=env, **options)


def tool_results(body: dict[str, Any]) -> list[str]:
    """The tool messages' contents of one request body."""
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def user_texts(body: dict[str, Any]) -> list[str]:
    """The user messages' contents of one request body (as text)."""
    out = []
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, list):
            content = " ".join(part.get("text", "") for part in content)
        out.append(content)
    return out
