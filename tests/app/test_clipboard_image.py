"""An image on the desktop clipboard, pasted with the prompt's key (``services.ui.keys
.paste_image``, alt+v): scripted ``wl-paste`` / ``xclip`` executables first on PATH print a
PNG made with Pillow; the prompt gets the ``@path`` of its saved copy (Smith's data folder,
0600), the transcript its placeholder row and the next request its image part. Text on the
clipboard, a failing tool, a lying one and no tool at all are notices with the prompt
unchanged."""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from textual import events

from smith_tui.app.screens.help_screen import configured_keys
from smith_tui.config.service_options import KeyBindings
from smith_tui.engine.attachments import mentioned_paths
from smith_tui.engine.clipboard_image import ClipboardError, read_clipboard_image
from smith_tui.widgets.prompt_input import PromptInput
from tests.app.app_harness import isolated_runtime, make_app, running, wait_for_text, wait_until
from tests.engine.test_prompt_images import CATALOG
from tests.support.llm_server import ScriptedLLMServer, text_reply

# The fake tool answers by the mode file next to it: png, text, fail or lying.
FAKE_TOOL = """#!{python}
import json, sys
from pathlib import Path
here = Path(__file__).resolve().parent
argv = sys.argv[1:]
with open(here / "calls.log", "a") as log:
    log.write(json.dumps([Path(sys.argv[0]).name, *argv]) + "\\n")
mode = (here / "mode").read_text().strip()
if mode == "fail":
    sys.stderr.write("Nothing is copied\\n")
    sys.exit(1)
listing = "--list-types" in argv or "TARGETS" in argv
if listing:
    text = "text/plain;charset=utf-8\\n[@click=app.quit]\\x1b[2J"  # someone else's names
    print(text if mode == "text" else "TARGETS\\nimage/png")
elif mode == "lying":
    sys.stdout.write("just some text, not a picture")
else:
    sys.stdout.buffer.write((here / "clip.png").read_bytes())
"""


