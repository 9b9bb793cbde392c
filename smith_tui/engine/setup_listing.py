"""``/skills`` and ``/agents``: the skills and roles a runtime has, and where each came from."""

from __future__ import annotations

from typing import Any, Protocol

from smith_tui.engine import matrix, roles
from smith_tui.engine.user_setup import SetupCatalog


class SetupHost(Protocol):
    """What the listings need of the runtime."""

    setup: SetupCatalog

    async def refresh_setup(self) -> None:
        """Discover the skills and sub-agents again (and show new problems)."""


def _where(origin_label: str, kind: str) -> str:
    return f"{origin_label} ({kind})"


async def skills_listing(host: SetupHost) -> tuple[str, dict[str, Any]]:
    """The text and data of ``/skills``."""
    await host.refresh_setup()
    skills = host.setup.skills
    if not skills:
        return (
            "no skills: put a folder with a SKILL.md (front matter name and description) in "
            ".smith/skills/, .claude/skills/ or .agents/skills/ of the project, or in "
            "~/.config/smith/skills/ or ~/.claude/skills/",
            {"skills": []},
        )
    width = max(len(s.name) for s in skills)
    lines = [f"Skills ({len(skills)}), loaded by the model with the skill tool when they fit:"]
    rows = []
    for skill in skills:
        where = _where(skill.origin.label, skill.origin.kind)
        text = skill.description if len(skill.description) <= 70 else skill.description[:69] + "…"
        lines.append(f"  {skill.name:<{width}}  {text}  [{where}]")
        rows.append(
            {"name": skill.name, "description": skill.description, "from": str(skill.folder)}
        )
    return "\n".join(lines), {"skills": rows}


def _tools(role: roles.RoleSpec) -> list[str]:
    if role.tools is not None:
        return sorted(role.tools)
    return sorted(matrix.allowed_tools(role.name))


async def agents_listing(host: SetupHost) -> tuple[str, dict[str, Any]]:
    """The text and data of ``/agents``: every role, built-in and from files, with its tools."""
    await host.refresh_setup()
    files = {agent.role.name: agent for agent in host.setup.agents}
    lines = ["Roles (@name at the start of a prompt hands it to a sub-agent):"]
    rows = []
    for spec in roles.list_roles():
        name = spec.name if spec.alias == spec.name else f"{spec.name} ({spec.alias})"
        tools = _tools(spec)
        if spec.user_facing:
            targets = [t for t in roles.child_role_names() if roles.check_dispatch(spec.name, t)]
            kind = "talks to you; dispatches to " + (", ".join(targets) or "none")
        elif spec.from_file:
            agent = files.get(spec.name)
            where = _where(agent.origin.label, agent.origin.kind) if agent else spec.source
            kind = f"sub-agent from {where}, reports like the {spec.shape}"
            if spec.model:
                kind += f", model {spec.model}"
        else:
            kind = "built-in sub-agent"
        lines.append(f"  {name}: {kind}")
        lines.append(f"      tools: {', '.join(tools)}")
        rows.append(
            {
                "name": spec.name,
                "alias": spec.alias,
                "tools": tools,
                "source": spec.source,
                "shape": spec.shape or None,
            }
        )
    return "\n".join(lines), {"roles": rows}
