"""``/help``: the commands (built-in, aliases, MCP prompts, command files) and the keys."""

from __future__ import annotations

from smith_tui.engine import setup_commands as setup
from smith_tui.engine.slash.command_table import CommandContext, CommandGroup, Reply

commands = CommandGroup()


@commands.command("/help", help="list commands and keys")
async def help_command(ctx: CommandContext, args: list[str]) -> Reply:
    """Every command with its help line, then the keys as configured."""
    keys = ctx.runtime.config.model.services.ui.keys
    table = ctx.table
    lines = ["Commands:"] + [f"  {name:<9} {text}" for name, text in table.listing().items()]
    lines += [f"  {alias:<9} another name for {name}" for alias, name in table.aliases.items()]
    lines += [f"  {ctx.about(name)}" for name in ctx.server_prompts()]
    files = ctx.file_commands(fresh=True)
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
