"""What the model is given beyond the conversation: ``/mcp``, ``/skills``, ``/agents``,
``/memory`` (alias ``/context``) and ``/init``, which writes the project's AGENTS.md."""

from __future__ import annotations

import asyncio
from typing import Any

from smith_tui.engine import setup_commands as setup
from smith_tui.engine.setup_listing import agents_listing, skills_listing
from smith_tui.engine.slash.command_table import CommandContext, CommandError, CommandGroup, Reply
from smith_tui.engine.slash.mcp_prompts import PROMPT_PREFIX, prompt_usage
from smith_tui.tools.spec import ToolError

commands = CommandGroup()


@commands.command(
    "/mcp",
    "[restart NAME]",
    help="MCP servers, their state and tools",
    usage="/mcp (list servers) | /mcp restart NAME",
)
async def mcp_command(ctx: CommandContext, args: list[str]) -> Reply:
    """The MCP servers with their tools, prompts and resources, or restart one."""
    manager = ctx.runtime.mcp
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
        raise mcp_command.misuse()
    servers = manager.servers()
    if not servers:
        return (
            "no MCP servers configured: add them under mcp_servers in "
            f"{ctx.runtime.config.user_config_path}",
            {"servers": []},
        )
    lines: list[str] = []
    for server in servers:
        lines.append(_mcp_line(server))
        lines += [f"    {name}" for name in server.tool_names]
        lines += [
            f"    prompt {' '.join([f'/{PROMPT_PREFIX}{server.name}__{p.name}', *prompt_usage(p)])}"
            for p in server.prompts
        ]
        lines += [f"    resource @{server.name}:{r.uri}" for r in server.resources]
    return "\n".join(lines), {"servers": [_mcp_data(s) for s in servers]}


@commands.command("/skills", help="the skills (SKILL.md folders) and where each came from")
async def skills_command(ctx: CommandContext, args: list[str]) -> Reply:
    """The skills found, and where each came from."""
    return await skills_listing(ctx.runtime)


@commands.command(
    "/agents", help="the roles, built-in and from agent files, and the tools each may use"
)
async def agents_command(ctx: CommandContext, args: list[str]) -> Reply:
    """The roles and the tools each may use."""
    return await agents_listing(ctx.runtime)


@commands.command(
    "/memory",
    "[open N|user]",
    help="the instruction files in the prompt; edit one",
    usage="/memory (list the files) | /memory open N|user|repository",
    aliases=("/context",),
)
async def memory_command(ctx: CommandContext, args: list[str]) -> Reply:
    """The instruction files in the prompt, or open one in the user's editor."""
    usage = memory_command.usage_line()
    scope = await asyncio.to_thread(ctx.runtime.compute_scope)
    if not args:
        files = [str(path) for _, path, _, _ in setup.loaded_files(scope)]
        return setup.memory_text(scope, ctx.runtime.user_config_dir()), {"files": files}
    if args[0] != "open" or len(args) != 2:
        raise CommandError(usage)
    target = setup.memory_target(scope, ctx.runtime.user_config_dir(), args[1].lower())
    if target is None:
        raise CommandError(f"no file {args[1]} in the list; {usage}")
    return f"opening {target} in your editor", {"action": "edit", "path": str(target)}


@commands.command(
    "/init", help="study the repository and write its AGENTS.md (asks before writing)"
)
async def init_command(ctx: CommandContext, args: list[str]) -> Reply:
    """Only a hint: ``/init`` runs as a turn (the service's ``prepare_turn``)."""
    # Runs as a turn (Runtime.submit through prepare_turn); here only when called directly.
    return "/init runs as a turn: type it at the prompt", {}


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
