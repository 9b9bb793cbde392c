"""Command files through the real app: a broken one is one notice in the transcript, the
completion menu and the palette list them with their description, F1 lists them; and
headless, the notice goes to stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual.command import CommandPalette

from smith_tui.widgets.completion.menu import CompletionMenu
from tests.app.app_harness import (
    app_runtime,
    isolate_environment,
    make_app,
    running,
    screen_text,
    wait_for_text,
    wait_until,
)
from tests.support.llm_server import ScriptedLLMServer, text_reply

GOOD = "---\ndescription: Review the staged changes\nargument-hint: [focus]\n---\nReview $1.\n"
BROKEN = "---\ndescription: fine\nmodel: a: b\n---\nbody\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_environment(monkeypatch, tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    commands = project / ".claude" / "commands" / "git"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(GOOD, encoding="utf-8")
    (commands / "broken.md").write_text(BROKEN, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def broken_line(project: Path) -> str:
    return f"command file {project / '.claude/commands/git/broken.md'}:3:"


async def test_broken_file_is_one_notice_and_the_menu_lists_the_good_one(
    project: Path, tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime = app_runtime(tmp_path, api_url=llm_server.base_url)
    app = make_app(runtime)
    try:
        # Wide enough that the notice's line, which holds the tmp path (longer in a
        # pytest -n worker's folder), does not wrap.
        async with running(app, size=(240, 140)) as pilot:
            await wait_for_text(pilot, broken_line(project), within=15)
            menu = app.screen.query_one(CompletionMenu)
            await pilot.press("slash", "g", "i", "t")
            await wait_until(pilot, lambda: menu.is_open, what="completion menu")
            found = {c.value: c.about for c in menu.completion.candidates}
            assert found["/git:review"] == "[focus] — Review the staged changes (project:git)"
            assert "/git:broken" not in found
            await pilot.press("escape")
            text = screen_text(app)
            assert text.count(broken_line(project)) == 1
            assert "mapping values are not allowed" in text

            await pilot.press("ctrl+p")
            await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "palette")
            await pilot.press("g", "i", "t", "colon")
            await wait_for_text(pilot, "Command: /git:review")
            await pilot.press("escape")
            await pilot.pause()

            await pilot.press("f1")
            shown = await wait_for_text(pilot, "Your commands (command files)")
            assert any(
                "/git:review [focus]" in line and "Review the staged changes (project:git)" in line
                for line in shown.splitlines()
            )
    finally:
        await runtime.aclose()


def test_headless_reports_a_broken_command_file_on_stderr(project: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "LLM_"))}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "cfg"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        SMITH_MODEL="m",
    )
    smith = Path(sys.executable).with_name("smith")
    with ScriptedLLMServer(default_reply=text_reply("reviewed")) as server:
        done = subprocess.run(
            [str(smith), "-p", "/git:review tests", "--api-url", server.base_url],
            capture_output=True,
            text=True,
            env=env,
            cwd=project,
            timeout=60,
        )
        sent = server.chat_requests()
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "reviewed"
    assert done.stderr.count(broken_line(project)) == 1
    users = [m for m in sent[0]["messages"] if m["role"] == "user"]
    assert users[0]["content"] == "Review tests."
