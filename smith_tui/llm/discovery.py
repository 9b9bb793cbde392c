"""Pick a model from a catalog. Each strategy returns a :class:`Discovery` or ``None``.

All strategies accept a list of :class:`ModelDescriptor` or of plain id strings
and keep the catalog's order where they have to choose among equals.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from smith_tui.llm.catalog import ModelDescriptor

ModelLike = ModelDescriptor | str


@dataclass(frozen=True)
class Discovery:
    """The chosen model and a short human-readable reason."""

    model_id: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        """``{"model_id": ..., "reason": ...}`` as docs/LLM.md describes."""
        return {"model_id": self.model_id, "reason": self.reason}


def _descriptor(model: ModelLike) -> ModelDescriptor:
    if isinstance(model, ModelDescriptor):
        return model
    return ModelDescriptor(id=str(model), name=str(model))


def _ids(models: Iterable[ModelLike]) -> list[str]:
    return [m.id if isinstance(m, ModelDescriptor) else str(m) for m in models]


def first_available(models: Sequence[ModelLike]) -> Discovery | None:
    """The first model of the catalog."""
    ids = _ids(models)
    if not ids:
        return None
    return Discovery(ids[0], f"first of {len(ids)} available model(s)")


def prefer_prefix(models: Sequence[ModelLike], prefixes: Sequence[str] | str) -> Discovery | None:
    """The first model whose id starts with the earliest-listed prefix that matches any."""
    if isinstance(prefixes, str):
        prefixes = [prefixes]
    ids = _ids(models)
    for prefix in prefixes:
        for model_id in ids:
            if model_id.startswith(prefix):
                return Discovery(model_id, f"id starts with preferred prefix {prefix!r}")
    return None


def prefer_capability_tag(models: Sequence[ModelLike], tag: str) -> Discovery | None:
    """The first model tagged ``tag``: a supported parameter (``tools``, ``reasoning``), a
    modality (``image``), a ``capabilities`` entry, or a word of its id (``coder``)."""
    wanted = tag.lower().strip()
    if not wanted:
        return None
    for model in models:
        desc = _descriptor(model)
        if wanted in desc.capability_tags:
            return Discovery(desc.id, f"has capability tag {wanted!r}")
    return None


def fallback_chain(models: Sequence[ModelLike], chain: Sequence[str]) -> Discovery | None:
    """The first id of ``chain`` that the catalog offers."""
    available = set(_ids(models))
    for position, model_id in enumerate(chain):
        if model_id in available:
            why = (
                "first choice"
                if position == 0
                else f"fallback #{position} ({chain[0]!r} unavailable)"
            )
            return Discovery(model_id, f"{why} in the fallback chain")
    return None
