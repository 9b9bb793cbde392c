"""Settings, models and usage: ``/config``, ``/model``, ``/models``, ``/doctor``, ``/role``,
``/mode``, ``/usage``."""

from __future__ import annotations

import json
from typing import Any

from smith_tui.config import EffectiveConfig, get_value
from smith_tui.config.permission_settings import MODES_USAGE
from smith_tui.engine.errors import AgentFailure
from smith_tui.engine.roles import UnknownRoleError, list_roles, role_display
from smith_tui.engine.slash.command_host import CommandHost
from smith_tui.engine.slash.command_table import CommandContext, CommandError, CommandGroup, Reply
from smith_tui.engine.usage_ledger import format_cost, format_tokens

commands = CommandGroup()


@commands.command(
    "/config",
    "get|set|unset|show [path] [value]",
    help="runtime settings",
    usage="/config get PATH | set PATH VALUE | unset PATH | show",
)
async def config_command(ctx: CommandContext, args: list[str]) -> Reply:
    """Read, change or show the settings (without arguments: its usage, and the screen)."""
    if not args:
        return config_command.usage_line(), {"action": "config"}
    action, rest = args[0], args[1:]
    if action == "show":
        effective = _hide_mcp_values(_plain(ctx.runtime.config.effective))
        return json.dumps(effective, indent=2, sort_keys=True), {"config": effective}
    if action == "get" and len(rest) == 1:
        try:
            value = get_value(ctx.runtime.config, rest[0])
        except (KeyError, ValueError) as exc:
            raise CommandError(f"no setting {rest[0]!r}: {exc}") from None
        if rest[0].split(".")[0] == "mcp_servers":
            value = _hidden_mcp_value(ctx.runtime.config, rest[0])
        source = _source(ctx.runtime, rest[0])
        return f"{rest[0]} = {json.dumps(_plain(value))}  ({source})", {"value": _plain(value)}
    if action == "set" and len(rest) >= 2:
        value = ctx.runtime.set_config(rest[0], " ".join(rest[1:]))
        return f"{rest[0]} = {json.dumps(_plain(value))} (saved)", {"value": _plain(value)}
    if action == "unset" and len(rest) == 1:
        ctx.runtime.unset_config(rest[0])
        return f"{rest[0]} unset", {}
    raise config_command.misuse()


@commands.command("/model", "[ID|--unpin]", help="show or pin the conversation's model")
async def model_command(ctx: CommandContext, args: list[str]) -> Reply:
    """The model in use, or pin one to the conversation (``--unpin``: drop the pin)."""
    runtime = ctx.runtime
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


@commands.command(
    "/models", help="list the server's models and pick one (the one in use is marked)"
)
async def models_command(ctx: CommandContext, args: list[str]) -> Reply:
    """The server's catalog (the app shows a picker of it)."""
    models = await ctx.runtime.services.model.catalog()
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


@commands.command(
    "/doctor", "[MODEL]", help="ask the server what it supports (tool calls, usage, ...)"
)
async def doctor_command(ctx: CommandContext, args: list[str]) -> Reply:
    """Probe the server (and ``MODEL``) and say what works."""
    if len(args) > 1:
        raise doctor_command.misuse()
    from smith_tui.engine import server_doctor

    try:
        client = ctx.runtime.llm
    except AgentFailure as exc:
        raise CommandError(exc.error.message) from None
    config = ctx.runtime.config.model
    found = await server_doctor.diagnose(config, client, args[0] if args else None)
    checks = server_doctor.checks_of(found)
    data = {"ok": server_doctor.verdict(checks) == 0, "model": found.model}
    return server_doctor.render_text(found, checks).rstrip("\n"), data


@commands.command("/role", "[direct|orchestrator]", help="show or switch the active role")
async def role_command(ctx: CommandContext, args: list[str]) -> Reply:
    """The active role, or switch to another."""
    if not args:
        return f"active role: {ctx.runtime.active_role}", {"role": ctx.runtime.active_role}
    try:
        spec = ctx.runtime.set_active_role(args[0])
    except UnknownRoleError as exc:
        raise CommandError(str(exc)) from None
    return f"active role: {spec.name} ({spec.alias})", {"role": spec.name}


@commands.command("/mode", f"[{MODES_USAGE}]", help="show or switch the permission mode")
async def mode_command(ctx: CommandContext, args: list[str]) -> Reply:
    """The permission mode, or switch it for this session."""
    if len(args) > 1:
        raise mode_command.misuse()
    if args:
        mode = ctx.runtime.set_permission_mode(args[0].lower())
        text = f"permission mode: {mode} (from the next turn; this session only — "
        text += "/config set permissions.mode keeps it)"
    else:
        mode = ctx.runtime.permission_mode
        text = f"permission mode: {mode}"
    return text, {"mode": mode}


@commands.command("/usage", help="tokens per role for this session and conversation")
async def usage_command(ctx: CommandContext, args: list[str]) -> Reply:
    """Tokens (and cost) per role, this session's and the conversation's."""
    runtime = ctx.runtime
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
