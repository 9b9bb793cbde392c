"""engine/prompt_images.py: what an image must be to go to the model, and its wire form."""

from __future__ import annotations

import base64

import pytest

from smith_tui.engine.prompt import to_wire
from smith_tui.engine.prompt_images import (
    MAX_IMAGE_BYTES,
    MAX_IMAGES,
    ImageError,
    checked_image,
    checked_images,
    images_of,
    wire_content,
)


def _b64(size: int) -> str:
    return base64.b64encode(b"\x89" * size).decode()


def test_an_image_at_the_limit_goes_one_byte_more_is_refused() -> None:
    assert checked_image("image/PNG", _b64(MAX_IMAGE_BYTES)) == {
        "mime_type": "image/png",
        "data": _b64(MAX_IMAGE_BYTES),
    }
    with pytest.raises(ImageError, match="larger than 5 MiB"):
        checked_image("image/png", _b64(MAX_IMAGE_BYTES + 1))


def test_types_data_and_count_are_checked() -> None:
    assert checked_image("image/jpg", _b64(3))["mime_type"] == "image/jpeg"
    with pytest.raises(ImageError, match="'image/svg\\+xml' are not taken"):
        checked_image("image/svg+xml", _b64(3))
    with pytest.raises(ImageError, match="not valid base64"):
        checked_image("image/png", "abc$")
    with pytest.raises(ImageError, match="no data"):
        checked_image("image/png", "")
    with pytest.raises(ImageError, match=f"send at most {MAX_IMAGES}"):
        checked_images([{"mime_type": "image/png", "data": _b64(1)}] * (MAX_IMAGES + 1))


def test_a_user_message_with_images_goes_as_content_parts() -> None:
    image = {"mime_type": "image/gif", "data": _b64(2)}
    message = {"role": "user", "content": "look", "metadata": {"images": [image]}}
    assert images_of(message) == [image]
    assert to_wire(message)["content"] == wire_content("look", [image])
    assert wire_content("look", [image]) == [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": f"data:image/gif;base64,{image['data']}"}},
    ]
    # Other messages and users without images stay text.
    assert to_wire({"role": "user", "content": "plain"})["content"] == "plain"
    assert images_of({"role": "assistant", "content": "x", "metadata": {"images": [image]}}) == []
