"""An image on the desktop's clipboard, pasted into the prompt (``services.ui.keys.paste_image``).

:func:`read_clipboard_image` asks the desktop's own clipboard tool, chosen by what the
environment shows: ``wl-paste`` when ``WAYLAND_DISPLAY`` is set, ``xclip`` when ``DISPLAY``
is, ``pngpaste`` or ``osascript`` on macOS. Each tool first lists the types on the
clipboard (so text there is "no image", not a decoding error), then gives the image bytes;
every tool runs from an argv list (no shell) with a timeout and the byte cap of
:data:`~smith_tui.engine.image_files.MAX_SOURCE_BYTES`. :func:`save_pasted` decodes the
bytes with :func:`~smith_tui.engine.image_files.prepare_image` (a decompression bomb or a
non-image is refused with its message) and writes the result to a file of its own under
``<data_dir>/pasted/<conversation>/`` (folders 0700, files 0600, random names), which the
prompt then names with an ``@path`` token; :func:`read_pasted` is how
:mod:`smith_tui.engine.attachments` reads such a token back.

Terminal-side clipboards (OSC 52, kitty's clipboard protocol) carry text only as Textual
reads them, so over SSH there is no image to read: the notice says to save it and type
``@path``.
"""

from __future__ import annotations

import base64
import os
import re
import secrets
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smith_tui.config.locations import data_dir
from smith_tui.engine.image_files import MAX_SOURCE_BYTES, prepare_image
from smith_tui.engine.prompt_images import MIME_TYPES, ImageError

if TYPE_CHECKING:
    from smith_tui.cancel import CancelToken

PASTED_DIR = "pasted"
"""The folder under Smith's data folder that holds pasted clipboard images."""
TIMEOUT = 5.0
"""Seconds a clipboard tool may take."""
MAX_LIST_BYTES = 64 * 1024
"""Most bytes a tool's list of clipboard types may take."""
_SUFFIX = {"image/png": ".png", "image/jpeg": ".jpg"}
_SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")


class ClipboardError(Exception):
    """No image came from the clipboard; the message says why and what to do."""


@dataclass(frozen=True)
class _Tool:
    """One clipboard tool: how to list the clipboard's types and how to read one."""

    name: str
    list_argv: tuple[str, ...] | None
    read_argv: tuple[str, ...]  # ``{mime}`` is replaced by the chosen type


_WL_PASTE = _Tool(
    "wl-paste", ("wl-paste", "--list-types"), ("wl-paste", "--no-newline", "--type", "{mime}")
)
_XCLIP = _Tool(
    "xclip",
    ("xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"),
    ("xclip", "-selection", "clipboard", "-t", "{mime}", "-o"),
)
_PNGPASTE = _Tool("pngpaste", None, ("pngpaste", "-"))
_OSASCRIPT = _Tool("osascript", None, ("osascript", "-e", "the clipboard as «class PNGf»"))


def clipboard_tools(env: Mapping[str, str], platform: str = sys.platform) -> list[_Tool]:
    """The clipboard tools this environment suggests, in the order they are tried."""
    tools = []
    if env.get("WAYLAND_DISPLAY"):
        tools.append(_WL_PASTE)
    if env.get("DISPLAY"):
        tools.append(_XCLIP)
    if platform == "darwin":
        tools += [_PNGPASTE, _OSASCRIPT]
    return tools


def read_clipboard_image(
    env: Mapping[str, str], platform: str = sys.platform, timeout: float = TIMEOUT
) -> bytes:
    """The image bytes on the clipboard, from the first tool of :func:`clipboard_tools`
    that is installed and has one; a :class:`ClipboardError` saying why not."""
    tools = clipboard_tools(env, platform)
    if not tools:
        raise ClipboardError(
            "no desktop clipboard here (neither WAYLAND_DISPLAY nor DISPLAY is set); a "
            "terminal's own clipboard (OSC 52, over SSH too) carries no images, so save the "
            "image to a file and type @path"
        )
    path = env.get("PATH", os.defpath)
    found = [(tool, shutil.which(tool.name, path=path)) for tool in tools]
    installed = [(tool, exe) for tool, exe in found if exe]
    if not installed:
        wanted = (
            "pngpaste (brew install pngpaste)"
            if platform == "darwin"
            else ("wl-clipboard or xclip")
        )
        raise ClipboardError(f"install {wanted} to paste images from the clipboard")
    first: ClipboardError | None = None
    for tool, exe in installed:
        try:
            return _read_with(tool, str(exe), env, timeout)
        except ClipboardError as exc:
            first = first or exc
    assert first is not None
    raise first


