"""The prompt's paste-image key (``services.ui.keys.paste_image``): the desktop clipboard's
image, saved in Smith's data folder (engine/clipboard_image.py), goes into the prompt as
its ``@path`` token, the way a typed ``@shot.png`` does; anything that stops it is a notice
and the prompt stays as it was."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from smith_tui.engine.clipboard_image import ClipboardError, read_clipboard_image, save_pasted
from smith_tui.engine.images import ImageError


async def paste_clipboard_image(app: Any, prompt: Any) -> None:
    """Read the clipboard's image off the event loop and put its ``@path`` in ``prompt``."""
    runtime = app.runtime
    conversation = runtime.conversation_id if runtime is not None else None

    def work() -> str:
        # The desktop session's own environment (its display, its PATH), as the terminal
        # gave it to Smith: the clipboard belongs to it, not to the runtime's tool env.
        data = read_clipboard_image(dict(os.environ))
        path, _image = save_pasted(data, conversation=conversation)
        return str(path)

    try:
        path = await asyncio.to_thread(work)
    except ClipboardError as exc:
        app.notify(f"{exc}.", title="No image pasted", severity="warning", timeout=8)
        return
    except ImageError as exc:
        app.notify(f"The clipboard's image: {exc}.", title="No image pasted", severity="error")
        return
    except OSError as exc:
        app.notify(
            f"The clipboard's image could not be saved: {exc.strerror or exc}.",
            title="No image pasted",
            severity="error",
        )
        return
    if any(c.isspace() for c in path):
        app.notify(
            f"The image was saved as {path}, but a path with spaces cannot be an @path token; "
            "set XDG_DATA_HOME to a folder without spaces.",
            title="No image pasted",
            severity="error",
        )
        return
    prompt.focus()
    prompt.insert_token(f"@{path}")
