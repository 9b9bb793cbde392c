"""``/memory open`` in a real terminal: the installed ``smith`` in tmux hands the terminal to
``$VISUAL`` (a script standing in for the user's editor), and gets it back.

The script says it runs, waits for a key (so the test sees the editor own the terminal,
not smith), appends a line to the file it was given and exits; then smith's screen must
be back and its prompt usable: ``/memory`` lists the file with its new size.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.tmux import smith_in_tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

EDITOR = """#!/bin/sh
echo "EDITOR-RUNNING on $(basename "$1")"
read answer
printf 'Marker line from the editor.\\n' >> "$1"
"""


def test_memory_open_runs_the_editor_and_the_app_comes_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text(EDITOR, encoding="utf-8")
    editor.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(editor))
    monkeypatch.delenv("EDITOR", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    agents = project / "AGENTS.md"
    agents.write_text("Run the tests with make check.\n", encoding="utf-8")  # 31 bytes
    with smith_in_tmux(tmp_path, "http://127.0.0.1:9/v1") as pane:
        pane.wait_for("Ask Smith")
        pane.type("/memory open repository")
        pane.send("Enter")
        screen = pane.wait_for("EDITOR-RUNNING on AGENTS.md")
        assert "Ask Smith" not in screen  # the editor has the terminal, not smith
        pane.send("Enter")
        pane.wait_for("Ask Smith")  # smith's screen is back
        assert agents.read_text(encoding="utf-8") == (
            "Run the tests with make check.\nMarker line from the editor.\n"
        )
        pane.type("/memory")
        pane.send("Enter")
        screen = pane.wait_for("60 bytes")  # the prompt works, and reads the file as it is now
        assert "1. repository" in screen and "31 bytes" not in screen
        pane.send("C-q")
        pane.wait_for("SMITH-EXIT=0")
