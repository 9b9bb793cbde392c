"""Matrix rain: falling glyphs in a role's tint while a sub-agent waits for its model.

docs/DESIGN.md §3.8: Tank, Link and Niobe show the rain while their request is in flight (from
``LLMRequestStarted`` until their first output); Smith keeps the spinner. This widget draws
the rain in its own strip of the layout, so it can never cover text:

- with ordinary cells (any terminal), or
- with the Kitty graphics protocol (``graphics=True``): the strip's cells stay blank and
  :class:`smith_tui.widgets.rain.RainAnimator` places 5×7-glyph frames behind them at
  z-index -10, written through Textual's driver (the terminal's only writer).

:func:`use_kitty_graphics` decides which, from ``services.ui.kitty_graphics`` and the
environment.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.reactive import reactive
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from smith_tui.engine import events as ev
from smith_tui.engine.roles import role_display
from smith_tui.widgets.textual_compat import terminal_driver

#: Digits, symbols and half-width katakana: every glyph is one cell wide.
GLYPHS = "0123456789:.=*+-<>¦|ｦｱｳｴｵｶｷｹｺｻｼｽｾｿﾀﾂﾃﾅﾆﾇﾈﾊﾋﾎﾏﾐﾑﾒﾓﾔﾕﾗﾘﾜ"
FPS = 10
#: Shades from the head of a column (brightest) down its tail.
SHADES = 6
DEFAULT_TINT = "#00FF41"
#: Events that show the waiting role got its first output.
_OUTPUT = (ev.TextDelta, ev.ReasoningDelta, ev.AssistantMessage, ev.ToolCallStarted)


def _ends_wait(event: ev.Event) -> bool:
    """Whether ``event`` means its role stopped waiting for the model.

    Besides the output events, the engine's ``streaming`` status arrives with the first
    delta of any kind - a streamed tool call included, which has no delta event of its own
    and would otherwise keep the rain up until the whole call was in.
    """
    if isinstance(event, ev.StatusChanged):
        return event.status != "thinking"
    return isinstance(event, (*_OUTPUT, ev.StreamReset))


def use_kitty_graphics(env: Mapping[str, str], setting: str | bool | None = "auto") -> bool:
    """Whether to draw the rain with Kitty graphics: ``setting`` (auto/on/off) first, then
    the environment (kitty, WezTerm, Ghostty; never inside tmux or screen)."""
    from smith_tui.widgets.rain.detect import kitty_graphics_supported

    return kitty_graphics_supported(env, override=setting)


@dataclass
class _Column:
    head: float
    speed: float
    length: int
    glyphs: list[str]


class MatrixRain(Widget):
    """A strip of falling glyphs, visible only while a tinted role waits for its model."""

    DEFAULT_CSS = """
    MatrixRain {
        display: none;
        height: 8;
        width: 40%;
    }
    MatrixRain.-raining {
        display: block;
    }
    """

    tint: reactive[str] = reactive(DEFAULT_TINT)
    """The colour of the glyphs (the waiting role's tint)."""
    raining: reactive[bool] = reactive(False)
    """Whether the rain is showing."""
    suspended: reactive[bool] = reactive(False)
    """True while another screen covers this one: the clock stops and Kitty frames are
    taken down (a terminal image would show through the covering screen)."""

    def __init__(
        self,
        *,
        seed: int = 7,
        graphics: bool = False,
        write: Callable[[str], object] | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """``graphics`` draws with Kitty graphics through ``write`` (default: Textual's driver)."""
        super().__init__(id=id, classes=classes)
        self.graphics = graphics
        self._seed = seed
        self._random = random.Random(seed)
        self._columns: list[_Column] = []
        self._waiting: dict[tuple[str | None, str], str] = {}
        self._shades: list[Style] = []
        self._timer: Timer | None = None
        self._write = write
        self._animator: Any = None
        self._placed: tuple[int, ...] | None = None
        self._tracker: Timer | None = None

    # --- who is waiting -----------------------------------------------------------

    def handle_event(self, event: ev.Event) -> None:
        """Start the rain on a tinted role's request; stop it at that role's first output."""
        key = (event.job_id, event.role)
        if isinstance(event, ev.LLMRequestStarted):
            tint = role_display(event.role)[1]
            if tint is not None:
                self._waiting[key] = tint
        elif _ends_wait(event):
            self._waiting.pop(key, None)
        elif isinstance(event, ev.DispatchFinished | ev.TurnFinished):
            if event.job_id is None and isinstance(event, ev.TurnFinished):
                self._waiting.clear()
            else:
                self._waiting = {k: v for k, v in self._waiting.items() if k[0] != event.job_id}
        else:
            return
        if self._waiting:
            self.start(next(reversed(self._waiting.values())))
        else:
            self.stop()

    def start(self, tint: str) -> None:
        """Show the rain in ``tint``."""
        self.tint = tint
        self.raining = True

    def stop(self) -> None:
        """Hide the rain."""
        self.raining = False

    def watch_raining(self, raining: bool) -> None:
        """Show or hide the strip and run the clock while visible."""
        self.set_class(raining, "-raining")
        self._update_clock()

    def watch_suspended(self, suspended: bool) -> None:
        """Pause while covered, go on when uncovered."""
        self._update_clock()

    def watch_tint(self, tint: str) -> None:
        """Recompute the shades (or recolour the Kitty frames) for a new tint."""
        self._shades = []
        if self.graphics and self._animator is not None and self._animator.active:
            self._animator.start(tint)
        self.refresh()

    def on_unmount(self) -> None:
        """Take a Kitty image down with the widget."""
        if self._animator is not None:
            self._animator.stop()

    @property
    def _animating(self) -> bool:
        return self.raining and not self.suspended and self.is_mounted

    def _update_clock(self) -> None:
        if self.graphics:
            self._update_graphics()
        elif self._animating and self._timer is None and self._animated():
            self._timer = self.set_interval(1 / FPS, self.advance)
        elif not self._animating and self._timer is not None:
            self._timer.stop()
            self._timer = None

    # --- Kitty graphics -------------------------------------------------------------

    def _update_graphics(self) -> None:
        if not self._animating:
            if self._animator is not None:
                self._animator.stop()
            if self._tracker is not None:
                self._tracker.stop()
                self._tracker = None
            return
        if self.size.width < 2 or self.size.height < 1:
            return  # not laid out yet: on_resize comes back here
        self._place_animator()
        self._animator.start(self.tint)
        if self._tracker is None:
            self._tracker = self.set_interval(0.25, self._follow_region)

    def _place_animator(self) -> None:
        """Create the animator, or move it to where the strip is now."""
        from smith_tui.widgets.rain import (
            CellAnchor,
            KittyEncoder,
            RainAnimator,
            shm_transfer_usable,
            strip_layout,
        )

        region = self.region
        layout = strip_layout(region.width, region.height, column=region.x, fraction=1.0)
        anchor = CellAnchor(row=region.y, column=region.x)
        if self._animator is None:
            self._animator = RainAnimator(
                self._write or self._terminal_write,
                layout,
                anchor=anchor,
                encoder=KittyEncoder(medium="shm" if shm_transfer_usable(os.environ) else "direct"),
                seed=self._seed,
            )
        elif tuple(region) != self._placed:
            self._animator.relayout(layout, anchor)
        self._placed = tuple(region)

    def _follow_region(self) -> None:
        """The strip moves when panes above it grow or shrink: keep the image on it."""
        if self._animating and tuple(self.region) != self._placed and self.size.width >= 2:
            self._place_animator()

    def _terminal_write(self, text: str) -> None:
        # Textual's driver is the terminal's only writer; frames queue behind its output.
        driver = terminal_driver(self.app)
        if driver is not None:
            driver.write(text)

    def _animated(self) -> bool:
        return self.app.animation_level != "none"

    # --- drawing --------------------------------------------------------------------

    def on_resize(self) -> None:
        """Lay out one glyph column every other cell across the new width."""
        height = max(1, self.size.height)
        self._columns = [self._new_column(height, first=True) for _ in range(self.size.width // 2)]
        for _ in range(height):  # start with a full strip, not an empty one
            self._step()
        self.refresh()
        if self.graphics:
            self._update_graphics()

    def _new_column(self, height: int, first: bool = False) -> _Column:
        rng = self._random
        length = rng.randint(3, max(4, height))
        head = rng.uniform(-height, height) if first else -rng.uniform(0, height)
        return _Column(
            head=head,
            speed=rng.choice((0.5, 0.75, 1.0)),
            length=length,
            glyphs=[rng.choice(GLYPHS) for _ in range(height)],
        )

    def _step(self) -> None:
        height = max(1, self.size.height)
        rng = self._random
        for index, column in enumerate(self._columns):
            column.head += column.speed
            if rng.random() < 0.2:
                column.glyphs[rng.randrange(len(column.glyphs))] = rng.choice(GLYPHS)
            if column.head - column.length > height:
                self._columns[index] = self._new_column(height)

    def advance(self) -> None:
        """Move the rain one frame on."""
        self._step()
        self.refresh()

    def _shade_styles(self) -> list[Style]:
        if not self._shades:
            base = Color.parse(self.tint)
            head = base.blend(Color(255, 255, 255), 0.6)
            shades = [Style(color=head.rich_color, bold=True)]
            for level in range(1, SHADES):
                faded = base.darken(0.55 * level / SHADES)
                shades.append(Style(color=faded.rich_color))
            self._shades = shades
        return self._shades

    def render_line(self, y: int) -> Strip:
        """One row of the rain (blank cells when Kitty graphics draw it behind them)."""
        width = self.size.width
        if self.graphics:
            return Strip.blank(width, self.rich_style)
        shades = self._shade_styles()
        segments: list[Segment] = []
        blank = 0
        for x in range(width):
            glyph = None
            if x % 2 == 0 and x // 2 < len(self._columns):
                column = self._columns[x // 2]
                distance = int(column.head) - y
                if 0 <= distance < column.length and y < len(column.glyphs):
                    shade = min(SHADES - 1, distance * SHADES // column.length)
                    glyph = (column.glyphs[y], shades[shade])
            if glyph is None:
                blank += 1
                continue
            if blank:
                segments.append(Segment(" " * blank))
                blank = 0
            segments.append(Segment(*glyph))
        if blank:
            segments.append(Segment(" " * blank))
        return Strip(segments, width).apply_style(self.rich_style)
