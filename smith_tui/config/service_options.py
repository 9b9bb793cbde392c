"""Per-service option tables under ``services`` (docs/DESIGN.md §5.1).

The service names are the fixed set the runtime composes. Services without modelled
options take a free-form table; the known options below are typed and documented.
"""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, field_validator, model_validator

from smith_tui.config.fields import EnvVarName, HttpUrl, NonEmptyStr, PositiveInt, PositiveNumber
from smith_tui.config.section import Section

FreeForm = dict[str, Any]


class KeyBindings(Section):
    """Key bindings of the full-screen app (Textual key names, e.g. ``ctrl+c``, ``alt+h``)."""

    cancel: NonEmptyStr = Field(
        "ctrl+c",
        description="Cancel the active turn (copies the selection when idle).",
    )
    pager: NonEmptyStr = Field("alt+h", description="Open the transcript pager.")
    inspect: NonEmptyStr = Field(
        "alt+i", description="Open the inspect view to edit or delete persisted messages."
    )
    palette: NonEmptyStr = Field("ctrl+p", description="Open the command palette.")
    permission_mode: NonEmptyStr = Field(
        "f4", description="Switch to the next permission mode (see permissions.mode)."
    )
    tool_results: NonEmptyStr = Field(
        "alt+e", description="Expand or collapse every tool call's result in the transcript."
    )
    dispatch_tree: NonEmptyStr = Field(
        "alt+d", description="Focus the dispatch tree (enter on a job opens its transcript)."
    )
    pause: NonEmptyStr = Field(
        "alt+p", description="Pause the running turn at its next round boundary, or resume it."
    )
    step: NonEmptyStr = Field(
        "alt+s", description="Let the paused turn run one more round, then pause again."
    )
    external_editor: NonEmptyStr = Field(
        "ctrl+g",
        description="Edit the prompt (or the /config value being edited) in $VISUAL or $EDITOR.",
    )
    paste_image: NonEmptyStr = Field(
        "alt+v",
        description="Attach the desktop clipboard's image to the prompt (wl-paste, xclip…).",
    )
    quit: NonEmptyStr = Field("ctrl+q", description="Quit smith.")


class UIOptions(Section):
    """Options of the user interface service."""

    keys: KeyBindings = Field(default_factory=KeyBindings, description="Key bindings.")
    vim: bool = Field(
        False,
        description=(
            "Vim keys in the prompt: it starts in insert mode, escape switches to normal mode "
            "(motions, operators, counts; the prompt's border says NORMAL) and i, a, o… back; "
            "enter sends in either mode. Takes effect at the next key."
        ),
    )
    kitty_graphics: Literal["auto", "on", "off"] = Field(
        "auto",
        description=(
            "Draw the Matrix rain with the Kitty graphics protocol: auto detects the "
            "terminal (never inside tmux/screen), on forces it, off uses the cell-based rain."
        ),
    )
    gc_policy: bool = Field(
        True,
        description=(
            "Schedule Python's garbage collection around input (freeze the long-lived heap, "
            "collect fully when the keyboard is quiet) so collections do not pause typing; "
            "false leaves Python's default collector as it is."
        ),
    )
    stream_refresh_s: float = Field(
        0.1,
        ge=0.02,
        le=2.0,
        description=(
            "Seconds between screen updates while an answer streams in: longer uses less "
            "CPU and shows the text in bigger steps (0.25 about two thirds of the CPU of 0.1)."
        ),
    )


class DispatchOptions(Section):
    """Options of the dispatch service (sub-agent delegation)."""

    max_parallel: PositiveInt = Field(
        3, description="Most child agents (workers, explorers) running at the same time."
    )
    child_step_budget: PositiveInt = Field(
        40, description="Tool calls one child agent may make before it is stopped."
    )
    child_timeout_s: PositiveNumber = Field(
        600,
        description=(
            "Seconds one child agent may run; past it the child is cancelled and reports 'blocked'."
        ),
    )
    worktree: bool = Field(
        False,
        description=(
            "Run each dispatched worker in its own git worktree (a branch from HEAD plus the "
            "uncommitted changes), merged or dropped afterwards; needs a git repository."
        ),
    )


DEFAULT_OUTPUT_CHARS = 30_000
"""What an absent ``max_output_chars`` of bash, web_search and most other tools stands for."""


def _output_chars_field(absent: str = f"{DEFAULT_OUTPUT_CHARS}") -> Any:
    return Field(
        None,
        description=f"Most characters of the tool's result shown to the model (absent: {absent}).",
    )


class WebSearchOptions(Section):
    """Options of the ``web_search`` tool (Linkup backend)."""

    api_key_env: EnvVarName = Field(
        "LINKUP_API_KEY",
        description="Environment variable holding the Linkup API key (the key never goes here).",
    )
    endpoint: HttpUrl = Field(
        "https://api.linkup.so/v1/search", description="Linkup search endpoint URL."
    )
    depth: Literal["standard", "deep"] = Field(
        "standard", description="Search depth: 'standard' is fast, 'deep' searches iteratively."
    )
    output_type: Literal["searchResults", "sourcedAnswer"] = Field(
        "searchResults",
        description="'searchResults' returns ranked sources; 'sourcedAnswer' an answer with sources.",
    )
    max_results: PositiveInt = Field(5, description="Most results returned per search.")
    timeout: PositiveNumber = Field(30.0, description="Seconds before a search request fails.")
    max_output_chars: PositiveInt | None = _output_chars_field()


