"""Images in a prompt from the terminal side (``@shot.png``): a PNG made with Pillow goes to
the scripted server as an image content part (a base64 data URL, resized, its EXIF gone),
is kept with the message and resent with the history; a model whose catalog entry lists no
image input gets the prompt without it and the user a notice; the window leaves old images
out before it drops any message; hostile files (a decompression bomb, not an image, a
truncated one, a FIFO, a symlink out of the project) are refused with a message."""

from __future__ import annotations

import base64
import io
import json
import os
import struct
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from smith_tui.config import SmithConfig
from smith_tui.engine import events as ev
from smith_tui.engine.attachments import attach_files, display_text
from smith_tui.engine.image_files import MAX_SIDE, prepare_image
from smith_tui.engine.prompt import RequestBudget, build_messages
from smith_tui.engine.prompt_images import IMAGES_KEY, ImageError, image_tokens
from smith_tui.engine.window import apply_window, estimate_tokens
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.runtime import make_git_repo, open_runtime

CATALOG = {
    "object": "list",
    "data": [
        {
            "id": "vision-model",
            "context_length": 64000,
            "architecture": {"input_modalities": ["text", "image"]},
        },
        {"id": "text-model", "context_length": 64000},
    ],
}


def png_with_exif(path: Path, size: tuple[int, int]) -> Path:
    """A real PNG of ``size`` with an EXIF block (a camera make and a GPS tag)."""
    picture = Image.new("RGB", size, (30, 160, 60))
    exif = Image.Exif()
    exif[0x010F] = "SpyCam"  # Make
    exif[0x8825] = {2: (52.0, 31.0, 0.0)}  # GPSInfo
    picture.save(path, format="PNG", exif=exif.tobytes())
    return path


