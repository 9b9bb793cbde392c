"""``smith doctor`` and ``/doctor``: what the configured server does, and what Smith would
adjust for it.

The probing itself is :func:`smith_tui.llm.server_check.check_server`; this module turns its
findings into checks a person can act on (each names the setting or server flag to change),
printed as text or JSON, with exit code 0 when a turn can work and 1 when it cannot.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

from smith_tui.engine.model_select import DEFAULT_CONTEXT_WINDOW
from smith_tui.llm.server_check import PROBE_TOOL
from smith_tui.terminal_text import visible

if TYPE_CHECKING:
    from smith_tui.config.schema import SmithConfig
    from smith_tui.llm.client import LLMClient
    from smith_tui.llm.server_check import ServerCheck

Status = Literal["ok", "warn", "fail"]
_MARK = {"ok": "✓", "warn": "!", "fail": "✗"}


@dataclass(frozen=True)
class Check:
    """One finding: what was checked, how it went, what it means, what to change."""

    name: str
    status: Status
    text: str
    advice: str = ""


def _models(found: ServerCheck) -> Check:
    if found.models_error is not None:
        return Check(
            "models",
            "fail",
            f"GET /models failed: {found.models_error}",
            "check llm_config.api_url (it must be the server's OpenAI-compatible base, "
            "usually ending in /v1) and the API key variable (llm_config.api_key_env)",
        )
    ids = [m.id for m in found.models or []]
    if not ids:
        return Check(
            "models",
            "warn" if found.model else "fail",
            "the server lists no models",
            "name one: /config set default_model ID (or --model ID)",
        )
    listed = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    return Check("models", "ok", f"{len(ids)} listed ({listed})")


def _model(found: ServerCheck) -> Check:
    if found.model is None:
        return Check("model", "fail", "no model to ask", "set default_model, or pass --model ID")
    text = f"{found.model} ({found.model_source})"
    if found.models and found.descriptor is None:
        return Check(
            "model",
            "warn",
            f"{text} is not in the server's list",
            "pick one the server lists: /models in the app, or /config set default_model ID",
        )
    return Check("model", "ok", text)


def _context(found: ServerCheck) -> Check:
    descriptor = found.descriptor
    window = descriptor.context_window if descriptor is not None else None
    if window:
        return Check("context window", "ok", f"{window:,} tokens (from the server's catalog)")
    return Check(
        "context window",
        "warn",
        f"the catalog does not say; Smith assumes {DEFAULT_CONTEXT_WINDOW:,} tokens",
        "the context fill and compaction (context_management.*) are measured against that "
        "guess; llama.cpp reports its window when started with --ctx-size",
    )


def _tools_and_stream(found: ServerCheck) -> list[Check]:
    if found.tool_error is not None:
        return [
            Check(
                "tool calls",
                "fail",
                f"a request offering one tool failed: {found.tool_error}",
                "Smith's tools (read, edit, bash, dispatch) need function calling: use a model "
                "and server that support it (llama.cpp: --jinja; vLLM: "
                "--enable-auto-tool-choice with a --tool-call-parser)",
            )
        ]
    probe = found.tool_probe
    if probe is None:
        return []
    checks = [
        Check("streaming", "ok", f"{probe.chunks} chunks")
        if probe.streamed
        else Check(
            "streaming",
            "warn",
            "the stream came as one piece",
            "replies will appear all at once rather than as they are written",
        )
    ]
    if found.tool_call_works:
        checks.append(Check("tool calls", "ok", "the asked-for call came back, arguments intact"))
    elif probe.tool_calls:
        names = ", ".join(visible(name) for name in probe.tool_calls)
        if PROBE_TOOL not in probe.tool_calls:
            what = f"a call came back, but to another tool ({names})"
        elif None in probe.tool_arguments:
            what = "the call came back with arguments that are not JSON"
        else:
            what = "the call came back with other arguments than those asked for"
        checks.append(
            Check(
                "tool calls",
                "warn",
                what,
                "tool calls work; expect this model to misuse tools now and then",
            )
        )
    else:
        checks.append(
            Check(
                "tool calls",
                "fail",
                "no tool call came back when one was asked for",
                "Smith's tools need function calling: use a model and server that support it "
                "(llama.cpp: --jinja; vLLM: --enable-auto-tool-choice with a --tool-call-parser;"
                " Ollama: a model tagged 'tools')",
            )
        )
    if probe.usage_in_stream:
        every = " (in every chunk)" if probe.usage_chunks > 1 else ""
        checks.append(Check("usage", "ok", f"token usage reported in the stream{every}"))
    else:
        checks.append(
            Check(
                "usage",
                "warn",
                "no token usage in the stream (stream_options.include_usage was asked for)",
                "the usage pane, /usage, cost and token budgets (budget.*_tokens) will not "
                "count this server's replies",
            )
        )
    if probe.reasoning_fields:
        where = ", ".join(probe.reasoning_fields)
        checks.append(Check("reasoning", "ok", f"reasoning arrives in {where}"))
    else:
        checks.append(Check("reasoning", "ok", "no reasoning sent (fine for a model without it)"))
    return checks


def _limit(found: ServerCheck) -> Check | None:
    if found.limit_error is not None:
        return Check("max_tokens", "warn", f"the limit request failed: {found.limit_error}")
    honoured = found.max_tokens_honoured
    if honoured is None:
        return None
    if honoured:
        return Check("max_tokens", "ok", "honoured (the reply stopped at the limit)")
    return Check(
        "max_tokens",
        "warn",
        "ignored: the reply ran past the limit",
        "replies can run past the room Smith keeps for output "
        "(context_management.output_reserve_pct); raise it for this server",
    )


def checks_of(found: ServerCheck) -> list[Check]:
    """The findings, in the order they are shown."""
    checks = [_models(found), _model(found)]
    if found.model is not None:
        checks.append(_context(found))
        checks.extend(_tools_and_stream(found))
        limit = _limit(found)
        if limit is not None:
            checks.append(limit)
    return [Check(c.name, c.status, visible(c.text), c.advice) for c in checks]


def verdict(checks: list[Check]) -> int:
    """Exit code: 1 when a check failed (a turn cannot work), else 0."""
    return 1 if any(check.status == "fail" for check in checks) else 0


def render_text(found: ServerCheck, checks: list[Check]) -> str:
    """The report as lines for a terminal."""
    lines = [f"smith doctor · {visible(found.url)}"]
    width = max(len(check.name) for check in checks)
    for check in checks:
        lines.append(f"{_MARK[check.status]} {check.name.ljust(width)}  {check.text}")
        if check.advice and check.status != "ok":
            lines.append(f"  {' ' * width}  → {check.advice}")
    bad = sum(check.status == "fail" for check in checks)
    warn = sum(check.status == "warn" for check in checks)
    if bad:
        lines.append(f"{bad} problem{'s' if bad != 1 else ''} stop Smith's turns on this server.")
    elif warn:
        lines.append(
            f"Smith works with this server; {warn} thing{'s' if warn != 1 else ''} to know."
        )
    else:
        lines.append("Smith works with this server.")
    return "\n".join(lines) + "\n"


def render_json(found: ServerCheck, checks: list[Check]) -> str:
    """The report as one JSON object (``--output-format json``)."""
    probes: dict[str, Any] = {}
    for name, probe in (("tool", found.tool_probe), ("limit", found.limit_probe)):
        if probe is not None:
            probes[name] = {**asdict(probe), "streamed": probe.streamed}
    body = {
        "url": found.url,
        "model": found.model,
        "model_source": found.model_source,
        "ok": verdict(checks) == 0,
        "checks": [asdict(check) for check in checks],
        "probes": probes,
        "seconds": {k: round(v, 3) for k, v in found.seconds.items()},
    }
    return json.dumps(body, indent=2, ensure_ascii=False, default=str) + "\n"


def configured_models(config: SmithConfig) -> list[str]:
    """The models the config names, the default first."""
    names = [config.default_model] if config.default_model else []
    names += [m for m in config.models.values() if m not in names]
    return names


async def diagnose(config: SmithConfig, client: LLMClient, model: str | None) -> ServerCheck:
    """Probe the configured server with the client every turn uses."""
    from smith_tui.llm.server_check import check_server

    url = str(config.llm_config.api_url)
    return await check_server(client, url, model=model, configured=configured_models(config))


def summary(checks: list[Check]) -> str:
    """One line for the welcome screen: each probe's mark."""
    wanted = ("streaming", "tool calls", "usage", "max_tokens")
    parts = [f"{check.name} {_MARK[check.status]}" for check in checks if check.name in wanted]
    failed = [check for check in checks if check.status == "fail"]
    tail = f" — {failed[0].text}" if failed else ""
    return " · ".join(parts) + tail + " (smith doctor for details)"
