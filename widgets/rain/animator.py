"""The 10 fps task that draws the rain through the Kitty graphics protocol.

The terminal has one writer (in the app: Textual's driver), so every tick goes out as a
single ``write`` call holding the whole frame: cursor save, moves, the graphics command,
cursor restore. ``stop()`` flips a flag and writes the delete command; the task wakes
within a tick, sees the flag, and exits without drawing. Nothing is written while
stopped, and a frame is never split across writes.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Sequence

from smith_tui.widgets.rain.frames import RainField, parse_tint
from smith_tui.widgets.rain.kitty import Anchor, CursorAnchor, KittyEncoder
from smith_tui.widgets.rain.layout import StripLayout

FPS = 10.0
"""Frames per second."""


class RainAnimator:
    """Draws a :class:`RainField` at ``fps`` through ``write`` while started.

    ``write`` receives one ``str`` per tick (``bytes`` with ``as_bytes=True``).
    ``anchor`` defaults to :class:`CursorAnchor` at the layout's column; a full-screen app
    that knows the strip's screen cell passes a :class:`CellAnchor`. ``seed`` fixes the
    animation (None: a fresh random one per animator). ``clock`` (monotonic seconds) and
    ``sleep`` pace the ticks; tests pass a clock they move by hand.
    """

    def __init__(
        self,
        write: Callable[[str], object] | Callable[[bytes], object],
        layout: StripLayout,
        *,
        anchor: Anchor | None = None,
        encoder: KittyEncoder | None = None,
        seed: int | None = None,
        fps: float = FPS,
        as_bytes: bool = False,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if fps <= 0:
            raise ValueError(f"the rain frame rate must be positive, got {fps}")
        self._write = write
        self._as_bytes = as_bytes
        self._layout = layout
        self._anchor = anchor if anchor is not None else CursorAnchor(layout.column)
        self.encoder = encoder if encoder is not None else KittyEncoder()
        self._seed = seed if seed is not None else random.randrange(1 << 30)
        self._interval = 1.0 / fps
        self._clock = clock
        self._sleep = sleep
        self._field: RainField | None = None
        self._running = False
        self._generation = 0
        self._task: asyncio.Task[None] | None = None
        self.frames_written = 0
        """Frames written since this animator was made."""
        self.last_error: str | None = None
        """Why the animation stopped by itself (a failed write or render), if it did."""

    @property
    def active(self) -> bool:
        """Whether the rain is showing (started and not stopped)."""
        return self._running

    @property
    def layout(self) -> StripLayout:
        """Where the strip is drawn."""
        return self._layout

    @property
    def field(self) -> RainField | None:
        """The rain model being drawn (None before the first start)."""
        return self._field

    def start(self, role_tint: str | Sequence[int]) -> None:
        """Show the rain in ``role_tint`` (``"#RRGGBB"``); recolours it if already running.

        Must be called from the running event loop. ValueError for a malformed tint.
        """
        tint = parse_tint(role_tint)
        if self._running and self._field is not None:
            self._field.set_tint(tint)
            return
        loop = asyncio.get_running_loop()
        if self._field is None or self._field_shape() != self._layout_shape():
            self._field = self._new_field(tint)
        else:
            self._field.set_tint(tint)
        self._running = True
        self._generation += 1
        self.last_error = None
        self._task = loop.create_task(self._run(self._generation), name="matrix-rain")

    def stop(self) -> None:
        """Hide the rain: delete the image now; the task exits within one tick, drawing nothing."""
        if not self._running:
            return
        self._running = False
        self._emit(self.encoder.delete())
        self.encoder.release()

    def relayout(self, layout: StripLayout, anchor: Anchor | None = None) -> None:
        """Move or resize the strip (e.g. after a terminal resize); the next tick uses it."""
        self._layout = layout
        self._anchor = anchor if anchor is not None else CursorAnchor(layout.column)
        if self._field is not None and self._field_shape() != self._layout_shape():
            self._field = self._new_field(self._field.tint)

    async def wait_stopped(self) -> None:
        """Wait until the drawing task has exited (it does within a tick of ``stop()``)."""
        task = self._task
        if task is not None and task is not asyncio.current_task():
            await asyncio.shield(task)

    async def _run(self, generation: int) -> None:
        deadline = self._clock()
        while self._running and self._generation == generation:
            # No await between this check and the write: stop() cannot slip in between.
            self._draw_frame()
            deadline += self._interval
            delay = deadline - self._clock()
            if delay < 0:  # fell behind: drop the missed ticks instead of bursting
                deadline = self._clock()
                delay = 0.0
            await self._sleep(delay)

    def _draw_frame(self) -> None:
        field = self._field
        layout = self._layout
        assert field is not None
        try:
            field.step()
            width, height = field.natural_size
            text = self.encoder.frame(
                field.render_rgba(width, height),
                width,
                height,
                columns=layout.cells_wide,
                rows=layout.cells_high,
                anchor=self._anchor,
            )
        except Exception as error:  # a cosmetic layer must never take the app down
            self._fail(f"rendering a rain frame failed: {error}")
            self._emit(self.encoder.delete())  # take down what earlier frames showed
            return
        if self._emit(text):
            self.frames_written += 1

    def _emit(self, text: str) -> bool:
        try:
            if self._as_bytes:
                self._write(text.encode("ascii"))  # type: ignore[arg-type]
            else:
                self._write(text)  # type: ignore[arg-type]
        except Exception as error:
            self._fail(f"writing to the terminal failed: {error}")
            return False
        return True

    def _fail(self, reason: str) -> None:
        self.last_error = reason
        self._running = False
        self.encoder.release()

    def _new_field(self, tint: tuple[int, int, int]) -> RainField:
        layout = self._layout
        return RainField(
            layout.glyph_columns,
            layout.glyph_rows,
            seed=self._seed,
            tint=tint,
            cell_px=(layout.cell_width_px, layout.cell_height_px),
        )

    def _field_shape(self) -> tuple[int, int, int, int]:
        field = self._field
        assert field is not None
        return (field.columns, field.rows, field.cell_width_px, field.cell_height_px)

    def _layout_shape(self) -> tuple[int, int, int, int]:
        layout = self._layout
        return (
            layout.glyph_columns,
            layout.glyph_rows,
            layout.cell_width_px,
            layout.cell_height_px,
        )
