"""A hostile repository's image files named in a prompt (``@shot.png``, issue 27).

``@path`` images are read by engine/image_files.py under the read tool's policy and decoded
by Pillow behind Smith's own checks. Each attack is a file a repository could hold; its
control opens the same file the naive way (Pillow's ``Image.open`` on the path) and shows
what would have happened.
"""

from __future__ import annotations

import base64
import io
import os
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image

from smith_tui.config import SmithConfig
from smith_tui.engine.attachments import Attached, attach_files
from tests.support.runtime import make_git_repo

SECTION = "files"
GPS_TAG = 0x8825


def _bomb(path: Path, width: int, height: int) -> Path:
    """A tiny PNG whose header declares ``width`` × ``height`` RGB pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + data)
    return path


def _with_gps(path: Path) -> Path:
    exif = Image.Exif()
    exif[GPS_TAG] = {2: (48.0, 51.0, 29.0), 4: (2.0, 17.0, 40.0)}
    Image.new("RGB", (32, 32), (9, 9, 9)).save(path, format="JPEG", exif=exif.tobytes())
    return path


def _attach(prompt: str, repo: Path) -> Attached:
    return attach_files(prompt, cwd=repo, project_root=repo, config=SmithConfig())


@pytest.mark.attack(SECTION, "an @image symlinked to a picture outside the project")
def test_a_symlinked_image_outside_is_refused(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    Image.new("RGB", (8, 8)).save(tmp_path / "private.png")
    (repo / "shot.png").symlink_to(tmp_path / "private.png")
    found = _attach("@shot.png", repo)
    assert found.images == []
    assert "outside the project root" in found.problems[0]


@pytest.mark.control(SECTION, "a naive Image.open follows the link out of the project")
def test_control_naive_open_follows_the_link(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    Image.new("RGB", (8, 8), (1, 2, 3)).save(tmp_path / "private.png")
    (repo / "shot.png").symlink_to(tmp_path / "private.png")
    with Image.open(repo / "shot.png") as picture:
        assert picture.getpixel((0, 0)) == (1, 2, 3)


@pytest.mark.attack(SECTION, "a decompression bomb: a 60 kB PNG declaring 9000×6000 pixels")
def test_a_bomb_is_refused_before_it_is_decoded(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    _bomb(repo / "bomb.png", 9000, 6000)
    found = _attach("@bomb.png", repo)
    assert found.images == []
    assert "declares 9000×6000 pixels" in found.problems[0]


@pytest.mark.control(SECTION, "Pillow alone accepts the bomb's header (under its own limit)")
def test_control_pillow_alone_opens_the_bomb(tmp_path: Path) -> None:
    _bomb(tmp_path / "bomb.png", 9000, 6000)
    with Image.open(tmp_path / "bomb.png") as picture:  # no warning, no error
        assert picture.size == (9000, 6000)  # load() would allocate 162 MB for it


@pytest.mark.attack(SECTION, "a FIFO named shot.png with no writer (a read would block)")
def test_a_fifo_image_is_refused_at_once(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    os.mkfifo(repo / "shot.png")
    found = _attach("@shot.png", repo)
    assert "not a regular file" in found.problems[0]


@pytest.mark.control(SECTION, "the FIFO opens like a file for a reader that does not check")
def test_control_the_fifo_opens(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "shot.png")
    fd = os.open(tmp_path / "shot.png", os.O_RDONLY | os.O_NONBLOCK)  # blocks without NONBLOCK
    os.close(fd)


@pytest.mark.attack(SECTION, "an image's EXIF GPS position sent to the model's server")
def test_exif_does_not_reach_the_model(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    _with_gps(repo / "shot.jpg")
    found = _attach("@shot.jpg", repo)
    sent = Image.open(io.BytesIO(base64.b64decode(found.images[0]["data"])))
    assert not sent.getexif() and "exif" not in sent.info


@pytest.mark.control(SECTION, "the file's bytes as they are carry the GPS position")
def test_control_the_file_carries_gps(tmp_path: Path) -> None:
    path = _with_gps(tmp_path / "shot.jpg")
    with Image.open(path) as picture:
        assert picture.getexif().get_ifd(GPS_TAG)
