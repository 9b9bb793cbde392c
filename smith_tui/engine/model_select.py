"""Model resolution: the eight-step fallback of docs/DESIGN.md §3.3.

The first step that yields a non-empty model id wins:

1. ``request.model`` (a dispatch argument or ``--model``)      → source ``request``
2. the conversation's pinned model (``/model <id>``)           → ``pinned``
3. ``models[<role name>]``                                     → ``role_binding``
4. ``models[role_spec.default_model_key]``                     → ``default_binding``
5. ``default_model``                                           → ``default_model``
6. the ``SMITH_MODEL`` environment variable                    → ``env``
7. catalog discovery with the configured strategy              → ``discovery:<strategy>``
8. catalog discovery ``first_available``                       → ``discovery:first_available``

The discovery strategy is read from ``services.model.discovery`` (or a
top-level ``model_discovery``), e.g. ``{"strategy": "prefer_prefix",
"prefixes": ["qwen/"]}``; without it step 7 is skipped.

The context window and output limit of the chosen model come from the
catalog (128000 and ``None`` when unknown). The catalog is fetched at most
once per call; a failing catalog counts as "no catalog" and its error is
remembered for the final message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from smith_tui.config.tree import lookup
from smith_tui.engine.roles import RoleSpec
from smith_tui.errors import SmithError, error_text
from smith_tui.llm import discovery as _discovery
from smith_tui.llm.catalog import ModelDescriptor

DEFAULT_CONTEXT_WINDOW = 128_000
ENV_VAR = "SMITH_MODEL"
STRATEGIES = ("first_available", "prefer_prefix", "prefer_capability_tag", "fallback_chain")

CatalogProvider = Callable[[], Awaitable[Sequence[Any]]]
DiscoverFn = Callable[[str, Sequence[Any], Mapping[str, Any]], "tuple[str, str] | None"]


class ModelSelectionError(SmithError):
    """No model could be chosen, or the discovery settings are invalid.

    The message says which setting to add or fix.
    """

    code = "model_selection"


@dataclass(frozen=True)
class ModelSelection:
    """The chosen model and where it came from.

    ``key`` names the setting that supplied the model (``models.worker``,
    ``default_model``, ``SMITH_MODEL``, …). ``reason`` explains a discovery
    pick; ``catalog_error`` is set when the catalog could not be read.
    """

    model: str
    source: str
    key: str | None
    context_window: int
    max_output_tokens: int | None
    reason: str | None = None
    catalog_error: str | None = None
    pricing: Mapping[str, float] | None = None
    """The catalog's dollars per ``prompt`` / ``completion`` token, when it lists them."""


def default_discover(
    strategy: str, descriptors: Sequence[Any], options: Mapping[str, Any]
) -> tuple[str, str] | None:
    """Pick a model with one of the catalog strategies of ``smith_tui.llm.discovery``.

    Options: ``prefixes`` (list or string) for ``prefer_prefix``, ``tag`` for
    ``prefer_capability_tag``, ``chain`` (list) for ``fallback_chain``.
    Raises ``ValueError`` for an unknown strategy or missing options.
    """
    ids = (d if isinstance(d, ModelDescriptor) else _id_of(d) for d in descriptors)
    models: list[ModelDescriptor | str] = [m for m in ids if m]
    if strategy == "first_available":
        found = _discovery.first_available(models)
    elif strategy == "prefer_prefix":
        prefixes = options.get("prefixes", options.get("prefix"))
        if not prefixes or not isinstance(prefixes, str | list | tuple):
            raise ValueError("prefer_prefix needs 'prefixes': a list of model id prefixes")
        found = _discovery.prefer_prefix(models, [str(p) for p in _as_list(prefixes)])
    elif strategy == "prefer_capability_tag":
        tag = options.get("tag")
        if not isinstance(tag, str) or not tag.strip():
            raise ValueError("prefer_capability_tag needs 'tag', e.g. \"tools\"")
        found = _discovery.prefer_capability_tag(models, tag)
    elif strategy == "fallback_chain":
        chain = options.get("chain")
        if not chain or not isinstance(chain, list | tuple):
            raise ValueError("fallback_chain needs 'chain': a list of model ids in order")
        found = _discovery.fallback_chain(models, [str(c) for c in chain])
    else:
        raise ValueError(f"unknown strategy {strategy!r}; use one of: {', '.join(STRATEGIES)}")
    return (found.model_id, found.reason) if found else None


