"""The configuration schema as pydantic models; field descriptions document each setting.

``SmithConfig`` validates the merged configuration (all layers). A field whose rule is
"or absent" accepts JSON ``null`` as absent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal, cast

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from smith_tui.config.defaults import (
    DEFAULT_ACTIVE_ROLE,
    DEFAULT_API_KEY_ENV,
    DEFAULT_AUTO_RESUME,
    DEFAULT_ROUTING_AUTO,
    DEFAULT_TOOL_STEP_BUDGET,
    DEFAULT_TRANSPORT_TIMEOUTS,
    TransportTimeouts,
)
from smith_tui.config.fields import (
    BackoffList,
    EnvVarName,
    HttpUrl,
    NonEmptyStr,
    NonNegativeInt,
    PositiveInt,
    PositiveNumber,
    SafeRelativePath,
)
from smith_tui.config.frozen import FrozenDict, freeze
from smith_tui.config.hooks import HooksTable, claude_entries
from smith_tui.config.modes import SandboxMode
from smith_tui.config.notifications import NotificationsConfig
from smith_tui.config.permission_settings import PermissionsConfig
from smith_tui.config.section import Section
from smith_tui.config.service_options import AbsoluteFolder, Services

Role = Literal["direct", "orchestrator"]
AnyRole = Literal["direct", "orchestrator", "worker", "explorer"]
TRANSPORT_TIMEOUT_FIELDS = tuple(DEFAULT_TRANSPORT_TIMEOUTS)


def _absent_s(timeout: str) -> str:
    return f"{DEFAULT_TRANSPORT_TIMEOUTS[timeout]:g}"


class LLMSection(Section):
    """How to reach the Chat-Completions server, and transport retry policy."""

    api_url: HttpUrl | None = Field(
        None,
        description=(
            "Base URL of any OpenAI-compatible Chat-Completions server, e.g. "
            "http://127.0.0.1:8080/v1 for a local llama.cpp server. Absent: no server "
            "configured. Environment: SMITH_API_URL."
        ),
    )
    api_key_env: EnvVarName | None = Field(
        DEFAULT_API_KEY_ENV,
        description=(
            "Name of the environment variable holding the API key. The key itself is "
            "never stored in any config file or override."
        ),
    )
    retry_max_retries: NonNegativeInt = Field(
        2, description="Transport retries after a failed LLM request (0 disables)."
    )
    retry_backoff_ms: BackoffList = Field(
        [2000, 8000], description="Milliseconds to wait before each successive transport retry."
    )
    stream_retry_after_output: bool = Field(
        False,
        description=(
            "Retry a failed stream even after output reached the screen "
            "(the partial output is discarded first)."
        ),
    )
    timeout: PositiveNumber | None = Field(
        None,
        description=f"Seconds for a whole non-streaming request (absent: {_absent_s('timeout')}).",
    )
    connect_timeout: PositiveNumber | None = Field(
        None,
        description=f"Seconds to establish the connection (absent: {_absent_s('connect_timeout')}).",
    )
    send_timeout: PositiveNumber | None = Field(
        None, description=f"Seconds to send the request body (absent: {_absent_s('send_timeout')})."
    )
    recv_timeout: PositiveNumber | None = Field(
        None,
        description=f"Seconds allowed between received bytes (absent: {_absent_s('recv_timeout')}).",
    )
    stream_stall_timeout: PositiveNumber | None = Field(
        None,
        description=(
            "Seconds without any stream event, heartbeat comments included, before the "
            f"stream counts as stalled (absent: {_absent_s('stream_stall_timeout')})."
        ),
    )

    def transport_timeouts(self) -> TransportTimeouts:
        """Every transport timeout in seconds, with the client defaults filled in."""
        timeouts = {
            name: value if (value := getattr(self, name)) is not None else default
            for name, default in DEFAULT_TRANSPORT_TIMEOUTS.items()
        }
        return cast(TransportTimeouts, timeouts)  # the defaults name exactly its keys


class ContextManagement(Section):
    """How the model-bound transcript is kept within the context window."""

    enabled: bool = Field(
        True, description="Elide old tool output and drop old rounds under token pressure."
    )
    tool_output_keep_rounds: NonNegativeInt = Field(
        7, description="Most recent tool-call rounds whose results are always kept verbatim."
    )
    tool_output_elide_over_chars: NonNegativeInt = Field(
        1024, description="Older tool results longer than this many characters are elided."
    )
    trim_threshold_pct: float = Field(
        90,
        gt=0,
        le=100,
        description=(
            "Drop the oldest rounds once the request estimate (system prompt, tools and output "
            "reserve included) exceeds this % of the context window."
        ),
    )
    compact_threshold_pct: float = Field(
        85,
        gt=0,
        le=100,
        description=(
            "Summarise the older conversation (compaction) once the request estimate exceeds "
            "this % of the context window."
        ),
    )
    output_reserve_pct: float = Field(
        10,
        ge=0,
        lt=100,
        description=(
            "Share of the context window kept free for the answer when the model's catalog "
            "entry gives no max output tokens."
        ),
    )


class BudgetConfig(Section):
    """Spending limits: tokens and dollars per turn and per conversation (absent: no limit).

    A dispatched sub-agent's spend counts toward its parent's turn. At 80% of a limit the
    front end shows a warning; at the limit the turn stops before its next request.
    """

    turn_tokens: PositiveInt | None = Field(
        None, description="Most tokens (input + output, sub-agents included) one turn may use."
    )
    conversation_tokens: PositiveInt | None = Field(
        None, description="Most tokens a conversation may use over all its turns."
    )
    turn_cost_usd: PositiveNumber | None = Field(
        None,
        description=(
            "Most dollars one turn may spend: the provider's reported cost, else the catalog's "
            "prices (usage with neither counts as free)."
        ),
    )
    conversation_cost_usd: PositiveNumber | None = Field(
        None, description="Most dollars a conversation may spend over all its turns."
    )


class SandboxConfig(Section):
    """How ``bash`` commands are confined (bubblewrap, Linux only)."""

    mode: SandboxMode = Field(
        "auto",
        description=(
            "'auto': run bash commands under bubblewrap (bwrap) when it is installed and "
            "works, else unsandboxed with a one-time notice; 'on': require it (bash calls "
            "fail without it); 'off': never sandbox."
        ),
    )
    network: bool = Field(
        False, description="Let sandboxed commands use the network (false: no network at all)."
    )
    writable: list[AbsoluteFolder] = Field(
        default_factory=list,
        description=(
            "Folders sandboxed commands may write besides the project folder and the temp "
            "folder (absolute paths, ~ allowed; missing ones are skipped)."
        ),
    )
    git_writable: bool = Field(
        False,
        description=(
            "Let sandboxed commands write the project's .git folder (git add, commit); "
            "false keeps it read-only."
        ),
    )


class CheckpointsConfig(Section):
    """Checkpoints of the project's files before each turn changes them (``/undo``)."""

    enabled: bool = Field(
        True,
        description=(
            "Record the project's files (those git does not ignore) in a private shadow "
            "repository under the data folder before a turn first changes them."
        ),
    )
    max_bytes: PositiveInt = Field(
        256 * 1024 * 1024,
        description=(
            "Most bytes of new or changed files one checkpoint may copy; a bigger change "
            "skips the checkpoint with a notice."
        ),
    )


