"""Front matter of users' Markdown files: split, fields, and errors with line numbers."""

from __future__ import annotations

import pytest

from smith_tui.config.front_matter import FrontMatterError, list_field, split, text_field


def test_a_file_without_front_matter_is_all_body() -> None:
    doc = split("Review $ARGUMENTS\n")
    assert doc.meta == {} and doc.body == "Review $ARGUMENTS\n" and doc.body_line == 1


def test_claude_code_shaped_command_front_matter() -> None:
    text = (
        "---\n"
        "allowed-tools: Bash(git add:*), Bash(git status:*)\n"
        "argument-hint: [message]\n"
        "description: Create a git commit\n"
        "---\n"
        "Commit with message: $ARGUMENTS\n"
    )
    doc = split(text)
    assert text_field(doc.meta, "description") == "Create a git commit"
    assert list_field(doc.meta, "allowed-tools") == ["Bash(git add:*)", "Bash(git status:*)"]
    assert list_field(doc.meta, "argument-hint") == ["message"]
    assert doc.body == "Commit with message: $ARGUMENTS\n" and doc.body_line == 6


def test_lists_and_absent_fields() -> None:
    doc = split("---\nname: reviewer\ntools:\n  - read\n  - code_grep\n---\nbody")
    assert list_field(doc.meta, "tools") == ["read", "code_grep"]
    assert list_field(doc.meta, "model") is None
    assert text_field(doc.meta, "color") is None


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("---\nname: a\ndescription: [unclosed\n---\nbody", 4),
        ("---\nname: a\n", 1),
        ("---\n- just\n- a list\n---\n", 2),
        ("---\nname: ok\n  bad: indent\n---\n", 3),
    ],
)
def test_broken_front_matter_names_the_line(text: str, line: int) -> None:
    with pytest.raises(FrontMatterError) as caught:
        split(text)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"line {line}: ")