def discovery_settings(config: Mapping[str, Any]) -> tuple[str, str, Mapping[str, Any]] | None:
    """Return ``(setting path, strategy, options)`` from the config, or ``None``.

    Looks at ``model_discovery`` first, then ``services.model.discovery``. The
    block is a table with a ``strategy`` key plus options, or a bare strategy name.
    """
    candidates: list[tuple[str, Any]] = [("model_discovery", config.get("model_discovery"))]
    model_opts = lookup(config, ("services", "model"), None)
    if isinstance(model_opts, Mapping):
        candidates.append(("services.model.discovery", model_opts.get("discovery")))
    for path, block in candidates:
        if block is None:
            continue
        if isinstance(block, str):
            return path, block.strip(), {}
        if isinstance(block, Mapping):
            strategy = block.get("strategy")
            if not isinstance(strategy, str) or not strategy.strip():
                raise ModelSelectionError(
                    f"{path}.strategy must name a strategy: {', '.join(STRATEGIES)}"
                )
            return path, strategy.strip(), block
        raise ModelSelectionError(
            f'{path} must be a table like {{"strategy": "prefer_prefix", '
            f'"prefixes": ["..."]}}, not {type(block).__name__}'
        )
    return None


async def select_model(
    request_model: str | None,
    pinned_model: str | None,
    role_spec: RoleSpec,
    config: Mapping[str, Any],
    env: Mapping[str, str],
    catalog_provider: CatalogProvider | None = None,
    *,
    discover: DiscoverFn = default_discover,
) -> ModelSelection:
    """Resolve the model for one request (see the module docstring for the steps).

    Raises :class:`ModelSelectionError` when no step yields a model, with a
    message naming the settings that would fix it.
    """
    catalog = _Catalog(catalog_provider)
    models = config.get("models")
    models = models if isinstance(models, Mapping) else {}
    role = role_spec.name
    default_key = role_spec.default_model_key
    steps: list[tuple[str, str, Any]] = [
        ("request", "request.model", request_model),
        ("pinned", "conversation.pinned_model", pinned_model),
        ("role_binding", f"models.{role}", models.get(role)),
        ("default_binding", f"models.{default_key}", models.get(default_key)),
        ("default_model", "default_model", config.get("default_model")),
        ("env", ENV_VAR, env.get(ENV_VAR)),
    ]
    for source, key, value in steps:
        model = _non_empty(value)
        if model is not None:
            return await catalog.selection(model, source, key)

    settings = discovery_settings(config)
    if settings is not None:
        path, strategy, options = settings
        found = await _discover(catalog, discover, strategy, options, path)
        if found is not None:
            return await catalog.selection(found[0], f"discovery:{strategy}", path, found[1])
    found = await _discover(catalog, discover, "first_available", {}, "GET /models")
    if found is not None:
        return await catalog.selection(
            found[0], "discovery:first_available", "GET /models", found[1]
        )
    raise ModelSelectionError(_none_found_message(role_spec, catalog))


