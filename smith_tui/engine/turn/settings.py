"""The settings a turn reads (:class:`TurnSettings`) and the repeat limits."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from smith_tui.config import DEFAULT_TOOL_STEP_BUDGET, SmithConfig
from smith_tui.config.service_options import DispatchOptions
from smith_tui.engine.retry import RetryPolicy
from smith_tui.engine.window import WindowSettings

#: Stop a dispatched child turn when the same call (name and arguments) comes this many times
#: in a row (docs/DESIGN.md §5.7).
CHILD_REPEAT_LIMIT = 3
#: Stop a top-level turn when the same call (name and arguments) comes this many times in a row.
TOP_REPEAT_LIMIT = 5


class TurnSettings(BaseModel):
    """The settings a turn reads, taken once from the validated config when it begins.

    Frozen and typed; every default is the schema's (``TurnSettings()`` has no step
    budget and no repeat guard, for a loop run on its own).
    """

    model_config = ConfigDict(frozen=True)

    window: WindowSettings = Field(default_factory=WindowSettings)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    step_budget: int | None = None
    repeat_limit: int | None = None
    """Stop when the same tool call (name and arguments) repeats this many times in a row."""
    max_parallel: int = Field(default_factory=lambda: DispatchOptions().max_parallel)
    """How many calls of one parallel batch run at once (``services.dispatch.max_parallel``)."""

    @classmethod
    def from_config(cls, config: SmithConfig, *, child: bool = False) -> TurnSettings:
        """The settings of a top-level turn, or of a dispatched child's (``child``)."""
        dispatch = config.services.dispatch
        if child:
            budget = dispatch.child_step_budget
        else:
            budget = config.tool_step_budget or DEFAULT_TOOL_STEP_BUDGET
        return cls(
            window=WindowSettings.from_config(config),
            retry=RetryPolicy.from_config(config),
            step_budget=budget,
            repeat_limit=CHILD_REPEAT_LIMIT if child else TOP_REPEAT_LIMIT,
            max_parallel=dispatch.max_parallel,
        )
