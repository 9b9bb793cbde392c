"""Turn the many usage shapes providers send into one :class:`Usage`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from smith_tui.llm.types import Usage


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _first_int(*values: Any) -> int | None:
    for value in values:
        number = _int(value)
        if number is not None:
            return number
    return None


def _details(raw: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    for key in keys:
        value = raw.get(key)
        if isinstance(value, Mapping):
            return value
    return {}


def normalize_usage(raw: Any) -> Usage | None:
    """Map ``prompt_tokens``/``input_tokens`` etc. onto :class:`Usage`.

    Understands OpenAI (``*_tokens_details``), DeepSeek
    (``prompt_cache_hit_tokens``), OpenRouter (``cost``), Responses-style
    (``input_tokens``/``output_tokens``) and llama.cpp shapes. Returns ``None``
    when ``raw`` holds no token counts at all.
    """
    if not isinstance(raw, Mapping):
        return None
    prompt_details = _details(raw, "prompt_tokens_details", "input_tokens_details")
    completion_details = _details(raw, "completion_tokens_details", "output_tokens_details")
    inp = _first_int(raw.get("prompt_tokens"), raw.get("input_tokens"))
    out = _first_int(raw.get("completion_tokens"), raw.get("output_tokens"))
    total = _first_int(raw.get("total_tokens"))
    if inp is None and out is None and total is None:
        return None
    inp = inp or 0
    out = out or 0
    if total is None:
        total = inp + out
    cost = raw.get("cost")
    return Usage(
        input_tokens=inp,
        output_tokens=out,
        total_tokens=total,
        reasoning_tokens=_first_int(
            completion_details.get("reasoning_tokens"), raw.get("reasoning_tokens")
        ),
        cached_tokens=_first_int(
            prompt_details.get("cached_tokens"),
            raw.get("prompt_cache_hit_tokens"),
            raw.get("cached_tokens"),
        ),
        cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    )
