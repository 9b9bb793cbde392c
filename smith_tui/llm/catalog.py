"""Model catalog: ``GET /models`` normalised into :class:`ModelDescriptor` entries.

Understood shapes:

* OpenAI (``{"object": "list", "data": [{"id", "owned_by"}]}``) - no limits;
* OpenRouter - ``top_provider.context_length`` (what the routed provider
  really accepts) wins over the model's nominal ``context_length``;
  ``top_provider.max_completion_tokens`` and ``pricing`` (strings) are read;
* vLLM - ``max_model_len``;
* llama.cpp ``llama-server`` - the context the server was *started* with beats
  the model's training context: ``--ctx-size N`` / ``-c N`` in the entry's
  ``status.args`` (router mode), else ``GET /props``
  ``default_generation_settings.n_ctx`` (single-model servers), else
  ``meta.n_ctx_train``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from smith_tui.llm.errors import PROTOCOL, LLMError, error_from_http

if TYPE_CHECKING:
    import httpx  # imported by the first request (see smith_tui/llm/client.py)

_MAX_PAGES = 10
_CTX_FLAGS = ("--ctx-size", "-c", "--ctx_size")


@dataclass
class ModelDescriptor:
    """One model the API offers, with whatever limits and prices it told us."""

    id: str
    name: str
    context_window: int | None = None
    max_output_tokens: int | None = None
    pricing: dict[str, float] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def supported_parameters(self) -> list[str]:
        """OpenRouter's ``supported_parameters`` (empty when not reported)."""
        value = self.raw.get("supported_parameters")
        return [str(v) for v in value] if isinstance(value, list) else []

    @property
    def input_modalities(self) -> frozenset[str]:
        """What the model takes as input, lower-case (``text``, ``image``, ``audio``), as
        far as the catalog says: OpenRouter's ``architecture.input_modalities`` or the left
        side of ``architecture.modality`` (``text+image->text``), an ``input_modalities``
        list of the entry, ``vision`` among its ``capabilities``. Empty: not said."""
        found: set[str] = set()
        arch = self.raw.get("architecture")
        if isinstance(arch, Mapping):
            values = arch.get("input_modalities")
            if isinstance(values, list):
                found.update(str(v).lower() for v in values)
            modality = arch.get("modality")
            if isinstance(modality, str) and "->" in modality:
                found.update(t for t in modality.lower().split("->")[0].split("+") if t)
        values = self.raw.get("input_modalities")
        if isinstance(values, list):
            found.update(str(v).lower() for v in values)
        caps = self.raw.get("capabilities")
        if isinstance(caps, list) and any(str(c).lower() == "vision" for c in caps):
            found.update(("text", "image"))
        return frozenset(found)

    @property
    def capability_tags(self) -> set[str]:
        """Lower-case tags: supported parameters, modalities and id/name words."""
        tags = {p.lower() for p in self.supported_parameters}
        arch = self.raw.get("architecture")
        if isinstance(arch, Mapping):
            for key in ("input_modalities", "output_modalities"):
                values = arch.get(key)
                if isinstance(values, list):
                    tags.update(str(v).lower() for v in values)
            modality = arch.get("modality")
            if isinstance(modality, str):
                for side in modality.lower().split("->"):
                    tags.update(t for t in side.split("+") if t)
        for word in _words(self.id):
            tags.add(word)
        caps = self.raw.get("capabilities")
        if isinstance(caps, list):
            tags.update(str(c).lower() for c in caps)
        return tags


def _words(text: str) -> list[str]:
    out = []
    word = []
    for ch in text.lower():
        if ch.isalnum() or ch == ".":
            word.append(ch)
        else:
            if word:
                out.append("".join(word))
            word = []
    if word:
        out.append("".join(word))
    return out


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value > 0 and float(value).is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit() and int(value) > 0:
        return int(value)
    return None


def ctx_from_args(args: Any) -> int | None:
    """``--ctx-size N`` / ``-c N`` / ``--ctx-size=N`` from a server command line (0 = unset)."""
    if isinstance(args, str):
        args = args.split()
    if not isinstance(args, Sequence):
        return None
    items = [str(a) for a in args]
    for i, item in enumerate(items):
        for flag in _CTX_FLAGS:
            if item == flag and i + 1 < len(items):
                return _positive_int(items[i + 1])
            if item.startswith(flag + "="):
                return _positive_int(item[len(flag) + 1 :])
    return None


