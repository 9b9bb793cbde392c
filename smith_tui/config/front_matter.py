"""Front matter of the Markdown files users bring: commands, skills, sub-agents.

A file may open with a YAML block between two ``---`` lines (the layout Claude Code,
OpenCode and the Agent Skills format share); the rest is the body. :func:`split`
returns both; a block that is not valid YAML, or not a mapping, raises
:class:`FrontMatterError` with the file's line number, so the caller can report
"``path``:line: what is wrong" and go on with the other files.

Importing PyYAML costs a start-up 20-30 ms, more than parsing a hundred blocks, so it is
imported only when a block is parsed, and a :class:`MetaCache` (a JSON file in smith's
data folder) keeps what each block parsed to, by the block's content: a session whose
files did not change since the last one never imports it. A cached value is exactly the
parser's (a block whose value JSON cannot hold, a date say, is parsed every time), so the
cache changes nothing but the time.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smith_tui.errors import SmithError

if TYPE_CHECKING:
    import yaml

FENCE = "---"
#: Most blocks a :class:`MetaCache` keeps (the oldest used go first), the longest block it
#: keeps (characters; a longer one is parsed every time) and its file's cap: reading the
#: file is part of every session's start, so it stays small.
MAX_CACHED = 2048
MAX_CACHED_BLOCK_CHARS = 8 * 1024
MAX_CACHE_FILE_BYTES = 4 * 1024 * 1024
CACHE_FILE_NAME = "front-matter-cache.json"
_CACHE_VERSION = 1


def _loader() -> type[yaml.SafeLoader]:
    """libyaml's safe loader when PyYAML was built with it (about 10x faster: 200 command
    files parse in ~7 ms instead of ~70), else the pure-Python one; both load the same safe
    subset."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class MetaCache:
    """What front-matter blocks parsed to, by a digest of the block's text.

    ``path`` is the JSON file it is kept in (``None``: in memory only). It is read on first
    use, and :meth:`save` writes it back (atomically, mode 0600) when something was added;
    a file that cannot be read or written is no cache, never an error. Safe to share
    between threads.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._entries: dict[str, Mapping[str, Any]] | None = None
        self._changed = False
        self._lock = threading.Lock()

    @staticmethod
    def _key(block: str) -> str:
        return hashlib.blake2b(block.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()

    def _loaded(self) -> dict[str, Mapping[str, Any]]:
        if self._entries is None:
            self._entries = {}
            try:
                if self.path is not None and self.path.stat().st_size <= MAX_CACHE_FILE_BYTES:
                    data = json.loads(self.path.read_text(encoding="utf-8"))
                    if data.get("version") == _CACHE_VERSION:
                        entries = data.get("entries")
                        self._entries = {
                            str(k): v for k, v in entries.items() if isinstance(v, dict)
                        }
            except (OSError, ValueError, AttributeError):
                pass  # no cache, or one from elsewhere: parse again
        return self._entries

    def get(self, block: str) -> Mapping[str, Any] | None:
        """What ``block`` parsed to before, or ``None``."""
        if len(block) > MAX_CACHED_BLOCK_CHARS:
            return None
        key = self._key(block)
        with self._lock:
            entries = self._loaded()
            found = entries.pop(key, None)
            if found is not None:
                entries[key] = found  # the most recently used go last
            return found

    def put(self, block: str, meta: Mapping[str, Any]) -> None:
        """Keep what ``block`` parsed to, when JSON holds it exactly."""
        if len(block) > MAX_CACHED_BLOCK_CHARS:
            return
        try:
            if json.loads(json.dumps(meta, allow_nan=False)) != meta:
                return
        except (TypeError, ValueError):
            return
        with self._lock:
            entries = self._loaded()
            entries[self._key(block)] = meta
            while len(entries) > MAX_CACHED:
                del entries[next(iter(entries))]
            self._changed = True

    def save(self) -> None:
        """Write the cache file if something was added (failures are ignored)."""
        with self._lock:
            if not self._changed or self.path is None or self._entries is None:
                return
            text = json.dumps({"version": _CACHE_VERSION, "entries": self._entries})
            self._changed = False
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temp, self.path)
        except OSError:
            try:
                temp.unlink()
            except OSError:
                pass


class FrontMatterError(SmithError, ValueError):
    """A front-matter block that cannot be read; ``line`` is 1-based in the whole file.

    ``message`` is the problem alone; ``str(error)`` puts the line in front of it."""

    code = "front_matter"

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True)
class Document:
    """A file's front matter (empty when it has none) and its body."""

    meta: Mapping[str, Any] = field(default_factory=dict)
    body: str = ""
    body_line: int = 1
    """The 1-based line the body starts on (for messages about the body)."""


def split(text: str, cache: MetaCache | None = None) -> Document:
    """Split ``text`` into its front matter and body; raises :class:`FrontMatterError`.

    With ``cache`` a block parsed before is not parsed again."""
    block, body, body_line = _parts(text)
    return Document(_cached_load(block, cache) if block is not None else {}, body, body_line)


def body_of(text: str) -> str:
    """The body of ``text``, its front matter left out unparsed (all of it when the block
    is never closed)."""
    try:
        return _parts(text)[1]
    except FrontMatterError:
        return text


def _parts(text: str) -> tuple[str | None, str, int]:
    """``(block, body, the body's first line)``; ``block`` is ``None`` without front matter."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != FENCE:
        return None, text, 1
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n").rstrip() == FENCE:
            return "".join(lines[1:index]), "".join(lines[index + 1 :]), index + 2
    raise FrontMatterError("the front matter opened with --- on line 1 is never closed", 1)


def _cached_load(block: str, cache: MetaCache | None) -> Mapping[str, Any]:
    if cache is None or not block.strip():
        return _load(block)
    found = cache.get(block)
    if found is None:
        found = _load(block)  # an error is not kept: a broken block is parsed every time
        cache.put(block, found)
    return found


def _load(block: str) -> Mapping[str, Any]:
    if not block.strip():
        return {}
    import yaml

    try:
        value = yaml.load(block, Loader=_loader())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 2 if mark is not None else 2  # +1 for 1-based, +1 for the fence
        problem = exc.problem or exc.context or "not valid YAML"
        raise FrontMatterError(f"the front matter is not valid YAML: {problem}", line) from None
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"the front matter is not valid YAML: {exc}", 2) from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FrontMatterError(
            "the front matter must be key: value lines (a YAML mapping), "
            f"not a {type(value).__name__}",
            2,
        )
    return {str(key): item for key, item in value.items()}


def text_field(meta: Mapping[str, Any], key: str) -> str | None:
    """``meta[key]`` as a stripped string (numbers become text), ``None`` when absent or empty."""
    value = meta.get(key)
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    return text or None


def list_field(meta: Mapping[str, Any], key: str) -> list[str] | None:
    """``meta[key]`` as a list of names: a YAML list, or one comma-separated string.

    ``None`` when absent (callers read that as "inherit"); ``[]`` for an empty value.
    """
    value = meta.get(key)
    if value is None:
        return None
    items = value if isinstance(value, list) else str(value).split(",")
    return [str(item).strip() for item in items if str(item).strip()]
