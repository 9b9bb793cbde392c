"""The built-in slash commands are declared once each, and everything that lists them reads
that declaration: ``/help``, completion, the editor's ``/`` menu, refusals' usage lines.
Also: ``/pager`` and ``/export`` answer with the one transcript renderer's Markdown."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import cast

import pytest

from smith_tui.acp.editor_commands import HELP_ABOUT, available
from smith_tui.app.completion_sources import describe, runtime_sources
from smith_tui.engine.slash import ALIASES, COMMANDS, NOT_IN_EDITOR, TABLE
from smith_tui.engine.slash.command_table import (
    CommandContext,
    CommandGroup,
    CommandTable,
    Handler,
    Reply,
)
from smith_tui.engine.transcript_text import transcript_text
from smith_tui.widgets.completion.candidates import Completer
from tests.support.screen_host import offline_runtime, seed_conversation

SLASH = Path(__file__).resolve().parents[2] / "smith_tui" / "engine" / "slash"


def test_every_command_has_a_name_help_usage_and_handler() -> None:
    assert len(TABLE.commands) >= 28  # a walk that found nothing would pass
    assert [problem for command in TABLE for problem in command.problems()] == []
    for command in TABLE:
        assert command.help and command.usage.startswith(command.name), command.name


async def _handler(ctx: CommandContext, args: list[str]) -> Reply:
    return "", {}


@pytest.mark.parametrize(
    ("declare", "refused"),
    [
        ({"name": "/bare", "help": ""}, "/bare: no help"),
        ({"name": "/odd", "help": "usage — help"}, "/odd: ' — ' in the help"),
        (
            {"name": "/drift", "args": "[open N|user]", "help": "x", "usage": "/drift open N"},
            "/drift: the usage lacks ['user'] of its arguments",
        ),
        ({"name": "/u", "help": "x", "usage": "/other"}, "/u: a usage that does not start"),
        ({"name": "Upper", "help": "x"}, "Upper: a command's name is / and one lower-case"),
    ],
)
def test_a_command_without_help_or_with_a_drifted_usage_is_refused(
    declare: dict[str, str], refused: str
) -> None:
    group = CommandGroup()
    group.command(**declare)(_handler)
    with pytest.raises(ValueError, match=re.escape(refused)):
        CommandTable(group)
    # The same table with that command declared properly loads.
    fine = CommandGroup()
    fine.command("/fine", "[open N|user]", help="does it", usage="/fine open N|user")(_handler)
    assert list(CommandTable(fine).commands) == ["/fine"]


def test_a_sync_handler_is_refused() -> None:
    group = CommandGroup()

    def sync_handler(ctx: CommandContext, args: list[str]) -> Reply:
        return "", {}

    group.command("/sync", help="x")(cast(Handler, sync_handler))
    with pytest.raises(ValueError, match="the handler is not async"):
        CommandTable(group)


def test_a_name_declared_twice_is_refused() -> None:
    group = CommandGroup()
    group.command("/a", help="one", aliases=("/b",))(_handler)
    group.command("/b", help="two")(_handler)
    with pytest.raises(ValueError, match="/b is declared twice"):
        CommandTable(group)


def test_the_derived_lists_are_the_table() -> None:
    assert COMMANDS == {c.name: c.listing for c in TABLE}
    assert COMMANDS["/load"] == "/load ID — open a conversation"
    assert COMMANDS["/undo"] == "restore the files to before the last turn that changed them"
    assert ALIASES == {"/context": "/memory"}
    assert NOT_IN_EDITOR == {c.name: c.editor for c in TABLE if c.editor}
    assert {"/pager", "/quit", "/new", "/load"} <= set(NOT_IN_EDITOR)


def test_no_handler_writes_its_own_usage_line() -> None:
    """Refusals quote the declaration (``command.misuse()``), never a copy of it."""
    found = []
    for path in sorted(SLASH.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if node.value.startswith("usage: /"):
                    found.append(f"{path.name}:{node.lineno}")
    assert found == []


async def test_help_completion_and_the_editor_menu_list_the_table(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    try:
        service = runtime.services.command
        assert service.names() == TABLE.names()  # no command files, no MCP servers here

        # /help: one line per command (its declared listing), then the aliases.
        help_text = (await runtime.submit("/help")).text
        listed = help_text.split("Commands:\n", 1)[1].split("\nKeys:", 1)[0].splitlines()
        assert listed == [f"  {c.name:<9} {c.listing}" for c in TABLE] + [
            f"  {alias:<9} another name for {name}" for alias, name in TABLE.aliases.items()
        ]

        # Completion after "/": every name, each described by its declared help.
        completion = await Completer(runtime_sources(runtime)).complete("/", 0, 1)
        assert completion is not None
        assert sorted(c.value for c in completion.candidates) == sorted(TABLE.names())
        for command in TABLE:
            assert describe("command", command.name[1:]) == command.help, command.name

        # The editor's menu: what works there, with the declared hint and help.
        menu = {c.name: c for c in available(service)}
        assert set(menu) == {n[1:] for n, c in TABLE.by_name().items() if c.editor is None}
        for command in TABLE:
            if command.editor is not None:
                continue
            offered = menu[command.name[1:]]
            hint = offered.input.root.hint if offered.input is not None else ""
            assert hint == command.args, command.name
            want = HELP_ABOUT if command.name == "/help" else command.help
            assert offered.description == want, command.name
        assert menu["context"].description == "another name for /memory"
    finally:
        await runtime.aclose()


async def test_refusals_quote_the_declared_usage(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    try:
        for line, name, detail in [
            ("/load", "/load", " (see /history for ids)"),
            ("/config bogus", "/config", ""),
            ("/search", "/search", ""),
            ("/mcp nonsense", "/mcp", ""),
            ("/doctor a b", "/doctor", ""),
        ]:
            out = await runtime.submit(line)
            command = TABLE.commands[name]
            assert not out.ok and out.text == command.usage_line(detail), line
        assert (await runtime.submit("/config")).text == TABLE.commands["/config"].usage_line()
    finally:
        await runtime.aclose()


async def test_pager_and_export_answer_with_the_one_renderer(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    try:
        seed_conversation(runtime)
        messages = runtime.conversations.messages
        markdown = transcript_text(messages, markdown=True)
        assert "**tool bash**\n\n```\nREADME.md\n\n```" in markdown
        assert '→ bash({"command": "ls"})' in markdown
        assert (await runtime.submit("/pager")).text == markdown
        target = tmp_path / "out.md"
        assert (await runtime.submit(f"/export {target}")).ok
        assert target.read_text(encoding="utf-8") == markdown
        # The pager's own form of the same messages: numbered headers, call ids.
        assert '→ bash {"command": "ls"}  [call_ls]' in transcript_text(messages)
    finally:
        await runtime.aclose()
