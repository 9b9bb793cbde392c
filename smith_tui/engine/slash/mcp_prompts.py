"""An MCP server's prompts as commands: ``/mcp__<server>__<prompt> [ARGS]``."""

from __future__ import annotations

from typing import Any

from smith_tui.engine.slash.command_table import CommandError

PROMPT_PREFIX = "mcp__"
"""An MCP server's prompt is the command ``/mcp__<server>__<prompt>``."""


def prompt_usage(prompt: Any) -> list[str]:
    """``NAME`` for each required argument of ``prompt``, ``[NAME]`` for the others."""
    return [
        arg.name.upper() if arg.required else f"[{arg.name.upper()}]"
        for arg in prompt.arguments or []
    ]


def prompt_arguments(command: str, prompt: Any, words: list[str]) -> dict[str, str]:
    """The arguments of ``prompt`` from ``words``: ``NAME=VALUE``, or by position."""
    declared = [arg.name for arg in prompt.arguments or []]
    usage = f"usage: {command} {' '.join(prompt_usage(prompt))}".rstrip()
    arguments: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, eq, value = word.partition("=")
        if eq and key in declared:
            arguments[key] = value
        else:
            positional.append(word)
    free = [name for name in declared if name not in arguments]
    if len(positional) > len(free):
        raise CommandError(f"too many arguments; {usage}")
    arguments.update(zip(free, positional, strict=False))
    missing = [a.name for a in prompt.arguments or [] if a.required and a.name not in arguments]
    if missing:
        raise CommandError(f"missing {', '.join(missing)}; {usage}")
    return arguments
