"""Cutting streamed Markdown at safe block boundaries."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from smith_tui.widgets.transcript.block_split import BlockSplitter, split_parts
from tests.support.transcript_app import sample_markdown


def render(markdown: str) -> str:
    return MarkdownIt("gfm-like").render(markdown)


def test_cut_waits_for_the_line_after_a_blank_line() -> None:
    splitter = BlockSplitter()
    splitter.feed("First paragraph.\n\n")
    assert splitter.cut() is None  # the next line could still be indented
    splitter.feed("Sec")
    assert splitter.cut() is None  # not a complete line yet
    splitter.feed("ond.\n")
    assert splitter.cut() == "First paragraph.\n\n"
    assert splitter.text == "Second.\n"


def test_no_cut_inside_a_fenced_code_block() -> None:
    splitter = BlockSplitter()
    splitter.feed("```python\nx = 1\n\ny = 2\n\nz = 3\n")
    assert splitter.in_fence
    assert splitter.cut() is None
    splitter.feed("```\n\nAfter.\n")
    assert not splitter.in_fence
    assert splitter.cut() == "```python\nx = 1\n\ny = 2\n\nz = 3\n```\n\n"


def test_tilde_fences_and_longer_closing_fences() -> None:
    splitter = BlockSplitter()
    splitter.feed("~~~~\na\n\n```\nstill code\n\nb\n~~~\n\nstill\n~~~~~\n\nout\n")
    assert splitter.cut() == "~~~~\na\n\n```\nstill code\n\nb\n~~~\n\nstill\n~~~~~\n\n"


def test_inline_code_with_backticks_is_not_a_fence() -> None:
    splitter = BlockSplitter()
    splitter.feed("```x``` is inline code\n\nNext.\n")
    assert splitter.cut() == "```x``` is inline code\n\n"


def test_indented_lines_and_list_items_are_not_cut_points() -> None:
    splitter = BlockSplitter()
    splitter.feed("- item one\n\n  continued\n\n- item two\n\n1. again\n\nParagraph.\n")
    assert splitter.cut() == "- item one\n\n  continued\n\n- item two\n\n1. again\n\n"


def test_cut_takes_the_first_boundary_past_min_chars() -> None:
    splitter = BlockSplitter()
    splitter.feed("a\n\nbb\n\nccc\n\nd\n")
    assert splitter.cut(min_chars=4) == "a\n\nbb\n\n"
    assert splitter.cut(min_chars=4) == "ccc\n\n"
    assert splitter.cut(min_chars=4) is None
    assert splitter.text == "d\n"


def test_split_parts_rejoin_and_render_like_the_whole() -> None:
    text = sample_markdown(12)
    parts = split_parts(text, 200)
    assert len(parts) > 5
    assert "".join(parts) == text
    assert "".join(render(part) for part in parts) == render(text)


BLOCKS = st.sampled_from(
    [
        "Plain paragraph text.\n",
        "A paragraph\nover two lines.\n",
        "# Heading\n",
        "- a\n- b\n",
        "- loose item\n\n  its second paragraph\n",
        "1. one\n2. two\n",
        "3. three\n",
        "```\ncode\n\nmore code\n```\n",
        "~~~py\nx = 1\n~~~\n",
        "    indented code\n",
        "> quoted\n",
        "| a | b |\n|---|---|\n| 1 | 2 |\n",
        "---\n",
        "\n",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(BLOCKS, min_size=1, max_size=25), st.integers(min_value=1, max_value=60))
def test_any_document_renders_the_same_when_split(blocks: list[str], min_chars: int) -> None:
    text = "\n".join(blocks)
    parts = split_parts(text, min_chars)
    assert "".join(parts) == text
    assert "".join(render(part) for part in parts) == render(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(BLOCKS, min_size=1, max_size=20), st.integers(min_value=1, max_value=9))
def test_feeding_in_pieces_finds_the_same_cuts(blocks: list[str], piece: int) -> None:
    text = "\n".join(blocks)
    splitter = BlockSplitter()
    parts = []
    for i in range(0, len(text), piece):
        splitter.feed(text[i : i + piece])
        while (head := splitter.cut(30)) is not None:
            parts.append(head)
    parts.append(splitter.text)
    assert "".join(parts) == text
    assert parts[:-1] == split_parts(text, 30)[: len(parts) - 1]
