"""Thumbnails of a prompt's images in the transcript, through the Kitty graphics protocol.

The picture is sent once (``a=T`` with ``U=1``: a virtual placement of ``c`` × ``r``
cells, PNG data inline through the rain's :func:`~smith_tui.widgets.rain.kitty.direct_commands`)
and drawn by ordinary text: each cell is the placeholder character U+10EEEE followed by
the combining marks that number its row and column, in a foreground colour whose 24-bit
value is the image id. The terminal puts the picture's part on each such cell, so the
thumbnail scrolls, clips and goes away with the transcript row like any text.

Only kitty and Ghostty draw such placeholders (WezTerm has the protocol but not them), and
never through tmux or screen; ``services.ui.kitty_graphics`` (``off``, ``on``) decides
first, as for the rain. Everywhere else, and in snapshots, the row's
``🖼 shot.png (1280×720)`` marker is all there is.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Mapping
from typing import Any

from rich.color import Color
from rich.style import Style
from rich.text import Text

PLACEHOLDER = "\U0010eeee"
"""The character a terminal replaces with a part of the image."""
DIACRITICS = (
    "\u0305\u030d\u030e\u0310\u0312\u033d\u033e\u033f\u0346\u034a\u034b\u034c"
    "\u0350\u0351\u0352\u0357\u035b\u0363\u0364\u0365\u0366\u0367\u0368\u0369"
)
"""The first 24 row/column marks of the protocol (the Nth mark means row or column N)."""
MAX_ROWS = 6
"""Most cell rows a thumbnail takes."""
MAX_COLUMNS = len(DIACRITICS)
"""Most cell columns a thumbnail takes."""


def thumbnails_on(app: Any, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``app``'s terminal draws thumbnails: not headless, the setting allows Kitty
    graphics (``auto`` asks the environment, as the rain does) and the terminal is kitty or
    Ghostty outside a multiplexer."""
    from smith_tui.widgets.rain.detect import in_multiplexer, parse_graphics_setting

    if getattr(app, "is_headless", True):
        return False
    env = os.environ if env is None else env
    runtime: Any = getattr(app, "runtime", None)
    try:
        setting = parse_graphics_setting(runtime.config.model.services.ui.kitty_graphics)
    except (AttributeError, ValueError):
        setting = None
    if setting is not None:
        return setting
    if in_multiplexer(env):
        return False
    program = env.get("TERM_PROGRAM", "").strip().lower()
    return bool(env.get("KITTY_WINDOW_ID") or env.get("TERM") == "xterm-kitty") or (
        program == "ghostty"
    )


def cells(width: int, height: int) -> tuple[int, int]:
    """The ``(columns, rows)`` of a thumbnail of a ``width`` × ``height`` picture (a cell
    being about twice as tall as wide), at most :data:`MAX_COLUMNS` × :data:`MAX_ROWS`."""
    width, height = max(1, width), max(1, height)
    rows = MAX_ROWS
    columns = round(rows * 2 * width / height)
    if columns > MAX_COLUMNS:
        columns = MAX_COLUMNS
        rows = max(1, round(columns * height / (2 * width)))
    return max(1, columns), rows


def image_id(png: bytes) -> int:
    """A 24-bit id for the picture (its colour is the placeholder cells' foreground)."""
    return int.from_bytes(hashlib.sha256(png).digest()[:3], "big") or 1


def thumbnail_png(attachment: Mapping[str, Any]) -> bytes | None:
    """The PNG bytes of an image attachment's thumbnail (``None`` without one)."""
    data = attachment.get("thumbnail")
    if attachment.get("kind") != "image" or not isinstance(data, str):
        return None
    try:
        png = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return png if png.startswith(b"\x89PNG\r\n\x1a\n") else None


def transmit(png: bytes, columns: int, rows: int) -> str:
    """The command that sends ``png`` and makes its virtual placement of the cell box."""
    from smith_tui.widgets.rain.kitty import direct_commands

    keys = {"a": "T", "U": 1, "f": 100, "i": image_id(png), "c": columns, "r": rows, "q": 2}
    return direct_commands(keys, png, compress=False)


def placeholder_rows(png: bytes, columns: int, rows: int) -> Text:
    """The cells that show the picture: ``rows`` lines of ``columns`` placeholders."""
    ident = image_id(png)
    style = Style(color=Color.from_rgb(ident >> 16, (ident >> 8) & 0xFF, ident & 0xFF))
    lines = [
        "".join(PLACEHOLDER + DIACRITICS[row] + DIACRITICS[column] for column in range(columns))
        for row in range(rows)
    ]
    return Text("\n".join(lines), style=style, no_wrap=True, overflow="crop")
