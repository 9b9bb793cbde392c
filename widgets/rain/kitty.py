"""Kitty graphics protocol encoder for the rain strip.

Each frame is one ``a=T`` command (transmit and place at once) under a fixed image id and
a fixed placement id: re-transmitting an id replaces the old image and its placement in
the same command, so the terminal never shows a gap between frames. The placement sits at
``z=-10`` (behind the text, so it can never clobber a cell), with ``C=1`` (the cursor does
not move) and a ``c``/``r`` box that stretches every glyph column over two cells.

Pixels travel through POSIX shared memory (``t=s``): the frame is written to a fresh
object under ``/dev/shm`` and only its name crosses the tty (~150 bytes a frame). The
terminal unlinks the object once it has read it; objects a terminal never read (one
that ignores the command) are unlinked here after ``keep_frames`` frames and on
:meth:`KittyEncoder.release`. Without shared memory the encoder falls back to direct
transmission (``t=d``): the zlib-compressed pixels, base64, in chunks of at most 4096
bytes (``m=1`` on all but the last, ``m=0`` on the last).

Placement is anchored on the terminal cursor (:class:`CursorAnchor`: save cursor, up
``rows+1`` lines, to the strip column, place, restore) or on an absolute cell
(:class:`CellAnchor`: save cursor, move to the cell, place, restore), which suits a
full-screen app that knows where its strip is.
"""

from __future__ import annotations

import base64
import os
import secrets
import zlib
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

ESC = "\x1b"
APC_START = f"{ESC}_G"
"""Opens a graphics command."""
APC_END = f"{ESC}\\"
"""Closes a graphics command (ST)."""
SAVE_CURSOR = f"{ESC}7"
RESTORE_CURSOR = f"{ESC}8"

DEFAULT_IMAGE_ID = 0x5317_A1E5
"""The rain's fixed image id (high and odd, unlikely to clash with anything else)."""
DEFAULT_PLACEMENT_ID = 1
"""The rain's fixed placement id."""
Z_INDEX = -10
"""Behind the text layer."""
CHUNK_SIZE = 4096
"""Largest base64 payload per direct-transmission chunk (a multiple of 4)."""
SHM_DIR = "/dev/shm"
"""Where Linux keeps POSIX shared-memory objects."""

Medium = Literal["shm", "direct"]


@dataclass(frozen=True)
class CursorAnchor:
    """Place the strip ``rows + 1`` lines above the cursor, from 0-based ``column``."""

    column: int = 0


@dataclass(frozen=True)
class CellAnchor:
    """Place the strip's top-left corner on the 0-based screen cell (``row``, ``column``)."""

    row: int
    column: int


Anchor = CursorAnchor | CellAnchor


def graphics_command(keys: Mapping[str, object], payload: str = "") -> str:
    """One APC graphics command: ``ESC _ G k=v,... ; payload ESC \\`` (no ``;`` if empty)."""
    control = ",".join(f"{key}={value}" for key, value in keys.items())
    return (
        f"{APC_START}{control};{payload}{APC_END}" if payload else f"{APC_START}{control}{APC_END}"
    )


def delete_command(image_id: int = DEFAULT_IMAGE_ID) -> str:
    """Delete the image, its placements and its stored data (``a=d,d=I``)."""
    return graphics_command({"a": "d", "d": "I", "i": image_id, "q": 2})


def anchored(command: str, anchor: Anchor, rows: int) -> str:
    """Wrap ``command`` in the cursor moves that put it at ``anchor`` and back."""
    if isinstance(anchor, CursorAnchor):
        move = f"{ESC}[{rows + 1}A{ESC}[{anchor.column + 1}G"
    else:
        move = f"{ESC}[{anchor.row + 1};{anchor.column + 1}H"
    return f"{SAVE_CURSOR}{move}{command}{RESTORE_CURSOR}"


def chunk_payload(payload: str, size: int = CHUNK_SIZE) -> list[str]:
    """Split base64 text into pieces of at most ``size`` characters (``size`` % 4 == 0)."""
    if size < 4 or size % 4:
        raise ValueError(f"the chunk size must be a positive multiple of 4, got {size}")
    return [payload[i : i + size] for i in range(0, len(payload), size)] or [""]


def direct_commands(keys: Mapping[str, object], data: bytes, *, compress: bool = True) -> str:
    """Transmit ``data`` inline (``t=d``): base64 chunks, all keys on the first one."""
    first = dict(keys)
    first["t"] = "d"
    if compress:
        data = zlib.compress(data, 1)
        first["o"] = "z"
    chunks = chunk_payload(base64.b64encode(data).decode("ascii"))
    if len(chunks) == 1:
        return graphics_command(first, chunks[0])
    out = [graphics_command({**first, "m": 1}, chunks[0])]
    out.extend(graphics_command({"m": 1}, chunk) for chunk in chunks[1:-1])
    out.append(graphics_command({"m": 0}, chunks[-1]))
    return "".join(out)


