"""The ``present_plan`` tool and the plan it presents (plan mode, README "Plan mode").

In ``plan`` permission mode the model researches with reading tools and ends its turn by
calling ``present_plan`` (a terminal tool) with a :class:`Plan`: a title, the steps, the
files it expects to touch and the risks. The engine shows it for approval; an approved plan
runs as a new turn. A plan is also read back from the Markdown :func:`render_plan` writes
(what the user edits in their editor) or from its JSON (``smith -p --plan-file``):
:func:`parse_plan` reads either, with an error that says what to fix.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, ValidationError

from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

MAX_TITLE = 200
MAX_ITEM = 2000
MAX_STEPS = 50
MAX_FILES = 100
MAX_RISKS = 30
MAX_PLAN_TEXT = 200_000
"""Largest plan text (Markdown or JSON) :func:`parse_plan` reads."""


def _line(limit: int) -> Any:
    def check(value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("must not be empty")
        if len(value) > limit:
            raise ValueError(f"is {len(value)} characters; the limit is {limit}")
        return value

    return AfterValidator(check)


def _path(value: str) -> str:
    value = value.strip().strip("`").strip()
    if not value:
        raise ValueError("must not be empty")
    if len(value) > 500 or "\n" in value or "\x00" in value:
        raise ValueError("must be one path of at most 500 characters")
    return value


def _some_steps(value: list[str]) -> list[str]:
    if not value:
        raise ValueError("must list at least one step")
    return value


class Plan(ToolArgs):
    """A plan: what ``present_plan`` takes, what is stored and approved."""

    title: Annotated[str, _line(MAX_TITLE)] = Field(description="What the plan achieves.")
    steps: Annotated[list[Annotated[str, _line(MAX_ITEM)]], AfterValidator(_some_steps)] = Field(
        max_length=MAX_STEPS, description="The steps, in order, one action each."
    )
    files: list[Annotated[str, AfterValidator(_path)]] = Field(
        default_factory=list,
        max_length=MAX_FILES,
        description="Project files the work is expected to change or create.",
    )
    risks: list[Annotated[str, _line(MAX_ITEM)]] = Field(
        default_factory=list,
        max_length=MAX_RISKS,
        description="What could go wrong or needs the user's attention.",
    )

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON-ready data."""
        return self.model_dump()


class PlanError(ValueError):
    """A plan text that cannot be read; the message says what to fix."""


def render_plan(plan: Plan) -> str:
    """The plan as Markdown: ``# title``, ``## Steps`` (numbered), ``## Files``, ``## Risks``."""
    lines = [f"# {plan.title}", "", "## Steps"]
    lines += [f"{n}. {_one_line(step)}" for n, step in enumerate(plan.steps, 1)]
    lines += ["", "## Files"]
    lines += [f"- {path}" for path in plan.files] or ["- (none named)"]
    lines += ["", "## Risks"]
    lines += [f"- {_one_line(risk)}" for risk in plan.risks] or ["- (none named)"]
    return "\n".join(lines) + "\n"


def _one_line(text: str) -> str:
    return " ".join(text.split())


_SECTIONS = {"steps": "steps", "files": "files", "risks": "risks"}
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
_NONE = "(none named)"


def parse_plan(text: str) -> Plan:
    """Read a plan from its JSON or from the Markdown :func:`render_plan` writes.

    Raises :class:`PlanError` naming what is wrong (no title, no steps, an unknown
    section, a field that does not validate).
    """
    if len(text) > MAX_PLAN_TEXT:
        raise PlanError(f"the plan is {len(text)} characters; the limit is {MAX_PLAN_TEXT}")
    stripped = text.strip()
    if not stripped:
        raise PlanError("the plan is empty: write a '# title' line and a '## Steps' list")
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError as exc:
            raise PlanError(f"the plan is not valid JSON: {exc}") from None
        if isinstance(data, dict) and isinstance(data.get("plan"), dict):
            data = data["plan"]  # what `smith -p --output-format json` prints
        return _validated(data)
    return _validated(_read_markdown(stripped))


def _read_markdown(text: str) -> dict[str, Any]:
    data: dict[str, Any] = {"steps": [], "files": [], "risks": []}
    section: str | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        if line.startswith("# ") and "title" not in data:
            data["title"] = line[2:].strip()
            section = None
            continue
        if line.startswith("## "):
            name = line[3:].strip().lower()
            if name not in _SECTIONS:
                raise PlanError(
                    f"line {number}: unknown section {line[3:].strip()!r}; the sections are "
                    "## Steps, ## Files and ## Risks"
                )
            section = _SECTIONS[name]
            continue
        item = _ITEM.match(line)
        if section is None:
            raise PlanError(
                f"line {number}: {_one_line(line)[:60]!r} is outside a section; put it under "
                "## Steps, ## Files or ## Risks (the first line is '# title')"
            )
        if item is not None:
            value = item.group(1).strip()
            if value != _NONE:
                data[section].append(value)
        elif data[section]:  # an item's next line: part of it
            data[section][-1] += " " + line.strip()
        else:
            raise PlanError(
                f"line {number}: write each entry of ## {section.title()} as a list item "
                "('- ...' or '1. ...')"
            )
    if "title" not in data:
        raise PlanError("the plan has no title: its first line is '# title'")
    return data


def _validated(data: Any) -> Plan:
    if not isinstance(data, dict):
        raise PlanError("the plan must be an object with title, steps, files and risks")
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors()[:5]:
            where = ".".join(str(part) for part in error["loc"]) or "plan"
            problems.append(f"{where}: {error['msg']}")
        raise PlanError("the plan is not valid: " + "; ".join(problems)) from None


async def handler(args: Plan, ctx: ToolContext) -> ToolOutput:
    """Hand the plan to the user: the turn ends here (a terminal tool)."""
    gate = ctx.services.permissions
    if gate is not None and gate.mode != "plan":
        raise ToolError("present_plan is only for plan mode; carry the work out instead")
    return ToolOutput(
        content=(
            "The plan is shown to the user, who approves, edits or rejects it; your turn "
            "ends here.\n\n" + render_plan(args)
        ),
        metadata={"plan": args.to_dict()},
    )


TOOL = ToolSpec(
    name="present_plan",
    description=(
        "Plan mode: finish by presenting your plan to the user for approval. Call it once, "
        "last, after researching with the reading tools. Give a title, the steps in order "
        "(one action each), the project files you expect to change or create, and the "
        "risks. Your turn ends with this call; nothing is changed until the user approves."
    ),
    args=Plan,
    handler=handler,
    is_terminal=True,
)
