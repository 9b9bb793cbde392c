"""Every use of a private Textual member, behind one small named function each.

Smith leans on a few Textual internals that have no public equivalent: knowing that a widget
is being removed, that the user scrolled an anchored view away, waiting for a widget's mount
to finish, resuming Markdown parsing at the right line, growing a list block in place,
drawing one widget's change ahead of the screen's update (a typed key), and the two patches
of :mod:`textual_fixes`. No other module of the app or the widgets touches a
Textual name that starts with ``_`` (``TailStream`` keeps its own state instead of
``MarkdownStream``'s). ``tests/app/test_textual_compat.py`` checks on the installed Textual
that each member below still exists with the kind and signature used here, so an upgrade
that renames or reshapes one fails there, by name, instead of breaking a streamed answer.

Written against Textual :data:`TESTED_WITH`. What each member is for, and when it can go:

``Widget._pruning``
    True from the moment a removal starts. ``is_attached`` stays true until the removal has
    finished, so it cannot tell a widget that is leaving from one that stays.
``Widget._anchor_released``
    An anchored container (``anchor()``) sets it when the user scrolls away from the end;
    ``is_anchored`` stays true. Related upstream: https://github.com/Textualize/textual/issues/6677
    (an anchor that never re-engages while content streams); a public "released" state would
    replace this.
``Widget._mounted_event``
    Set once the widget's mount (and its compose) is done. ``mount()`` returns an awaitable
    for that, but a stream started next to the mount call has no hold of it.
``Widget._pending_children``
    Children composed but not mounted yet (a list row built by ``compose``).
``App._driver``
    The terminal driver: the only writer of the terminal, which the Kitty-graphics rain must
    queue behind. Textual has no public accessor for it.
``Markdown._last_parsed_line``
    Where ``Markdown.append`` resumes parsing. ``Markdown.update`` sets it to the last line,
    which drops the first lines of a multi-line last block (an open code fence) on the next
    append. No upstream issue found; check Textual's ``Markdown.update`` for a fix.
``MarkdownBlock._blocks`` / ``._copy_context`` / ``._update_from_block``
    A block's composed children, its token, and the hook ``Markdown.append`` calls to replace
    the last block. Textual rebuilds a whole list on every append; no upstream issue found.
``Markdown._build_from_source``
    The blocks a source makes, built but not mounted: :mod:`transcript.line_markdown` draws
    them as lines. ``Markdown.update`` and ``append`` build them only to mount them.
``textual._styles_cache.StylesCache.render``
    A widget's box (padding, border, background) around content lines, as ``render_lines``
    draws it; :mod:`transcript.line_markdown` draws template styles with it.
``textual._resolve.resolve``
    How the grid layout shares a width among its columns (expanded, shrunk to minimums);
    :mod:`transcript.line_markdown` places a table's cells with it.
``MarkdownBlock._markdown`` / ``._token`` / ``._content``
    The document, token and inline text a paragraph was built from, to draw a one-paragraph
    list item as one widget (``list_rows.ListRow``); Textual builds four per item.
``textual._styles_cache.StylesCache.get_inner_outer``
    An ``lru_cache`` on the instance method that keeps 1,024 removed widgets' caches alive:
    https://github.com/Textualize/textual/issues/6665 (open as far as we know). Remove the
    patch in :mod:`textual_fixes` when a Textual release caches by colour (the test
    ``test_styles_cache_still_caches_per_instance`` then fails and says so).
``textual.widgets._footer.FooterKey``
    The footer's key widget, whose ``action`` orders Smith's footer keys. Textual exports
    ``Footer`` only; no upstream issue found.
``Widget._message_loop_exit`` / ``._styles_cache`` / ``._layout_cache``
    The last step of a removed widget's clean-up, and the caches of its rendered lines and
    layouts, which :mod:`textual_fixes` empties there. No upstream issue found.
``Strip.__slots__`` (the seven ``FIFOCache`` objects ``Strip.__init__`` makes)
    Every strip the compositor cuts gets seven small caches at once (about 900 bytes and
    seven objects for the cycle collector), though most strips never use one: in a long
    session they were 3.2 MB of what stayed alive. :func:`make_strip_caches_lazy` makes each
    on first use, as Textual's own ``Content`` does with its divide cache. It patches only
    when the slots and sizes are the ones written here. No upstream issue found.
``Widget._layout_required`` / ``._exchange_repaint_regions``, ``Screen._compositor`` /
``._layout_widgets``,
``Compositor._dirty_regions`` / ``.render_update``, ``App._batch_count`` / ``._display`` /
``._background_screens``
    What :func:`paint_now` needs to draw one widget's change (a key echoed in the prompt)
    at once, from the screen's last layout, while a batch holds the screen's updates or a
    layout of the rest of the screen is pending. Textual paints only from its update
    timer, after laying out the whole screen; no public call draws one region. No
    upstream issue found.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from textual._resolve import resolve
from textual._styles_cache import StylesCache
from textual.cache import FIFOCache
from textual.css.scalar import Scalar
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    # Types only: Textual's Markdown widget (with markdown-it) costs ~30 ms to import, and
    # the first frame (the rain reaches the driver through here) does not need it.
    from markdown_it.token import Token
    from rich.segment import Segment
    from textual.app import App
    from textual.content import Content
    from textual.driver import Driver
    from textual.widgets.markdown import Markdown, MarkdownBlock

__all__ = [
    "TESTED_WITH",
    "InPlaceBlockUpdate",
    "StylesCache",
    "after_widget_exit",
    "anchor_released",
    "block_items",
    "block_origin",
    "build_blocks",
    "copy_block_context",
    "drop_render_caches",
    "footer_key_action",
    "grid_tracks",
    "is_pruning",
    "make_strip_caches_lazy",
    "paint_now",
    "pending_children",
    "replace_inner_outer",
    "resume_parsing_at",
    "set_block_items",
    "terminal_driver",
    "updates_held",
    "wait_mounted",
]

#: The Textual release these accessors were written and checked against.
TESTED_WITH = "8.2.8"

#: Textual's own ``StylesCache.get_inner_outer`` and ``Widget._message_loop_exit``, taken
#: before :mod:`textual_fixes` replaces them (importing this module never patches anything).
ORIGINAL_GET_INNER_OUTER: Callable[..., Any] = StylesCache.get_inner_outer
ORIGINAL_MESSAGE_LOOP_EXIT: Callable[[Widget], Awaitable[None]] = Widget._message_loop_exit
ORIGINAL_STRIP_INIT: Callable[..., None] = Strip.__init__

#: ``Strip``'s caches in Textual 8.2, by slot, with the size ``Strip.__init__`` gives each.
STRIP_CACHES: dict[str, int] = {
    "_divide_cache": 4,
    "_crop_cache": 16,
    "_style_cache": 16,
    "_filter_cache": 4,
    "_line_length_cache": 4,
    "_crop_extend_cache": 4,
    "_offsets_cache": 4,
}
#: ``Strip``'s other slots: what a strip made without its caches must still set.
STRIP_STATE = ("_segments", "_cell_length", "_render_cache", "_link_ids", "_cell_count")


# -- widget state ---------------------------------------------------------------------------


def footer_key_action(widget: object) -> str | None:
    """The action of a footer key widget (``None`` for any other widget)."""
    return widget.action if isinstance(widget, FooterKey) else None


def is_pruning(widget: Widget) -> bool:
    """Whether ``widget`` is being removed (true before ``is_attached`` turns false)."""
    return bool(widget._pruning)


def anchor_released(widget: Widget) -> bool:
    """Whether the user scrolled an anchored ``widget`` away from its end."""
    return bool(widget._anchor_released)


async def wait_mounted(widget: Widget) -> None:
    """Wait until ``widget`` is mounted (at once when it already is)."""
    await widget._mounted_event.wait()


def pending_children(widget: Widget) -> list[Widget]:
    """The children ``widget`` composed but has not mounted yet."""
    return list(widget._pending_children)


def updates_held(app: App[Any]) -> bool:
    """Whether screen updates are held (an ``App.batch_update`` entered and not left): no
    refresh can happen until it is left."""
    return app._batch_count > 0


def terminal_driver(app: App[Any]) -> Driver | None:
    """The app's terminal driver, or None before it runs (and after it stopped)."""
    return app._driver


