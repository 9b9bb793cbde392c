"""The private Textual members Smith uses still exist, with the shape and effect it relies on.

Every private access goes through ``smith_tui.widgets.textual_compat``. After a Textual
upgrade, a failure here names the member that changed; a failing "still needed" test means
Textual fixed the problem upstream and our workaround can go (its message says which).
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Callable
from typing import Any, ClassVar

import pytest
import textual
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownBlock, MarkdownStream

from smith_tui.widgets import textual_compat as compat
from smith_tui.widgets import textual_fixes
from smith_tui.widgets.transcript.tail_stream import TailStream
from tests.support.pilot import wait_until


def params(function: Callable[..., Any]) -> list[str]:
    """The parameter names of ``function``."""
    return list(inspect.signature(function).parameters)


# -- the shape of each member ------------------------------------------------------------------


def test_widget_state_members_exist_with_their_types() -> None:
    widget = Widget()
    assert compat.is_pruning(widget) is False
    assert compat.anchor_released(widget) is False
    assert isinstance(widget._mounted_event, asyncio.Event)
    assert compat.pending_children(Widget(Static("x"))) != []
    assert isinstance(widget._styles_cache, compat.StylesCache)
    assert callable(widget._styles_cache.clear)
    assert callable(widget._layout_cache.clear)


def test_the_footer_key_member_exists_with_its_action() -> None:
    from textual.widgets._footer import FooterKey

    key = FooterKey("q", "q", "Quit", "quit")
    assert compat.footer_key_action(key) == "quit"
    assert compat.footer_key_action(Widget()) is None


def test_the_app_driver_member_exists() -> None:
    assert compat.terminal_driver(App()) is None  # set once the app runs (checked below)


def test_held_updates_follow_batch_update() -> None:
    app = App()
    assert compat.updates_held(app) is False
    with app.batch_update():
        assert compat.updates_held(app) is True
        with app.batch_update():
            assert compat.updates_held(app) is True
        assert compat.updates_held(app) is True
    assert compat.updates_held(app) is False


def test_markdown_members_exist_with_their_signatures() -> None:
    markdown = Markdown()
    assert isinstance(markdown._last_parsed_line, int)
    # ``append`` resumes parsing there and replaces the last block through the hook.
    append_source = inspect.getsource(Markdown.append)
    assert "_last_parsed_line" in append_source
    assert "_update_from_block" in append_source
    assert params(MarkdownBlock._copy_context) == ["self", "block"]
    assert inspect.iscoroutinefunction(MarkdownBlock._update_from_block)
    assert params(MarkdownBlock._update_from_block) == ["self", "block"]
    assert params(Markdown._build_from_source) == ["self", "markdown"]
    assert params(compat.StylesCache.render)[:4] == ["self", "styles", "size", "base_background"]


def test_patched_members_had_the_signatures_the_patches_keep() -> None:
    # Textual names the instance ``cls`` (the method is not a classmethod): compare the rest.
    assert params(compat.ORIGINAL_GET_INNER_OUTER)[1:] == ["base_background", "background"]
    assert params(textual_fixes._get_inner_outer)[1:] == ["base_background", "background"]
    assert "self.get_inner_outer(" in inspect.getsource(compat.StylesCache.render_line)
    assert inspect.iscoroutinefunction(compat.ORIGINAL_MESSAGE_LOOP_EXIT)
    assert params(compat.ORIGINAL_MESSAGE_LOOP_EXIT) == ["self"]
    assert compat.StylesCache.get_inner_outer is textual_fixes._get_inner_outer
    assert Widget._message_loop_exit is not compat.ORIGINAL_MESSAGE_LOOP_EXIT  # patched


def test_the_members_paint_now_draws_with_exist_with_their_shapes() -> None:
    from textual._compositor import Compositor
    from textual.screen import Screen

    widget = Widget()
    assert widget._layout_required is False
    assert callable(widget._exchange_repaint_regions)
    assert isinstance(Compositor()._dirty_regions, set)
    assert params(Compositor.render_update) == ["self", "full", "screen_stack", "simplify"]
    assert isinstance(Screen()._compositor, Compositor)
    assert Screen()._layout_widgets == {}
    app = App()
    assert app._batch_count == 0
    assert params(app._display) == ["screen", "renderable"]
    assert "if self._batch_count:" in inspect.getsource(App._display)
    assert isinstance(app._background_screens, list)


def test_the_tail_stream_shares_no_attribute_with_markdown_stream() -> None:
    """TailStream keeps its own state; a same-named attribute added upstream would mix them."""
    base = MarkdownStream(Markdown())
    textual_names = set(vars(base)) | {n for n in dir(MarkdownStream) if n.startswith("_")}
    ours = set(re.findall(r"self\.(_\w+)\s*(?::[^=]*)?=[^=]", inspect.getsource(TailStream)))
    ours |= {n for n in vars(TailStream) if n.startswith("_") and not n.startswith("__")}
    assert "_queued" in ours and "_feeder" in ours
    assert ours & textual_names == set(), "rename these TailStream attributes"


# -- each member still has the effect we rely on ---------------------------------------------


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield VerticalScroll()


async def test_widget_state_follows_mounting_scrolling_and_removal() -> None:
    app = Host()
    async with app.run_test(size=(40, 10)) as pilot:
        driver = compat.terminal_driver(app)
        assert driver is not None and callable(driver.write)
        box = app.query_one(VerticalScroll)
        line = Static("one line")
        mounting = box.mount(line)
        await asyncio.wait_for(compat.wait_mounted(line), timeout=5)
        assert line.is_mounted
        await mounting
        await box.mount_all([Static(f"line {n}") for n in range(40)])
        box.anchor()
        await pilot.pause()
        assert not compat.anchor_released(box)
        box.scroll_to(y=0, animate=False, immediate=True)
        await pilot.pause()
        assert compat.anchor_released(box), "scrolling away releases the anchor"
        removal = line.remove()
        assert compat.is_pruning(line) and line.is_attached, "pruning shows before detaching"
        await removal
        assert not line.is_attached


async def test_removed_widgets_drop_their_render_caches() -> None:
    app = Host()
    async with app.run_test(size=(40, 10)) as pilot:
        line = Static("painted")
        await app.query_one(VerticalScroll).mount(line)
        await pilot.pause()
        assert line._styles_cache._cache
        await line.remove()
        await pilot.pause()
        assert not line._styles_cache._cache and not line._layout_cache


class RecordingList(compat.InPlaceBlockUpdate, Markdown.BLOCKS["bullet_list_open"]):  # type: ignore[misc]
    """A bullet list that notes the update Markdown hands it, then lets it replace it."""

    updates: ClassVar[list[tuple[MarkdownBlock, int]]] = []

    async def update_in_place(self, block: MarkdownBlock) -> bool:
        items = compat.block_items(block)
        consumed = list(block.compose())  # composing takes the items
        assert len(consumed) == len(items) and compat.block_items(block) == []
        compat.set_block_items(block, items)  # given back: Textual mounts ``block`` with them
        compat.copy_block_context(self, block)
        assert self._token is block._token
        RecordingList.updates.append((block, len(items)))
        return False


class RecordingMarkdown(Markdown):
    BLOCKS: ClassVar[dict[str, type[MarkdownBlock]]] = {
        **Markdown.BLOCKS,
        "bullet_list_open": RecordingList,
    }


class MarkdownHost(App[None]):
    def __init__(self, markdown: Markdown) -> None:
        super().__init__()
        self.markdown = markdown

    def compose(self) -> ComposeResult:
        yield self.markdown


async def test_markdown_append_hands_the_last_block_its_replacement() -> None:
    RecordingList.updates.clear()
    markdown = RecordingMarkdown()
    async with MarkdownHost(markdown).run_test() as pilot:
        await markdown.update("- a\n")
        compat.resume_parsing_at(markdown, 0)  # re-parse the whole list (as MarkdownPart does)
        await markdown.append("- b\n")
        await pilot.pause()
        [(block, items)] = RecordingList.updates
        assert type(block) is RecordingList and items == 2
        [mounted] = markdown.query(RecordingList)
        assert mounted is block, "Textual replaced the list by its update"
        assert len(mounted.children) == 2, "with the items given back"


async def test_a_paragraph_block_knows_its_document_token_and_text() -> None:
    markdown = Markdown()
    async with MarkdownHost(markdown).run_test() as pilot:
        await markdown.update("some *text*\n")
        await pilot.pause()
        [paragraph] = markdown.children
        document, token, text = compat.block_origin(paragraph)
        assert document is markdown
        assert token.type == "paragraph_open"
        assert text.plain == "some text" and text.spans


async def open_fence_after_append(resume: bool) -> list[tuple[str, str | None]]:
    markdown = Markdown()
    async with MarkdownHost(markdown).run_test() as pilot:
        await markdown.update("Intro\n\n```\nfirst\nsecond\n")
        if resume:
            compat.resume_parsing_at(markdown, 2)  # where the fence starts
        await markdown.append("third\n")
        await pilot.pause()
        return [(type(c).__name__, getattr(c, "code", None)) for c in markdown.children]


async def test_resume_parsing_at_keeps_an_open_fence_whole() -> None:
    assert await open_fence_after_append(resume=True) == [
        ("MarkdownParagraph", None),
        ("MarkdownFence", "first\nsecond\nthird"),
    ]


# -- upstream problems our workarounds exist for (a failure means: drop the workaround) -------


async def test_markdown_update_still_loses_an_open_fence_on_append() -> None:
    shown = await open_fence_after_append(resume=False)
    assert "MarkdownFence" not in [kind for kind, _ in shown], (
        f"Textual {textual.__version__} resumes parsing at the last block after update(): "
        "MarkdownPart.update no longer needs resume_parsing_at"
    )


def test_styles_cache_still_caches_per_instance() -> None:
    assert hasattr(compat.ORIGINAL_GET_INNER_OUTER, "cache_clear"), (
        f"Textual {textual.__version__} no longer wraps StylesCache.get_inner_outer in an "
        "lru_cache (https://github.com/Textualize/textual/issues/6665): drop the "
        "get_inner_outer fix in widgets/textual_fixes.py"
    )


@pytest.mark.parametrize(
    "name",
    [n for n in compat.__all__ if n not in ("TESTED_WITH", "StylesCache", "InPlaceBlockUpdate")],
)
def test_every_accessor_is_documented(name: str) -> None:
    assert inspect.getdoc(getattr(compat, name))


class OneLine(Widget):
    """A line of fixed height: changing its text asks for no layout."""

    DEFAULT_CSS = "OneLine { height: 1; }"
    text = reactive("")

    def render(self) -> str:
        return self.text


class TwoLines(App[None]):
    def compose(self) -> ComposeResult:
        yield OneLine(id="first")
        yield Static("second", id="second")


async def test_paint_now_draws_one_widget_while_a_batch_holds_the_screen() -> None:
    app = TwoLines()
    async with app.run_test(size=(40, 10)) as pilot:
        drawn: list[str] = []
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            if renderable is not None:
                drawn.append(renderable.render_segments(app.console))
            original(screen, renderable)

        app._display = display  # type: ignore[method-assign]
        first, second = app.query_one("#first", OneLine), app.query_one("#second", Static)
        await wait_until(pilot, lambda: not app.screen._layout_widgets, "the first layout")
        drawn.clear()
        with app.batch_update():
            first.text = "FIRST CHANGED"
            second.update("SECOND CHANGED")  # (asks for a layout)
            await pilot.pause()
            assert drawn == []  # Textual draws nothing while the batch is open
            assert not compat.paint_now(second)  # its size may change: it waits
            assert compat.paint_now(first)
            assert len(drawn) == 1
            assert "FIRST CHANGED" in drawn[0]
            assert "SECOND" not in drawn[0]  # the rest waits for the screen's update
        await pilot.pause()
        assert any("SECOND CHANGED" in text for text in drawn[1:])


# -- Strip's caches, made on first use ----------------------------------------------------------


def test_the_installed_strip_has_the_slots_and_cache_sizes_the_lazy_caches_copy() -> None:
    assert compat.strip_layout_known(), (
        "textual.strip.Strip's slots or cache sizes changed: update STRIP_CACHES and "
        "STRIP_STATE in textual_compat (until then its caches are made eagerly again)"
    )


def test_a_strip_of_another_shape_is_not_patched(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(compat.STRIP_CACHES, "_crop_cache", 17)
    assert not compat.strip_layout_known()
    monkeypatch.setattr(compat, "STRIP_STATE", (*compat.STRIP_STATE, "_new_slot"))
    assert not compat.strip_layout_known()
