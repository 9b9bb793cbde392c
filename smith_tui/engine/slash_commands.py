"""Slash commands (docs/DESIGN.md §3.6), engine side.

Each command emits one :class:`CommandOutput` event and returns it. Commands
that need a screen (``/inspect``, ``/pager``, ``/history`` in the app) carry an
``action`` in ``data`` that front ends may act on; the text is still useful
headless.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import shlex
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from smith_tui.config import (
    ConfigError,
    EffectiveConfig,
    OverrideError,
    data_dir,
    get_value,
)
from smith_tui.config.front_matter import MetaCache
from smith_tui.config.locations import home_dir
from smith_tui.config.permission_settings import MODES_USAGE
from smith_tui.config.secrets import redact, secret_values
from smith_tui.engine import checkpoints as cp
from smith_tui.engine import events as ev
from smith_tui.engine import setup_commands as setup
from smith_tui.engine.active_conversation import Conversations
from smith_tui.engine.command_files import CommandFile, CommandFiles
from smith_tui.engine.compaction import CompactionError, CompactionRecord
from smith_tui.engine.errors import AgentFailure
from smith_tui.engine.messages import TranscriptMessage
from smith_tui.engine.model_select import ModelSelection
from smith_tui.engine.roles import RoleSpec, UnknownRoleError, list_roles, role_display
from smith_tui.engine.scope import TurnScope
from smith_tui.engine.services import Services
from smith_tui.engine.setup_files import Origin, origins
from smith_tui.engine.setup_listing import agents_listing, skills_listing
from smith_tui.engine.usage_ledger import UsageTracker, format_cost, format_tokens
from smith_tui.engine.user_setup import SetupCatalog
from smith_tui.errors import SmithError, error_text
from smith_tui.store import Store
from smith_tui.terminal_text import visible
from smith_tui.tools.builtin.code.render import plural
from smith_tui.tools.checkpoints.shadow_repo import Checkpoints
from smith_tui.tools.spec import ToolError

if TYPE_CHECKING:
    from smith_tui.llm.client import LLMClient

    # Built on first use by the runtime: the MCP SDK is a large import.
    from smith_tui.mcp.manager import McpManager


class HostOptions(Protocol):
    """The runtime options the commands read: ``/export`` writes relative to ``cwd``."""

    cwd: Path


class CommandHost(Protocol):
    """What the commands read and change of the runtime, grouped by what they are for.

    * the conversation: the runtime's :class:`Conversations` part (``/new``, ``/load``,
      ``/clear``, ``/inspect``, ``/pager``, ``/export``, ``/model`` pins) and the
      project it lives in; the store for listings, search, notes and usage rows;
    * settings: ``config`` with ``set_config``/``unset_config``, the role and the
      permission mode. These stay methods of the runtime rather than of its
      ``ConfigOverrides`` part: the runtime reacts to each change (the sandbox, the mode
      shown, a new LLM client), and a command that went around it would skip that;
    * models and usage: ``services.model`` lists the server's models, ``last_selection``
      and ``usage`` say what ran;
    * the rest: ``emit`` for the output, ``compact``, the MCP servers, ``options.cwd``.

    ``config``, ``store`` and ``options`` also make the host a
    :class:`smith_tui.engine.checkpoints.CheckpointHost` (``/undo``, ``/rewind``).
    """

    # -- the conversation
    conversations: Conversations
    store: Store

    @property
    def project_id(self) -> str: ...

    scope: TurnScope
    env: dict[str, str]
    front_matter: MetaCache

    def compute_scope(self) -> TurnScope: ...
    def user_config_dir(self) -> Path: ...

    # -- settings
    @property
    def config(self) -> EffectiveConfig: ...
    def set_config(self, path: str, raw_value: str) -> Any: ...
    def unset_config(self, path: str) -> None: ...
    @property
    def active_role(self) -> str: ...
    def set_active_role(self, name: str) -> RoleSpec: ...
    @property
    def permission_mode(self) -> str: ...
    def set_permission_mode(self, mode: str) -> str: ...

    # -- models and usage
    @property
    def llm(self) -> LLMClient: ...

    services: Services
    last_selection: ModelSelection | None
    usage: UsageTracker

    # -- the rest
    @property
    def options(self) -> HostOptions: ...
    @property
    def mcp(self) -> McpManager: ...
    def emit(self, event: ev.Event) -> None: ...
    async def compact(self, focus: str | None = None) -> CompactionRecord: ...

    # -- the skills and sub-agents from files (/skills, /agents)
    setup: SetupCatalog

    async def refresh_setup(self) -> None: ...


COMMANDS: dict[str, str] = {
    "/help": "list commands and keys",
    "/new": "start a new conversation",
    "/load": "/load ID — open a conversation",
    "/history": "list conversations of this project",
    "/clear": "start over with an empty transcript",
    "/config": "/config get|set|unset|show [path] [value] — runtime settings",
    "/model": "/model [ID|--unpin] — show or pin the conversation's model",
    "/models": "list the server's models and pick one (the one in use is marked)",
    "/doctor": "/doctor [MODEL] — ask the server what it supports (tool calls, usage, ...)",
    "/role": "/role [direct|orchestrator] — show or switch the active role",
    "/mode": f"/mode [{MODES_USAGE}] — show or switch the permission mode",
    "/usage": "tokens per role for this session and conversation",
    "/inspect": "inspect and edit persisted messages",
    "/pager": "read the whole transcript",
    "/copy": "/copy [N] — copy the last answer, or its Nth code block, to the clipboard",
    "/compact": "/compact [FOCUS] — summarise the older conversation now (FOCUS: what to keep)",
    "/search": "/search QUERY — full-text search; a hit opens the pager at its message",
    "/notes": "list project memory notes",
    "/export": "/export [PATH] — save as Markdown or .json (default: the data folder)",
    "/undo": "restore the files to before the last turn that changed them",
    "/fork": "/fork [N] [--files] — copy the conversation up to turn N (and the files)",
    "/rewind": "/rewind [ID [--conversation]] — list checkpoints or restore one",
    "/mcp": "/mcp [restart NAME] — MCP servers, their state and tools",
    "/skills": "the skills (SKILL.md folders) and where each came from",
    "/agents": "the roles, built-in and from agent files, and the tools each may use",
    "/memory": "/memory [open N|user] — the instruction files in the prompt; edit one",
    "/init": "study the repository and write its AGENTS.md (asks before writing)",
    "/quit": "quit smith",
}

#: Other names of commands: typing the key runs the value's handler. /help lists them.
ALIASES: dict[str, str] = {"/context": "/memory"}

#: Where a command does not work outside the TUI (``smith acp``, driven by an editor):
#: ``screen`` needs the TUI itself (a viewer, the clipboard, its process); ``switch`` moves
#: the front end to another conversation, which an editor's session cannot follow (its
#: session id stays the conversation's). A command not listed works in every front end.
NOT_IN_EDITOR: dict[str, str] = {
    "/inspect": "screen",
    "/pager": "screen",
    "/copy": "screen",
    "/quit": "screen",
    "/new": "switch",
    "/clear": "switch",
    "/load": "switch",
    "/fork": "switch",
}


class CommandError(SmithError):
    """A command used wrongly; the message says how to use it."""

    code = "command"


class CommandService:
    """Runs slash commands against a runtime."""

    def __init__(self, runtime: CommandHost) -> None:
        self.runtime = runtime
        self._handlers: dict[str, Callable[[list[str]], Awaitable[tuple[str, dict[str, Any]]]]] = {
            name: getattr(self, "_cmd_" + name[1:]) for name in COMMANDS
        }
        self._handlers.update({alias: self._handlers[name] for alias, name in ALIASES.items()})
        self.files = CommandFiles(
            self._command_folders,
            reserved=[*COMMANDS, *ALIASES],
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
        builtin = [*COMMANDS, *ALIASES]
        return builtin + list(self.file_commands()) + list(self._server_prompts())

    def about(self, name: str) -> str:
        """What command ``name`` (``/``-prefixed) does: its help, or a server prompt's."""
        if name in COMMANDS:
            return COMMANDS[name]
        if name in ALIASES:
            return f"another name for {ALIASES[name]}"
        command = self.files.find(name, self.file_commands())
        if command is not None:
            return setup.command_about(command)
        found = self._server_prompts().get(name)
        if found is None:
            return ""
        server, prompt = found
        head = " ".join([name, *_prompt_usage(prompt)])
        text = (prompt.description or prompt.title or "").strip().split("\n", 1)[0]
        return f"{head} — [MCP server {server}] {text or 'prompt ' + prompt.name}"

    def _server_prompts(self) -> dict[str, tuple[str, Any]]:
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
        found = self._server_prompts().get(name)
        if found is None:
            known = ", ".join(self._server_prompts()) or "none (no ready MCP server has prompts)"
            return self._out(name, f"unknown MCP prompt {name}; known: {known}", ok=False)
        server, prompt = found
        try:
            arguments = _prompt_arguments(name, prompt, shlex.split(line)[1:])
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

    # -- commands -------------------------------------------------------------------------
    async def _cmd_help(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        keys = self.runtime.config.model.services.ui.keys
        lines = ["Commands:"] + [f"  {name:<9} {text}" for name, text in COMMANDS.items()]
        lines += [f"  {alias:<9} another name for {name}" for alias, name in ALIASES.items()]
        lines += [f"  {self.about(name)}" for name in self._server_prompts()]
        files = self.file_commands(fresh=True)
        if files:
            lines.append("Your commands (command files; a user's shadows a project's):")
            lines += [f"  {setup.command_about(command)}" for command in files.values()]
        lines += [
            "Keys:",
            f"  {keys.cancel:<9} cancel the running turn",
            f"  {keys.pager:<9} transcript pager",
            f"  {keys.inspect:<9} inspect and edit messages",
            f"  {keys.palette:<9} command palette",
            f"  {keys.permission_mode:<9} next permission mode",
            f"  {keys.tool_results:<9} expand or collapse every tool call",
            f"  {keys.dispatch_tree:<9} focus the dispatch tree (enter: a job's transcript)",
            f"  {keys.external_editor:<9} edit the prompt in $VISUAL / $EDITOR",
            f"  {keys.quit:<9} quit",
        ]
        return "\n".join(lines), {"action": "help"}

    async def _cmd_new(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        conv = self.runtime.conversations.new(" ".join(args) or None)
        return f"new conversation {conv}", {"conversation_id": conv}

    async def _cmd_load(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        if len(args) != 1:
            raise CommandError("usage: /load ID (see /history for ids)")
        conv = self.runtime.conversations.load(args[0])
        count = len(self.runtime.conversations.messages)
        return f"loaded conversation {conv} ({count} messages)", {"conversation_id": conv}

    async def _cmd_fork(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        usage = "usage: /fork [N] [--files] (N: a turn number, as /rewind names turns)"
        from smith_tui.engine import forks

        files = "--files" in args
        rest = [a for a in args if a != "--files"]
        if len(rest) > 1 or any(a.startswith("-") for a in rest):
            raise CommandError(usage)
        runtime = self.runtime
        source = runtime.conversations.conversation_id
        if not source:
            raise CommandError("nothing to fork yet: this conversation has no messages")
        turns = forks.turn_ids(runtime.store, source)
        through: str | None = None
        if rest:
            if not rest[0].isdigit() or not 1 <= int(rest[0]) <= len(turns):
                raise CommandError(f"{usage}; this conversation has turns 1 to {len(turns)}")
            through = turns[int(rest[0]) - 1]
        try:
            fork = forks.fork_conversation(runtime.store, source, through_turn=through)
        except forks.ForkError as exc:
            raise CommandError(str(exc)) from None
        restored = ""
        if files and through is not None:
            result = await asyncio.to_thread(
                forks.restore_files_for, self._checkpoints(), source, through, turns
            )
            restored = (
                " " + cp.restored_text(result, cp.TurnLabels(runtime.store))
                if result is not None
                else " The files already are as they were then."
            )
        runtime.conversations.load(fork)
        count = len(runtime.conversations.messages)
        upto = f"up to turn {rest[0]}" if rest else "whole"
        text = f"forked {upto} into conversation {fork} ({count} messages); now in the fork."
        return text + restored, {"conversation_id": fork, "forked_from": source}

    async def _cmd_history(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        convs = self.runtime.store.conversations.list_for_project(self.runtime.project_id, limit=50)
        if not convs:
            return "no conversations yet in this project", {"action": "history"}
        from smith_tui.engine.forks import FORKED_FROM

        def line(c: Any) -> str:
            text = f"{c.id}  {c.title or '(untitled)'}"
            source = (c.metadata.get(FORKED_FROM) or {}).get("conversation")
            if source:
                text += f"  (fork of {source})"
            if c.id == self.runtime.conversations.conversation_id:
                text += "  ← active"
            return text

        lines = [line(c) for c in convs]
        return "\n".join(lines), {"action": "history"}

    async def _cmd_clear(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        conv = self.runtime.conversations.new()
        return "cleared; new conversation " + conv, {"conversation_id": conv}

    async def _cmd_config(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        usage = "usage: /config get PATH | set PATH VALUE | unset PATH | show"
        if not args:
            return usage, {"action": "config"}
        action, rest = args[0], args[1:]
        if action == "show":
            effective = _hide_mcp_values(_plain(self.runtime.config.effective))
            return json.dumps(effective, indent=2, sort_keys=True), {"config": effective}
        if action == "get" and len(rest) == 1:
            try:
                value = get_value(self.runtime.config, rest[0])
            except (KeyError, ValueError) as exc:
                raise CommandError(f"no setting {rest[0]!r}: {exc}") from None
            if rest[0].split(".")[0] == "mcp_servers":
                value = _hidden_mcp_value(self.runtime.config, rest[0])
            source = _source(self.runtime, rest[0])
            return f"{rest[0]} = {json.dumps(_plain(value))}  ({source})", {"value": _plain(value)}
        if action == "set" and len(rest) >= 2:
            value = self.runtime.set_config(rest[0], " ".join(rest[1:]))
            return f"{rest[0]} = {json.dumps(_plain(value))} (saved)", {"value": _plain(value)}
        if action == "unset" and len(rest) == 1:
            self.runtime.unset_config(rest[0])
            return f"{rest[0]} unset", {}
        raise CommandError(usage)

    async def _cmd_model(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        runtime = self.runtime
        conv = runtime.conversations.ensure()
        if not args:
            sel = runtime.last_selection
            pinned = runtime.conversations.pinned_model
            if pinned and (sel is None or sel.model != pinned):
                last = f"; the last request used {sel.model} (from {sel.source})" if sel else ""
                return (
                    f"{pinned} (pinned to this conversation: the next request uses it{last})",
                    {"model": pinned},
                )
            if sel is None:
                return "no request made yet", {}
            return (
                f"{sel.model} (from {sel.source}{' ' + sel.key if sel.key else ''}; "
                f"context window {sel.context_window})"
            ), {"model": sel.model}
        if args[0] == "--unpin":
            runtime.store.conversations.set_pinned_model(conv, None)
            return "model unpinned for this conversation", {}
        runtime.store.conversations.set_pinned_model(conv, args[0])
        text = f"model {args[0]} pinned to this conversation"
        flag = getattr(runtime.options, "model", None)
        if flag and flag != args[0]:
            # The request's model comes before the pin (model_select): say so, not later.
            text += (
                f"; but --model {flag} was given and wins for this run: the pin applies "
                "when smith starts without --model"
            )
        return text, {"model": args[0]}

    async def _cmd_models(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        models = await self.runtime.services.model.catalog()
        if not models:
            return "the server lists no models", {"models": []}
        lines = [
            f"{m.id}  ctx {m.context_window or '?'}"
            + (f"  max out {m.max_output_tokens}" if m.max_output_tokens else "")
            for m in models
        ]
        # The app shows a picker of these rows (action "models"); choosing one runs /model ID.
        data = {"models": [m.id for m in models], "rows": lines, "action": "models"}
        return "\n".join(lines), data

    async def _cmd_doctor(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        if len(args) > 1:
            raise CommandError("usage: /doctor [MODEL]")
        from smith_tui.engine import server_doctor

        try:
            client = self.runtime.llm
        except AgentFailure as exc:
            raise CommandError(exc.error.message) from None
        config = self.runtime.config.model
        found = await server_doctor.diagnose(config, client, args[0] if args else None)
        checks = server_doctor.checks_of(found)
        data = {"ok": server_doctor.verdict(checks) == 0, "model": found.model}
        return server_doctor.render_text(found, checks).rstrip("\n"), data

    async def _cmd_role(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        if not args:
            return f"active role: {self.runtime.active_role}", {"role": self.runtime.active_role}
        try:
            spec = self.runtime.set_active_role(args[0])
        except UnknownRoleError as exc:
            raise CommandError(str(exc)) from None
        return f"active role: {spec.name} ({spec.alias})", {"role": spec.name}

    async def _cmd_mode(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        if len(args) > 1:
            raise CommandError(f"usage: /mode [{MODES_USAGE}]")
        if args:
            mode = self.runtime.set_permission_mode(args[0].lower())
            text = f"permission mode: {mode} (from the next turn; this session only — "
            text += "/config set permissions.mode keeps it)"
        else:
            mode = self.runtime.permission_mode
            text = f"permission mode: {mode}"
        return text, {"mode": mode}

    async def _cmd_usage(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        runtime = self.runtime
        session = {
            role: (values.get("input_tokens", 0), values.get("output_tokens", 0),
                   runtime.usage.costs.get(role))
            for role, values in runtime.usage.totals().items()
        }  # fmt: skip
        lines = ["session:", *_usage_lines(session)]
        if runtime.conversations.conversation_id:
            stored = runtime.store.usage.totals_by_role(runtime.conversations.conversation_id)
            rows = {r: (t.input_tokens, t.output_tokens, t.cost) for r, t in stored.items()}
            lines += ["conversation:", *_usage_lines(rows)]
        return "\n".join(lines), {"session": runtime.usage.totals()}

    async def _cmd_inspect(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        return f"{len(self.runtime.conversations.messages)} persisted messages", {
            "action": "inspect"
        }

    async def _cmd_copy(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        usage = "usage: /copy [N] — the last answer, or its Nth code block (1 is the first)"
        answer = next(
            (
                str(m.get("content"))
                for m in reversed(self.runtime.conversations.messages)
                if m.get("role") == "assistant" and str(m.get("content") or "").strip()
            ),
            None,
        )
        if answer is None:
            raise CommandError("there is no answer to copy yet")
        if not args:
            return f"the last answer ({len(answer):,} characters)", {
                "action": "copy",
                "text": answer,
            }
        if len(args) > 1 or not args[0].isdigit() or int(args[0]) < 1:
            raise CommandError(usage)
        blocks = code_blocks(answer)
        index = int(args[0])
        if index > len(blocks):
            have = f"only {len(blocks)}" if blocks else "none"
            raise CommandError(f"the last answer has {have} code blocks; {usage}")
        block = blocks[index - 1]
        return f"code block {index} of the last answer ({len(block.splitlines())} lines)", {
            "action": "copy",
            "text": block,
        }

    async def _cmd_pager(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        return _as_markdown(self.runtime.conversations.messages), {"action": "pager"}

    async def _cmd_compact(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        if getattr(self.runtime, "busy", False):
            raise CommandError("a turn is running; wait for it or cancel it (ctrl+c) first")
        focus = " ".join(args).strip() or None
        try:
            record = await self.runtime.compact(focus)
        except CompactionError as exc:
            raise CommandError(f"nothing was compacted: {exc.message}") from None
        text = (
            f"compacted: {plural(record.summarised, 'older message')} summarised, the newest "
            f"{record.kept} kept as they are; context about {record.tokens_before:,} → "
            f"{record.tokens_after:,} tokens. The full history stays in the pager and search."
        )
        return text, {
            "summarised": record.summarised,
            "kept": record.kept,
            "tokens_before": record.tokens_before,
            "tokens_after": record.tokens_after,
        }

    async def _cmd_search(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        if not args:
            raise CommandError("usage: /search QUERY")
        hits = self.runtime.store.search_messages(
            " ".join(args), project_id=self.runtime.project_id
        )
        if not hits:
            return "no matches", {"hits": []}
        lines = [f"{h.conversation_id} #{h.position} {h.role}: {h.snippet}" for h in hits]
        # The app lists the hits (action "search"); choosing one opens the pager at it.
        return "\n".join(lines), {
            "hits": [h.__dict__ for h in hits],
            "query": " ".join(args),
            "action": "search",
        }

    async def _cmd_notes(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        notes = self.runtime.store.project_memory.list(self.runtime.project_id)
        if not notes:
            return "no project notes yet", {}
        lines = [
            f"{n.note_id}: {(n.content or '').splitlines()[0][:80] if n.content else ''}"
            for n in notes
        ]
        return "\n".join(lines), {}

    async def _cmd_export(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        runtime = self.runtime
        conv = runtime.conversations.conversation_id or "conversation"
        # Without a path the file goes to the data folder: never into the project unasked.
        target = Path(args[0]) if args else data_dir() / "exports" / f"{conv}.md"
        if not target.is_absolute():
            target = runtime.options.cwd / target
        if target.suffix == ".json":
            text = json.dumps(runtime.conversations.messages, indent=2, default=str)
        else:
            # Read later with cat or a pager: the model's escapes must not act there either.
            # (JSON escapes control characters itself.)
            text = visible(_as_markdown(runtime.conversations.messages))
        # A key the user typed or pasted into the conversation must not reach the file.
        text = redact(text, secret_values(runtime.config.effective))
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot write {target}: {exc.strerror or exc}") from None
        return f"exported {len(runtime.conversations.messages)} messages to {target}", {
            "path": str(target)
        }

    def _checkpoints(self) -> Checkpoints:
        if getattr(self.runtime, "busy", False):
            raise CommandError("a turn is running; wait for it or cancel it (ctrl+c) first")
        return cp.runtime_checkpoints(self.runtime)

    async def _cmd_undo(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        if args:
            raise CommandError("usage: /undo (no arguments; /rewind ID picks a checkpoint)")
        result = await asyncio.to_thread(cp.undo, self._checkpoints())
        text, data = cp.undone_text(result, cp.TurnLabels(self.runtime.store))
        if result is None:
            return text, data
        from smith_tui.engine.undo_limits import beyond_text, beyond_undo

        item = result.checkpoint
        found = beyond_undo(
            self.runtime.store,
            item.conversation_id,
            item.turn_id,
            self.runtime.config.model.sandbox,
        )
        if found:
            text = f"{text}\n{beyond_text(found)}"
            data = {**data, "beyond_undo": [[b.what, b.why] for b in found]}
        return text, data

    async def _cmd_rewind(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        usage = "usage: /rewind [ID [--conversation]]"
        checkpoints = self._checkpoints()
        if not args:
            entries = await asyncio.to_thread(cp.rewind_entries, checkpoints)
            cp.label_entries(entries, cp.TurnLabels(self.runtime.store))
            return cp.rewind_text(entries), {"action": "rewind", "checkpoints": entries}
        flags = [a for a in args[1:] if a.startswith("-")]
        if (
            len(args) > 2
            or any(f != "--conversation" for f in flags)
            or len(flags) != len(args) - 1
        ):
            raise CommandError(usage)
        result, item = await asyncio.to_thread(cp.rewind, checkpoints, args[0])
        text = cp.restored_text(result, cp.TurnLabels(self.runtime.store))
        data = cp.restored_data(result)
        if flags:
            conv = self.runtime.conversations.conversation_id
            if item.turn_id is None or item.conversation_id != conv or conv is None:
                return (
                    text
                    + " The conversation was left as it is: the checkpoint is not a turn of it.",
                    data,
                )
            removed = cp.truncate_conversation(self.runtime.store, conv, item.turn_id)
            self.runtime.conversations.reload()
            text += f" The conversation now ends before that turn ({removed} messages removed)."
            data["removed_messages"] = removed
        return text, data

    async def _cmd_mcp(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        manager = self.runtime.mcp
        if args and args[0] == "restart" and len(args) == 2:
            try:
                server = await manager.restart(args[1])
            except ToolError as exc:
                raise CommandError(exc.message) from None
            text = _mcp_line(server)
            if server.status != "ready":
                raise CommandError(text)
            return text, {"servers": [_mcp_data(server)]}
        if args:
            raise CommandError("usage: /mcp (list servers) | /mcp restart NAME")
        servers = manager.servers()
        if not servers:
            return (
                "no MCP servers configured: add them under mcp_servers in "
                f"{self.runtime.config.user_config_path}",
                {"servers": []},
            )
        lines: list[str] = []
        for server in servers:
            lines.append(_mcp_line(server))
            lines += [f"    {name}" for name in server.tool_names]
            lines += [
                f"    prompt {' '.join([f'/{PROMPT_PREFIX}{server.name}__{p.name}', *_prompt_usage(p)])}"
                for p in server.prompts
            ]
            lines += [f"    resource @{server.name}:{r.uri}" for r in server.resources]
        return "\n".join(lines), {"servers": [_mcp_data(s) for s in servers]}

    async def _cmd_memory(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        usage = "usage: /memory (list the files) | /memory open N|user|repository"
        scope = await asyncio.to_thread(self.runtime.compute_scope)
        if not args:
            files = [str(path) for _, path, _, _ in setup.loaded_files(scope)]
            return setup.memory_text(scope, self.runtime.user_config_dir()), {"files": files}
        if args[0] != "open" or len(args) != 2:
            raise CommandError(usage)
        target = setup.memory_target(scope, self.runtime.user_config_dir(), args[1].lower())
        if target is None:
            raise CommandError(f"no file {args[1]} in the list; {usage}")
        return f"opening {target} in your editor", {"action": "edit", "path": str(target)}

    async def _cmd_init(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        # Runs as a turn (Runtime.submit through prepare_turn); here only when called directly.
        return "/init runs as a turn: type it at the prompt", {}

    async def _cmd_skills(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        return await skills_listing(self.runtime)

    async def _cmd_agents(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        return await agents_listing(self.runtime)

    async def _cmd_quit(self, args: list[str]) -> tuple[str, dict[str, Any]]:
        return "bye", {"action": "quit"}


PROMPT_PREFIX = "mcp__"
"""An MCP server's prompt is the command ``/mcp__<server>__<prompt>``."""


def _prompt_usage(prompt: Any) -> list[str]:
    """``NAME`` for each required argument of ``prompt``, ``[NAME]`` for the others."""
    return [
        arg.name.upper() if arg.required else f"[{arg.name.upper()}]"
        for arg in prompt.arguments or []
    ]


def _prompt_arguments(command: str, prompt: Any, words: list[str]) -> dict[str, str]:
    """The arguments of ``prompt`` from ``words``: ``NAME=VALUE``, or by position."""
    declared = [arg.name for arg in prompt.arguments or []]
    usage = f"usage: {command} {' '.join(_prompt_usage(prompt))}".rstrip()
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


def _usage_lines(rows: dict[str, tuple[int, int, float | None]]) -> list[str]:
    """One line per role by its name (``Tank (worker)``): tokens in and out, and the cost
    when known, worded as the usage pane words them."""
    if not rows:
        return ["  nothing yet"]
    lines = []
    for role, (inp, out, cost) in sorted(rows.items(), key=lambda item: _role_order(item[0])):
        alias = role_display(role)[0]
        name = alias if alias.lower() == role else f"{alias} ({role})"
        spent = f"  {format_cost(cost)}" if cost is not None else ""
        lines.append(f"  {name:<18} in {format_tokens(inp):>6}  out {format_tokens(out):>6}{spent}")
    total = [cost for _, _, cost in rows.values() if cost is not None]
    if total:
        unpriced = "+" if len(total) < len(rows) else ""
        lines.append(f"  {'cost':<18} {format_cost(sum(total))}{unpriced}")
    return lines


def _role_order(role: str) -> tuple[int, str]:
    """The roles in the pane's order (the built-in ones first), others by name."""
    names = [spec.name for spec in list_roles()]
    return (names.index(role), "") if role in names else (len(names), role)


def _mcp_line(server: Any) -> str:
    """``name (transport): status, N tools — error``."""
    counts = f", {len(server.tool_names)} tools" if server.status == "ready" else ""
    error = f" — {server.error}" if server.error and server.status == "failed" else ""
    roles = ", ".join(server.config.roles)
    return f"{server.name} ({server.transport}, for {roles}): {server.status}{counts}{error}"


def _mcp_data(server: Any) -> dict[str, Any]:
    return {
        "name": server.name,
        "status": server.status,
        "error": server.error,
        "tools": list(server.tool_names),
        "prompts": [p.name for p in server.prompts],
        "resources": [str(r.uri) for r in server.resources],
    }


_MCP_SECRET_TABLES = ("env", "headers")


def _hide_mcp_values(tree: dict[str, Any]) -> dict[str, Any]:
    """``tree`` with the values of every MCP server's ``env`` and ``headers`` shown as ``***``.

    They may hold tokens written into the config file; the names still show.
    """
    servers = tree.get("mcp_servers")
    if not isinstance(servers, dict):
        return tree
    hidden: dict[str, Any] = {}
    for name, server in servers.items():
        if isinstance(server, dict):
            server = {
                key: {k: "***" for k in value}
                if key in _MCP_SECRET_TABLES and isinstance(value, dict)
                else value
                for key, value in server.items()
            }
        hidden[name] = server
    return {**tree, "mcp_servers": hidden}


def _hidden_mcp_value(config: EffectiveConfig, path: str) -> Any:
    """The value at ``path`` (under ``mcp_servers``) with env and header values hidden."""
    node: Any = _hide_mcp_values({"mcp_servers": _plain(get_value(config, "mcp_servers") or {})})
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _plain(value: Any) -> Any:
    if isinstance(value, dict) or hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _source(runtime: CommandHost, path: str) -> str:
    try:
        return runtime.config.source_of(path)
    except KeyError:
        return "defaults"


def code_blocks(markdown: str) -> list[str]:
    """The fenced code blocks (``` or ~~~) of ``markdown``, in order, without their fences."""
    blocks: list[str] = []
    fence = ""
    lines: list[str] = []
    for line in markdown.splitlines():
        stripped = line.strip()
        if not fence:
            if stripped.startswith(("```", "~~~")):
                marker = stripped[0]
                fence = marker * (len(stripped) - len(stripped.lstrip(marker)))
                lines = []
        elif stripped.startswith(fence) and not stripped.strip(fence[0]):
            blocks.append("\n".join(lines))
            fence = ""
        else:
            lines.append(line)
    if fence:  # an unclosed fence runs to the end
        blocks.append("\n".join(lines))
    return blocks


def _as_markdown(messages: Sequence[TranscriptMessage]) -> str:
    parts: list[str] = []
    for m in messages:
        role = m.get("role")
        if role == "tool":
            parts.append(f"**tool {m.get('name') or ''}**\n\n```\n{m.get('content') or ''}\n```")
        elif role == "assistant" and m.get("tool_calls"):
            calls = ", ".join(
                f"{c['function']['name']}({c['function'].get('arguments', '')})"
                for c in m["tool_calls"]
            )
            text = m.get("content") or ""
            parts.append(f"**assistant**\n\n{text}\n\n→ {calls}".strip())
        else:
            parts.append(f"**{role}**\n\n{m.get('content') or ''}")
    return "\n\n---\n\n".join(parts)
