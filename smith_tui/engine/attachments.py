"""``@path`` in a prompt: attach that file's text to the user message.

The prompt completion inserts ``@path`` tokens; :func:`attach_files` finds them (an ``@``
at the start of a word), reads each file under the rules of the ``read`` tool (the same
path policy: inside the project root or ``services.tool.extra_roots``, regular files only,
the same byte cap, cut to ``services.tool.read.max_output_chars``) and appends the texts
to the message the model gets, after the prompt. The message keeps what was typed and
what was attached in its metadata (``prompt``, ``attachments``), so a front end shows the
prompt with a small marker per file (:func:`display_text`) instead of the file text. An
``@path`` that cannot be attached (missing, outside the project, a FIFO…) becomes a
notice; the prompt still goes, with the token as typed.

``@server:uri``, where ``server`` is a configured MCP server, attaches that server's
resource instead (:func:`attach`, read through a :class:`ResourceSource`, bounded and
counted like a file).

An ``@path`` that names an image (``.png``, ``.jpg``, ``.gif``, ``.webp``) is read as one
(:mod:`smith_tui.engine.image_files`: the same path policy, resized and re-encoded) and
kept in the message's metadata under :data:`~smith_tui.engine.prompt_images.IMAGES_KEY`; its
attachment entry has ``kind: "image"`` and the size, and its marker is ``🖼 shot.png
(1280×720)``. Whether the model gets it is the driver's call (the model's catalog entry).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from smith_tui.cancel import CancelToken
from smith_tui.errors import error_text

if TYPE_CHECKING:
    from smith_tui.config.schema import SmithConfig
    from smith_tui.tools.spec import ToolContext

#: Most files one prompt attaches (later ``@path`` tokens are left as typed).
MAX_ATTACHMENTS = 10
#: Most characters all attachments of one prompt add together.
MAX_TOTAL_CHARS = 120_000

_TOKEN = re.compile(r"(?<!\S)@(\S+)")
_TRAILING = ",;:!?)]}'\""
ATTACHED_HEADER = "[attached file: {path}]"
RESOURCE_HEADER = "[attached MCP resource: {path}]"


class ResourceSource(Protocol):
    """Where ``@server:uri`` resources come from (the session's MCP servers)."""

    def resource_servers(self) -> Collection[str]:
        """The names ``server`` of ``@server:uri`` may take."""
        ...

    async def read_resource(self, name: str, uri: str) -> str:
        """The text of resource ``uri`` of server ``name`` (raises when it cannot be read)."""
        ...


@dataclass
class Attached:
    """The user message's content with its attachments, and what could not be attached."""

    content: str
    attachments: list[dict[str, Any]] = field(default_factory=list)
    """One entry per attached file: ``path``, ``lines``, ``chars``, ``cut``."""
    problems: list[str] = field(default_factory=list)
    """One line per ``@path`` that was not attached, saying why."""
    images: list[dict[str, Any]] = field(default_factory=list)
    """The images ``@path`` tokens named (engine/prompt_images.py), in order."""

    def metadata(self, prompt: str) -> dict[str, Any]:
        """The user message's metadata (empty when nothing was attached)."""
        if not self.attachments:
            return {}
        metadata: dict[str, Any] = {"prompt": prompt, "attachments": list(self.attachments)}
        if self.images:
            from smith_tui.engine.prompt_images import IMAGES_KEY

            metadata[IMAGES_KEY] = list(self.images)
        return metadata


def mentioned_paths(prompt: str) -> list[str]:
    """The ``@path`` tokens of ``prompt``, in order, each once."""
    seen: list[str] = []
    for match in _TOKEN.finditer(prompt):
        raw = match.group(1)
        if raw not in seen:
            seen.append(raw)
    return seen


def resource_token(raw: str, servers: Collection[str]) -> tuple[str, str] | None:
    """``(server, uri)`` when the ``@`` token ``raw`` is ``server:uri`` of a known server."""
    server, colon, uri = raw.partition(":")
    if colon and uri and server in servers:
        return server, uri
    return None


async def attach(
    prompt: str,
    *,
    cwd: Path,
    project_root: Path | None,
    config: SmithConfig,
    role: str = "direct",
    cancel: CancelToken | None = None,
    resources: ResourceSource | None = None,
) -> Attached:
    """:func:`attach_files`, with ``@server:uri`` tokens read from ``resources`` first."""
    read: dict[str, str | Exception] = {}
    servers = resources.resource_servers() if resources is not None else ()
    for raw in mentioned_paths(prompt):
        found = resource_token(raw, servers)
        if found is None or resources is None or len(read) >= MAX_ATTACHMENTS:
            continue
        server, uri = found
        stripped = uri.rstrip(_TRAILING + ".")
        for candidate in dict.fromkeys([uri, stripped] if stripped else [uri]):
            try:
                read[raw] = await resources.read_resource(server, candidate)
                break
            except Exception as exc:  # said as a notice; the prompt still goes
                read.setdefault(raw, exc)
    return await asyncio.to_thread(
        attach_files,
        prompt,
        cwd=cwd,
        project_root=project_root,
        config=config,
        role=role,
        cancel=cancel,
        resources=read,
    )


def attach_files(
    prompt: str,
    *,
    cwd: Path,
    project_root: Path | None,
    config: SmithConfig,
    role: str = "direct",
    cancel: CancelToken | None = None,
    resources: Mapping[str, str | Exception] | None = None,
) -> Attached:
    """Read the files named by ``@path`` in ``prompt`` and build the user message content.

    ``resources`` holds the ``@server:uri`` tokens already read (their text, or why not).
    """
    tokens = mentioned_paths(prompt)
    if not tokens:
        return Attached(prompt)
    # The tools layer loads here, not with this module: the app's transcript imports
    # display_text while it paints its first frame.
    from smith_tui.tools.args import max_output_chars
    from smith_tui.tools.spec import ToolContext, ToolError

    ctx = ToolContext(
        role=role,
        turn_id="attach",
        cwd=cwd,
        cancel=cancel or CancelToken(),
        config=config,
        project_root=project_root,
    )
    per_file = max_output_chars(ctx, "read")
    result = Attached(prompt)
    blocks: list[str] = []
    used = 0
    for raw in tokens:
        if len(result.attachments) >= MAX_ATTACHMENTS:
            result.problems.append(
                f"@{raw}: not attached, a prompt attaches at most {MAX_ATTACHMENTS} files"
            )
            continue
        if (resources is None or raw not in resources) and _image_token(raw):
            _attach_image(raw, ctx, result)
            continue
        room = min(per_file, MAX_TOTAL_CHARS - used)
        if room <= 0:
            result.problems.append(
                f"@{raw}: not attached, the attachments already hold {MAX_TOTAL_CHARS:,} characters"
            )
            continue
        header = ATTACHED_HEADER
        try:
            if resources is not None and raw in resources:
                shown, text, cut, lines = _resource(raw, resources[raw], room)
                header = RESOURCE_HEADER
            else:
                shown, text, cut, lines = _read(raw, ctx, room)
        except ToolError as exc:
            result.problems.append(f"@{raw}: not attached: {exc.message}")
            continue
        used += len(text)
        blocks.append(f"{header.format(path=shown)}\n{text}")
        if cut:
            blocks[-1] += f"\n[cut: only the first {len(text):,} characters are attached]"
        result.attachments.append({"path": shown, "lines": lines, "chars": len(text), "cut": cut})
    if blocks:
        result.content = prompt + "\n\n" + "\n\n".join(blocks)
    return result


def _image_token(raw: str) -> bool:
    """Whether the ``@`` token names an image file (trailing punctuation aside)."""
    from smith_tui.engine.prompt_images import is_image_path

    return is_image_path(raw) or is_image_path(raw.rstrip(_TRAILING + "."))


def _attach_image(raw: str, ctx: ToolContext, result: Attached) -> None:
    """Read the image ``@raw`` names into ``result`` (or say why not in its problems)."""
    from smith_tui.engine.clipboard_image import read_pasted
    from smith_tui.engine.image_files import read_image
    from smith_tui.engine.prompt_images import MAX_IMAGES, ImageError
    from smith_tui.tools.spec import ToolError

    if len(result.images) >= MAX_IMAGES:
        result.problems.append(f"@{raw}: not attached, a prompt takes at most {MAX_IMAGES} images")
        return
    stripped = raw.rstrip(_TRAILING + ".")
    problem: str | None = None
    for candidate in dict.fromkeys([raw, stripped] if stripped else [raw]):
        try:
            # a clipboard image the prompt's paste key saved in Smith's data folder
            pasted = read_pasted(candidate, cancel=ctx.cancel)
            shown, image = pasted if pasted is not None else read_image(candidate, ctx)
        except (ToolError, ImageError) as exc:
            problem = problem or str(exc)
            continue
        thumbnail = image.pop("thumbnail", None)  # the transcript's, not the model's
        result.images.append(image)
        result.attachments.append(
            {
                "path": shown,
                "kind": "image",
                "width": image["width"],
                "height": image["height"],
                "bytes": len(image["data"]) * 3 // 4,
                "thumbnail": thumbnail,
            }
        )
        return
    result.problems.append(f"@{raw}: not attached: {problem}")


def _resource(raw: str, read: str | Exception, room: int) -> tuple[str, str, bool, int]:
    """One ``@server:uri`` already read: as :func:`_read` returns a file."""
    from smith_tui.tools.spec import ToolError

    if isinstance(read, Exception):
        raise ToolError(error_text(read))
    text, cut = read, False
    if len(text) > room:
        text, cut = text[:room], True
    return raw, text, cut, text.count("\n") + (0 if text.endswith("\n") else 1)


def _read(raw: str, ctx: ToolContext, room: int) -> tuple[str, str, bool, int]:
    """Read one ``@path``: its shown path, text (at most ``room`` characters), whether it
    was cut, and its line count. A token with trailing punctuation is tried without it."""
    from smith_tui.tools.files import max_file_bytes, read_text_file, resolve_for_tool
    from smith_tui.tools.spec import ToolError

    candidates = [raw]
    stripped = raw.rstrip(_TRAILING + ".")
    if stripped and stripped != raw:
        candidates.append(stripped)
    error: ToolError | None = None
    for candidate in candidates:
        try:
            target = resolve_for_tool(candidate, ctx, tool="read")
            limit = min(max_file_bytes(ctx, "read"), room * 4)
            read = read_text_file(target, ctx, tool="read", limit=limit, allow_cut=True)
        except ToolError as exc:
            error = error or exc
            continue
        text, cut = read.text, read.cut
        if len(text) > room:
            text, cut = text[:room], True
        root = target.root
        try:
            shown = target.real.relative_to(root).as_posix()
        except ValueError:
            shown = str(target.shown)
        return shown, text, cut, text.count("\n") + (0 if text.endswith("\n") else 1)
    assert error is not None
    raise error


def display_text(content: str, metadata: Mapping[str, Any] | None) -> str:
    """What a front end shows for a user message: the typed prompt, one marker line per
    attached file and one for a review note the prompt carried (``content`` as is for a
    message with neither)."""
    attachments = (metadata or {}).get("attachments") or []
    prompt = (metadata or {}).get("prompt")
    review = (metadata or {}).get("review")
    if not (attachments or review) or not isinstance(prompt, str):
        return content
    lines = [prompt, *(attachment_marker(a) for a in attachments)]
    if review:
        lines.append("↺ told the model what your review of its changes reverted")
    return "\n".join(lines)


def attachment_marker(attachment: Mapping[str, Any]) -> str:
    """``📎 src/app.py (120 lines)``, with ``, cut`` when only a part was attached; an
    image is ``🖼 shot.png (1280×720)``, with why when it did not go to the model."""
    if attachment.get("kind") == "image":
        name = Path(str(attachment.get("path"))).name
        size = f"{attachment.get('width')}×{attachment.get('height')}"
        unsent = attachment.get("not_sent")
        return f"🖼 {name} ({size}{f', not sent: {unsent}' if unsent else ''})"
    lines = int(attachment.get("lines") or 0)
    cut = ", cut" if attachment.get("cut") else ""
    return f"📎 {attachment.get('path')} ({lines} line{'s' if lines != 1 else ''}{cut})"
