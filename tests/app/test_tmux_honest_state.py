"""The installed ``smith`` in tmux: small terminals, leaving, and what is saved (issue 17).

An 80-column terminal starts with the side panes hidden and F3 shows them; ``/export``
without a path writes into the data folder, not the project; quitting prints how to
resume, on the normal terminal after the app has gone.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.app.test_tmux_smith import SMITH, TmuxPane
from tests.support.llm_server import text_reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "TMUX"))}
    env.update(
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        XDG_DATA_HOME=str(tmp_path / "xdg-data"),
        TERM="xterm-256color",
        TMUX_TMPDIR=str(tmp_path),
    )
    env.pop("LLM_API_KEY", None)
    return env


def test_narrow_panes_export_and_resume_hint(tmp_path, llm_server) -> None:
    if not SMITH.exists():
        pytest.fail(f"the smith script is not installed at {SMITH}; run `pip install -e .`")
    project = tmp_path / "project"
    project.mkdir()
    config = tmp_path / "config.json"
    config.write_text("{}", encoding="utf-8")
    llm_server.enqueue(text_reply("Noted: the sky is green here."))
    command = (
        f"{SMITH} --api-url {llm_server.base_url} --db {tmp_path / 'smith.db'} "
        f"--config {config}; echo SMITH-EXIT=$?; sleep 60"
    )
    pane = TmuxPane(command, project, _env(tmp_path), size=(80, 24))
    try:
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
        assert sorted(p.name for p in project.iterdir()) == []

        pane.send("C-q")
        screen = pane.wait_for("SMITH-EXIT=0")
        assert "To resume this conversation, run: smith --continue" in screen
    finally:
        pane.kill()


def test_an_empty_session_saves_nothing_and_prints_no_hint(tmp_path, llm_server) -> None:
    import sqlite3

    if not SMITH.exists():
        pytest.fail(f"the smith script is not installed at {SMITH}; run `pip install -e .`")
    project = tmp_path / "project"
    project.mkdir()
    config = tmp_path / "config.json"
    config.write_text("{}", encoding="utf-8")
    db = tmp_path / "smith.db"
    command = (
        f"{SMITH} --api-url {llm_server.base_url} --db {db} "
        f"--config {config}; echo SMITH-EXIT=$?; sleep 60"
    )
    pane = TmuxPane(command, project, _env(tmp_path), size=(160, 45))
    try:
        pane.wait_for("Ask Smith")
        pane.wait_for("Dispatch")  # 160 columns: the side panes show
        # Nothing written: quitting leaves no conversation behind and nothing to resume.
        pane.send("C-q")
        screen = pane.wait_for("SMITH-EXIT=0")
        assert "To resume" not in screen
    finally:
        pane.kill()
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT count(*) FROM conversations").fetchone() == (0,)
