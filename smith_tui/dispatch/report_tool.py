"""The terminal ``report`` tool a delegated child role must finish with."""

from __future__ import annotations

import json
from typing import Any

from smith_tui.dispatch.report_schema import REPORT_INPUT_SCHEMA, ReportError, normalize_report
from smith_tui.tools.spec import ToolContext, ToolError, ToolOutput, ToolSpec


async def _handle(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    try:
        report = normalize_report(args, ctx.role)
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
    input_schema=REPORT_INPUT_SCHEMA,
    handler=_handle,
    is_terminal=True,
)
