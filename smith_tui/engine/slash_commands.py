"""Slash commands (docs/DESIGN.md §3.6), engine side: the service that runs them.

The built-in commands are declared in :mod:`smith_tui.engine.slash` (``TABLE``); the
service adds the command files' commands and the MCP servers' prompts. Each command emits
one :class:`CommandOutput` event and returns it. Commands that need a screen (``/inspect``,
``/pager``, ``/history`` in the app) carry an ``action`` in ``data`` that front ends may act
on; the text is still useful headless.
"""

from __future__ import annotations

import asyncio
import difflib
import shlex
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from smith_tui.config import ConfigError, OverrideError
from smith_tui.config.locations import home_dir
from smith_tui.engine import events as ev
from smith_tui.engine import setup_commands as setup
from smith_tui.engine.command_files import CommandFile, CommandFiles
from smith_tui.engine.setup_files import Origin, origins
from smith_tui.engine.slash import TABLE
from smith_tui.engine.slash.command_host import CommandHost
from smith_tui.engine.slash.command_table import CommandError, Reply
from smith_tui.engine.slash.mcp_prompts import PROMPT_PREFIX, prompt_arguments, prompt_usage
from smith_tui.errors import error_text
from smith_tui.tools.spec import ToolError


class CommandService:
    """Runs slash commands against a runtime."""

    def __init__(self, runtime: CommandHost) -> None:
        self.runtime = runtime
        self.table = TABLE
        self._handlers: dict[str, Callable[[list[str]], Awaitable[Reply]]] = {
            name: partial(command.handler, self) for name, command in TABLE.by_name().items()
        }
        self.files = CommandFiles(
            self._command_folders,
            reserved=TABLE.names(),
            cache=getattr(runtime, "front_matter", None),
        )
        """The command files of the user and the project (read on first use)."""

    def _command_folders(self) -> list[Origin]:
        runtime = self.runtime
        home = home_dir(runtime.env)
        return origins("commands", runtime.scope.project_root, runtime.user_config_dir(), home)

    def file_commands(self, *, fresh: bool = False) -> dict[str, CommandFile]:
        """The command files' commands by name; each problem found is shown once as a
        notice (``fresh``: look at the folders again now)."""
        found = self.files.discover() if fresh else self.files.current()
        for problem in found.problems:
            self.runtime.emit(
                ev.CommandOutput(
                    command=setup.SETUP_NOTICE,
                    text=f"command file {problem.text()}",
                    ok=False,
                    role=self.runtime.active_role,
                )
            )
        return found.commands

    async def prepare_turn(self, line: str) -> setup.PreparedTurn | None:
        """The turn ``line`` runs when it names ``/init`` or a command file, else ``None``."""
        name, _, arguments = line.strip().partition(" ")
        name = name.lower()
        if name == "/init":
            return setup.PreparedTurn(setup.INIT_PROMPT, command=name)
        if name in self._handlers or name.startswith("/" + PROMPT_PREFIX):
            return None
        commands = await asyncio.to_thread(self.file_commands, fresh=True)
        command = self.files.find(name, commands)
        if command is None:
            return None
        models: list[str] | None = None
        if command.model:
            try:
                models = [str(m.id) for m in await self.runtime.services.model.catalog()]
            except Exception:
                models = None  # the turn's own request will say what is wrong
        return setup.file_turn(command, arguments, models)

    def names(self) -> list[str]:
        """All command names, with the command files' and the prompts of the ready MCP servers."""
        return TABLE.names() + list(self.file_commands()) + list(self.server_prompts())

    def about(self, name: str) -> str:
        """What command ``name`` (``/``-prefixed) does: its help, or a server prompt's."""
        command = TABLE.find(name)
        if command is not None:
            return command.listing if command.name == name else f"another name for {command.name}"
        found_file = self.files.find(name, self.file_commands())
        if found_file is not None:
            return setup.command_about(found_file)
        found = self.server_prompts().get(name)
        if found is None:
            return ""
        server, prompt = found
        head = " ".join([name, *prompt_usage(prompt)])
        text = (prompt.description or prompt.title or "").strip().split("\n", 1)[0]
        return f"{head} — [MCP server {server}] {text or 'prompt ' + prompt.name}"

    def server_prompts(self) -> dict[str, tuple[str, Any]]:
        """``/mcp__<server>__<prompt>`` → (server, prompt) of every ready MCP server."""
        if not self.runtime.config.model.mcp_servers:
            return {}  # no servers: the MCP SDK is not even imported
        found: dict[str, tuple[str, Any]] = {}
        for server in self.runtime.mcp.servers():
            if server.status == "ready":
                for prompt in server.prompts:
                    found[f"/{PROMPT_PREFIX}{server.name}__{prompt.name}"] = (server.name, prompt)
        return found

    async def server_prompt(self, line: str) -> str | ev.CommandOutput | None:
        """The text of the MCP server prompt ``line`` runs (``/mcp__<server>__<prompt> [ARGS]``,
        ARGS as ``NAME=VALUE`` or in the prompt's order), the failure shown as a
        :class:`CommandOutput`, or ``None`` when ``line`` names no server prompt."""
        name = line.split(maxsplit=1)[0]
        if not name.startswith("/" + PROMPT_PREFIX) or not self.runtime.config.model.mcp_servers:
            return None
        found = self.server_prompts().get(name)
        if found is None:
            known = ", ".join(self.server_prompts()) or "none (no ready MCP server has prompts)"
            return self._out(name, f"unknown MCP prompt {name}; known: {known}", ok=False)
        server, prompt = found
        try:
            arguments = prompt_arguments(name, prompt, shlex.split(line)[1:])
            return await self.runtime.mcp.get_prompt(server, prompt.name, arguments)
        except (CommandError, ToolError, ValueError) as exc:
            return self._out(name, error_text(exc), ok=False)

    async def run(self, line: str) -> ev.CommandOutput:
        """Run ``line`` (starting with ``/``); always returns (and emits) a CommandOutput."""
        try:
            words = shlex.split(line)
        except ValueError as exc:
            return self._out(line.split()[0], f"cannot parse the command: {exc}", ok=False)
        name, args = words[0].lower(), words[1:]
        handler = self._handlers.get(name)
        if handler is None:
            close = difflib.get_close_matches(name, self.names(), n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else "; /help lists commands"
            return self._out(name, f"unknown command {name}{hint}", ok=False)
        try:
            text, data = await handler(args)
        except (CommandError, OverrideError, ConfigError) as exc:
            return self._out(name, exc.message, ok=False)
        except Exception as exc:
            message = error_text(exc)
            return self._out(name, message, ok=False)
        return self._out(name, text, data=data)

    def _out(
        self, command: str, text: str, *, ok: bool = True, data: dict[str, Any] | None = None
    ) -> ev.CommandOutput:
        event = ev.CommandOutput(
            command=command, text=text, ok=ok, data=data or {}, role=self.runtime.active_role
        )
        self.runtime.emit(event)
        return event
