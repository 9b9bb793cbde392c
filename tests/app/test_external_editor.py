"""The external editor (``ctrl+g``): the prompt and a ``/config`` value edited in a scripted
``$EDITOR``, a failing editor, none set, and the private temporary file it is given."""

from __future__ import annotations

import json
import shlex
import stat
import sys
from pathlib import Path

import pytest
from textual.widgets import Input

from smith_tui.app.external_editor import NO_EDITOR, editor_command
from smith_tui.widgets.prompt_input import PromptInput
from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    screen_text,
    wait_until,
)

EDITOR_SCRIPT = """
import json, os, stat, sys
path = sys.argv[-1]
with open(path, encoding="utf-8") as handle:
    before = handle.read()
folder = os.path.dirname(path)
with open(sys.argv[1], "w", encoding="utf-8") as log:
    json.dump({
        "argv": sys.argv[2:-1],
        "before": before,
        "file_mode": stat.S_IMODE(os.stat(path).st_mode),
        "dir_mode": stat.S_IMODE(os.stat(folder).st_mode),
        "path": path,
    }, log)
with open(path, "w", encoding="utf-8") as handle:
    handle.write("edited: " + before + "\\nsecond line\\n")
sys.exit(int(os.environ.get("FAKE_EDITOR_EXIT", "0")))
"""


def notices(app) -> str:
    """The text of the notices (toasts) the app is showing."""
    return "\n".join(str(n.message) for n in app._notifications)


def scripted_editor(tmp_path: Path, *extra: str) -> tuple[str, Path]:
    """An ``$EDITOR`` value running the script above (with ``extra`` arguments) and the path
    of the log it writes (what it saw)."""
    script = tmp_path / "fake editor.py"  # a space: the value is split like a shell would
    script.write_text(EDITOR_SCRIPT, encoding="utf-8")
    log = tmp_path / "editor-log.json"
    return shlex.join([sys.executable, str(script), str(log), *extra]), log


def test_visual_comes_before_editor_and_values_are_split_without_a_shell() -> None:
    assert editor_command({"VISUAL": "code --wait", "EDITOR": "vi"}) == ["code", "--wait"]
    assert editor_command({"VISUAL": " ", "EDITOR": "nano -w"}) == ["nano", "-w"]
    assert editor_command({"EDITOR": "vi; rm -rf ~"}) == ["vi;", "rm", "-rf", "~"]
    assert editor_command({}) == NO_EDITOR
    assert "cannot be read" in str(editor_command({"EDITOR": "vi 'unclosed"}))


async def test_ctrl_g_edits_the_prompt_in_the_editor(runtime, tmp_path, monkeypatch) -> None:
    value, log = scripted_editor(tmp_path, "--flag")
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", value)
    app = make_app(runtime)
    async with running(app) as pilot:
        prompt = app.screen.query_one(PromptInput)
        prompt.load_text("fix the bug")
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: prompt.text.startswith("edited"), what="the edit")
        assert prompt.text == "edited: fix the bug\nsecond line"  # the final newline dropped
        assert prompt.cursor_location == prompt.document.end
        assert app.focused is prompt
    seen = json.loads(log.read_text())
    assert seen["argv"] == ["--flag"]
    assert seen["before"] == "fix the bug"
    assert seen["file_mode"] == 0o600 and seen["dir_mode"] == 0o700
    assert seen["path"].endswith(".md")
    assert not Path(seen["path"]).parent.exists()  # removed after the edit


async def test_a_failing_editor_is_a_notice_and_the_prompt_stays(
    runtime, tmp_path, monkeypatch
) -> None:
    value, log = scripted_editor(tmp_path)
    monkeypatch.setenv("VISUAL", value)
    monkeypatch.setenv("FAKE_EDITOR_EXIT", "1")
    app = make_app(runtime)
    async with running(app) as pilot:
        prompt = app.screen.query_one(PromptInput)
        prompt.load_text("keep me")
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: notices(app), what="a notice")
        assert "exited with status 1" in notices(app)
        assert log.exists()  # the editor ran (and rewrote its file)
        assert prompt.text == "keep me"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "No editor is set"),
        ({"EDITOR": "/nonexistent/editor-xyz"}, "Could not start the editor"),
    ],
)
async def test_no_editor_or_a_missing_one_is_a_notice(
    runtime, monkeypatch, env: dict[str, str], message: str
) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    app = make_app(runtime)
    async with running(app) as pilot:
        prompt = app.screen.query_one(PromptInput)
        prompt.load_text("draft")
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: message in notices(app), what=message)
        assert prompt.text == "draft"


async def test_the_editor_key_comes_from_services_ui_keys(
    tmp_path, monkeypatch, llm_server
) -> None:
    config = {"services": {"ui": {"keys": {"external_editor": "f7"}}}}
    value, _ = scripted_editor(tmp_path)
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config) as runtime:
        monkeypatch.setenv("VISUAL", value)
        app = make_app(runtime)
        async with running(app) as pilot:
            prompt = app.screen.query_one(PromptInput)
            prompt.load_text("x")
            await pilot.press("ctrl+g")  # no longer the editor key
            await pilot.pause()
            assert prompt.text == "x"
            await pilot.press("f7")
            await wait_until(pilot, lambda: prompt.text.startswith("edited"), what="f7 to edit")


