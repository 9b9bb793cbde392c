"""Service composition (docs/DESIGN.md §5.1).

``compose_services`` builds the service handles by name, each from the
``services.<name>`` options of the config. A handle given in ``handles`` is
used as is instead (tests inject pre-built handles; dispatch children share
the parent's).
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from smith_tui.engine import roles
from smith_tui.engine.model_select import ModelSelection, select_model
from smith_tui.engine.persistence import Persistence
from smith_tui.llm import ModelDescriptor
from smith_tui.tools.registry import ToolRegistry

SERVICE_NAMES = ("role", "model", "tool", "persistence", "command")
LAZY_SERVICES = ("command",)
"""The handles built on first use, not by ``compose_services`` (``ServiceHandles.command``)."""


class RoleService:
    """The dispatch edges (which role may dispatch to which): the policy matrix's, and
    every dispatching role's to the sub-agents from agent files."""

    check_dispatch = staticmethod(roles.check_dispatch)

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.options = options


class ModelLister(Protocol):
    """What model selection needs of the LLM client: its ``GET /models`` catalog."""

    async def list_models(self) -> list[ModelDescriptor]:
        """The server's models."""
        ...


class ModelService:
    """Model selection over the LLM client's catalog."""

    def __init__(
        self, options: Mapping[str, Any], llm: ModelLister, env: Mapping[str, str]
    ) -> None:
        self.options = options
        self.llm = llm
        self.env = env

    async def catalog(self) -> list[ModelDescriptor]:
        """The server's model catalog (cached by the client)."""
        return await self.llm.list_models()

    async def select(
        self,
        request_model: str | None,
        pinned: str | None,
        role_spec: roles.RoleSpec,
        config: Mapping[str, Any],
    ) -> ModelSelection:
        """Resolve the model for ``role_spec`` (docs/DESIGN.md §3.3); the catalog is
        retried like a chat request (``llm_config.retry_max_retries`` and backoffs)."""

        async def catalog() -> list[ModelDescriptor]:
            return await catalog_with_retries(self.catalog, config)

        return await select_model(request_model, pinned, role_spec, config, self.env, catalog)


async def catalog_with_retries(
    fetch: Callable[[], Awaitable[list[ModelDescriptor]]], config: Mapping[str, Any]
) -> list[ModelDescriptor]:
    """``fetch()`` again after a retryable failure (a 503, a dropped connection), with the
    transport retry settings of ``config``; the last failure is raised."""
    from smith_tui.engine.retry import RetryPolicy, backoff_s

    llm = config.get("llm_config") or {}
    policy = RetryPolicy()
    tries = int(llm.get("retry_max_retries", policy.transport_max))
    schedule = tuple(llm.get("retry_backoff_ms") or policy.transport_backoff_ms)
    for attempt in range(tries + 1):
        try:
            return await fetch()
        except Exception as exc:
            if attempt >= tries or not getattr(exc, "retryable", False):
                raise
            await asyncio.sleep(backoff_s(schedule, attempt))
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class ServiceHandles:
    """The service handles of a runtime, read-only once composed."""

    role: RoleService
    model: ModelService
    tool: ToolRegistry
    persistence: Persistence
    build_command: Callable[[], Any] = field(default=lambda: None, repr=False, compare=False)
    """Builds ``command`` (see there)."""

    @functools.cached_property
    def command(self) -> Any:
        """The ``CommandService`` (slash_commands.py builds on the runtime; typed there).

        Built on first use (a line starting with ``/``, a front end listing the commands):
        the slash commands' table and handlers are modules a plain turn never runs, and
        neither ``smith -p`` nor the app's start waits for them (docs/PERFORMANCE.md).
        """
        return self.build_command()


Factory = Callable[[Mapping[str, Any]], Any]


def service_options(config: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """Options for service ``name``: ``services.<name>`` or a top-level ``<name>`` table."""
    services = config.get("services") or {}
    options = services.get(name) if isinstance(services, Mapping) else None
    if options is None:
        top = config.get(name)
        options = top if isinstance(top, Mapping) else {}
    return options


def compose_services(
    config: Mapping[str, Any],
    factories: Mapping[str, Factory],
    handles: Mapping[str, Any] | None = None,
) -> ServiceHandles:
    """Build every handle by name; ``handles`` overrides the factory for that name."""
    handles = handles or {}
    unknown = set(handles) - set(SERVICE_NAMES)
    if unknown:
        raise ValueError(f"unknown service handle(s): {', '.join(sorted(unknown))}")
    built: dict[str, Any] = {}
    for name in SERVICE_NAMES:
        if name in handles:
            built[name] = functools.partial(_given, handles[name])
        elif name in factories:
            built[name] = functools.partial(factories[name], service_options(config, name))
        else:
            built[name] = functools.partial(_given, None)
    lazy = {f"build_{name}": built.pop(name) for name in LAZY_SERVICES}
    return ServiceHandles(**{name: make() for name, make in built.items()}, **lazy)


def _given(handle: Any) -> Any:
    return handle


def default_factories(
    *, llm: ModelLister, store: Any, env: Mapping[str, str] | None = None
) -> dict[str, Factory]:
    """Factories for the handles that need no runtime back-reference."""
    environment = dict(os.environ if env is None else env)

    def tool_factory(options: Mapping[str, Any]) -> ToolRegistry:
        from smith_tui.tools.builtin import builtin_tools

        return ToolRegistry(roles.check_tool, builtin_tools())

    return {
        "role": RoleService,
        "model": lambda options: ModelService(options, llm, environment),
        "tool": tool_factory,
        "persistence": lambda options: Persistence(store),
    }