# -- Markdown -------------------------------------------------------------------------------


def resume_parsing_at(markdown: Markdown, line: int) -> None:
    """Make the next ``append`` of ``markdown`` re-parse its source from ``line``."""
    markdown._last_parsed_line = line


def build_blocks(markdown: Markdown, source: str) -> list[MarkdownBlock]:
    """The top-level blocks ``markdown`` builds for ``source`` (made, not mounted)."""
    return list(markdown._build_from_source(source))


def grid_tracks(
    lengths: list[int],
    total: int,
    gutter: int,
    size: Size,
    viewport: Size,
    *,
    expand: bool = False,
    shrink: bool = False,
    minimums: list[int] | None = None,
) -> list[tuple[int, int]]:
    """(offset, length) of grid tracks of ``lengths`` cells in ``total``, ``gutter`` apart,
    as Textual's grid layout resolves its auto columns and rows."""
    scalars = [Scalar.from_number(length) for length in lengths]
    return resolve(
        scalars, total, gutter, size, viewport, expand=expand, shrink=shrink, minimums=minimums
    )


def block_items(block: MarkdownBlock) -> list[MarkdownBlock]:
    """The child blocks ``block`` will compose (a copy; composing consumes them)."""
    return list(block._blocks)


def block_origin(block: MarkdownBlock) -> tuple[Markdown, Token, Content]:
    """The document, token and inline text ``block`` was built from."""
    return block._markdown, block._token, block._content