async def _discover(
    catalog: _Catalog, discover: DiscoverFn, strategy: str, options: Mapping[str, Any], path: str
) -> tuple[str, str] | None:
    descriptors = await catalog.descriptors()
    if strategy not in STRATEGIES and discover is default_discover:
        raise ModelSelectionError(
            f"{path}: unknown model discovery strategy {strategy!r}; "
            f"use one of: {', '.join(STRATEGIES)}"
        )
    if not descriptors:
        return None
    try:
        found = discover(strategy, descriptors, options)
    except ValueError as exc:
        raise ModelSelectionError(f"{path}: {exc}") from None
    if found is None:
        return None
    if isinstance(found, tuple):
        model, reason = found
    else:
        model, reason = found.model_id, found.reason
    chosen = _non_empty(model)
    return (chosen, str(reason)) if chosen else None


class _Catalog:
    """Fetches the catalog lazily, once, and remembers why it failed."""

    def __init__(self, provider: CatalogProvider | None) -> None:
        self._provider = provider
        self._items: list[Any] | None = None
        self.error: str | None = None
        self.unreachable = False
        """Whether the catalog failed because the server could not be reached at all."""

    @property
    def has_provider(self) -> bool:
        return self._provider is not None

    async def descriptors(self) -> list[Any]:
        if self._items is None:
            self._items = []
            if self._provider is not None:
                try:
                    self._items = list(await self._provider())
                except Exception as exc:  # any failure means "no catalog"
                    self.error = error_text(exc)
                    self.unreachable = _is_unreachable(exc)
        return self._items

    async def selection(
        self, model: str, source: str, key: str | None, reason: str | None = None
    ) -> ModelSelection:
        context_window, max_output = DEFAULT_CONTEXT_WINDOW, None
        pricing: Mapping[str, float] | None = None
        for desc in await self.descriptors():
            if _id_of(desc) == model:
                context_window = _positive(_field(desc, "context_window")) or context_window
                max_output = _positive(_field(desc, "max_output_tokens"))
                prices = _field(desc, "pricing")
                if isinstance(prices, Mapping) and ("prompt" in prices or "completion" in prices):
                    pricing = dict(prices)
                break
        return ModelSelection(
            model, source, key, context_window, max_output, reason, self.error, pricing
        )


def _is_unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says the server did not answer at all (not that it refused)."""
    if isinstance(exc, OSError | TimeoutError):
        return True
    return getattr(exc, "kind", None) == "transport" and getattr(exc, "origin", None) == "connect"


def _none_found_message(role_spec: RoleSpec, catalog: _Catalog) -> str:
    if catalog.unreachable:
        # The model settings cannot help while nothing answers: say that first and only.
        return (
            f"Cannot reach the LLM server: {catalog.error}\n"
            "Check that the server is running and that llm_config.api_url "
            "(or --api-url, SMITH_API_URL) points at it."
        )
    role = role_spec.name
    lines = [
        f"No model is configured for the {role} role ({role_spec.alias}). Set one of:",
    ]
    if catalog.error:
        # The cause first: the server failed; the settings are only the way around it.
        lines = [
            f"The server's model list (GET /models) could not be read: {catalog.error}",
            f"so no model could be picked for the {role} role ({role_spec.alias}). "
            "Fix the server, or name a model with one of:",
        ]
    lines += [
        '  - "default_model": "<model id>" in your config file, or /config set default_model <id>',
        f'  - "models": {{"{role_spec.default_model_key}": "<model id>"}} '
        f'(or "models": {{"{role}": "<model id>"}} for this role only)',
        f"  - the {ENV_VAR} environment variable",
        "  - the --model <id> command-line flag",
    ]
    if not catalog.error and catalog.has_provider:
        lines.append("The server's model list (GET /models) is empty.")
    return "\n".join(lines)


def _non_empty(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _field(desc: Any, name: str) -> Any:
    if isinstance(desc, Mapping):
        return desc.get(name)
    return getattr(desc, name, None)


def _id_of(desc: Any) -> str | None:
    value = desc if isinstance(desc, str) else _field(desc, "id")
    return value if isinstance(value, str) and value else None


def _positive(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def _as_list(value: Any) -> list[Any]:
    return [value] if isinstance(value, str) else list(value)