def bomb_png(path: Path, width: int, height: int) -> Path:
    """A PNG whose header declares ``width`` × ``height`` with almost no data (a bomb)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 1024)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )
    return path


def _user_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        m
        for m in request["messages"]
        if m["role"] == "user" and not str(m["content"]).startswith("[state snapshot]")
    ]


def _decode_url(url: str) -> tuple[str, Image.Image]:
    head, _, data = url.partition(",")
    assert head.startswith("data:") and head.endswith(";base64")
    return head[5:-7], Image.open(io.BytesIO(base64.b64decode(data, validate=True)))


async def test_a_png_goes_as_a_resized_image_part_and_is_resent(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    png_with_exif(repo / "shot.png", (3000, 1500))
    with ScriptedLLMServer(catalog=CATALOG) as server:
        server.enqueue(text_reply("a green picture"), text_reply("still green"))
        runtime, rec = open_runtime(tmp_path, server.base_url, model="vision-model", cwd=repo)
        try:
            await runtime.run_turn("what is in @shot.png?")
            await runtime.run_turn("and now?")
            stored = [m for m in runtime.conversations.messages if m.get("role") == "user"]
        finally:
            await runtime.aclose()
        requests = server.chat_requests()

    first = _user_messages(requests[0])[-1]["content"]
    assert first[0] == {"type": "text", "text": "what is in @shot.png?"}
    assert first[1]["type"] == "image_url"
    mime, picture = _decode_url(first[1]["image_url"]["url"])
    assert mime == "image/png" and picture.format == "PNG"
    assert picture.size == (MAX_SIDE, MAX_SIDE // 2)  # longest side scaled to 2048
    assert not picture.getexif() and "exif" not in picture.info  # no camera, no GPS
    # Kept with the message: the next request resends it in the history.
    again = _user_messages(requests[1])
    assert again[0]["content"][1] == first[1]
    assert again[-1]["content"] == "and now?"
    assert stored[0]["metadata"][IMAGES_KEY][0]["width"] == MAX_SIDE
    assert display_text(stored[0]["content"], stored[0]["metadata"]) == (
        "what is in @shot.png?\n🖼 shot.png (2048×1024)"
    )
    assert not [e for e in rec.of(ev.CommandOutput) if e.command == "attach"]


async def test_a_model_without_image_input_gets_the_prompt_without_it(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    png_with_exif(repo / "shot.png", (64, 32))
    with ScriptedLLMServer(catalog=CATALOG) as server:
        server.enqueue(text_reply("I cannot see it"))
        runtime, rec = open_runtime(tmp_path, server.base_url, model="text-model", cwd=repo)
        try:
            result = await runtime.run_turn("what is in @shot.png?")
            stored = [m for m in runtime.conversations.messages if m.get("role") == "user"]
        finally:
            await runtime.aclose()
        requests = server.chat_requests()

    assert result.error is None and result.text == "I cannot see it"
    assert _user_messages(requests[0])[-1]["content"] == "what is in @shot.png?"
    assert "image_url" not in json.dumps(requests[0])
    notices = [e.text for e in rec.of(ev.CommandOutput) if e.command == "attach"]
    assert len(notices) == 1 and "the model text-model does not take images" in notices[0]
    assert IMAGES_KEY not in stored[0]["metadata"]
    assert display_text(stored[0]["content"], stored[0]["metadata"]).endswith(
        "🖼 shot.png (64×32, not sent: the model takes no images)"
    )


def _image(name: str, size: tuple[int, int]) -> dict[str, Any]:
    return {
        "mime_type": "image/png",
        "data": "AAAA",
        "name": name,
        "width": size[0],
        "height": size[1],
    }


def _prompt(text: str, *images: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": text, "metadata": {IMAGES_KEY: list(images)}}


def test_the_window_leaves_old_images_out_before_any_message() -> None:
    big = _image("old.png", (2048, 2048))
    assert image_tokens(big) == -(-2048 * 2048 // 750)  # the documented estimate
    history = [
        {"role": "system", "content": "sys"},
        _prompt("look at @old.png", big),
        {"role": "assistant", "content": "a" * 4000},
        _prompt("and @new.png", _image("new.png", (2048, 2048))),
    ]
    whole = estimate_tokens(history)
    assert whole > 2 * image_tokens(big)  # both images are counted
    # Room for the texts and one image, not two: the old image goes, every message stays.
    window = image_tokens(big) + 2000
    result = apply_window(history, context_window=window, trim_threshold_pct=100)
    assert result.dropped_rounds == 0 and result.dropped_images == 1
    assert [m["content"] for m in result.messages][1:3] == [
        "look at @old.png\n[image old.png left out to fit the context window]",
        "a" * 4000,
    ]
    assert IMAGES_KEY not in result.messages[1]["metadata"]
    assert result.messages[3] is history[3]  # the latest prompt keeps its image
    assert history[1]["metadata"][IMAGES_KEY] == [big]  # the input is not changed
    # The request: the old prompt as text only, the new one with its image, and the
    # snapshot line saying what was left out.
    sent = build_messages(
        "sys", history[1:], datetime(2026, 1, 1, tzinfo=UTC), budget=RequestBudget(window, 0, 0)
    )
    assert sent[1]["content"] == result.messages[1]["content"]
    assert [p["type"] for p in sent[3]["content"]] == ["text", "image_url"]
    assert "1 older prompts' images left out" in sent[-1]["content"]
    # Control: with the same room and no image to give up, the window drops a message.
    plain = [history[0], {"role": "user", "content": "x" * (4 * image_tokens(big))}, *history[2:]]
    dropped = apply_window(plain, context_window=window, trim_threshold_pct=100)
    assert dropped.dropped_rounds >= 1 and dropped.dropped_images == 0


def _attach(prompt: str, repo: Path) -> Any:
    return attach_files(prompt, cwd=repo, project_root=repo, config=SmithConfig())


def test_hostile_image_files_are_refused_with_a_message(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    bomb_png(repo / "bomb.png", 30000, 30000)  # over Pillow's own bomb limit
    bomb_png(repo / "wide.png", 9000, 6000)  # under Pillow's, over Smith's pixel cap
    (repo / "fake.png").write_text("just text, not an image\n")
    whole = io.BytesIO()
    Image.new("RGB", (400, 400), (1, 2, 3)).save(whole, format="PNG")
    (repo / "cut.png").write_bytes(whole.getvalue()[:300])
    outside = png_with_exif(tmp_path / "secret.png", (8, 8))
    (repo / "link.png").symlink_to(outside)
    os.mkfifo(repo / "pipe.png")

    found = _attach("@bomb.png @wide.png @fake.png @cut.png @link.png @pipe.png", repo)
    problems = dict(p.split(": not attached: ", 1) for p in found.problems)
    assert found.images == [] and found.attachments == []
    assert "decompression bomb" in problems["@bomb.png"]
    assert "declares 9000×6000 pixels" in problems["@wide.png"]
    assert "not an image Smith reads" in problems["@fake.png"]
    assert "cannot be decoded" in problems["@cut.png"]
    assert "outside the project root" in problems["@link.png"]
    assert "not a regular file" in problems["@pipe.png"]
    assert found.content == "@bomb.png @wide.png @fake.png @cut.png @link.png @pipe.png"


def test_prepare_image_reencodes_and_caps() -> None:
    jpeg = io.BytesIO()
    Image.new("RGB", (900, 300), (200, 10, 10)).save(jpeg, format="JPEG")
    image = prepare_image(jpeg.getvalue(), name="a.jpg")
    assert (image["width"], image["height"], image["mime_type"]) == (900, 300, "image/png")
    with pytest.raises(ImageError, match="not an image"):
        prepare_image(b"GIF89a but not really", name="b.gif")
    noise = io.BytesIO()
    Image.frombytes("RGB", (1800, 1800), os.urandom(1800 * 1800 * 3)).save(noise, format="PNG")
    capped = prepare_image(noise.getvalue(), name="noise.png")  # a PNG over 2 MiB
    assert capped["mime_type"] == "image/jpeg"
    assert len(base64.b64decode(capped["data"])) <= 2 * 1024 * 1024


def test_headless_smith_p_sends_the_image_or_says_why_not(tmp_path: Path) -> None:
    """``smith -p`` (the real console script): the vision model gets the picture; the
    text-only model gets the prompt and stderr says why not; a fake image is named."""
    from tests.support.smith_cli import run_smith, server_args, smith_env

    repo = make_git_repo(tmp_path / "repo")
    png_with_exif(repo / "shot.png", (300, 200))
    (repo / "fake.png").write_text("not a picture\n")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"llm_config": {"retry_backoff_ms": [10, 20]}}))
    with ScriptedLLMServer(catalog=CATALOG) as server:
        server.enqueue(text_reply("seen"), text_reply("unseen"))
        args = server_args(server.base_url, tmp_path / "smith.db", config)
        seen = run_smith(
            ["-p", "look at @shot.png and @fake.png", *args],
            cwd=repo,
            env=smith_env(tmp_path, SMITH_MODEL="vision-model"),
        )
        unseen = run_smith(
            ["-p", "look at @shot.png", *args],
            cwd=repo,
            env=smith_env(tmp_path, SMITH_MODEL="text-model"),
        )
        requests = server.chat_requests()
    assert seen.returncode == 0 and seen.stdout.strip() == "seen", seen.stderr
    assert "@fake.png: not attached: the file is not an image" in seen.stderr
    assert "Traceback" not in seen.stderr + unseen.stderr
    parts = _user_messages(requests[0])[-1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url"]
    assert _decode_url(parts[1]["image_url"]["url"])[1].size == (300, 200)
    assert unseen.returncode == 0 and unseen.stdout.strip() == "unseen"
    assert "the model text-model does not take images" in unseen.stderr
    assert _user_messages(requests[1])[-1]["content"] == "look at @shot.png"


async def test_an_at_path_image_and_an_editor_image_both_go(tmp_path: Path) -> None:
    """A prompt with ``@shot.png`` and an image handed in by a front end (ACP's image
    block, ``run_turn(images=)``) sends both, the file's first."""
    repo = make_git_repo(tmp_path / "repo")
    png_with_exif(repo / "shot.png", (40, 20))
    block = io.BytesIO()
    Image.new("RGB", (10, 10)).save(block, format="PNG")
    given = {"mime_type": "image/png", "data": base64.b64encode(block.getvalue()).decode()}
    with ScriptedLLMServer(catalog=CATALOG) as server:
        server.enqueue(text_reply("two"))
        runtime, _ = open_runtime(tmp_path, server.base_url, model="vision-model", cwd=repo)
        try:
            await runtime.run_turn("compare @shot.png with this", images=(given,))
        finally:
            await runtime.aclose()
        parts = _user_messages(server.chat_requests()[0])[-1]["content"]
    sizes = [_decode_url(p["image_url"]["url"])[1].size for p in parts[1:]]
    assert sizes == [(40, 20), (10, 10)]


