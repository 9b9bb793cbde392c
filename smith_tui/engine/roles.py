"""The role catalog: the four agents, their aliases, prompt profiles and tints.

Besides the four built-in roles the catalog holds the sub-agents defined in the user's
and the project's agent files (``engine/agents.py`` reads them; :func:`set_file_roles`
installs them). A file role only runs as a dispatched child: its tools are its own
list, never wider than the built-in worker's (:func:`check_tool`), and its report has
the shape of a worker's or an explorer's (:func:`report_shape`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from smith_tui.engine import matrix
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
    prompt_text: str | None = None
    """The whole prompt profile, for a role from an agent file (else ``prompt_profile``
    names a packaged profile)."""
    tools: frozenset[str] | None = None
    """A file role's tools (``None`` for a built-in role: the matrix decides)."""
    shape: str = ""
    """Which built-in child's report a file role writes: ``worker`` or ``explorer``."""
    description: str = ""
    """What a file role is for (shown to the roles that may dispatch to it)."""
    model: str | None = None
    """The model a user's agent file chose (never one from a project file)."""
    source: str | None = None
    """The agent file a file role came from."""

    @property
    def from_file(self) -> bool:
        """Whether this role was defined by an agent file."""
        return self.tools is not None


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
_FILE_ROLES: dict[str, RoleSpec] = {}

#: The built-in children's roles, in the order they are offered.
BUILTIN_CHILD_ROLES = ("worker", "explorer")

#: The role used when the config names none.
DEFAULT_ROLE = "direct"


def resolve_role(name: str) -> RoleSpec:
    """Return the role named ``name`` (a role name or an alias, any case).

    Raises :class:`UnknownRoleError` naming the valid choices otherwise.
    """
    key = name.strip().lower() if isinstance(name, str) else ""
    spec = _BY_KEY.get(key) or _FILE_ROLES.get(key)
    if spec is None:
        choices = ", ".join([f"{s.name} ({s.alias})" for s in _CATALOG] + list(_FILE_ROLES))
        raise UnknownRoleError(f"unknown role {name!r}; choose one of: {choices}")
    return spec


def list_roles(*, user_facing: bool | None = None) -> list[RoleSpec]:
    """Return the catalog in a fixed order (the built-in roles, then the file roles by
    name), optionally only (non-)user-facing roles."""
    every = [*_CATALOG, *_FILE_ROLES.values()]
    return [s for s in every if user_facing is None or s.user_facing == user_facing]


def is_reserved_name(name: str) -> bool:
    """Whether ``name`` is a built-in role's name or alias (no agent file may take it)."""
    return name.strip().lower() in _BY_KEY


def set_file_roles(specs: Iterable[RoleSpec]) -> None:
    """Install the roles read from agent files, replacing the ones installed before.

    The catalog is the process's: a front end runs one project at a time. A spec whose
    name is a built-in role's is skipped (the reader refuses those names already).
    """
    found = {
        spec.name.lower(): spec
        for spec in specs
        if spec.from_file and not is_reserved_name(spec.name)
    }
    _FILE_ROLES.clear()
    _FILE_ROLES.update(dict(sorted(found.items())))


def file_roles() -> list[RoleSpec]:
    """The roles from agent files, by name."""
    return list(_FILE_ROLES.values())


def child_role_names() -> list[str]:
    """Every role a dispatch may name: the built-in children, then the file roles."""
    return [*BUILTIN_CHILD_ROLES, *_FILE_ROLES]


def report_shape(role: str) -> str:
    """Which built-in child's report ``role`` writes (a built-in role: its own name)."""
    spec = _FILE_ROLES.get(role.strip().lower()) if isinstance(role, str) else None
    return spec.shape if spec is not None else role


def check_tool(role: str, tool_name: str) -> matrix.Decision:
    """The role policy with file roles: a file role may use the tools of its own list
    (read when its file was, already cut to the worker's); other roles as the matrix says."""
    spec = _FILE_ROLES.get(role)
    if spec is None:
        return matrix.check_tool(role, tool_name)
    assert spec.tools is not None
    return "allow" if tool_name in spec.tools else "deny"


def check_dispatch(role: str, target: str) -> bool:
    """Whether ``role`` may dispatch to ``target``: the matrix's edges, and every role
    that may dispatch at all may dispatch to a file role."""
    if target in _FILE_ROLES:
        return bool(DISPATCH_TARGETS.get(role))
    return matrix.check_dispatch(role, target)


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
