"""The Kitty graphics encoder: shared-memory frames, placement, direct chunks, delete."""

from __future__ import annotations

import base64
import os
import re
import zlib
from pathlib import Path

import pytest

from smith_tui.widgets.rain.frames import RainField
from smith_tui.widgets.rain.kitty import (
    CellAnchor,
    CursorAnchor,
    KittyEncoder,
    chunk_payload,
    direct_commands,
)

SHM = Path("/dev/shm")
needs_shm = pytest.mark.skipif(not SHM.is_dir(), reason="no /dev/shm on this system")

_APC = re.compile(r"\x1b_G([^;\x1b]*)(?:;([^\x1b]*))?\x1b\\")


def parse_apc(text: str) -> list[tuple[dict[str, str], str]]:
    """Every ``ESC _ G <control> ; <payload> ESC \\`` in ``text`` as (keys, payload)."""
    commands = []
    for match in _APC.finditer(text):
        keys = dict(item.split("=", 1) for item in match.group(1).split(","))
        commands.append((keys, match.group(2) or ""))
    return commands


def outside_apc(text: str) -> str:
    """``text`` with the graphics commands cut out (the cursor moves around them)."""
    return _APC.sub("<G>", text)


def shm_name(payload: str) -> str:
    """The shm object name a ``t=s`` payload carries, without its leading slash."""
    name = base64.b64decode(payload).decode()
    assert name.startswith("/") and "/" not in name[1:]
    return name[1:]


def _frame(seed: int = 1, columns: int = 12, rows: int = 6) -> tuple[bytes, int, int]:
    field = RainField(columns, rows, seed=seed, tint="#FFB000")
    for _ in range(8):
        field.step()
    width, height = field.natural_size
    return field.render_rgba(width, height), width, height


@needs_shm
def test_shm_frame_keys_payload_and_object() -> None:
    encoder = KittyEncoder()
    rgba, width, height = _frame()
    text = encoder.frame(rgba, width, height, columns=24, rows=6, anchor=CursorAnchor(3))
    try:
        [(keys, payload)] = parse_apc(text)
        assert keys["a"] == "T"
        assert keys["t"] == "s" and keys["f"] == "32"
        assert (keys["s"], keys["v"]) == (str(width), str(height))
        assert keys["i"] == str(encoder.image_id) and keys["p"] == str(encoder.placement_id)
        assert keys["z"] == "-10" and keys["C"] == "1" and keys["q"] == "2"
        assert (keys["c"], keys["r"]) == ("24", "6")
        stored = (SHM / shm_name(payload)).read_bytes()
        assert len(stored) == width * height * 4
        assert stored == rgba
        assert len(text) < 250  # only the name crosses the tty
    finally:
        encoder.release()
    assert not (SHM / shm_name(payload)).exists()


def test_cursor_anchor_saves_moves_up_places_and_restores() -> None:
    encoder = KittyEncoder(medium="direct")
    rgba, width, height = _frame()
    text = encoder.frame(rgba, width, height, columns=24, rows=6, anchor=CursorAnchor(3))
    assert outside_apc(text) == "\x1b7\x1b[7A\x1b[4G<G>\x1b8"
    text = encoder.frame(rgba, width, height, columns=24, rows=6, anchor=CellAnchor(2, 0))
    assert outside_apc(text) == "\x1b7\x1b[3;1H<G>\x1b8"


@needs_shm
def test_every_frame_reuses_the_ids_with_a_fresh_object() -> None:
    encoder = KittyEncoder(image_id=4242, placement_id=7)
    names = []
    try:
        for seed in range(3):
            rgba, width, height = _frame(seed)
            text = encoder.frame(rgba, width, height, columns=24, rows=6, anchor=CursorAnchor())
            [(keys, payload)] = parse_apc(text)
            assert (keys["i"], keys["p"]) == ("4242", "7")
            names.append(shm_name(payload))
            assert (SHM / names[-1]).read_bytes() == rgba
        assert len(set(names)) == 3
    finally:
        encoder.release()


