"""An image file named in a prompt (``@shot.png``, a pasted path), made ready for the model.

:func:`read_image` reads the file under the ``read`` tool's path policy (inside the
project root or ``services.tool.extra_roots``, no symlink out of them, regular files
only, never a FIFO) and :func:`prepare_image` turns its bytes into what
:mod:`smith_tui.engine.prompt_images` keeps with the user message: decoded by Pillow (PNG, JPEG,
GIF, WebP only, at most :data:`MAX_SOURCE_PIXELS` pixels, so a decompression bomb is
refused before it is decoded), turned upright by its EXIF orientation, scaled so its
longest side is at most :data:`MAX_SIDE` px, and written anew as PNG (or JPEG, when the
PNG would be over :data:`MAX_ENCODED_BYTES`) without any of its metadata (EXIF, GPS,
comments are not copied). Every failure is an :class:`~smith_tui.engine.prompt_images.ImageError`
that says what is wrong with the file.
"""

from __future__ import annotations

import base64
import io
import warnings
from typing import TYPE_CHECKING, Any

from smith_tui.engine.prompt_images import ImageError, checked_image

if TYPE_CHECKING:
    from smith_tui.tools.spec import ToolContext

MAX_SIDE = 2048
"""Longest side of an image sent to the model, in pixels (larger ones are scaled down)."""
MAX_SOURCE_BYTES = 32 * 1024 * 1024
"""Largest image file read."""
MAX_SOURCE_PIXELS = 50_000_000
"""Most pixels an image file may declare (a 10000 × 5000 picture); more is refused
unread, the way Pillow's decompression-bomb check refuses, but before any decoding."""
MAX_ENCODED_BYTES = 2 * 1024 * 1024
"""Most bytes an image takes once re-encoded (every request of the conversation resends it)."""
FORMATS = ("PNG", "JPEG", "GIF", "WEBP")
"""The only decoders Pillow may use on a prompt's file."""
THUMBNAIL_BOX = (256, 128)
"""The transcript's thumbnail of an image fits this box (pixels); it is kept with the
prompt's attachment entry, never sent to the model."""
_JPEG_QUALITIES = (85, 70, 50)


def read_image(raw: str, ctx: ToolContext) -> tuple[str, dict[str, Any]]:
    """The path to show for the ``@path`` token ``raw`` and its prepared image
    (:func:`prepare_image`); a ``ToolError`` or ``ImageError`` that says why not."""
    from smith_tui.tools.files import read_file_bytes, resolve_for_tool

    target = resolve_for_tool(raw, ctx, tool="read")
    data, _size = read_file_bytes(target, ctx, tool="read", limit=MAX_SOURCE_BYTES)
    if len(data) > MAX_SOURCE_BYTES:
        raise ImageError(
            f"the image file is over {MAX_SOURCE_BYTES // 2**20} MiB; attach a smaller one"
        )
    try:
        shown = target.real.relative_to(target.root).as_posix()
    except ValueError:
        shown = str(target.shown)
    return shown, prepare_image(data, name=target.real.name)


def prepare_image(data: bytes, *, name: str) -> dict[str, Any]:
    """``{"mime_type", "data", "name", "width", "height", "thumbnail"}`` for the image file
    bytes ``data``: decoded, upright, at most :data:`MAX_SIDE` px a side, re-encoded without
    its metadata under :data:`MAX_ENCODED_BYTES` (``thumbnail``: a base64 PNG that fits
    :data:`THUMBNAIL_BOX`); an :class:`ImageError` when it cannot be."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=FORMATS) as source:
                width, height = source.size
                if width * height > MAX_SOURCE_PIXELS:
                    raise ImageError(
                        f"the image declares {width}×{height} pixels, over the "
                        f"{MAX_SOURCE_PIXELS:,} taken (a decompression bomb or a very large "
                        "picture); scale it down first"
                    )
                source.draft("RGB", (MAX_SIDE, MAX_SIDE))  # JPEG: decode at a smaller scale
                source.load()  # the first frame of an animation
                picture = ImageOps.exif_transpose(source)
                alpha = picture.mode in ("RGBA", "LA", "PA") or "transparency" in picture.info
                picture = picture.convert("RGBA" if alpha else "RGB")
    except ImageError:
        raise
    except UnidentifiedImageError:
        raise ImageError(
            f"the file is not an image Smith reads ({', '.join(FORMATS)} are)"
        ) from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ImageError(
            "the image is too large to decode safely (a decompression bomb); scale it down first"
        ) from None
    except Exception as exc:  # a hostile file may make any decoder step raise anything
        raise ImageError(f"the image cannot be decoded ({exc or 'truncated or damaged'})") from None
    picture.info = {}  # nothing of the file's metadata (EXIF, text chunks, ICC) goes on
    picture.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.LANCZOS)
    mime, encoded = _encode(picture, alpha)
    image = checked_image(mime, base64.b64encode(encoded).decode("ascii"))
    small = picture.copy()
    small.thumbnail(THUMBNAIL_BOX, Image.Resampling.LANCZOS)
    thumb = io.BytesIO()
    small.save(thumb, format="PNG")
    return {
        **image,
        "name": name,
        "width": picture.width,
        "height": picture.height,
        "thumbnail": base64.b64encode(thumb.getvalue()).decode("ascii"),
    }


def _encode(picture: Any, alpha: bool) -> tuple[str, bytes]:
    """PNG when it fits :data:`MAX_ENCODED_BYTES`, else JPEG at falling quality (on white
    where it had transparency), else the picture scaled down until a JPEG fits."""
    from PIL import Image

    out = io.BytesIO()
    picture.save(out, format="PNG", optimize=False, compress_level=6)
    if out.tell() <= MAX_ENCODED_BYTES:
        return "image/png", out.getvalue()
    if alpha:
        flat = Image.new("RGB", picture.size, (255, 255, 255))
        flat.paste(picture, mask=picture.getchannel("A"))
        picture = flat
    while True:
        for quality in _JPEG_QUALITIES:
            out = io.BytesIO()
            picture.save(out, format="JPEG", quality=quality, optimize=True)
            if out.tell() <= MAX_ENCODED_BYTES:
                return "image/jpeg", out.getvalue()
        if max(picture.size) <= 64:
            raise ImageError("the image does not fit the size cap even scaled down")
        picture = picture.resize(
            (max(1, picture.width * 3 // 4), max(1, picture.height * 3 // 4)),
            Image.Resampling.LANCZOS,
        )
