"""One schema for the ``report`` tool and for dispatch results (seed: Result).

Coercion is liberal (a bare string ``findings`` becomes a one-element list,
missing role fields become empty lists) so a reasonable report succeeds on its
first call; validation keeps one hard rule: an explorer report that carries
findings must cite at least one piece of evidence.
"""

from __future__ import annotations

from typing import Any

STATUSES = ("ok", "partial", "blocked")
LIST_FIELDS = ("changes", "verification", "findings", "evidence", "limitations")
ROLE_FIELDS = {
    "worker": ("changes", "verification"),
    "explorer": ("findings", "evidence"),
}


class ReportError(ValueError):
    """A report that cannot be accepted; the message says what to fix."""


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [v for v in value if v not in (None, "")]
    if isinstance(value, str):
        return [value] if value.strip() else []
    return [value]


def coerce_report(args: dict[str, Any], role: str) -> dict[str, Any]:
    """Return ``args`` coerced into the report shape (no validation)."""
    report: dict[str, Any] = {
        "status": str(args.get("status") or "").strip().lower(),
        "summary": str(args.get("summary") or "").strip(),
    }
    for name in LIST_FIELDS:
        if name in args or name in ROLE_FIELDS.get(role, ()):
            report[name] = _as_list(args.get(name))
    for name in ("cancelled", "error", "usage"):
        if args.get(name) not in (None, ""):
            report[name] = args[name]
    return report


def validate_report(report: dict[str, Any], role: str) -> dict[str, Any]:
    """Check a coerced report; raise :class:`ReportError` naming the broken rule."""
    if report.get("status") not in STATUSES:
        raise ReportError(
            f"`status` must be one of {', '.join(STATUSES)}; got {report.get('status')!r}"
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
    """Coerce then validate: the single entry point for the tool and for results."""
    return validate_report(coerce_report(args, role), role)


REPORT_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {
            "type": "string",
            "enum": list(STATUSES),
            "description": "ok: task done; partial: some of it done; blocked: could not proceed.",
        },
        "summary": {
            "type": "string",
            "description": "What you did and what the parent needs to know, in a few sentences.",
        },
        "changes": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Worker: each file changed and how.",
        },
        "verification": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Worker: commands run to check the change, with their outcome.",
        },
        "findings": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Explorer: facts found (function names, paths, behaviours).",
        },
        "evidence": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Explorer: where each finding comes from (path:line, command, URL).",
        },
        "limitations": {
            "type": "array",
            "items": {"type": "string"},
            "description": "What was not done or not checked.",
        },
    },
    "required": ["status", "summary"],
}