@needs_shm
def test_objects_the_terminal_never_read_are_cleaned_up() -> None:
    encoder = KittyEncoder(keep_frames=3)
    rgba, width, height = _frame()
    names = []
    for _ in range(5):
        text = encoder.frame(rgba, width, height, columns=24, rows=6, anchor=CursorAnchor())
        names.append(shm_name(parse_apc(text)[0][1]))
    assert [(SHM / name).exists() for name in names] == [False, False, True, True, True]
    assert encoder.outstanding == tuple(names[2:])
    (SHM / names[3]).unlink()  # the terminal read (and unlinked) this one
    encoder.release()
    assert not any((SHM / name).exists() for name in names)
    assert encoder.outstanding == ()


def test_missing_shm_falls_back_to_direct_transmission(tmp_path: Path) -> None:
    encoder = KittyEncoder(shm_dir=str(tmp_path / "absent"))
    assert encoder.medium == "direct"
    assert "absent" in (encoder.shm_error or "")
    rgba, width, height = _frame()
    text = encoder.frame(rgba, width, height, columns=24, rows=6, anchor=CursorAnchor())
    commands = parse_apc(text)
    assert commands[0][0]["t"] == "d"
    data = base64.b64decode("".join(payload for _, payload in commands))
    assert zlib.decompress(data) == rgba


def test_shm_failing_mid_run_switches_to_direct(tmp_path: Path) -> None:
    shm_dir = tmp_path / "shm"
    shm_dir.mkdir()
    encoder = KittyEncoder(shm_dir=str(shm_dir))
    rgba, width, height = _frame()
    first = encoder.frame(rgba, width, height, columns=24, rows=6, anchor=CursorAnchor())
    assert parse_apc(first)[0][0]["t"] == "s"
    (shm_dir / shm_name(parse_apc(first)[0][1])).unlink()
    shm_dir.rmdir()
    second = encoder.frame(rgba, width, height, columns=24, rows=6, anchor=CursorAnchor())
    assert parse_apc(second)[0][0]["t"] == "d"
    assert encoder.medium == "direct" and encoder.shm_error
    encoder.release()


def test_direct_transmission_chunks() -> None:
    data = os.urandom(30_000)  # incompressible, so the chunk count is predictable
    keys = {"a": "T", "f": 32, "s": 100, "v": 75, "i": 9, "p": 1, "z": -10, "C": 1, "q": 2}
    commands = parse_apc(direct_commands(keys, data, compress=False))
    payloads = [payload for _, payload in commands]
    assert len(commands) == -(-len(base64.b64encode(data)) // 4096) == 10
    assert all(len(payload) <= 4096 for payload in payloads)
    assert all(len(payload) % 4 == 0 for payload in payloads[:-1])
    first, *middle, last = (k for k, _ in commands)
    assert first["t"] == "d" and first["m"] == "1" and "o" not in first
    assert {k: first[k] for k in ("i", "p", "z", "C", "f", "s", "v")} == {
        "i": "9",
        "p": "1",
        "z": "-10",
        "C": "1",
        "f": "32",
        "s": "100",
        "v": "75",
    }
    assert all(k == {"m": "1"} for k in middle)
    assert last == {"m": "0"}
    assert base64.b64decode("".join(payloads)) == data


def test_direct_transmission_compresses_and_small_frames_need_one_command() -> None:
    data = bytes(4 * 60 * 40)
    commands = parse_apc(direct_commands({"a": "T", "i": 1}, data))
    [(keys, payload)] = commands
    assert keys["o"] == "z" and "m" not in keys
    assert zlib.decompress(base64.b64decode(payload)) == data


def test_chunking_rules() -> None:
    assert chunk_payload("A" * 10, 4) == ["AAAA", "AAAA", "AA"]
    assert chunk_payload("") == [""]
    with pytest.raises(ValueError, match="multiple of 4"):
        chunk_payload("AAAA", 6)


def test_delete_command() -> None:
    encoder = KittyEncoder(image_id=77, medium="direct")
    [(keys, payload)] = parse_apc(encoder.delete())
    assert keys == {"a": "d", "d": "I", "i": "77", "q": "2"}
    assert payload == ""


def test_bad_encoder_input_is_rejected() -> None:
    with pytest.raises(ValueError, match="ids"):
        KittyEncoder(image_id=0)
    with pytest.raises(ValueError, match="medium"):
        KittyEncoder(medium="file")  # type: ignore[arg-type]
    encoder = KittyEncoder(medium="direct")
    with pytest.raises(ValueError, match="needs 40 bytes"):
        encoder.frame(b"\0" * 12, 5, 2, columns=2, rows=1, anchor=CursorAnchor())
