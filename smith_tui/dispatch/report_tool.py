"""The terminal ``report`` tool a delegated child role must finish with."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import ConfigDict, Field, WithJsonSchema, create_model

from smith_tui.dispatch.report_schema import (
    REPORT_INPUT_SCHEMA,
    REQUIRED,
    ReportError,
    normalize_report,
)
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec


class _LiberalArgs(ToolArgs):
    # Unknown keys are dropped, as coerce_report does.
    model_config = ConfigDict(extra="ignore")


def _report_field(name: str) -> Any:
    # Any shape is accepted here: coerce_report turns a bare string into a list, a
    # list into text, … (docs/DESIGN.md §5.7); the schema is the field table's.
    schema = REPORT_INPUT_SCHEMA["properties"][name]
    return (Annotated[Any, WithJsonSchema(schema)], Field(... if name in REQUIRED else None))


ReportArgs = create_model(
    "ReportArgs",
    __base__=_LiberalArgs,
    __doc__="Arguments of ``report``: the model-facing fields of the report schema.",
    **{name: _report_field(name) for name in REPORT_INPUT_SCHEMA["properties"]},
)


async def _handle(args: ToolArgs, ctx: ToolContext) -> ToolOutput:
    try:
        report = normalize_report(args.model_dump(exclude_unset=True), ctx.role)
    except ReportError as exc:
        raise ToolError(f"report rejected: {exc}; call report again with that fixed") from None
    return ToolOutput(
        content=json.dumps(report, sort_keys=True, ensure_ascii=False),
        metadata={"report": report},
    )


REPORT_TOOL = ToolSpec(
    name="report",
    description=(
        "Finish your delegated task: hand the parent agent a structured report. This ends "
        "your turn, so call it once, last, when the work is done or you are blocked. "
        "Workers fill changes and verification; explorers fill findings and evidence "
        "(every report with findings needs at least one evidence entry)."
    ),
    args=ReportArgs,
    handler=_handle,
    is_terminal=True,
)
