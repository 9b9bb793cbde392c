"""Skills in the Agent Skills layout: discovery and the system prompt's list of them.

A skill is a folder holding ``SKILL.md``: YAML front matter with ``name`` and
``description``, then the instructions; other files may sit beside it. Skills are found
in ``$XDG_CONFIG_HOME/smith/skills/`` and the project's ``.smith/skills/``,
``.claude/skills/`` and ``.agents/skills/`` (in that order; on a name clash the first
wins and the other is reported).

Disclosure is progressive: only each skill's name and description go into the system
prompt (:func:`skills_block`); the model loads a body, and then the files beside it,
through the ``skill`` tool (tools/builtin/skill.py) when it decides a skill fits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from smith_tui.engine.setup_files import (
    Origin,
    SetupFileError,
    SetupProblem,
    clash,
    entries,
    read_setup_file,
)

if TYPE_CHECKING:
    from smith_tui.config.front_matter import MetaCache

SKILL_FILE = "SKILL.md"
#: The Agent Skills format's rule for names: lowercase letters, digits and hyphens.
NAME_PATTERN = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
MAX_DESCRIPTION_CHARS = 1024
#: Most skills the system prompt lists, and most characters a description takes there.
MAX_LISTED = 100
LISTED_DESCRIPTION_CHARS = 300


@dataclass(frozen=True)
class Skill:
    """One skill found on disk (its body is read only when the model loads it)."""

    name: str
    description: str
    folder: Path
    origin: Origin

    @property
    def skill_file(self) -> Path:
        """The skill's ``SKILL.md``."""
        return self.folder / SKILL_FILE


def one_line(text: str) -> str:
    """``text`` on one line: whitespace runs (newlines included) become one space and
    control characters are dropped (the text comes from a file anyone may have written)."""
    if not text.isprintable():
        text = "".join(ch for ch in text if ch.isprintable() or ch.isspace())
    return " ".join(text.split())


def read_skill(
    origin: Origin, folder: Path, cache: MetaCache | None = None
) -> Skill | SetupProblem | None:
    """The skill in ``folder``, a problem saying what is wrong with it, or ``None`` when the
    folder holds no ``SKILL.md`` (``cache``: front matter parsed before)."""
    # yaml is imported with the first file read, never with the runtime
    from smith_tui.config.front_matter import FrontMatterError, split, text_field

    path = folder / SKILL_FILE
    if not path.exists() and not path.is_symlink():
        return None
    try:
        text = read_setup_file(origin, path)
        document = split(text, cache)
    except SetupFileError as exc:
        return SetupProblem(path, 1, f"skill not loaded: {exc}")
    except FrontMatterError as exc:
        return SetupProblem(path, exc.line, f"skill not loaded: {exc.message}")
    name = text_field(document.meta, "name") or folder.name
    if not NAME_PATTERN.match(name):
        return SetupProblem(
            path,
            key_line(text, "name"),
            f"skill not loaded: the name {name!r} must be lowercase letters, digits and "
            "hyphens (at most 64, no hyphen at either end)",
        )
    description = one_line(text_field(document.meta, "description") or "")
    if not description:
        return SetupProblem(
            path,
            key_line(text, "description"),
            "skill not loaded: the front matter needs a description (what the skill does "
            "and when to use it), e.g. description: Fill in PDF forms",
        )
    if len(description) > MAX_DESCRIPTION_CHARS:
        description = description[: MAX_DESCRIPTION_CHARS - 1] + "…"
    return Skill(name, description, folder, origin)


def key_line(text: str, key: str) -> int:
    """The line of ``key:`` in the front matter of ``text`` (1 when it is not there)."""
    lines = text.splitlines()[:400]
    return next((n for n, line in enumerate(lines, 1) if line.startswith(f"{key}:")), 1)


def discover_skills(
    folders: list[Origin], cache: MetaCache | None = None
) -> tuple[list[Skill], list[SetupProblem]]:
    """Every skill in ``folders`` (first origin wins a name), and the problems found."""
    skills: dict[str, Skill] = {}
    problems: list[SetupProblem] = []
    for origin in folders:
        for entry in entries(origin):
            # A folder that leads out of the project is refused by the reader (a notice).
            found = read_skill(origin, Path(entry.path), cache)
            if isinstance(found, SetupProblem):
                problems.append(found)
            elif found is not None:
                first = skills.setdefault(found.name, found)
                if first is not found:
                    problems.append(clash("skill", found.name, found.skill_file, first.skill_file))
    return sorted(skills.values(), key=lambda s: s.name), problems


def skills_block(skills: list[Skill]) -> str:
    """The system prompt's ``## Skills`` block: names and descriptions only (``""`` when
    there are none); the same skills always give the same text."""
    if not skills:
        return ""
    lines = [
        "## Skills",
        "Skills are instructions for particular kinds of task, written by the user or the "
        'project. When a task matches a skill\'s description, load it with skill(name="...") '
        "before you start and follow it; a skill may name files beside it, loaded with "
        'skill(name="...", file="...").',
    ]
    for skill in skills[:MAX_LISTED]:
        text = skill.description
        if len(text) > LISTED_DESCRIPTION_CHARS:
            text = text[: LISTED_DESCRIPTION_CHARS - 1] + "…"
        lines.append(f"- {skill.name}: {text}")
    if len(skills) > MAX_LISTED:
        lines.append(f"- … and {len(skills) - MAX_LISTED} more (/skills lists them)")
    return "\n".join(lines)
