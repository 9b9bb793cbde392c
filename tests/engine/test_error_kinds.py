"""normalize() gives every error one of the documented kinds (docs/DESIGN.md §5.10)."""

from __future__ import annotations

import asyncio

from smith_tui.engine.errors import ERROR_KINDS, normalize
from smith_tui.llm import LLMError


def test_an_llm_error_keeps_its_kind_and_code() -> None:
    error = normalize(LLMError("http", "http_429", "HTTP 429: slow down", retryable=True))
    assert (error.kind, error.code, error.retryable) == ("http", "http_429", True)
    assert normalize(LLMError("provider", "stream_error", "boom")).kind == "provider"


def test_a_kind_outside_the_list_becomes_internal() -> None:
    assert normalize({"kind": "mystery", "code": "x", "message": "m"}).kind == "internal"
    assert normalize({"kind": ["not", "hashable"], "code": "x"}).kind == "internal"
    assert normalize({"kind": "policy", "code": "denied"}).kind == "policy"


def test_strings_and_cancellation_map_to_listed_kinds() -> None:
    assert normalize("it broke").kind == "internal"
    assert normalize(asyncio.CancelledError()).kind == "cancelled"
    assert normalize(ValueError("bad")).kind == "internal"
    assert {"transport", "tool", "budget_exhausted", "http", "provider"} <= ERROR_KINDS