def set_block_items(block: MarkdownBlock, items: list[MarkdownBlock]) -> None:
    """Give ``block`` the child blocks to compose (after :func:`block_items` and a compose)."""
    block._blocks = items


def copy_block_context(target: MarkdownBlock, source: MarkdownBlock) -> None:
    """Make ``target`` stand for ``source``'s token (what Textual copies on an update)."""
    target._copy_context(source)


class InPlaceBlockUpdate:
    """Mixin for a Markdown block class that may update itself instead of being replaced.

    ``Markdown.append`` replaces the last block with the newly parsed one through the
    block's private ``_update_from_block``; a subclass overrides :meth:`update_in_place`,
    which returns False to let Textual replace the block as usual.
    """

    async def update_in_place(self, block: MarkdownBlock) -> bool:
        """Take ``block``'s content without being replaced; False when not possible."""
        return False

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        if not await self.update_in_place(block):
            await super()._update_from_block(block)  # type: ignore[misc]


# -- the patches of textual_fixes -------------------------------------------------------------


def replace_inner_outer(replacement: Callable[..., Any]) -> None:
    """Install ``replacement`` as ``StylesCache.get_inner_outer``, emptying Textual's cache."""
    cache_clear = getattr(ORIGINAL_GET_INNER_OUTER, "cache_clear", None)
    if cache_clear is not None:
        cache_clear()  # drop the removed widgets' caches it holds already
    StylesCache.get_inner_outer = replacement  # type: ignore[method-assign,assignment]


def after_widget_exit(hook: Callable[[Widget], None]) -> Callable[[Widget], Awaitable[None]]:
    """Run ``hook(widget)`` after Textual's clean-up of every removed widget; return the patch."""

    async def exit_then_hook(self: Widget) -> None:
        await ORIGINAL_MESSAGE_LOOP_EXIT(self)
        hook(self)

    Widget._message_loop_exit = exit_then_hook  # type: ignore[method-assign]
    return exit_then_hook


def drop_render_caches(widget: Widget) -> None:
    """Empty ``widget``'s cache of rendered lines and of layouts."""
    widget._styles_cache.clear()
    widget._layout_cache.clear()


