"""Model resolution: each of the eight steps winning, fallthrough, catalog limits, errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from smith_tui.engine.model_select import (
    DEFAULT_CONTEXT_WINDOW,
    ModelSelection,
    ModelSelectionError,
    discovery_settings,
    select_model,
)
from smith_tui.engine.roles import resolve_role
from smith_tui.llm.catalog import ModelDescriptor
from smith_tui.llm.client import LLMClient
from tests.support.llm_server import ScriptedLLMServer

WORKER = resolve_role("worker")

CATALOG = [
    ModelDescriptor(id="acme/small", name="small", context_window=8192, max_output_tokens=1024),
    ModelDescriptor(id="qwen/coder-32b", name="coder", context_window=65536),
    ModelDescriptor(
        id="other/vision", name="vision", raw={"architecture": {"input_modalities": ["image"]}}
    ),
]

FULL_CONFIG: dict[str, Any] = {
    "models": {"worker": "bound/worker", "default": "bound/default"},
    "default_model": "cfg/default-model",
    "services": {"model": {"discovery": {"strategy": "prefer_prefix", "prefixes": ["qwen/"]}}},
}
FULL_ENV = {"SMITH_MODEL": "env/model"}


def catalog_of(items: Sequence[Any]) -> Any:
    calls: list[int] = []

    async def provider() -> list[Any]:
        calls.append(1)
        return list(items)

    provider.calls = calls  # type: ignore[attr-defined]
    return provider


async def failing_catalog() -> list[Any]:
    raise ConnectionError("connection refused by 127.0.0.1:9")


def without(config: dict[str, Any], *keys: str) -> dict[str, Any]:
    out = {k: v for k, v in config.items() if k not in keys}
    if "models" in out:
        out["models"] = {k: v for k, v in out["models"].items() if f"models.{k}" not in keys}
    return out


async def test_request_model_wins_over_everything() -> None:
    sel = await select_model(
        "acme/small", "pinned/model", WORKER, FULL_CONFIG, FULL_ENV, catalog_of(CATALOG)
    )
    assert sel == ModelSelection("acme/small", "request", "request.model", 8192, 1024)


async def test_pinned_model_is_second() -> None:
    sel = await select_model(None, "pinned/model", WORKER, FULL_CONFIG, FULL_ENV, None)
    assert (sel.model, sel.source, sel.key) == (
        "pinned/model",
        "pinned",
        "conversation.pinned_model",
    )
    assert sel.context_window == DEFAULT_CONTEXT_WINDOW
    assert sel.max_output_tokens is None


async def test_role_binding_is_third() -> None:
    sel = await select_model("", "  ", WORKER, FULL_CONFIG, FULL_ENV, None)
    assert (sel.model, sel.source, sel.key) == ("bound/worker", "role_binding", "models.worker")


async def test_default_binding_is_fourth() -> None:
    cfg = without(FULL_CONFIG, "models.worker")
    sel = await select_model(None, None, WORKER, cfg, FULL_ENV, None)
    assert (sel.model, sel.source, sel.key) == (
        "bound/default",
        "default_binding",
        "models.default",
    )


async def test_default_model_is_fifth() -> None:
    cfg = without(FULL_CONFIG, "models")
    sel = await select_model(None, None, WORKER, cfg, FULL_ENV, None)
    assert (sel.model, sel.source, sel.key) == (
        "cfg/default-model",
        "default_model",
        "default_model",
    )


async def test_environment_is_sixth() -> None:
    cfg = without(FULL_CONFIG, "models", "default_model")
    sel = await select_model(None, None, WORKER, cfg, FULL_ENV, None)
    assert (sel.model, sel.source, sel.key) == ("env/model", "env", "SMITH_MODEL")


async def test_configured_discovery_is_seventh() -> None:
    cfg = without(FULL_CONFIG, "models", "default_model")
    sel = await select_model(None, None, WORKER, cfg, {}, catalog_of(CATALOG))
    assert (sel.model, sel.source) == ("qwen/coder-32b", "discovery:prefer_prefix")
    assert sel.key == "services.model.discovery"
    assert sel.reason and "qwen/" in sel.reason
    assert (sel.context_window, sel.max_output_tokens) == (65536, None)


async def test_first_available_is_eighth() -> None:
    sel = await select_model(None, None, WORKER, {}, {}, catalog_of(CATALOG))
    assert (sel.model, sel.source, sel.key) == (
        "acme/small",
        "discovery:first_available",
        "GET /models",
    )
    assert (sel.context_window, sel.max_output_tokens) == (8192, 1024)


async def test_configured_strategy_without_match_falls_through_to_first_available() -> None:
    cfg = {"model_discovery": {"strategy": "prefer_prefix", "prefixes": ["nomatch/"]}}
    sel = await select_model(None, None, WORKER, cfg, {}, catalog_of(CATALOG))
    assert (sel.model, sel.source) == ("acme/small", "discovery:first_available")


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({"strategy": "prefer_capability_tag", "tag": "image"}, "other/vision"),
        ({"strategy": "fallback_chain", "chain": ["gone/x", "qwen/coder-32b"]}, "qwen/coder-32b"),
        ("first_available", "acme/small"),
    ],
)
async def test_other_strategies(block: Any, expected: str) -> None:
    sel = await select_model(
        None, None, WORKER, {"model_discovery": block}, {}, catalog_of(CATALOG)
    )
    assert sel.model == expected
    assert sel.key == "model_discovery"


async def test_catalog_is_fetched_once() -> None:
    provider = catalog_of(CATALOG)
    cfg = {"model_discovery": {"strategy": "prefer_prefix", "prefixes": ["nomatch/"]}}
    await select_model(None, None, WORKER, cfg, {}, provider)
    assert len(provider.calls) == 1


async def test_catalog_lookup_accepts_plain_mappings() -> None:
    items = [{"id": "m/one", "context_window": 32000, "max_output_tokens": 4000}]
    sel = await select_model(None, None, WORKER, {}, {}, catalog_of(items))
    assert (sel.model, sel.context_window, sel.max_output_tokens) == ("m/one", 32000, 4000)


async def test_failing_catalog_keeps_explicit_choice_with_defaults() -> None:
    sel = await select_model("x/y", None, WORKER, {}, {}, failing_catalog)
    assert sel.context_window == DEFAULT_CONTEXT_WINDOW
    assert sel.catalog_error == "connection refused by 127.0.0.1:9"


async def test_nothing_found_tells_the_user_what_to_set() -> None:
    with pytest.raises(ModelSelectionError) as err:
        await select_model(None, None, WORKER, {}, {}, catalog_of([]))
    message = str(err.value)
    for needle in ("default_model", '"models": {"default"', "SMITH_MODEL", "--model", "worker"):
        assert needle in message


async def test_unreachable_server_is_said_first_without_model_hints() -> None:
    with pytest.raises(ModelSelectionError) as err:
        await select_model(None, None, WORKER, {}, {}, failing_catalog)
    message = str(err.value)
    assert message.startswith("Cannot reach the LLM server: connection refused by 127.0.0.1:9")
    assert "default_model" not in message and "SMITH_MODEL" not in message


async def test_unreachable_real_server_names_its_url() -> None:
    # Nothing listens on port 9 (discard) of the loopback: the connect is refused.
    async with LLMClient({"api_url": "http://127.0.0.1:9/v1", "retry_max_retries": 0}) as client:
        with pytest.raises(ModelSelectionError) as err:
            await select_model(None, None, WORKER, {}, {}, client.list_models)
    message = str(err.value)
    assert message.startswith("Cannot reach the LLM server")
    assert "http://127.0.0.1:9/v1/models" in message
    assert "--model" not in message


async def test_nothing_found_with_empty_catalog() -> None:
    with pytest.raises(ModelSelectionError, match=r"GET /models\) is empty"):
        await select_model(None, None, resolve_role("direct"), {}, {}, catalog_of([]))


async def test_unknown_strategy_is_a_clear_error() -> None:
    cfg = {"services": {"model": {"discovery": {"strategy": "cheapest"}}}}
    with pytest.raises(ModelSelectionError, match=r"services\.model\.discovery: unknown model"):
        await select_model(None, None, WORKER, cfg, {}, catalog_of(CATALOG))


@pytest.mark.parametrize(
    ("block", "match"),
    [
        ({"strategy": "prefer_prefix"}, "needs 'prefixes'"),
        ({"strategy": "fallback_chain", "chain": "a"}, "needs 'chain'"),
        ({"prefixes": ["a"]}, "strategy must name a strategy"),
        (42, "must be a table"),
    ],
)
async def test_bad_discovery_settings(block: Any, match: str) -> None:
    with pytest.raises(ModelSelectionError, match=match):
        await select_model(None, None, WORKER, {"model_discovery": block}, {}, catalog_of(CATALOG))


async def test_custom_discover_callable() -> None:
    seen: list[tuple[str, int, Any]] = []

    def pick_last(strategy: str, descriptors: Sequence[Any], options: Any) -> tuple[str, str]:
        seen.append((strategy, len(descriptors), options.get("n")))
        return descriptors[-1].id, "last one"

    cfg = {"model_discovery": {"strategy": "newest", "n": 3}}
    sel = await select_model(None, None, WORKER, cfg, {}, catalog_of(CATALOG), discover=pick_last)
    assert (sel.model, sel.source, sel.reason) == ("other/vision", "discovery:newest", "last one")
    assert seen == [("newest", 3, 3)]


def test_discovery_settings_prefers_top_level_key() -> None:
    cfg = {
        "model_discovery": "first_available",
        "services": {"model": {"discovery": {"strategy": "prefer_prefix", "prefixes": ["q"]}}},
    }
    assert discovery_settings(cfg) == ("model_discovery", "first_available", {})
    assert discovery_settings({}) is None


async def test_catalog_over_real_http() -> None:
    body = {
        "object": "list",
        "data": [
            {"id": "served/a", "object": "model", "max_model_len": 40960},
            {"id": "served/b", "object": "model"},
        ],
    }
    with ScriptedLLMServer(catalog=body) as server:
        async with LLMClient({"api_url": server.base_url}) as client:
            sel = await select_model(None, None, WORKER, {}, {}, client.list_models)
    assert (sel.model, sel.source, sel.context_window) == (
        "served/a",
        "discovery:first_available",
        40960,
    )


async def test_catalog_http_error_is_reported() -> None:
    with ScriptedLLMServer(catalog_status=503) as server:
        async with LLMClient({"api_url": server.base_url, "retry_max_retries": 0}) as client:
            with pytest.raises(ModelSelectionError) as err:
                await select_model(None, None, WORKER, {}, {}, client.list_models)
    # The server answered: the model settings are what can fix this, so they are listed.
    assert "could not be read" in str(err.value) and "default_model" in str(err.value)


async def test_accepts_the_frozen_config_snapshot() -> None:
    from smith_tui.config.frozen import freeze

    cfg = freeze(without(FULL_CONFIG, "models.worker"))
    sel = await select_model(None, None, WORKER, cfg, {}, None)
    assert (sel.model, sel.source) == ("bound/default", "default_binding")
    sel = await select_model(
        None,
        None,
        WORKER,
        freeze({"model_discovery": {"strategy": "fallback_chain", "chain": ["qwen/coder-32b"]}}),
        {},
        catalog_of(CATALOG),
    )
    assert sel.model == "qwen/coder-32b"
