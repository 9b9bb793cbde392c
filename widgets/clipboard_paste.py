"""The prompt's paste-image key (``services.ui.keys.paste_image``): the desktop clipboard's
image, saved in Smith's data folder (engine/clipboard_image.py), goes into the prompt as
its ``@path`` token, the way a typed ``@shot.png`` does; anything that stops it is a notice
and the prompt stays as it was."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from smith_tui.engine.clipboard_image import ClipboardError, read_clipboard_image, save_pasted
from smith_tui.engine.prompt_images import ImageError
from smith_tui.terminal_text import visible


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
        notify(app, f"{exc}.", "warning")
        return
    except ImageError as exc:
        notify(app, f"The clipboard's image: {exc}.", "error")
        return
    except OSError as exc:
        notify(app, f"The clipboard's image could not be saved: {exc.strerror or exc}.", "error")
        return
    if any(c.isspace() for c in path):
        notify(
            app,
            f"The image was saved as {path}, but a path with spaces cannot be an @path token; "
            "set XDG_DATA_HOME to a folder without spaces.",
            "error",
        )
        return
    prompt.focus()
    prompt.insert_token(f"@{path}")


def notify(app: Any, message: str, severity: str) -> None:
    """A notice of why no image was pasted: the clipboard's type names and a tool's error
    line are someone else's text, so shown as plain text with its control characters
    visible (no markup, no escape sequences)."""
    app.notify(
        visible(message), title="No image pasted", severity=severity, timeout=8, markup=False
    )
