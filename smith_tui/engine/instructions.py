"""Project instructions: the ``AGENTS.md`` files a turn's system prompt carries (docs/DESIGN.md §5.2).

Three layers, read in this order and shown in it:

1. **user** — ``$XDG_CONFIG_HOME/smith/AGENTS.md`` (``~/.config/smith/AGENTS.md``): the
   user's own rules for every project;
2. **repository** — ``AGENTS.md`` at the repository root (the working directory outside a
   repository);
3. **folder** — the nearest ``AGENTS.md`` between the turn's working directory and the
   root (the root excluded): "work under a folder" means the turn's working directory is
   that folder or below it. Only that nearest one is loaded; the prompt states the rule
   that a nested file governs the files below its folder, so the model reads the file of
   another folder before changing files there.

In every folder ``CLAUDE.md`` stands in when there is no ``AGENTS.md``. Files are read under
the index file's rules (:func:`smith_tui.engine.bounded_text.read_bounded`): regular files only
(never a FIFO or device), project files only when they resolve inside the project, each cut
at :data:`MAX_FILE_BYTES`, all together at :data:`MAX_TOTAL_BYTES`; what is cut is named in
the prompt and in the turn's warnings. The block has no clock or counter in it: the same
files give the same bytes, so the provider's prompt cache holds across a session.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from smith_tui.engine.bounded_text import read_bounded
from smith_tui.engine.window import tokens_for_chars

#: The file names looked for in each folder, the first found wins.
FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
#: Most bytes of one instruction file placed in the system prompt.
MAX_FILE_BYTES = 32 * 1024
#: Most bytes of all instruction files together.
MAX_TOTAL_BYTES = 64 * 1024
#: A file that would get less than this of the total is left out rather than cut to a stub.
MIN_SHOWN_BYTES = 1024

LAYER_TITLES = {"user": "Your instructions", "repository": "Repository", "folder": "Folder"}

RULE = (
    "Instruction files, most general first: the user's, the repository root's, then the one "
    "nearest the working directory. Where they disagree the later, more specific file wins. "
    "A folder below the repository root may hold its own AGENTS.md (CLAUDE.md where it has "
    "none); it applies to the files below that folder. Only the file nearest the working "
    "directory is loaded here: before changing files under another folder, read that "
    "folder's AGENTS.md if it has one."
)


@dataclass(frozen=True)
class InstructionFile:
    """One instruction file in the prompt: its layer, where it is, and what of it is shown."""

    layer: str
    """``user``, ``repository`` or ``folder``."""
    path: Path
    shown_as: str
    """The name in the prompt's heading: relative to the project root, or the full path."""
    text: str
    size: int
    """Its size on disk, in bytes."""
    shown: int
    """The bytes of it the prompt holds (``0``: left out, the total cap was reached)."""

    @property
    def cut(self) -> bool:
        """Whether the prompt holds less than the whole file."""
        return self.shown < self.size

    @property
    def tokens(self) -> int:
        """The estimated tokens it adds to every request."""
        return tokens_for_chars(len(self.text)) if self.shown else 0

    @property
    def heading(self) -> str:
        """The ``###`` heading naming the file in the prompt."""
        title = f"### {LAYER_TITLES.get(self.layer, self.layer)}: {self.shown_as}"
        if self.layer == "folder":
            folder = Path(self.shown_as).parent.as_posix()
            title += f" (applies to the files under {folder}/)"
        return title


def find_instructions(
    cwd: Path,
    project_root: Path,
    user_dir: Path | None,
    warnings: list[str],
    *,
    skip: Sequence[Path] = (),
    max_file_bytes: int = MAX_FILE_BYTES,
    max_total_bytes: int = MAX_TOTAL_BYTES,
) -> tuple[InstructionFile, ...]:
    """The instruction files of a turn in ``cwd``, in prompt order (see the module doc).

    ``user_dir`` is the user's smith folder (``None``: no user layer); files whose resolved
    path is in ``skip`` (the index file, when it names one of these) are not read twice.
    Problems (a FIFO, a file outside the project, a cut) are added to ``warnings``.
    """
    skipped = {p.resolve() for p in skip}
    cwd, project_root = cwd.resolve(), project_root.resolve()
    found: list[InstructionFile] = []
    budget = max_total_bytes
    for layer, folder, inside in _layers(cwd, project_root, user_dir):
        for name in FILE_NAMES:
            path = folder / name
            if not path.exists() and not path.is_symlink():
                continue
            if path.resolve() in skipped:
                break
            shown_as = _shown_as(path, project_root, inside)
            limit = min(max_file_bytes, budget)
            if limit < MIN_SHOWN_BYTES:
                size = _size(path)
                found.append(InstructionFile(layer, path, shown_as, "", size, 0))
                warnings.append(
                    f"{shown_as} was left out of the system prompt: the instruction files "
                    f"reach the cap of {max_total_bytes} bytes together"
                )
                break
            read = read_bounded(path, limit, warnings, label=shown_as, inside=inside)
            if read is None:
                break  # missing between the checks, or refused with a warning
            if read.cut:
                warnings.append(
                    f"{shown_as} is {read.size} bytes; only the first {read.shown} are in the "
                    "system prompt"
                )
            budget -= read.shown
            found.append(InstructionFile(layer, path, shown_as, read.text, read.size, read.shown))
            break
    return tuple(found)


def instructions_block(files: Sequence[InstructionFile]) -> str:
    """The ``## Project instructions`` block: the rule, then each file under its heading."""
    if not files:
        return ""
    parts = ["## Project instructions", RULE]
    for item in files:
        parts.append(item.heading)
        if not item.shown:
            parts.append(
                f"[{item.shown_as} left out: the instruction files reached their size cap]"
            )
            continue
        body = item.text.strip("\n")
        if item.cut:
            body += (
                f"\n\n[{item.shown_as} cut: showing the first {item.shown} of {item.size} bytes]"
            )
        parts.append(body)
    return "\n\n".join(parts)


def _layers(
    cwd: Path, project_root: Path, user_dir: Path | None
) -> list[tuple[str, Path, Path | None]]:
    """``(layer, folder, the folder files must stay inside)`` in prompt order."""
    layers: list[tuple[str, Path, Path | None]] = []
    if user_dir is not None:
        layers.append(("user", user_dir, None))
    layers.append(("repository", project_root, project_root))
    if cwd != project_root and project_root in cwd.parents:
        folder = cwd
        while folder != project_root:
            if any((folder / name).exists() or (folder / name).is_symlink() for name in FILE_NAMES):
                layers.append(("folder", folder, project_root))
                break
            folder = folder.parent
    return layers


def _shown_as(path: Path, project_root: Path, inside: Path | None) -> str:
    if inside is None:
        return str(path)
    return path.relative_to(project_root).as_posix()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