class RoutingConfig(Section):
    """Who handles a message the user sends to the direct role (Smith)."""

    auto: bool = Field(
        DEFAULT_ROUTING_AUTO,
        description=(
            "Switch to the orchestrator (Tank) for a request that looks like many steps over "
            "several parts of the code, instead of only hinting /role orchestrator."
        ),
    )


_MCP_SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*(_[A-Za-z0-9-]+)*")


def _mcp_server_name(value: str) -> str:
    if not _MCP_SERVER_NAME.fullmatch(value) or len(value) > 32:
        raise ValueError(
            "MCP server names use letters, digits, '-' and single '_' (at most 32 "
            f"characters): they become part of tool names (mcp__NAME__tool), got {value!r}"
        )
    return value


McpServerName = Annotated[str, AfterValidator(_mcp_server_name)]
"""The name of an MCP server in ``mcp_servers``."""

MCP_DEFAULT_ROLES: tuple[AnyRole, ...] = ("direct", "worker", "explorer")
"""The roles an MCP server's tools are offered to unless its ``roles`` says otherwise."""


class McpServerConfig(Section):
    """One MCP server: a program started over stdio (``command``) or a streamable HTTP ``url``."""

    command: NonEmptyStr | None = Field(
        None, description="Program that runs the server over stdio (found on PATH)."
    )
    args: list[str] = Field(default_factory=list, description="Arguments of the command.")
    env: dict[EnvVarName, str] = Field(
        default_factory=dict,
        description=(
            "Variables added to the server's environment (which is ours without the API key "
            "variables)."
        ),
    )
    cwd: str | None = Field(
        None, description="Folder the command runs in, relative to the project root (absent: it)."
    )
    url: HttpUrl | None = Field(None, description="Address of a streamable HTTP server.")
    headers: dict[NonEmptyStr, str] = Field(
        default_factory=dict, description="HTTP headers sent to a url server (not secrets)."
    )
    headers_env: dict[NonEmptyStr, EnvVarName] = Field(
        default_factory=dict,
        description=(
            "HTTP headers whose values are read from environment variables (header -> "
            'variable name), for tokens: {"Authorization": "MY_MCP_TOKEN"}.'
        ),
    )
    enabled: bool = Field(True, description="Start this server with the session.")
    roles: list[AnyRole] = Field(
        default_factory=lambda: list(MCP_DEFAULT_ROLES),
        description="Roles offered the server's tools (default: direct, worker, explorer).",
    )
    timeout_s: PositiveNumber = Field(
        30, description="Seconds allowed for starting the server and for each tool call."
    )

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                "give either command (a program started over stdio) or url (a streamable "
                "HTTP server)" + (", not both" if self.command is not None else "")
            )
        if self.url is not None and (self.args or self.env or self.cwd is not None):
            raise ValueError("args, env and cwd are for command servers; a url server has none")
        if self.command is not None and (self.headers or self.headers_env):
            raise ValueError("headers are for url servers; a command server has none")
        return self