async def test_the_config_screen_edits_a_value_in_the_editor(
    runtime, tmp_path, monkeypatch
) -> None:
    script = tmp_path / "set-timeout.py"
    script.write_text(
        "import sys\nopen(sys.argv[1], 'w').write('[\\n  42\\n]\\n')\n", encoding="utf-8"
    )
    monkeypatch.setenv("VISUAL", shlex.join([sys.executable, str(script)]))
    app = make_app(runtime)
    async with running(app) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: app.screen.query("#config-value"), what="config")
        box = app.screen.query_one("#config-value", Input)
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: box.value == "[ 42 ]", what="the edited value")
        assert app.focused is box
        assert "Settings" in screen_text(app)


def test_the_temporary_file_is_private(tmp_path) -> None:
    # (The editor test checks the modes the editor saw; this checks the helper on its own.)
    from smith_tui.app.external_editor import _write_private

    path = tmp_path / "f.md"
    _write_private(path, "x")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        _write_private(path, "again")  # never opens a file that is already there


def test_help_lists_the_editor_key_as_configured() -> None:
    from smith_tui.app.screens.help_screen import configured_keys
    from smith_tui.config.service_options import KeyBindings

    assert ("ctrl+g", KeyBindings.model_fields["external_editor"].description) in configured_keys(
        KeyBindings()
    )
    assert any(key == "f7" for key, _ in configured_keys(KeyBindings(external_editor="F7")))


TTY_EDITOR = """
import json, os, sys, termios
path = sys.argv[-1]
attrs = termios.tcgetattr(0)
seen = {
    "tty": os.isatty(0) and os.isatty(1),
    "canonical": bool(attrs[3] & termios.ICANON),
    "echo": bool(attrs[3] & termios.ECHO),
    "before": open(path, encoding="utf-8").read(),
}
json.dump(seen, open(sys.argv[1], "w"))
open(path, "w", encoding="utf-8").write("EDITEDPROMPT from the editor\\n")
"""


def test_in_a_real_terminal_the_editor_gets_the_terminal_and_smith_gets_it_back(
    tmp_path: Path, llm_server
) -> None:
    from tests.support.llm_server import text_reply
    from tests.support.pty_smith import PtySmith
    from tests.support.smith_cli import server_args, smith_env

    project = tmp_path / "project"
    project.mkdir()
    script = tmp_path / "tty-editor.py"
    script.write_text(TTY_EDITOR, encoding="utf-8")
    log = tmp_path / "tty-editor.json"
    config = tmp_path / "config.json"
    config.write_text("{}", encoding="utf-8")
    llm_server.enqueue(text_reply("ANSWERWORD back"))
    env = smith_env(tmp_path, TERM="xterm-256color")
    env.pop("VISUAL", None)
    env["EDITOR"] = shlex.join([sys.executable, str(script), str(log)])
    smith = PtySmith(server_args(llm_server.base_url, tmp_path / "s.db", config), project, env)
    try:
        smith.wait_for(b"Ask Smith")
        smith.wait_for(b"a draft", smith.send(b"a draft"))
        suspended = smith.wait_for(b"\x1b[?1049l", smith.send(b"\x07"))  # ctrl+g
        smith.wait_for(b"\x1b[?1049h", suspended)  # back on the alternate screen
        smith.wait_for(b"EDITEDPROMPT", suspended)  # in the prompt
        smith.wait_for(b"ANSWERWORD", smith.send(b"\r"))
        smith.send(b"\x11")  # ctrl+q
        smith.process.wait(timeout=15)
    finally:
        smith.close()
    seen = json.loads(log.read_text())
    # The editor had the terminal as a shell leaves it (not Textual's raw mode).
    assert seen == {"tty": True, "canonical": True, "echo": True, "before": "a draft"}
    users = [m for m in llm_server.chat_requests()[0]["messages"] if m["role"] == "user"]
    assert any("EDITEDPROMPT from the editor" in str(m["content"]) for m in users), users


LOOP_PROBE_EDITOR = """
import os, sys, time
path, started, ran = sys.argv[-1], sys.argv[1], sys.argv[2]
open(started, "w").close()
deadline = time.monotonic() + 1.0
while not os.path.exists(ran) and time.monotonic() < deadline:
    time.sleep(0.01)
open(path, "w").write("loop ran" if os.path.exists(ran) else "loop held")
"""


async def test_the_event_loop_holds_while_the_editor_runs(runtime, tmp_path, monkeypatch) -> None:
    # Suspended, Textual's output thread is stopped behind a bounded queue: a loop that
    # kept painting would hang the app. So nothing of the app runs until the editor exits.
    script = tmp_path / "probe.py"
    script.write_text(LOOP_PROBE_EDITOR, encoding="utf-8")
    started, ran = tmp_path / "started", tmp_path / "ran"
    monkeypatch.setenv("VISUAL", shlex.join([sys.executable, str(script), str(started), str(ran)]))
    app = make_app(runtime)
    async with running(app) as pilot:

        def probe() -> None:
            if started.exists():
                ran.touch()

        app.set_interval(0.01, probe)
        prompt = app.screen.query_one(PromptInput)
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: prompt.text.startswith("loop"), what="the edit")
        assert prompt.text == "loop held"
