"""Images in a user's prompt: checked once when they come in, kept with the user message
(its ``metadata["images"]``) and sent as Chat-Completions image content parts.

A front end that takes images (``smith acp``: an editor's image blocks) checks each with
:func:`checked_image` and passes them to ``Runtime.run_turn(images=...)``;
:func:`wire_content` is what :func:`smith_tui.engine.prompt.to_wire` sends for such a
message, every time the history goes out.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
from collections.abc import Mapping, Sequence
from typing import Any

from smith_tui.config.tree import lookup

IMAGES_KEY = "images"
"""The user message's metadata key holding its images (``mime_type``, base64 ``data``)."""
MIME_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The image types Chat-Completions servers take."""
MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""Largest image (decoded): the store keeps it with the message, every request resends it."""
MAX_IMAGES = 8
"""Most images in one prompt."""


class ImageError(ValueError):
    """An image that cannot go to the model; the message says what to change."""


def checked_image(mime_type: Any, data: Any) -> dict[str, str]:
    """``{"mime_type", "data"}`` for a base64 image of a known type and size, else
    :class:`ImageError` saying why not."""
    mime = str(mime_type or "").strip().lower()
    if mime == "image/jpg":
        mime = "image/jpeg"
    if mime not in MIME_TYPES:
        raise ImageError(
            f"images of type {mime_type or '(none)'!r} are not taken; send {', '.join(MIME_TYPES)}"
        )
    if not isinstance(data, str) or not data:
        raise ImageError("the image has no data (base64 expected)")
    if len(data) > (MAX_IMAGE_BYTES * 4) // 3 + 4:
        raise ImageError(
            f"the image is larger than {MAX_IMAGE_BYTES // 2**20} MiB; send a smaller one"
        )
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ImageError("the image data is not valid base64") from None
    if len(raw) > MAX_IMAGE_BYTES:
        raise ImageError(
            f"the image is larger than {MAX_IMAGE_BYTES // 2**20} MiB; send a smaller one"
        )
    return {"mime_type": mime, "data": data}


def checked_images(images: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Every image checked (:func:`checked_image`), at most :data:`MAX_IMAGES`."""
    if len(images) > MAX_IMAGES:
        raise ImageError(f"{len(images)} images in one prompt; send at most {MAX_IMAGES}")
    return [checked_image(i.get("mime_type"), i.get("data")) for i in images]


def wire_content(text: str, images: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The user message's content parts: its text, then each image as a base64 data URL."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for image in images:
        url = f"data:{image.get('mime_type')};base64,{image.get('data')}"
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def images_of(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The images a stored user message carries (``[]`` for none or another role)."""
    if message.get("role") != "user":
        return []
    metadata = message.get("metadata")
    images = metadata.get(IMAGES_KEY) if isinstance(metadata, Mapping) else None
    return [i for i in images if isinstance(i, Mapping)] if isinstance(images, list) else []


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
"""The file names an ``@path`` (or a pasted path) is read as an image for (engine/image_files.py)."""
PIXELS_PER_TOKEN = 750
"""The window's estimate of an image's tokens: width × height / 750 (about what providers
bill for a picture; larger than the tile count some use, so the window errs towards room)."""
MIN_IMAGE_TOKENS = 85
"""Even a tiny image costs this many tokens in the estimate."""


def is_image_path(path: str) -> bool:
    """Whether ``path`` names an image by its suffix (:data:`IMAGE_SUFFIXES`)."""
    return path.lower().endswith(IMAGE_SUFFIXES)


def image_tokens(image: Mapping[str, Any]) -> int:
    """The estimated tokens of one image: its pixels / :data:`PIXELS_PER_TOKEN` (at least
    :data:`MIN_IMAGE_TOKENS`); an image without its size counts as the largest one a file
    is resized to, 2048 × 2048."""
    width, height = image.get("width"), image.get("height")
    if not (isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0):
        width = height = 2048
    return max(MIN_IMAGE_TOKENS, -(-(width * height) // PIXELS_PER_TOKEN))


IMAGE_MODELS_SETTING = "services.model.image_input"
"""Model ids (``fnmatch`` patterns) that take images whatever the catalog says: a local
server (llama.cpp with a vision projector, vLLM) lists no modalities in ``GET /models``."""


def declared_image_models(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The patterns of :data:`IMAGE_MODELS_SETTING` in ``config`` (the strings of its list)."""
    value = lookup(config, ("services", "model", "image_input"), None)
    if isinstance(value, str):
        value = [value]
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list | tuple) else ()


def takes_images(descriptors: Sequence[Any], model: str, declared: Sequence[str] = ()) -> bool:
    """Whether ``model`` takes images: it matches a ``declared`` pattern (the user said so,
    :data:`IMAGE_MODELS_SETTING`), or its catalog entry lists image input. A model neither
    names does not (fail closed: an image sent to a text-only server is an error)."""
    if any(fnmatch.fnmatchcase(model, pattern) for pattern in declared):
        return True
    for descriptor in descriptors:
        if getattr(descriptor, "id", None) == model:
            return "image" in descriptor.input_modalities
    return False


def without_images(metadata: Mapping[str, Any], why: str) -> dict[str, Any]:
    """A user message's metadata with its images taken out: each image attachment says
    ``not_sent: why`` (its transcript marker shows it), the rest is kept as it was."""
    kept = {k: v for k, v in metadata.items() if k != IMAGES_KEY}
    attachments = metadata.get("attachments")
    if isinstance(attachments, list):
        kept["attachments"] = [
            {**a, "not_sent": why} if isinstance(a, Mapping) and a.get("kind") == "image" else a
            for a in attachments
        ]
    return kept


def pasted_image_token(text: str) -> str | None:
    """``@path`` for a paste that is just the path of an existing image file (as a
    terminal pastes a dropped file: quoted, with ``\\``-escaped spaces, or a ``file://``
    URI), else ``None`` (the paste goes in as typed). A path with white space stays as
    pasted: an ``@path`` token ends at the first space."""
    import os
    from urllib.parse import unquote, urlparse

    raw = text.strip()
    if not raw or "\n" in raw or len(raw) > 4096:
        return None
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        raw = raw[1:-1]
    if raw.startswith("file://"):
        parsed = urlparse(raw)
        if parsed.netloc not in ("", "localhost"):
            return None
        raw = unquote(parsed.path)
    raw = raw.replace("\\ ", " ")
    if any(c.isspace() for c in raw) or not is_image_path(raw):
        return None
    path = os.path.expanduser(raw)
    return f"@{path}" if os.path.isfile(path) else None
