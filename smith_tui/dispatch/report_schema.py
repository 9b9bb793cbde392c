"""One schema for the ``report`` tool and for dispatch results (docs/DESIGN.md §5.7).

:data:`FIELDS` is the single source: the tool's JSON schema
(:data:`REPORT_INPUT_SCHEMA`) is generated from it, and
:func:`normalize_report` coerces and validates against it, both for the
``report`` tool call a child makes and for the result its parent receives.

Coercion is liberal so a reasonable report succeeds on its first call: a bare
string becomes a one-element list, missing role fields become empty lists,
list items that are not text are written as compact JSON, ``status`` is
case-insensitive. Validation keeps three rules: ``status`` is one of
:data:`STATUSES`, ``summary`` is not empty, and an explorer report that
carries findings cites at least one piece of evidence.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from smith_tui.engine.roles import report_shape

STATUSES = ("ok", "partial", "blocked")

Kind = Literal["status", "text", "list", "flag", "object"]


@dataclass(frozen=True)
class Field:
    """One report field: its kind, which child roles own it, and what it means."""

    kind: Kind
    description: str
    roles: tuple[str, ...] = ()
    """Roles whose reports always carry this field (as an empty list when missing)."""
    model_facing: bool = True
    """Whether the ``report`` tool offers it to the model (else the engine fills it)."""


FIELDS: dict[str, Field] = {
    "status": Field(
        "status", "ok: the task is done; partial: some of it is done; blocked: could not proceed."
    ),
    "summary": Field("text", "What you did and what the parent needs to know, in a few sentences."),
    "changes": Field("list", "Worker: each file changed and how.", roles=("worker",)),
    "verification": Field(
        "list", "Worker: commands run to check the change, with their outcome.", roles=("worker",)
    ),
    "findings": Field(
        "list", "Explorer: facts found (names, paths, behaviours).", roles=("explorer",)
    ),
    "evidence": Field(
        "list",
        "Explorer: where the findings come from (path:line, a command you ran, a URL). "
        "Required when there are findings.",
        roles=("explorer",),
    ),
    "limitations": Field("list", "What was not done or not checked, and why."),
    "error": Field("text", "When blocked: the error or obstacle that stopped you."),
    "cancelled": Field("flag", "The job was cancelled before it finished.", model_facing=False),
    "usage": Field(
        "object", "Tokens the child used (filled in by the engine).", model_facing=False
    ),
}
REQUIRED = ("status", "summary")
LIST_FIELDS = tuple(name for name, f in FIELDS.items() if f.kind == "list")
ROLE_FIELDS: dict[str, tuple[str, ...]] = {
    role: tuple(name for name, f in FIELDS.items() if role in f.roles)
    for role in ("worker", "explorer")
}


class ReportError(ValueError):
    """A report that cannot be accepted; the message says what to fix."""


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list | tuple):
        return "\n".join(t for t in (_text(v) for v in value) if t)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list | tuple) else [value]
    return [t for t in (_text(v) for v in items) if t]


def _as_flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1")
    return bool(value)


def coerce_report(args: dict[str, Any], role: str) -> dict[str, Any]:
    """Return ``args`` coerced into the report shape (no validation; unknown keys dropped)."""
    if not isinstance(args, dict):
        raise ReportError(f"a report must be an object with status and summary, got {args!r:.80}")
    report: dict[str, Any] = {}
    for name, spec in FIELDS.items():
        present = args.get(name) not in (None, "")
        if spec.kind == "status":
            report[name] = _text(args.get(name)).lower()
        elif spec.kind == "list":
            if present or name in ROLE_FIELDS.get(role, ()):
                report[name] = _as_list(args.get(name))
        elif not present:
            if name == "summary":
                report[name] = ""
        elif spec.kind == "text":
            report[name] = _text(args[name])
        elif spec.kind == "flag":
            report[name] = _as_flag(args[name])
        elif isinstance(args[name], dict):
            report[name] = dict(args[name])
    return report


def validate_report(report: dict[str, Any], role: str) -> dict[str, Any]:
    """Check a coerced report; raise :class:`ReportError` naming the broken rule."""
    if report.get("status") not in STATUSES:
        got = report.get("status")
        raise ReportError(
            f"`status` must be one of {', '.join(STATUSES)}; "
            + (f"got {got!r}" if got else "it is missing")
        )
    if not report.get("summary"):
        raise ReportError("`summary` must be a non-empty string describing the outcome")
    if role == "explorer" and report.get("findings") and not report.get("evidence"):
        raise ReportError(
            "an explorer report with findings must include at least one `evidence` entry "
            "(a file path with line numbers, a command you ran, or a URL you read)"
        )
    return report


def normalize_report(args: dict[str, Any], role: str) -> dict[str, Any]:
    """Coerce then validate: the single entry point for the tool and for results.

    A sub-agent from an agent file reports as the built-in child it is shaped like.
    """
    shape = report_shape(role)
    return validate_report(coerce_report(args, shape), shape)


def _property(name: str, spec: Field) -> dict[str, Any]:
    if spec.kind == "status":
        return {"type": "string", "enum": list(STATUSES), "description": spec.description}
    if spec.kind == "list":
        return {"type": "array", "items": {"type": "string"}, "description": spec.description}
    if spec.kind == "flag":
        return {"type": "boolean", "description": spec.description}
    if spec.kind == "object":
        return {"type": "object", "description": spec.description}
    return {"type": "string", "description": spec.description}


REPORT_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        name: _property(name, spec) for name, spec in FIELDS.items() if spec.model_facing
    },
    "required": list(REQUIRED),
}
