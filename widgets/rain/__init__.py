"""Matrix rain through the Kitty graphics protocol (docs/DESIGN.md §3.8).

- :mod:`.glyphs` — the 5×7 bitmap glyphs.
- :mod:`.layout` — where the strip sits and its pixel size.
- :mod:`.frames` — :class:`RainField`, the falling trails and their RGBA rendering.
- :mod:`.kitty` — :class:`KittyEncoder`, frames as graphics commands (shared memory or inline).
- :mod:`.detect` — :func:`kitty_graphics_supported`.
- :mod:`.animator` — :class:`RainAnimator`, the 10 fps task writing one frame per tick.

Nothing here imports Textual: the app hands the animator a ``write`` callable.
"""

from smith_tui.widgets.rain.animator import FPS, RainAnimator
from smith_tui.widgets.rain.detect import (
    graphics_query,
    in_multiplexer,
    kitty_graphics_supported,
    parse_graphics_setting,
    parse_query_reply,
    shm_transfer_usable,
)
from smith_tui.widgets.rain.frames import RainField, head_colour, parse_tint
from smith_tui.widgets.rain.glyphs import GLYPHS, Glyph
from smith_tui.widgets.rain.kitty import (
    CellAnchor,
    CursorAnchor,
    KittyEncoder,
    delete_command,
)
from smith_tui.widgets.rain.layout import StripLayout, strip_layout

__all__ = [
    "FPS",
    "GLYPHS",
    "CellAnchor",
    "CursorAnchor",
    "Glyph",
    "KittyEncoder",
    "RainAnimator",
    "RainField",
    "StripLayout",
    "delete_command",
    "graphics_query",
    "head_colour",
    "in_multiplexer",
    "kitty_graphics_supported",
    "parse_graphics_setting",
    "parse_query_reply",
    "parse_tint",
    "shm_transfer_usable",
    "strip_layout",
]
