"""A hostile clipboard (issue 27): the paste-image key (engine/clipboard_image.py) runs the
desktop's clipboard tool and takes what it prints. Anything can be on a clipboard (a web
page's copied picture, another program's bytes), so each attack is a scripted ``wl-paste``
printing it; its control takes the same output the naive way and shows what would happen.
"""

from __future__ import annotations

import io
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

from smith_tui.engine.clipboard_image import (
    ClipboardError,
    pasted_root,
    read_clipboard_image,
    read_pasted,
    save_pasted,
)
from smith_tui.engine.image_files import MAX_SOURCE_BYTES
from smith_tui.engine.prompt_images import ImageError
from tests.security.test_prompt_images import _bomb

SECTION = "files"

LISTS_PNG = """#!{python}
import sys
if "--list-types" in sys.argv:
    print("image/png")
    sys.exit(0)
"""


def _wl_paste(tmp_path: Path, body: str) -> dict[str, str]:
    """The environment of a Wayland desktop whose ``wl-paste`` lists a PNG, then runs ``body``."""
    folder = tmp_path / "bin"
    folder.mkdir()
    tool = folder / "wl-paste"
    tool.write_text(LISTS_PNG.format(python=sys.executable) + body)
    tool.chmod(0o755)
    return {"PATH": str(folder), "WAYLAND_DISPLAY": "wayland-9", "XDG_DATA_HOME": str(tmp_path)}


def _bomb_tool(tmp_path: Path) -> dict[str, str]:
    bomb = _bomb(tmp_path / "bomb.png", 9000, 6000)
    return _wl_paste(tmp_path, f"sys.stdout.buffer.write(open({str(bomb)!r}, 'rb').read())\n")


@pytest.mark.attack(SECTION, "a clipboard tool printing a decompression bomb (9000×6000 PNG)")
def test_a_clipboard_bomb_is_refused_and_nothing_is_saved(tmp_path: Path) -> None:
    env = _bomb_tool(tmp_path)
    data = read_clipboard_image(env, "linux")
    with pytest.raises(ImageError, match="declares 9000×6000 pixels"):
        save_pasted(data, conversation="c1", env=env)
    assert not pasted_root(env).exists() or not any(pasted_root(env).rglob("*.*"))


@pytest.mark.control(SECTION, "Pillow without the cap takes the clipboard bomb's header")
def test_control_pillow_alone_takes_the_clipboard_bomb(tmp_path: Path) -> None:
    env = _bomb_tool(tmp_path)
    data = subprocess.run(
        ["wl-paste", "--type", "image/png"], env=env, capture_output=True, check=True
    ).stdout
    with Image.open(io.BytesIO(data)) as picture:  # no warning, no error
        assert picture.size == (9000, 6000)  # load() would allocate 162 MB for it


ENDLESS = "chunk = b'\\0' * 65536\nwhile True:\n    sys.stdout.buffer.write(chunk)\n"


@pytest.mark.attack(SECTION, "a clipboard tool printing without end (memory exhaustion)")
def test_endless_clipboard_output_is_cut_at_the_cap(tmp_path: Path) -> None:
    env = _wl_paste(tmp_path, ENDLESS)
    with pytest.raises(ClipboardError, match="over 32 MiB"):
        read_clipboard_image(env, "linux")


@pytest.mark.control(SECTION, "the endless tool goes on past the cap for a reader without one")
def test_control_the_endless_tool_goes_past_the_cap(tmp_path: Path) -> None:
    env = _wl_paste(tmp_path, ENDLESS)
    process = subprocess.Popen(["wl-paste", "--type", "image/png"], env=env, stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None
        read = 0
        while read <= MAX_SOURCE_BYTES:
            read += len(process.stdout.read(1 << 20))
        assert process.poll() is None  # still printing
    finally:
        process.kill()
        process.wait()
        assert process.stdout is not None
        process.stdout.close()


HANGS = "import time\ntime.sleep(60)\n"


@pytest.mark.attack(SECTION, "a clipboard tool that never answers (the prompt would hang)")
def test_a_hanging_tool_times_out(tmp_path: Path) -> None:
    env = _wl_paste(tmp_path, HANGS)
    started = time.monotonic()
    with pytest.raises(ClipboardError, match=r"did not answer within 0\.5 s"):
        read_clipboard_image(env, "linux", timeout=0.5)
    assert time.monotonic() - started < 5


@pytest.mark.control(SECTION, "the hanging tool is still running after the timeout")
def test_control_the_tool_hangs(tmp_path: Path) -> None:
    env = _wl_paste(tmp_path, HANGS)
    process = subprocess.Popen(["wl-paste", "--type", "image/png"], env=env)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(0.5)
    finally:
        process.kill()
        process.wait()


def _planted_link(tmp_path: Path) -> tuple[dict[str, str], Path]:
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    Image.new("RGB", (8, 8), (1, 2, 3)).save(tmp_path / "private.png")
    folder = pasted_root(env) / "c1"
    folder.mkdir(parents=True)
    link = folder / "clip-0.png"
    link.symlink_to(tmp_path / "private.png")
    return env, link


@pytest.mark.attack(SECTION, "a symlink planted in the pasted folder, pointing out of it")
def test_a_planted_link_in_the_pasted_folder_is_refused(tmp_path: Path) -> None:
    from smith_tui.tools.spec import ToolError

    env, link = _planted_link(tmp_path)
    with pytest.raises(ToolError, match="outside the project root"):
        read_pasted(str(link), env=env)


@pytest.mark.control(SECTION, "a naive open of the planted link reads the picture outside")
def test_control_naive_open_follows_the_planted_link(tmp_path: Path) -> None:
    _env, link = _planted_link(tmp_path)
    with Image.open(link) as picture:
        assert picture.getpixel((0, 0)) == (1, 2, 3)
