"""What the slash commands read and change of the runtime (:class:`CommandHost`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from smith_tui.config import EffectiveConfig
from smith_tui.config.front_matter import MetaCache
from smith_tui.engine import events as ev
from smith_tui.engine.active_conversation import Conversations
from smith_tui.engine.compaction import CompactionRecord
from smith_tui.engine.model_select import ModelSelection
from smith_tui.engine.roles import RoleSpec
from smith_tui.engine.scope import TurnScope
from smith_tui.engine.services import ServiceHandles
from smith_tui.engine.usage_ledger import UsageTracker
from smith_tui.engine.user_setup import SetupCatalog
from smith_tui.store import Store

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

    services: ServiceHandles
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
