"""Fixes for Textual behaviour, applied once on import: three for long sessions, one for safety.

Textual 8.2 caches ``StylesCache.get_inner_outer`` with ``functools.lru_cache`` on the
*instance* method, so the cache key holds the ``StylesCache`` itself: up to 1,024 caches of
widgets long removed stay alive, each with the rendered lines (``Strip`` objects with
seven small caches apiece) of its widget. In a streamed answer that is about 200,000 objects
nobody uses, and every full garbage collection walks them: 90–120 ms pauses in the middle
of frames, which is most of the key-press latency while streaming. The replacement caches
on the two colours only, which is all the result depends on. Upstream:
https://github.com/Textualize/textual/issues/6665; remove this fix once a Textual release no
longer caches per instance (``test_styles_cache_still_caches_per_instance`` in
``tests/app/test_textual_compat.py`` fails then).

A removed widget is garbage in a reference cycle (parent, styles, node list…), so only the
cycle collector frees it, together with everything it still holds: its rendered lines and
layout caches. Every re-rendered block of a streaming answer adds such a widget. Emptying
those caches when the widget leaves the DOM lets reference counting free the bulk of it at
once and keeps the collector's pauses short.

Every ``Strip`` is made with seven small caches (crop, divide, style…), about 900 bytes
and seven objects for the collector, though most strips the compositor cuts never use one;
in a long session they were 3.2 MB of what stayed alive, and making them was most of the
cost of a new strip. They are made on first use instead
(:func:`~smith_tui.widgets.textual_compat.make_strip_caches_lazy`), only on the ``Strip``
it was written for.

The last line of defence of issue 20 ("the terminal shows text, never commands"): every line
a widget draws passes through ``Strip.render``, and a control character still in its text
(one a front end forgot to show with :func:`~smith_tui.terminal_text.visible`) is dropped
there, so outside text never writes an escape sequence to the terminal. Only the text of
the segments is looked at; the styles Textual renders around it are its own escapes.

The Textual internals the first three fixes use are reached through :mod:`textual_compat`.
"""

from __future__ import annotations

from functools import lru_cache

from rich.console import Console
from rich.segment import Segment
from textual.color import Color
from textual.strip import Strip
from textual.style import Style

from smith_tui.terminal_text import has_controls, without_controls
from smith_tui.widgets.textual_compat import (
    StylesCache,
    after_widget_exit,
    drop_render_caches,
    make_strip_caches_lazy,
    replace_inner_outer,
)

_applied = False


@lru_cache(1024)
def _inner_outer(base_background: Color, background: Color) -> tuple[Style, Style]:
    return (
        Style(background=base_background + background),
        Style(background=base_background),
    )


def _get_inner_outer(
    self: StylesCache, base_background: Color, background: Color
) -> tuple[Style, Style]:
    """Inner and outer background styles (cached by colour, not by cache instance)."""
    return _inner_outer(base_background, background)


_STRIP_RENDER = Strip.render


def _render_text_only(self: Strip, console: Console) -> str:
    """``Strip.render`` of the strip with the control characters of its text dropped."""
    strip = self
    if has_controls(self.text):
        strip = Strip(
            [Segment(without_controls(text), style, control) for text, style, control in self],
            self.cell_length,
        )
    return _STRIP_RENDER(strip, console)


def apply() -> None:
    """Install the fixes (idempotent)."""
    global _applied
    if _applied:
        return
    replace_inner_outer(_get_inner_outer)
    # After Textual's clean-up of a removed widget, drop its rendered lines and layouts.
    after_widget_exit(drop_render_caches)
    make_strip_caches_lazy()
    Strip.render = _render_text_only  # type: ignore[method-assign]
    _applied = True
