"""Images in a prompt, in the app: a pasted path of an image file becomes its ``@path`` in the
prompt, the turn sends the picture and the transcript shows its placeholder row
``🖼 shot.png (W×H)`` (live and when the conversation is opened again); a text-only model
gets a notice on screen instead. Snapshots of a transcript row with an image at 80×24 and
160×45."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from textual import events
from textual.pilot import Pilot

from smith_tui.engine import events as ev
from smith_tui.widgets.prompt_input import PromptInput
from smith_tui.widgets.textual_compat import terminal_driver
from smith_tui.widgets.transcript import thumbnails
from smith_tui.widgets.transcript.user_message import UserMessage
from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    screen_text,
    wait_for_still_screen,
    wait_for_text,
    wait_until,
)
from tests.engine.test_prompt_images import CATALOG
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.transcript_app import TranscriptApp

SIZES = [(80, 24), (160, 45)]
IDS = ["80x24", "160x45"]


async def _paste(pilot: Pilot[Any], text: str) -> PromptInput:
    prompt = pilot.app.screen.query_one(PromptInput)
    prompt.focus()
    pilot.app.post_message(events.Paste(text))  # as the terminal's bracketed paste comes
    await pilot.pause()
    return prompt


async def test_a_pasted_image_path_is_sent_and_shown_as_a_placeholder(
    tmp_path: Path, monkeypatch: Any
) -> None:
    with ScriptedLLMServer(catalog=CATALOG) as server:
        server.enqueue(text_reply("A green rectangle."))
        ephemeral = {"default_model": "vision-model"}
        with isolated_runtime(tmp_path, monkeypatch, server.base_url, ephemeral=ephemeral) as rt:
            shot = tmp_path / "project" / "shot.png"
            Image.new("RGB", (1280, 720), (20, 200, 20)).save(shot)
            app = make_app(rt)
            async with running(app) as pilot:
                # A terminal pastes a dropped file as its quoted path.
                prompt = await _paste(pilot, f"'{shot}'")
                assert prompt.text == f"@{shot} "
                await _paste(pilot, "not a path at all")  # any other paste goes in as is
                assert prompt.text == f"@{shot} not a path at all"
                prompt.load_text(f"@{shot} what is this?")
                await pilot.press("enter")
                text = await wait_for_text(pilot, "A green rectangle.")
                assert "🖼 shot.png (1280×720)" in text
                assert "what is this?" in text  # the prompt as typed, above its marker
                await wait_until(pilot, lambda: not rt.busy, what="the turn to end")
        request = server.chat_requests()[0]
    last = [m for m in request["messages"] if m["role"] == "user"][-2]["content"]
    assert last[1]["image_url"]["url"].startswith("data:image/png;base64,")


async def test_a_text_only_model_shows_a_notice_and_the_row_says_not_sent(
    tmp_path: Path, monkeypatch: Any
) -> None:
    with ScriptedLLMServer(catalog=CATALOG) as server:
        server.enqueue(text_reply("No picture here."))
        ephemeral = {"default_model": "text-model"}
        with isolated_runtime(tmp_path, monkeypatch, server.base_url, ephemeral=ephemeral) as rt:
            Image.new("RGB", (40, 30)).save(tmp_path / "project" / "shot.png")
            app = make_app(rt)
            async with running(app) as pilot:
                prompt = pilot.app.screen.query_one(PromptInput)
                prompt.load_text("what is in @shot.png")
                await pilot.press("enter")
                text = await wait_for_text(pilot, "No picture here.")
                assert "does not take images" in text.replace("\n", " ")
                assert "🖼 shot.png (40×30)" in text
                await wait_until(pilot, lambda: not rt.busy, what="the turn to end")
            # Opened again from the store, the row says the image did not go.
            app = make_app(rt)
            async with running(app) as pilot:
                rows = await wait_for_text(pilot, "not sent: the model takes no images")
                assert "🖼 shot.png (40×30, not sent" in rows
        assert "image_url" not in str(server.chat_requests())


def _image_row(app: TranscriptApp) -> Any:
    async def feed(pilot: Pilot[Any]) -> None:
        app.transcript.handle_event(
            ev.TurnStarted(
                turn_id="t",
                conversation_id="c",
                prompt="Why is the header cut off in @docs/shot.png?",
                attachments=[
                    {"path": "docs/shot.png", "kind": "image", "width": 1280, "height": 720}
                ],
            )
        )
        app.transcript.handle_event(
            ev.AssistantMessage(turn_id="t", content="The header has a fixed height of 40px.")
        )
        await app.transcript.settle()
        await wait_until(pilot, lambda: "🖼 shot.png" in screen_text(app), what="the row")
        await wait_for_still_screen(pilot)

    return feed


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_image_row_snapshot(snap_compare: Any, size: tuple[int, int]) -> None:
    app = TranscriptApp()
    assert snap_compare(app, terminal_size=size, run_before=_image_row(app))


def test_thumbnails_only_where_the_terminal_draws_placeholders() -> None:
    class FakeApp:
        is_headless = False
        runtime = None

    assert thumbnails.thumbnails_on(FakeApp(), {"TERM": "xterm-kitty", "KITTY_WINDOW_ID": "1"})
    assert thumbnails.thumbnails_on(FakeApp(), {"TERM_PROGRAM": "ghostty"})
    assert not thumbnails.thumbnails_on(FakeApp(), {"TERM_PROGRAM": "WezTerm"})
    assert not thumbnails.thumbnails_on(FakeApp(), {"TERM": "xterm-kitty", "TMUX": "/t,1,0"})
    assert not thumbnails.thumbnails_on(FakeApp(), {"TERM": "xterm-256color"})
    FakeApp.is_headless = True
    assert not thumbnails.thumbnails_on(FakeApp(), {"TERM": "xterm-kitty"})
    assert thumbnails.cells(1280, 720) == (21, 6)
    assert thumbnails.cells(4000, 500) == (24, 2)


async def test_a_kitty_terminal_gets_the_thumbnail_as_placeholder_cells(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """With graphics on (forced: Pilot has no terminal), the row sends the thumbnail once as
    a virtual placement and draws it as placeholder cells coloured with its id."""
    with ScriptedLLMServer(catalog=CATALOG) as server:
        server.enqueue(text_reply("Green."))
        ephemeral = {"default_model": "vision-model"}
        with isolated_runtime(tmp_path, monkeypatch, server.base_url, ephemeral=ephemeral) as rt:
            Image.new("RGB", (1280, 720), (20, 200, 20)).save(tmp_path / "project" / "shot.png")
            monkeypatch.setattr(thumbnails, "thumbnails_on", lambda app, env=None: True)
            app = make_app(rt)
            written: list[str] = []
            async with running(app) as pilot:
                monkeypatch.setattr(terminal_driver(app), "write", written.append)
                prompt = pilot.app.screen.query_one(PromptInput)
                prompt.load_text("what is @shot.png")
                await pilot.press("enter")
                await wait_for_text(pilot, "Green.")
                row = app.screen.query_one(UserMessage)
                lines = [
                    "".join(seg.text for seg in row.render_line(y)) for y in range(row.size.height)
                ]
                cells = [line for line in lines if thumbnails.PLACEHOLDER in line]
                styles = {
                    seg.style.color.triplet.hex
                    for y in range(row.size.height)
                    for seg in row.render_line(y)
                    if thumbnails.PLACEHOLDER in seg.text and seg.style and seg.style.color
                }
                await wait_until(pilot, lambda: not rt.busy, what="the turn to end")
    commands = [w for w in written if "U=1" in w]
    assert len(commands) == 1 and commands[0].startswith("\x1b_Ga=T,U=1,f=100,")
    assert ",c=21,r=6," in commands[0]
    payload = "".join(part.split(";", 1)[1] for part in commands[0].split("\x1b\\") if ";" in part)
    png = base64.b64decode(payload)
    assert Image.open(io.BytesIO(png)).size == (228, 128)  # fits THUMBNAIL_BOX
    ident = thumbnails.image_id(png)
    assert len(cells) == 6 and all(line.count(thumbnails.PLACEHOLDER) == 21 for line in cells)
    assert styles == {f"#{ident:06x}"}