async def test_a_model_named_in_image_input_gets_images_the_catalog_does_not_list(
    tmp_path: Path,
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    png_with_exif(repo / "shot.png", (64, 32))
    config = {"services": {"model": {"image_input": ["text-*"]}}}
    with ScriptedLLMServer(catalog=CATALOG) as server:
        server.enqueue(text_reply("a red square"))
        runtime, rec = open_runtime(
            tmp_path, server.base_url, model="text-model", cwd=repo, config=config
        )
        try:
            await runtime.run_turn("what is in @shot.png?")
        finally:
            await runtime.aclose()
        body = server.chat_requests()[0]
    parts = _user_messages(body)[-1]["content"]
    assert isinstance(parts, list) and any(p.get("type") == "image_url" for p in parts)
    assert not [e for e in rec.of(ev.CommandOutput) if e.command == "attach"]


def test_declared_image_models_reads_only_strings() -> None:
    from smith_tui.engine.prompt_images import declared_image_models, takes_images

    assert declared_image_models({"services": {"model": {"image_input": "qwen*-vl"}}}) == (
        "qwen*-vl",
    )
    assert declared_image_models({"services": {"model": {"image_input": [1, "a"]}}}) == ("a",)
    assert declared_image_models({}) == ()
    assert takes_images([], "qwen2.5-vl", ("qwen*-vl",)) is True
    assert takes_images([], "qwen2.5", ("qwen*-vl",)) is False