def _pricing(raw: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    if not isinstance(raw, Mapping):
        return out
    for key, value in raw.items():
        if isinstance(value, bool):
            continue
        try:
            out[str(key)] = float(value)
        except (TypeError, ValueError):
            continue
    return out


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def is_llamacpp_entry(entry: Mapping[str, Any]) -> bool:
    """Whether an entry looks like llama-server's ``/v1/models`` output."""
    return entry.get("owned_by") == "llamacpp" or isinstance(entry.get("meta"), Mapping)


def describe_model(entry: Mapping[str, Any], *, server_ctx: int | None = None) -> ModelDescriptor:
    """One catalog entry as a :class:`ModelDescriptor` (``server_ctx`` from ``/props``)."""
    model_id = str(entry.get("id") or entry.get("model") or entry.get("name") or "")
    top = _mapping(entry.get("top_provider"))
    status = _mapping(entry.get("status"))
    meta = _mapping(entry.get("meta"))
    context = (
        ctx_from_args(status.get("args"))
        or ctx_from_args(entry.get("args"))
        or _positive_int(top.get("context_length"))
        or _positive_int(entry.get("max_model_len"))
        or _positive_int(entry.get("context_window"))
        or _positive_int(entry.get("context_length"))
        or _positive_int(entry.get("max_context_length"))
        or server_ctx
        or _positive_int(meta.get("n_ctx"))
        or _positive_int(meta.get("n_ctx_train"))
    )
    max_output = (
        _positive_int(top.get("max_completion_tokens"))
        or _positive_int(entry.get("max_output_tokens"))
        or _positive_int(entry.get("max_completion_tokens"))
    )
    name = entry.get("name")
    return ModelDescriptor(
        id=model_id,
        name=name if isinstance(name, str) and name else model_id,
        context_window=context,
        max_output_tokens=max_output,
        pricing=_pricing(entry.get("pricing")),
        raw=dict(entry),
    )


def catalog_entries(body: Any) -> list[Mapping[str, Any]]:
    """The model entries of a ``/models`` body (``data``, ``models`` or a bare list)."""
    if isinstance(body, Mapping):
        for key in ("data", "models"):
            value = body.get(key)
            if isinstance(value, list):
                body = value
                break
        else:
            return []
    if not isinstance(body, list):
        return []
    return [e for e in body if isinstance(e, Mapping) and (e.get("id") or e.get("model"))]


def props_ctx(props: Any) -> int | None:
    """``n_ctx`` from llama-server's ``GET /props``."""
    if not isinstance(props, Mapping):
        return None
    settings = _mapping(props.get("default_generation_settings"))
    return _positive_int(settings.get("n_ctx")) or _positive_int(props.get("n_ctx"))


def parse_models(body: Any, *, props: Any = None) -> list[ModelDescriptor]:
    """Normalise a whole ``/models`` body; ``props`` is llama-server's ``/props`` (optional)."""
    entries = catalog_entries(body)
    server_ctx = props_ctx(props) if len(entries) == 1 else None
    return [describe_model(e, server_ctx=server_ctx) for e in entries]


def _server_root(base_url: str) -> str:
    parts = urlsplit(base_url)
    segments = [s for s in parts.path.split("/") if s]
    if segments and segments[-1].startswith("v") and segments[-1][1:2].isdigit():
        segments = segments[:-1]
    path = "/" + "/".join(segments) if segments else ""
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


async def _get_json(http: httpx.AsyncClient, url: str, headers: Mapping[str, str]) -> Any:
    resp = await http.get(url, headers=dict(headers))
    if resp.status_code >= 400:
        err = error_from_http(resp.status_code, resp.content[:65536], resp.headers)
        err.origin = "catalog"
        raise err
    try:
        return json.loads(resp.content)
    except ValueError as exc:
        raise LLMError(
            PROTOCOL,
            "invalid_json",
            f"GET {url} did not return JSON ({exc})",
            origin="catalog",
            data={"body": resp.text[:500]},
        ) from None


async def fetch_catalog(
    http: httpx.AsyncClient, base_url: str, headers: Mapping[str, str]
) -> list[ModelDescriptor]:
    """GET ``{base_url}/models`` (following ``links.next`` / ``has_more`` pages)."""
    import httpx

    headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
    headers["Accept"] = "application/json"
    url = base_url.rstrip("/") + "/models"
    entries: list[Mapping[str, Any]] = []
    for _ in range(_MAX_PAGES):
        body = await _get_json(http, url, headers)
        if not isinstance(body, Mapping | list):
            raise LLMError(
                PROTOCOL, "invalid_response", f"GET {url}: unexpected body", origin="catalog"
            )
        page = catalog_entries(body)
        entries.extend(page)
        next_url = None
        if isinstance(body, Mapping):
            links = _mapping(body.get("links"))
            if isinstance(links.get("next"), str) and links["next"]:
                next_url = urljoin(url, links["next"])
            elif body.get("has_more") and page:
                last = body.get("last_id") or page[-1].get("id")
                next_url = base_url.rstrip("/") + f"/models?after={last}"
        if not next_url or next_url == url:
            break
        url = next_url
    props = None
    if len(entries) == 1 and is_llamacpp_entry(entries[0]):
        status = _mapping(entries[0].get("status"))
        if ctx_from_args(status.get("args")) is None:
            try:
                props = await _get_json(http, _server_root(base_url) + "/props", headers)
            except (LLMError, httpx.HTTPError):
                props = None  # /props is optional
    server_ctx = props_ctx(props)
    return [describe_model(e, server_ctx=server_ctx) for e in entries]
