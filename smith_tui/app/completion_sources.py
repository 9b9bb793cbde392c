"""Completion sources backed by the runtime: commands, settings, roles, models, files and
the MCP servers' prompts (as commands) and resources."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from smith_tui.widgets.completion.candidates import CompletionSources
from smith_tui.widgets.completion.project_files import ProjectFiles

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime


def _commands(runtime: Runtime) -> Iterable[str]:
    service = getattr(getattr(runtime, "services", None), "command", None)
    if service is not None:
        names = service.names()
    else:  # the runtime's command service is not built yet: the built-in ones
        from smith_tui.engine.slash import TABLE

        names = TABLE.names()
    return [name.lstrip("/") for name in names]


def _resources(runtime: Runtime) -> list[str]:
    """``server:uri`` of every resource of the ready MCP servers."""
    if not runtime.config.model.mcp_servers:
        return []  # no servers: the MCP SDK is not even imported
    return [
        f"{server.name}:{resource.uri}"
        for server in runtime.mcp.servers()
        if server.status == "ready"
        for resource in server.resources
    ]


def _describe(runtime: Runtime, kind: str, name: str) -> str:
    """:func:`describe`, with the MCP servers' prompts (commands) and resources."""
    if kind == "command" and (name.startswith("mcp__") or _from_file(name)):
        service = getattr(getattr(runtime, "services", None), "command", None)
        text = service.about("/" + name) if service is not None else ""
        return text.removeprefix("/" + name).strip()  # its arguments are still to type
    if kind == "resource":
        server, _, uri = name.partition(":")
        found = runtime.mcp.get(server) if runtime.config.model.mcp_servers else None
        for resource in found.resources if found is not None else []:
            if str(resource.uri) == uri:
                about = resource.description or resource.title or resource.name
                return f"[MCP server {server}] {about}".strip()
        return ""
    if kind == "agent":
        return _about_agent(name)
    return describe(kind, name)


def _from_file(name: str) -> bool:
    """Whether command ``name`` is not a built-in one (a command file's)."""
    from smith_tui.engine.slash import TABLE

    return "/" + name not in TABLE.commands


def _config_paths(runtime: Runtime) -> list[str]:
    from smith_tui.config import list_overridable_paths

    models = runtime.config.effective.get("models") or {}
    keys = {"default", "direct", "orchestrator", "worker", "explorer", *models.keys()}
    return list_overridable_paths(model_keys=sorted(keys))


def describe(kind: str, name: str) -> str:
    """What a completion candidate does: a command's help, a setting's or a role's summary."""
    if kind == "command":
        from smith_tui.engine.slash import TABLE

        # Its help only: the arguments are what is being typed.
        command = TABLE.commands.get("/" + name)
        return command.help if command is not None else ""
    if kind == "setting":
        from smith_tui.config import settings_reference

        for doc in settings_reference():
            if doc.path == name or (doc.path.endswith("<key>") and name.startswith("models.")):
                return _first_sentence(doc.description)
        return ""
    if kind == "role":
        from smith_tui.engine.roles import list_roles

        for spec in list_roles(user_facing=True):
            if spec.name == name:
                from smith_tui.engine.matrix import TOOL_MATRIX

                edits = name in TOOL_MATRIX.get("edit", frozenset())
                work = "edits and runs commands itself" if edits else "reads and plans"
                targets = ", ".join(spec.dispatch_targets) or "nobody"
                return f"{spec.alias}: {work}; may dispatch {targets}"
    return ""


def _first_sentence(text: str) -> str:
    """``text`` up to its first full stop (not the one of an "e.g." or "i.e.")."""
    found = re.search(r"(?<!e\.g)(?<!i\.e)\.(\s|$)", text)
    return text[: found.start()] if found else text


def _agents() -> list[str]:
    """The sub-agents ``@name`` may hand a prompt to (built-in, then from agent files)."""
    from smith_tui.engine.roles import child_role_names

    return child_role_names()


def _about_agent(name: str) -> str:
    from smith_tui.engine.roles import UnknownRoleError, resolve_role

    try:
        spec = resolve_role(name)
    except UnknownRoleError:
        return ""
    if spec.from_file:
        return f"sub-agent ({spec.shape}-shaped): {spec.description}"
    return f"{spec.alias}: " + (
        "changes code and checks it" if name == "worker" else "reads and researches"
    )


def _roles() -> list[str]:
    from smith_tui.engine.roles import list_roles

    return [spec.name for spec in list_roles(user_facing=True)]


def _permission_modes() -> tuple[str, ...]:
    from smith_tui.config.permission_settings import PERMISSION_MODES

    return PERMISSION_MODES


class ModelIds:
    """The catalog's model ids, fetched once (the first ``/model `` completion)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._ids: list[str] | None = None

    async def __call__(self) -> list[str]:
        """The ids (empty, and retried next time, when the server cannot be asked)."""
        if self._ids is None:
            if not self.runtime.server_configured:
                return []
            models = await self.runtime.catalog()
            ids = [str(getattr(m, "id", None) or m.get("id")) for m in models]
            if not ids:
                return []
            self._ids = sorted(ids)
        return self._ids


def runtime_sources(runtime: Runtime) -> CompletionSources:
    """Completion sources reading from ``runtime`` (everything lazily, on first use)."""
    cwd = Path(getattr(getattr(runtime, "options", None), "cwd", None) or Path.cwd())
    files = ProjectFiles(cwd)
    return CompletionSources(
        commands=lambda: _commands(runtime),
        config_paths=lambda: _config_paths(runtime),
        roles=_roles,
        permission_modes=_permission_modes,
        model_ids=ModelIds(runtime),
        project_files=files.files,
        resources=lambda: _resources(runtime),
        describe=lambda kind, name: _describe(runtime, kind, name),
        agents=_agents,
    )
