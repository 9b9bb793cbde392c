"""The configuration schema as pydantic models; field descriptions document each setting.

``SmithConfig`` validates the merged configuration (all layers). A field whose rule is
"or absent" accepts JSON ``null`` as absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, field_validator

from smith_tui.config.defaults import DEFAULT_ACTIVE_ROLE, DEFAULT_TRANSPORT_TIMEOUTS
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
from smith_tui.config.section import Section
from smith_tui.config.services import AbsoluteFolder, Services

Role = Literal["direct", "orchestrator"]
SandboxMode = Literal["off", "auto", "on"]
TRANSPORT_TIMEOUT_FIELDS = tuple(DEFAULT_TRANSPORT_TIMEOUTS)


class LLMConfig(Section):
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
        "LLM_API_KEY",
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
        None, description="Seconds for a whole non-streaming request (absent: 600)."
    )
    connect_timeout: PositiveNumber | None = Field(
        None, description="Seconds to establish the connection (absent: 10)."
    )
    send_timeout: PositiveNumber | None = Field(
        None, description="Seconds to send the request body (absent: 30)."
    )
    recv_timeout: PositiveNumber | None = Field(
        None, description="Seconds allowed between received bytes (absent: 120)."
    )
    stream_stall_timeout: PositiveNumber | None = Field(
        None,
        description=(
            "Seconds without any stream event, heartbeat comments included, before the "
            "stream counts as stalled (absent: 120)."
        ),
    )

    def transport_timeouts(self) -> dict[str, float]:
        """Every transport timeout in seconds, with the client defaults filled in."""
        return {
            name: value if (value := getattr(self, name)) is not None else default
            for name, default in DEFAULT_TRANSPORT_TIMEOUTS.items()
        }


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
        80,
        gt=0,
        le=100,
        description="Drop the oldest rounds once the estimate exceeds this % of the context window.",
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


class SmithConfig(Section):
    """The whole configuration of smith (the merged, validated result of every layer)."""

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
        None, description="Most tool calls per turn (absent: unlimited)."
    )
    models: dict[NonEmptyStr, NonEmptyStr] = Field(
        default_factory=dict,
        description=(
            "Model ids by key: a role name (direct, orchestrator, worker, explorer) or 'default'."
        ),
    )
    services: Services = Field(default_factory=Services, description="Per-service options.")
    llm_config: LLMConfig = Field(
        default_factory=LLMConfig, description="LLM server, transport timeouts and retries."
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

    @field_validator(
        "models", "services", "context_management", "sandbox", "checkpoints", mode="before"
    )
    @classmethod
    def _null_table_means_default(cls, value: Any) -> Any:
        return {} if value is None else value

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
