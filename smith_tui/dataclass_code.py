"""The code the ``dataclasses`` module compiles for each class, kept between starts.

``@dataclass`` writes a class's ``__init__``, ``__repr__``, ``__eq__`` (and, frozen,
``__setattr__``, ``__delattr__``, ``__hash__``) as source text and compiles it, on every
start: about 230 classes on a headless turn's path (ours, pydantic's, anyio's, h11's) and
more with Textual's, a fifth of the turn's CPU. The text is the same from one start to the
next, so the code compiled from it is kept on disk, keyed by the exact text, and reused:
each class gets the code object ``compile`` would have made of that text, so the classes
are the same.

The ``dataclasses`` module runs that text with ``exec``; :func:`install` gives the module
its own ``exec`` (a module's global shadows the builtin) that looks the text up first. The
file maps each text to its code as ``marshal.dumps`` wrote it, unmarshalled when a class
asks for that text (:class:`StoredCodes`). It is read only when it is a regular file of
this user that no one else may write (as Python's own bytecode cache is trusted), anything
else in it is ignored, and it is written whole to a new file renamed over the old one.
"""

from __future__ import annotations

import atexit
import builtins
import importlib.util
import marshal
import os
import stat
import sys
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

MAX_ENTRIES = 6_000
"""Most texts kept. Past it (old versions' classes piling up) only the last run's are kept."""

MAX_BYTES = 16 * 1024 * 1024
"""A larger file is not read (about 1 KB an entry)."""


def cache_path(folder: Path) -> Path:
    """The cache file in ``folder``, named for this interpreter's bytecode format."""
    magic = importlib.util.MAGIC_NUMBER.hex()
    return folder / f"dataclass-code.v2.{sys.implementation.cache_tag}.{magic}.marshal"


class StoredCodes(Mapping[str, types.CodeType]):
    """The file's texts and their code, each code kept marshalled until a class asks for it.

    A start uses some of the entries (a headless turn about 1,000 of the file's 1,400, the
    app's first frame about 60): unmarshalling every code object at once cost 3-4 ms before
    the app's first frame, and the memory of the unused ones. An entry that does not
    unmarshal to code is missing (its text is compiled instead).
    """

    def __init__(self, blobs: dict[str, bytes] | None = None) -> None:
        self.blobs: dict[str, bytes] = blobs if blobs is not None else {}
        """Each text's code, as ``marshal.dumps`` wrote it."""

    def __getitem__(self, text: str) -> types.CodeType:
        try:
            code = marshal.loads(self.blobs[text])
        except (EOFError, ValueError, TypeError):
            raise KeyError(text) from None
        if not isinstance(code, types.CodeType):
            raise KeyError(text)
        return code

    def __iter__(self) -> Iterator[str]:
        return iter(self.blobs)

    def __len__(self) -> int:
        return len(self.blobs)


def _read(path: Path) -> StoredCodes:
    """The texts and code in ``path``; empty when it is missing, not ours or not a cache."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return StoredCodes()
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.geteuid()
            or info.st_mode & 0o022
            or info.st_size > MAX_BYTES
        ):
            return StoredCodes()
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError:
        return StoredCodes()
    finally:
        os.close(fd)
    try:
        loaded = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return StoredCodes()
    if not isinstance(loaded, dict):
        return StoredCodes()
    return StoredCodes(
        {
            text: blob
            for text, blob in loaded.items()
            if isinstance(text, str) and isinstance(blob, bytes)
        }
    )


class CodeCache:
    """Compiled dataclass methods by their source text, read from and saved to ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.codes = _read(path)
        self.new: dict[str, types.CodeType] = {}
        """What this run compiled that the file did not have (kept until saved)."""

    @property
    def added(self) -> int:
        """How many texts this run compiled that are not saved yet."""
        return len(self.new)

    def exec(
        self, source: Any, globals: Any = None, locals: Any = None, /
    ) -> None:  # the builtin's signature: the dataclasses module calls it as ``exec``
        """``exec`` with a source text's code taken from the cache (compiled once)."""
        if isinstance(source, str):
            code = self.codes.get(source) or self.new.get(source)
            if code is None:
                # dont_inherit: compiled as the builtin would compile it for the
                # dataclasses module, without this module's ``from __future__`` flags.
                code = compile(source, "<string>", "exec", dont_inherit=True)
                self.new[source] = code
            source = code
        builtins.exec(source, globals, locals)

    def release(self) -> None:
        """Let go of what was read (start-up is over: about 2 MB of texts and code that
        the classes made no longer need). Later classes are compiled and saved as new."""
        self.codes = StoredCodes()

    def save(self) -> None:
        """Add what this run compiled to the file (errors are ignored: it is only a
        cache). Past :data:`MAX_ENTRIES` the file starts again from what this run compiled."""
        if not self.new:
            return
        new, self.new = self.new, {}
        added = {text: marshal.dumps(code) for text, code in new.items()}
        blobs = {**(self.codes or _read(self.path)).blobs, **added}
        if len(blobs) > MAX_ENTRIES:
            blobs = added
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        try:
            data = marshal.dumps(blobs)
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(
                temporary,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
            )
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temporary, self.path)
        except (OSError, ValueError):
            temporary.unlink(missing_ok=True)
        if self.codes:
            self.codes.blobs.update(added)


installed: CodeCache | None = None
"""The cache :func:`install` put in place in this process (``None`` before)."""


def install(folder: Path) -> CodeCache:
    """Give the ``dataclasses`` module the cache's ``exec`` (once per process) and save the
    cache at exit; returns it (``save()`` may be called earlier, once start-up is done)."""
    global installed
    if installed is None:
        import dataclasses

        installed = CodeCache(cache_path(folder))
        setattr(dataclasses, "exec", installed.exec)  # noqa: B010 - no such name in its stubs
        atexit.register(installed.save)
    return installed