class WebFetchOptions(Section):
    """Options of the ``web_fetch`` tool."""

    timeout: PositiveNumber = Field(
        30.0, description="Seconds each network step may take (the whole fetch gets twice that)."
    )
    max_bytes: PositiveInt = Field(
        2 * 1024 * 1024, description="Most bytes of a response read; the rest is cut (noted)."
    )
    max_output_chars: PositiveInt = Field(
        30_000, description="Most characters of the result shown to the model."
    )
    allow_private: bool = Field(
        False,
        description=(
            "Also fetch from loopback, private (RFC 1918, fc00::/7), link-local and other "
            "non-public addresses, on every redirect too. Off: only public internet addresses."
        ),
    )


class BashOptions(Section):
    """Options of the ``bash`` tool."""

    default_timeout_s: PositiveNumber = Field(
        120.0, description="Seconds a command may run when the model names no timeout."
    )
    max_timeout_s: PositiveNumber = Field(
        600.0, description="Largest timeout, in seconds, the model may ask for."
    )
    max_output_chars: PositiveInt | None = _output_chars_field()

    @model_validator(mode="after")
    def _default_within_max(self) -> BashOptions:
        if self.default_timeout_s > self.max_timeout_s:
            raise ValueError("default_timeout_s must not exceed max_timeout_s")
        return self


def _absolute_folder(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain a NUL character (\\0)")
    if not os.path.isabs(os.path.expanduser(value)):
        raise ValueError("must be an absolute folder path, e.g. /home/me/shared or ~/shared")
    return value


AbsoluteFolder = Annotated[NonEmptyStr, AfterValidator(_absolute_folder)]
"""An absolute folder path (``~`` allowed)."""


class ToolTable(Section):
    """The table of a tool without options of its own above (``read``, ``edit``, ``code_grep``,
    ``git``, ``note``, ``mcp``…): its common settings typed, any other key kept as written."""

    model_config = ConfigDict(extra="allow")

    max_output_chars: PositiveInt | None = _output_chars_field(
        "the tool's own budget: 30000; code_* tools 12000, git 16000"
    )
    max_file_bytes: PositiveInt | None = Field(
        None,
        description=(
            "read and edit (skill and @path attachments follow read's): most bytes loaded "
            "from one file (absent: 8 MiB)."
        ),
    )


NO_TOOL_TABLE = ToolTable()
"""The table of a tool the configuration does not mention."""


class ToolOptions(Section):
    """Options of the tool service. Every other tool may take a table under its name
    (:class:`ToolTable`), validated with the rest of the configuration."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, ToolTable] = Field(init=False)

    extra_roots: list[AbsoluteFolder] = Field(
        default_factory=list,
        description=(
            "Folders outside the project root that read, edit and write may also use "
            "(absolute paths; symlinks are resolved before the check). Empty: the project "
            "root only."
        ),
    )

    web_search: WebSearchOptions = Field(
        default_factory=WebSearchOptions, description="The web_search tool."
    )
    web_fetch: WebFetchOptions = Field(
        default_factory=WebFetchOptions, description="The web_fetch tool."
    )
    bash: BashOptions = Field(default_factory=BashOptions, description="The bash tool.")

    def table(self, tool: str) -> ToolTable:
        """``services.tool.<tool>`` of a tool without its own options class (empty when absent)."""
        found = (self.model_extra or {}).get(tool)
        return found if isinstance(found, ToolTable) else NO_TOOL_TABLE

    def max_output_chars(self, tool: str) -> int | None:
        """``services.tool.<tool>.max_output_chars`` (``None``: the tool's own budget)."""
        own: dict[str, int | None] = {
            "bash": self.bash.max_output_chars,
            "web_search": self.web_search.max_output_chars,
            "web_fetch": self.web_fetch.max_output_chars,
        }
        return own[tool] if tool in own else self.table(tool).max_output_chars


class ObserveOptions(Section):
    """Options of the observation log (debug traces of turns)."""

    retention_days: PositiveInt = Field(14, description="Days observation records are kept.")


class Services(Section):
    """Per-service option tables, keyed by service name."""

    role: FreeForm = Field(default_factory=dict, description="Options of the role service.")
    model: FreeForm = Field(default_factory=dict, description="Options of the model service.")
    tool: ToolOptions = Field(default_factory=ToolOptions, description="Options of the tools.")
    dispatch: DispatchOptions = Field(
        default_factory=DispatchOptions, description="Options of sub-agent dispatch."
    )
    conversation: FreeForm = Field(
        default_factory=dict, description="Options of the conversation service."
    )
    persistence: FreeForm = Field(
        default_factory=dict, description="Options of the persistence service."
    )
    config: FreeForm = Field(default_factory=dict, description="Options of the config service.")
    ui: UIOptions = Field(default_factory=UIOptions, description="Options of the user interface.")
    prompt: FreeForm = Field(default_factory=dict, description="Options of the prompt builder.")
    command: FreeForm = Field(
        default_factory=dict, description="Options of the slash-command service."
    )
    observe: ObserveOptions = Field(
        default_factory=ObserveOptions, description="Options of the observation log."
    )

    @field_validator("*", mode="before")
    @classmethod
    def _null_means_default(cls, value: Any) -> Any:
        return {} if value is None else value