class ShmWriter:
    """Creates, fills and closes POSIX shared-memory objects as files under ``directory``."""

    def __init__(self, directory: str = SHM_DIR, prefix: str = "smith-rain") -> None:
        self.directory = directory
        self.prefix = f"{prefix}-{os.getpid()}-{secrets.token_hex(4)}"
        self._counter = 0

    def available(self) -> bool:
        """Whether the directory exists and is writable."""
        return os.path.isdir(self.directory) and os.access(self.directory, os.W_OK | os.X_OK)

    def write(self, data: bytes) -> str:
        """Store ``data`` in a new object and return its name (without the leading ``/``)."""
        self._counter += 1
        name = f"{self.prefix}-{self._counter}"
        path = os.path.join(self.directory, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except BaseException:
            os.close(fd)
            self.unlink(name)
            raise
        os.close(fd)
        return name

    def unlink(self, name: str) -> None:
        """Remove the object ``name`` if it still exists (the terminal may have done so)."""
        try:
            os.unlink(os.path.join(self.directory, name))
        except FileNotFoundError:
            pass


class KittyEncoder:
    """Turns RGBA frames into Kitty graphics commands under fixed image/placement ids.

    ``medium`` is the preferred transfer (``"shm"`` falls back to ``"direct"`` for good
    the first time shared memory fails; :attr:`shm_error` then says why).
    """

    def __init__(
        self,
        *,
        image_id: int = DEFAULT_IMAGE_ID,
        placement_id: int = DEFAULT_PLACEMENT_ID,
        z_index: int = Z_INDEX,
        medium: Medium = "shm",
        shm_dir: str = SHM_DIR,
        compress: bool = True,
        keep_frames: int = 30,
    ) -> None:
        if not 1 <= image_id <= 0xFFFF_FFFF or not 1 <= placement_id <= 0xFFFF_FFFF:
            raise ValueError("Kitty image and placement ids must be in 1..4294967295")
        if medium not in ("shm", "direct"):
            raise ValueError(f"the transfer medium must be 'shm' or 'direct', got {medium!r}")
        self.image_id = image_id
        self.placement_id = placement_id
        self.z_index = z_index
        self.compress = compress
        self.keep_frames = max(1, keep_frames)
        self.shm_error: str | None = None
        self._shm = ShmWriter(shm_dir)
        self._medium: Medium = medium
        if medium == "shm" and not self._shm.available():
            self._fall_back(f"{shm_dir} is missing or not writable")
        self._pending: deque[str] = deque()

    @property
    def medium(self) -> Medium:
        """The transfer in use now."""
        return self._medium

    @property
    def outstanding(self) -> tuple[str, ...]:
        """Names of shared-memory objects written and not yet cleaned up here (oldest first)."""
        return tuple(self._pending)

    def frame(
        self,
        rgba: bytes,
        width_px: int,
        height_px: int,
        *,
        columns: int,
        rows: int,
        anchor: Anchor,
    ) -> str:
        """The full escape text for one frame: move, transmit + place, move back."""
        if len(rgba) != width_px * height_px * 4:
            raise ValueError(
                f"an RGBA frame of {width_px}×{height_px} needs {width_px * height_px * 4} "
                f"bytes, got {len(rgba)}"
            )
        keys: dict[str, object] = {
            "a": "T",
            "f": 32,
            "s": width_px,
            "v": height_px,
            "i": self.image_id,
            "p": self.placement_id,
            "c": columns,
            "r": rows,
            "z": self.z_index,
            "C": 1,
            "q": 2,
        }
        command = self._shm_command(keys, rgba) if self._medium == "shm" else None
        if command is None:
            command = direct_commands(keys, rgba, compress=self.compress)
        return anchored(command, anchor, rows)

    def delete(self) -> str:
        """The command that removes the rain image from the terminal."""
        return delete_command(self.image_id)

    def release(self) -> None:
        """Unlink every shared-memory object still around from this encoder's frames."""
        while self._pending:
            self._shm.unlink(self._pending.popleft())

    def _shm_command(self, keys: dict[str, object], rgba: bytes) -> str | None:
        try:
            name = self._shm.write(rgba)
        except OSError as error:
            self._fall_back(f"shared memory failed: {error.strerror or error}")
            return None
        self._pending.append(name)
        while len(self._pending) > self.keep_frames:
            self._shm.unlink(self._pending.popleft())
        payload = base64.b64encode(f"/{name}".encode()).decode("ascii")
        return graphics_command({**keys, "t": "s"}, payload)

    def _fall_back(self, reason: str) -> None:
        self._medium = "direct"
        self.shm_error = reason
