"""Fixes for Textual behaviour that hurts long sessions, applied once on import.

Textual 8.2 caches ``StylesCache.get_inner_outer`` with ``functools.lru_cache`` on the
*instance* method, so the cache key holds the ``StylesCache`` itself: up to 1,024 caches of
widgets long removed stay alive, each with the rendered lines (``Strip`` objects with
seven small caches apiece) of its widget. In a streamed answer that is about 200,000 objects
nobody uses, and every full garbage collection walks them: 90–120 ms pauses in the middle
of frames, which is most of the key-press latency while streaming. The replacement caches
on the two colours only, which is all the result depends on.

A removed widget is garbage in a reference cycle (parent, styles, node list…), so only the
cycle collector frees it, together with everything it still holds: its rendered lines and
layout caches. Every re-rendered block of a streaming answer adds such a widget. Emptying
those caches when the widget leaves the DOM lets reference counting free the bulk of it at
once and keeps the collector's pauses short.
"""

from __future__ import annotations

from functools import lru_cache

from textual._styles_cache import StylesCache
from textual.color import Color
from textual.style import Style
from textual.widget import Widget

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


_message_loop_exit = Widget._message_loop_exit


async def _message_loop_exit_releasing(self: Widget) -> None:
    """Textual's clean-up of a removed widget, then drop its rendered lines and layouts."""
    await _message_loop_exit(self)
    self._styles_cache.clear()
    self._layout_cache.clear()


def apply() -> None:
    """Install the fixes (idempotent)."""
    global _applied
    if _applied:
        return
    cached = getattr(StylesCache.get_inner_outer, "cache_clear", None)
    if cached is not None:
        cached()  # drop what the instance-keyed cache holds already
    StylesCache.get_inner_outer = _get_inner_outer  # type: ignore[method-assign]
    Widget._message_loop_exit = _message_loop_exit_releasing  # type: ignore[method-assign]
    _applied = True
