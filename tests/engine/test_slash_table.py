"""The built-in slash commands are declared once each, and everything that lists them reads
that declaration: ``/help``, completion, the editor's ``/`` menu, refusals' usage lines.
Also: ``/pager`` and ``/export`` answer with the one transcript renderer's Markdown."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from smith_tui.acp.editor_commands import HELP_ABOUT, available
from smith_tui.app.completion_sources import describe, runtime_sources
from smith_tui.engine.slash import ALIASES, COMMANDS, NOT_IN_EDITOR, TABLE
from smith_tui.engine.slash.command_table import (
    CommandContext,
    CommandGroup,
    CommandTable,
    Reply,
    synopsis_words,
)
from smith_tui.engine.transcript_text import transcript_text
from smith_tui.widgets.completion.candidates import Completer
from tests.support.screen_host import offline_runtime, seed_conversation

SLASH = Path(__file__).resolve().parents[2] / "smith_tui" / "engine" / "slash"


def declaration_problems(table: CommandTable) -> list[str]:
    """What is wrong with the declarations of ``table`` (empty: nothing)."""
    problems = []
    for command in table:
        name = command.name
        if not name.startswith("/") or name != name.lower() or " " in name:
            problems.append(f"{name}: a name is /lowercase, one word")
        if not command.help.strip() or command.help != command.help.strip():
            problems.append(f"{name}: no help")
        if " — " in command.help:
            problems.append(f"{name}: ' — ' in the help (it separates usage and help)")
        if not command.usage.startswith(name):
            problems.append(f"{name}: no usage, or one that does not start with the name")
        missing = synopsis_words(command.args) - synopsis_words(command.usage)
        if missing:
            problems.append(f"{name}: the usage lacks {sorted(missing)} of its arguments")
        if not inspect.iscoroutinefunction(command.handler):
            problems.append(f"{name}: the handler is not async")
        problems += [f"{name}: alias {a} is not /lowercase" for a in command.aliases if a[0] != "/"]
    return problems


def test_every_command_has_a_name_help_usage_and_handler() -> None:
    assert len(TABLE.commands) >= 28  # a walk that found nothing would pass
    assert declaration_problems(TABLE) == []


def test_the_check_fails_on_a_command_without_help_or_with_a_drifted_usage() -> None:
    group = CommandGroup()

    async def handler(ctx: CommandContext, args: list[str]) -> Reply:
        return "", {}

    group.command("/bare", help="")(handler)
    group.command("/drift", "[open N|user]", help="fine", usage="/drift open N")(handler)
    group.command("/odd", help="usage — help")(handler)
    assert declaration_problems(CommandTable(group)) == [
        "/bare: no help",
        "/drift: the usage lacks ['user'] of its arguments",
        "/odd: ' — ' in the help (it separates usage and help)",
    ]


def test_a_name_declared_twice_is_refused() -> None:
    group = CommandGroup()

    async def handler(ctx: CommandContext, args: list[str]) -> Reply:
        return "", {}

    group.command("/a", help="one", aliases=("/b",))(handler)
    group.command("/b", help="two")(handler)
    try:
        CommandTable(group)
    except ValueError as exc:
        assert "/b is declared twice" in str(exc)
    else:
        raise AssertionError("a repeated name was accepted")


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