class SmithConfig(Section):
    """The whole configuration of smith (the merged, validated result of every layer)."""

    model_config = ConfigDict(defer_build=True)

    default_model: NonEmptyStr | None = Field(
        None, description="Model id used when no request, conversation or role binding names one."
    )
    index_file: SafeRelativePath = Field(
        "INDEX.md",
        description="File, relative to the repository root, included in the system prompt.",
    )
    active_role: Role | None = Field(
        None,
        description="Role of the user-facing agent: 'direct' or 'orchestrator' (absent: direct).",
    )
    tool_step_budget: PositiveInt | None = Field(
        None,
        description=f"Most tool calls per top-level turn (absent: {DEFAULT_TOOL_STEP_BUDGET}).",
    )
    auto_resume: bool = Field(
        DEFAULT_AUTO_RESUME,
        description=(
            "Plain `smith` reopens the project's last conversation (a line says so; /new "
            "starts fresh); false starts a new conversation each time."
        ),
    )
    budget: BudgetConfig = Field(
        default_factory=BudgetConfig,
        description="Token and cost limits per turn and per conversation.",
    )
    models: dict[NonEmptyStr, NonEmptyStr] = Field(
        default_factory=dict,
        description=(
            "Model ids by key: a role name (direct, orchestrator, worker, explorer) or 'default'."
        ),
    )
    services: Services = Field(default_factory=Services, description="Per-service options.")
    llm_config: LLMSection = Field(
        default_factory=LLMSection, description="LLM server, transport timeouts and retries."
    )
    empty_response_retry_max_retries: NonNegativeInt = Field(
        2, description="Retries when the model answers with neither text nor tool calls."
    )
    empty_response_retry_backoff_ms: BackoffList = Field(
        [500, 1000], description="Milliseconds to wait before each successive empty-response retry."
    )
    context_management: ContextManagement = Field(
        default_factory=ContextManagement, description="Context-window management."
    )
    sandbox: SandboxConfig = Field(
        default_factory=SandboxConfig, description="The sandbox bash commands run in."
    )
    checkpoints: CheckpointsConfig = Field(
        default_factory=CheckpointsConfig, description="Checkpoints of the project's files."
    )
    permissions: PermissionsConfig = Field(
        default_factory=PermissionsConfig, description="Which tool calls ask first."
    )
    routing: RoutingConfig = Field(
        default_factory=RoutingConfig, description="Who handles a message (hint or switch)."
    )
    notifications: NotificationsConfig = Field(
        default_factory=NotificationsConfig,
        description="Notifications when Smith needs you and the terminal is not in focus.",
    )
    mcp_servers: dict[McpServerName, McpServerConfig] = Field(
        default_factory=dict,
        description=(
            "MCP servers by name: {command, args, env, cwd} or {url, headers, headers_env}, "
            "with enabled, roles and timeout_s. Edit them in the config file; /mcp restart "
            "NAME applies a change."
        ),
    )
    hooks: HooksTable = Field(
        default_factory=dict,
        description=(
            "Programs run at points of a session, by event (SessionStart, UserPromptSubmit, "
            "PreToolUse, PermissionRequest, PostToolUse, Notification, Stop, SubagentStart, "
            "SubagentStop, PreCompact, SessionEnd): lists of {command, matcher, timeout_s}, "
            "with Claude Code's stdin/stdout contract (README, Hooks)."
        ),
    )

    @field_validator(
        "models",
        "services",
        "context_management",
        "budget",
        "sandbox",
        "checkpoints",
        "mcp_servers",
        "routing",
        "notifications",
        mode="before",
    )
    @classmethod
    def _null_table_means_default(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("hooks", mode="before")
    @classmethod
    def _hooks_in_claude_form(cls, value: Any) -> Any:
        return {} if value is None else claude_entries(value)

    @property
    def role(self) -> str:
        """``active_role``, or ``direct`` when it is absent."""
        return self.active_role or DEFAULT_ACTIVE_ROLE


def server_configured(config: Any) -> bool:
    """Whether an LLM server URL is configured (``llm_config.api_url`` present and non-empty).

    Accepts a ``SmithConfig``, a loaded ``EffectiveConfig`` (anything with ``.model``) or
    a plain/frozen mapping.
    """
    model = getattr(config, "model", config)
    if isinstance(model, SmithConfig):
        return bool(model.llm_config.api_url)
    if isinstance(model, Mapping):
        llm = model.get("llm_config")
        return isinstance(llm, Mapping) and bool(llm.get("api_url"))
    raise TypeError(f"server_configured() needs a config, not {type(config).__name__}")


BUILT_IN_PATHS: tuple[str, ...] = (
    "index_file",
    "llm_config.api_key_env",
    "llm_config.retry_max_retries",
    "llm_config.retry_backoff_ms",
    "llm_config.stream_retry_after_output",
    "empty_response_retry_max_retries",
    "empty_response_retry_backoff_ms",
    "context_management",
)
"""The settings of the built-in defaults layer: the table of docs/DESIGN.md §5.3 (a table
path stands for every setting in it)."""


def built_in_defaults(model: type[SmithConfig] = SmithConfig) -> FrozenDict:
    """The defaults layer: each of ``BUILT_IN_PATHS`` at its schema default, deep-frozen."""
    layer: dict[str, Any] = {}
    for path in BUILT_IN_PATHS:
        *tables, leaf = path.split(".")
        target = layer
        for name in tables:
            target = target.setdefault(name, {})
        target[leaf] = _field_default(model, path.split("."))
    frozen: FrozenDict = freeze(layer)
    return frozen


def _field_default(model: type[BaseModel], parts: list[str]) -> Any:
    """The ``Field`` default at ``parts`` as written (a table: each of its settings')."""
    info = model.model_fields[parts[0]]
    table = info.annotation
    if len(parts) > 1:
        assert isinstance(table, type) and issubclass(table, BaseModel), parts
        return _field_default(table, parts[1:])
    if isinstance(table, type) and issubclass(table, BaseModel):
        return {name: _field_default(table, [name]) for name in table.model_fields}
    return info.get_default(call_default_factory=True)


DEFAULTS: FrozenDict = built_in_defaults()
"""The loader's defaults layer (deep-frozen), derived from the schema's ``Field`` defaults;
``thaw(DEFAULTS)`` gives an editable copy."""