def strip_layout_known() -> bool:
    """Whether the installed ``Strip`` has exactly the slots above and makes each cache
    with the size written there (what :func:`make_strip_caches_lazy` relies on)."""
    if set(getattr(Strip, "__slots__", ())) != set(STRIP_CACHES) | set(STRIP_STATE):
        return False
    probe = Strip.__new__(Strip)
    ORIGINAL_STRIP_INIT(probe, [])
    for name, size in STRIP_CACHES.items():
        cache = getattr(probe, name, None)
        if not isinstance(cache, FIFOCache) or cache._maxsize != size:
            return False
    return all(hasattr(probe, name) for name in STRIP_STATE)


def _strip_init(self: Strip, segments: Iterable[Segment], cell_length: int | None = None) -> None:
    """``Strip.__init__`` without its caches (each is made by :func:`_strip_cache`)."""
    self._segments = list(segments)
    self._cell_length = cell_length
    self._render_cache = None
    self._link_ids = None
    self._cell_count = None


def _strip_cache(self: Strip, name: str) -> Any:
    """A strip's cache, made when first asked for (``__getattr__``: only an unset slot gets
    here, so a cache that exists is read at slot speed)."""
    size = STRIP_CACHES.get(name)
    if size is None:
        raise AttributeError(f"'Strip' object has no attribute {name!r}", name=name, obj=self)
    cache: FIFOCache[Any, Any] = FIFOCache(size)
    setattr(self, name, cache)
    return cache


def make_strip_caches_lazy() -> bool:
    """Make every new strip's caches on first use; False (nothing patched) when the
    installed ``Strip`` is not the one :data:`STRIP_CACHES` describes."""
    if Strip.__init__ is _strip_init:
        return True
    if "__getattr__" in vars(Strip) or not strip_layout_known():
        return False
    Strip.__init__ = _strip_init  # type: ignore[method-assign]
    Strip.__getattr__ = _strip_cache  # type: ignore[attr-defined]
    return True


# -- painting ---------------------------------------------------------------------------------


def paint_now(widget: Widget) -> bool:
    """Draw ``widget``'s pending repaint on the terminal now; False when it must wait.

    Textual draws only from the screen's update timer, after laying out the whole screen,
    and not at all while a batch (``App.batch_update``) is open. A key typed while the
    transcript writes streamed text would wait for that write, its layout and its paint.
    When nothing else can change where ``widget`` is drawn (it asked for no layout of its
    own, and nothing but its ancestors and its own parts, such as its scroll bars, covers
    it), its changed lines are drawn from the last layout at once, by themselves; the rest
    of the screen is drawn as usual, later. Otherwise it waits as before (False).
    """
    try:
        screen = widget.screen
    except Exception:  # not on a screen (any more)
        return False
    app = widget.app
    if app.is_inline or not screen.is_current:
        return False
    if widget._layout_required or any(widget in asked for asked in screen._layout_widgets.values()):
        return False  # its size may change: the screen's layout comes first
    compositor = screen._compositor
    placed = compositor.visible_widgets.get(widget)
    if placed is None or compositor.size != screen.outer_size:
        return False
    region, clip = placed
    area = region.intersection(clip)
    lineage = {widget, *widget.ancestors}
    for other, (other_region, other_clip) in compositor.visible_widgets.items():
        if other in lineage or not other_region.intersection(other_clip).overlaps(area):
            continue
        if widget not in other.ancestors:
            return False  # a sibling or an overlay shares the cells (a menu, a tooltip)
    regions = [
        changed
        for dirty in widget._exchange_repaint_regions()
        if (changed := area.intersection(dirty.translate(region.offset)))
    ]
    if not regions:
        return False
    others = set(compositor._dirty_regions)
    compositor._dirty_regions.clear()
    compositor._dirty_regions.update(regions)
    try:
        update = compositor.render_update(screen_stack=app._background_screens)
    finally:
        compositor._dirty_regions.update(others)
    held, app._batch_count = app._batch_count, 0
    try:
        app._display(screen, update)
    finally:
        app._batch_count = held
    return True