def _read_with(tool: _Tool, exe: str, env: Mapping[str, str], timeout: float) -> bytes:
    """The image ``tool`` (found at ``exe``) reads off the clipboard."""
    mime = "image/png"
    if tool.list_argv is not None:
        code, listed, err = run_capped([exe, *tool.list_argv[1:]], env, timeout, MAX_LIST_BYTES)
        types = listed.decode("utf-8", "replace").split() if code == 0 else []
        images = [t for t in types if t.lower().startswith("image/")]
        if not images:
            held = f" (it holds {', '.join(t[:60] for t in types[:3])})" if types else ""
            why = f"; {tool.name}: {err}" if code != 0 and err else ""
            raise ClipboardError(f"no image on the clipboard{held}{why}")
        taken = [t for t in MIME_TYPES if t in (i.lower() for i in images)]
        if not taken:
            raise ClipboardError(
                f"the clipboard's image is {images[0][:60]}; Smith takes {', '.join(MIME_TYPES)} "
                "(copy it as PNG, or save it and type @path)"
            )
        mime = taken[0]
    argv = [exe, *(a.replace("{mime}", mime) for a in tool.read_argv[1:])]
    # osascript prints the PNG as hex («data PNGf…»): twice the bytes, plus the wrapper
    limit = MAX_SOURCE_BYTES * 2 + 64 if tool is _OSASCRIPT else MAX_SOURCE_BYTES
    code, data, err = run_capped(argv, env, timeout, limit)
    if code != 0 or not data:
        why = f" ({tool.name}: {err})" if err else ""
        raise ClipboardError(f"no image on the clipboard{why}")
    if tool is _OSASCRIPT:
        match = re.search(rb"data PNGf([0-9A-Fa-f]+)", data)  # inside «…»
        if match is None:
            raise ClipboardError("no image on the clipboard")
        data = bytes.fromhex(match.group(1).decode("ascii"))
    return data


def run_capped(
    argv: list[str], env: Mapping[str, str], timeout: float, limit: int
) -> tuple[int, bytes, str]:
    """Run ``argv`` (no shell, no stdin) for at most ``timeout`` seconds: its exit code, its
    output and the first line of its error output; a :class:`ClipboardError` when it cannot
    start, takes too long, or prints more than ``limit`` bytes (it is killed then)."""
    name = os.path.basename(argv[0])
    with tempfile.TemporaryFile() as errors:
        try:
            process = subprocess.Popen(  # an argv list of a fixed tool, no shell
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=errors,
                env=dict(env),
                start_new_session=True,
            )
        except OSError as exc:
            raise ClipboardError(f"{name} could not start: {exc.strerror or exc}") from None
        assert process.stdout is not None
        chunks: list[bytes] = []
        size = 0
        deadline = time.monotonic() + timeout
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(process.stdout, selectors.EVENT_READ)
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise ClipboardError(f"{name} did not answer within {timeout:g} s")
                    if not selector.select(left):
                        continue
                    chunk = os.read(process.stdout.fileno(), 1 << 16)
                    if not chunk:
                        break
                    size += len(chunk)
                    if size > limit:
                        raise ClipboardError(
                            f"the clipboard's image is over {limit // 2**20} MiB; copy a "
                            "smaller one"
                        )
                    chunks.append(chunk)
            code = process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise ClipboardError(f"{name} did not finish within {timeout:g} s") from None
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()
        errors.seek(0)
        lines = errors.read(300).decode("utf-8", "replace").strip().splitlines()
    return code, b"".join(chunks), lines[0] if lines else ""


def pasted_root(env: Mapping[str, str] | None = None) -> Path:
    """The folder pasted clipboard images are kept under (``<data_dir>/pasted``)."""
    return data_dir(env) / PASTED_DIR


def save_pasted(
    data: bytes, *, conversation: str | None, env: Mapping[str, str] | None = None
) -> tuple[Path, dict[str, Any]]:
    """The new file holding the clipboard image ``data`` (decoded and re-encoded by
    :func:`prepare_image`, so nothing of the clipboard's bytes is kept as it came) and the
    prepared image; an :class:`ImageError` when it is not an image Smith takes."""
    image = prepare_image(data, name="clipboard image")
    folder = pasted_root(env) / _SAFE_ID.sub("_", conversation or "new")
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    for part in (folder.parent, folder):
        os.chmod(part, 0o700)
    path = folder / f"clip-{secrets.token_hex(6)}{_SUFFIX.get(image['mime_type'], '.png')}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(base64.b64decode(image["data"]))
    return path, image


def read_pasted(
    raw: str, *, cancel: CancelToken | None = None, env: Mapping[str, str] | None = None
) -> tuple[str, dict[str, Any]] | None:
    """The shown name and prepared image of the ``@path`` token ``raw`` when it names a
    file under :func:`pasted_root` (read beneath that folder, under the ``read`` tool's
    rules: no symlink out, regular files only); ``None`` for any other path."""
    from smith_tui.cancel import CancelToken as Token
    from smith_tui.engine.image_files import read_image
    from smith_tui.tools.spec import ToolContext

    root = pasted_root(env)
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute() or not root.is_dir():
        return None
    try:
        Path(os.path.abspath(path)).relative_to(root)
    except ValueError:
        return None
    ctx = ToolContext(
        role="direct",
        turn_id="attach",
        cwd=root,
        cancel=cancel or Token(),
        project_root=root,
    )
    _shown, image = read_image(str(path), ctx)
    return path.name, image


__all__ = [
    "ClipboardError",
    "ImageError",
    "clipboard_tools",
    "pasted_root",
    "read_clipboard_image",
    "read_pasted",
    "save_pasted",
]