def fake_tools(tmp_path: Path, mode: str = "png", names: tuple[str, ...] = ("wl-paste",)) -> Path:
    """A folder with scripted clipboard tools ``names`` answering as ``mode`` says."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    buffer = io.BytesIO()
    Image.new("RGB", (320, 200), (200, 30, 30)).save(buffer, format="PNG")
    (folder / "clip.png").write_bytes(buffer.getvalue())
    (folder / "mode").write_text(mode)
    for name in names:
        tool = folder / name
        tool.write_text(FAKE_TOOL.format(python=sys.executable))
        tool.chmod(0o755)
    return folder


def calls(folder: Path) -> list[list[str]]:
    """The argv of every run of the fake tools, in order."""
    log = folder / "calls.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def file_mode(path: Path) -> int:
    """The permission bits of ``path``."""
    return stat.S_IMODE(path.stat().st_mode)


def image_size(path: Path) -> tuple[int, int]:
    """The size of the image file ``path``."""
    with Image.open(path) as image:
        return image.size


def notices(app: Any) -> str:
    """Every notice the app has shown (the toasts wrap their text on screen)."""
    return " | ".join(n.message for n in app._notifications)


async def wait_for_notice(pilot: Any, text: str) -> None:
    """Wait until a notice says ``text``."""
    await wait_until(pilot, lambda: text in notices(pilot.app), what=f"a notice {text!r}")


def desktop(monkeypatch: Any, folder: Path, *, wayland: bool, x11: bool) -> None:
    """The environment a desktop shows: the fake tools first on PATH."""
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', os.defpath)}")
    for name, on in (("WAYLAND_DISPLAY", wayland), ("DISPLAY", x11)):
        if on:
            monkeypatch.setenv(name, "wayland-9" if name == "WAYLAND_DISPLAY" else ":99")
        else:
            monkeypatch.delenv(name, raising=False)


async def test_wl_paste_image_is_attached_shown_and_sent(tmp_path: Path, monkeypatch: Any) -> None:
    folder = fake_tools(tmp_path)
    desktop(monkeypatch, folder, wayland=True, x11=False)
    with ScriptedLLMServer(catalog=CATALOG) as server:
        server.enqueue(text_reply("A red rectangle."))
        ephemeral = {"default_model": "vision-model"}
        config = {"services": {"ui": {"vim": True}}}  # alt+v is not read as esc v
        with isolated_runtime(
            tmp_path, monkeypatch, server.base_url, config=config, ephemeral=ephemeral
        ) as rt:
            app = make_app(rt)
            async with running(app) as pilot:
                prompt = pilot.app.screen.query_one(PromptInput)
                prompt.focus()
                prompt.load_text("what is this? ")
                prompt.move_cursor(prompt.document.end)
                # as a terminal sends it (ESC v: a character too, which vim keys would take)
                pilot.app.post_message(events.Key("alt+v", "v"))
                await wait_until(pilot, lambda: "@" in prompt.text, what="the @path token")
                token = prompt.text.removeprefix("what is this? ").strip()
                saved = Path(token.removeprefix("@"))
                pasted = tmp_path / "xdg-data" / "smith" / "pasted"
                assert saved.parent.parent == pasted and saved.suffix == ".png"
                assert file_mode(saved) == 0o600 and file_mode(saved.parent) == 0o700
                assert image_size(saved) == (320, 200)
                await pilot.press("enter")
                text = await wait_for_text(pilot, "A red rectangle.")
                assert f"🖼 {saved.name} (320×200)" in text
                await wait_until(pilot, lambda: not rt.busy, what="the turn to end")
        request = server.chat_requests()[0]
    # The types are listed first, then the PNG is read (argv lists, no shell).
    assert calls(folder) == [
        ["wl-paste", "--list-types"],
        ["wl-paste", "--no-newline", "--type", "image/png"],
    ]
    (user,) = [m["content"] for m in request["messages"] if isinstance(m["content"], list)]
    assert user[0]["text"].startswith("what is this?")
    assert user[1]["image_url"]["url"].startswith("data:image/png;base64,")


async def test_xclip_with_a_configured_key_and_the_notices(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """X11 (DISPLAY only): xclip's TARGETS first; the key is the configured one (with vim
    keys on, in normal mode too); text on the clipboard, a failing tool and a non-image are notices and the prompt stays as typed."""
    folder = fake_tools(tmp_path, mode="text", names=("xclip",))
    desktop(monkeypatch, folder, wayland=False, x11=True)
    config = {"services": {"ui": {"vim": True, "keys": {"paste_image": "ctrl+b"}}}}
    with (
        ScriptedLLMServer(catalog=CATALOG) as server,
        isolated_runtime(tmp_path, monkeypatch, server.base_url, config=config) as rt,
    ):
        app = make_app(rt)
        async with running(app) as pilot:
            prompt = pilot.app.screen.query_one(PromptInput)
            prompt.focus()
            prompt.load_text("keep me")
            await pilot.press("ctrl+b")
            await wait_for_notice(pilot, "no image on the clipboard (it holds")
            assert prompt.text == "keep me"
            assert "\x1b" not in notices(app) and "[@click=app.quit]" in notices(app)
            assert not any(n.markup for n in app._notifications)  # shown as typed, not obeyed
            (folder / "mode").write_text("fail")
            await pilot.press("ctrl+b")
            await wait_for_notice(pilot, "Nothing is copied")
            assert prompt.text == "keep me"
            (folder / "mode").write_text("lying")
            await pilot.press("ctrl+b")
            await wait_for_notice(pilot, "not an image Smith reads")
            assert prompt.text == "keep me"
            (folder / "mode").write_text("png")
            prompt.move_cursor(prompt.document.end)
            await pilot.press("escape")  # vim's normal mode: the key still pastes
            assert prompt.vim_normal
            await pilot.press("ctrl+b")
            await wait_until(pilot, lambda: "@" in prompt.text, what="the @path token")
            assert prompt.text.startswith("keep me @") and prompt.text.endswith(".png ")
            assert mentioned_paths(prompt.text) == [prompt.text.split("@")[1].strip()]
    assert ["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"] in calls(folder)
    assert calls(folder)[-1] == ["xclip", "-selection", "clipboard", "-t", "image/png", "-o"]
    assert not list((tmp_path / "xdg-data" / "smith" / "pasted").glob("*/*.txt"))


def test_no_tool_no_display_and_the_help_row(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ClipboardError, match="install wl-clipboard or xclip"):
        read_clipboard_image({"PATH": str(empty), "WAYLAND_DISPLAY": "w", "DISPLAY": ":1"}, "linux")
    with pytest.raises(ClipboardError, match="pngpaste"):
        read_clipboard_image({"PATH": str(empty)}, "darwin")
    with pytest.raises(ClipboardError, match="carries no images"):
        read_clipboard_image({"PATH": str(empty)}, "linux")
    # Wayland's tool missing, XWayland's xclip there: xclip answers.
    folder = fake_tools(tmp_path, names=("xclip",))
    env = {"PATH": str(folder), "WAYLAND_DISPLAY": "w", "DISPLAY": ":1"}
    assert read_clipboard_image(env, "linux") == (folder / "clip.png").read_bytes()
    description = KeyBindings.model_fields["paste_image"].description
    assert ("alt+v", description) in configured_keys(KeyBindings())
