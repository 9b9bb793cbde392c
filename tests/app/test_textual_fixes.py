"""Removed widgets do not stay alive, nor keep their rendered lines, after they leave."""

from __future__ import annotations

import gc

from textual._styles_cache import StylesCache
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from smith_tui.widgets import textual_fixes


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield VerticalScroll()


def live_styles_caches() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, StylesCache))


def test_the_fixes_are_installed_by_importing_the_widgets() -> None:
    assert StylesCache.get_inner_outer is textual_fixes._get_inner_outer
    textual_fixes.apply()  # twice is harmless
    assert StylesCache.get_inner_outer is textual_fixes._get_inner_outer


async def test_removed_widgets_free_their_caches() -> None:
    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        box = app.query_one(VerticalScroll)
        await pilot.pause()
        baseline = live_styles_caches()
        for round_ in range(5):
            widgets = [Static(f"line {round_}.{n}\nsecond line") for n in range(40)]
            await box.mount_all(widgets)
            await pilot.pause()  # painted: each has rendered lines cached
            kept = widgets[0]
            assert kept._styles_cache._cache, "a painted widget caches its lines"
            await box.remove_children()
            await pilot.pause()
            assert not kept._styles_cache._cache, "a removed widget keeps no rendered lines"
            assert not kept._layout_cache
            del widgets, kept
        # Textual alone keeps up to 1,024 caches of removed widgets alive (all 200 here);
        # the container's node list remembers its last children (one round) until it changes.
        assert live_styles_caches() <= baseline + 40 + 5
