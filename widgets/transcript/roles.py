"""Role names as the transcript shows them: alias and tint."""

from __future__ import annotations

from smith_tui.engine.roles import UnknownRoleError, resolve_role


def role_alias(role: str) -> str:
    """The alias of a role (Smith, Tank, Niobe, Link), or the name itself when unknown."""
    try:
        return resolve_role(role).alias
    except UnknownRoleError:
        return role or "?"


def role_tint(role: str) -> str | None:
    """The role's colour, or None for Smith and unknown roles."""
    try:
        return resolve_role(role).tint
    except UnknownRoleError:
        return None
