"""The installed ``smith`` in tmux: small terminals, leaving, and what is saved (issue 17).

An 80-column terminal starts with the side panes hidden and F3 shows them; ``/export``
without a path writes into the data folder, not the project; quitting prints how to
resume, on the normal terminal after the app has gone.
"""

from __future__ import annotations

import shutil

import pytest

from tests.support.llm_server import text_reply
from tests.support.tmux import smith_in_tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_narrow_panes_export_and_resume_hint(tmp_path, llm_server) -> None:
    llm_server.enqueue(text_reply("Noted: the sky is green here."))
    with smith_in_tmux(tmp_path, llm_server.base_url, size=(80, 24)) as pane:
        pane.wait_for("Ask Smith")
        screen = pane.wait_for("^q Quit")
        # 80 columns: the transcript gets the width, the side panes wait behind F3.
        assert "Usage" not in screen and "Dispatch" not in screen
        assert "f3 Panes" in screen and "^q Quit" in screen and "^c Cancel" in screen
        pane.send("F3")
        pane.wait_for("Dispatch")
        pane.send("F3")
        pane.wait_until_gone("Dispatch")

        pane.type("remember the sky")
        pane.send("Enter")
        pane.wait_for("the sky is green")
        pane.wait_for("● idle")
        pane.type("/export")
        pane.send("Enter")
        pane.wait_for("exported 2 messages")
        exports = list((tmp_path / "xdg-data" / "smith" / "exports").glob("*.md"))
        assert len(exports) == 1 and "the sky is green" in exports[0].read_text()
        assert sorted(p.name for p in (tmp_path / "project").iterdir()) == []

        pane.send("C-q")
        screen = pane.wait_for("SMITH-EXIT=0")
        assert "To resume this conversation, run: smith --continue" in screen


def test_an_empty_session_saves_nothing_and_prints_no_hint(tmp_path, llm_server) -> None:
    import sqlite3

    with smith_in_tmux(tmp_path, llm_server.base_url, size=(160, 45)) as pane:
        pane.wait_for("Ask Smith")
        pane.wait_for("Dispatch")  # 160 columns: the side panes show
        # Nothing written: quitting leaves no conversation behind and nothing to resume.
        pane.send("C-q")
        screen = pane.wait_for("SMITH-EXIT=0")
        assert "To resume" not in screen
    with sqlite3.connect(tmp_path / "smith.db") as connection:
        assert connection.execute("SELECT count(*) FROM conversations").fetchone() == (0,)
