"""The role catalog: the four agents, their aliases, prompt profiles and tints."""

from __future__ import annotations

from dataclasses import dataclass

from smith_tui.engine.matrix import DISPATCH_TARGETS


class UnknownRoleError(ValueError):
    """Raised by :func:`resolve_role` for a name that is neither a role nor an alias."""


@dataclass(frozen=True)
class RoleSpec:
    """One role of the catalog.

    ``user_facing`` roles talk to the user; the others only run as dispatched
    children and must finish with the ``report`` tool. ``tint`` is the role's
    palette colour (used by the Matrix rain); Smith has none and keeps the
    plain spinner.
    """

    name: str
    alias: str
    user_facing: bool
    can_dispatch: bool
    dispatch_targets: tuple[str, ...]
    prompt_profile: str
    default_model_key: str = "default"
    tint: str | None = None


def _spec(name: str, alias: str, user_facing: bool, tint: str | None) -> RoleSpec:
    targets = tuple(sorted(DISPATCH_TARGETS[name], key=("worker", "explorer").index))
    return RoleSpec(
        name=name,
        alias=alias,
        user_facing=user_facing,
        can_dispatch=bool(targets),
        dispatch_targets=targets,
        prompt_profile=name,
        tint=tint,
    )


_CATALOG: tuple[RoleSpec, ...] = (
    _spec("direct", "Smith", True, None),
    _spec("orchestrator", "Tank", True, "#FFB000"),
    _spec("worker", "Niobe", False, "#FF4FD8"),
    _spec("explorer", "Link", False, "#00E5FF"),
)
_BY_KEY = {key: spec for spec in _CATALOG for key in (spec.name, spec.alias.lower())}

#: The role used when the config names none.
DEFAULT_ROLE = "direct"


def resolve_role(name: str) -> RoleSpec:
    """Return the role named ``name`` (a role name or an alias, any case).

    Raises :class:`UnknownRoleError` naming the valid choices otherwise.
    """
    key = name.strip().lower() if isinstance(name, str) else ""
    spec = _BY_KEY.get(key)
    if spec is None:
        choices = ", ".join(f"{s.name} ({s.alias})" for s in _CATALOG)
        raise UnknownRoleError(f"unknown role {name!r}; choose one of: {choices}")
    return spec


def list_roles(*, user_facing: bool | None = None) -> list[RoleSpec]:
    """Return the catalog in a fixed order, optionally only (non-)user-facing roles."""
    return [s for s in _CATALOG if user_facing is None or s.user_facing == user_facing]


def role_display(role: str) -> tuple[str, str | None]:
    """How ``role`` is shown: its alias (Smith, Tank, Niobe, Link) and its tint.

    An unknown role shows under its own name ("?" when empty) and without a tint, so a
    record from an older or newer version still renders.
    """
    try:
        spec = resolve_role(role)
    except UnknownRoleError:
        return role or "?", None
    return spec.alias, spec.tint
