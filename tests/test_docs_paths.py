"""The docs name only files and code that exist.

docs/ARCHITECTURE.md is the page a newcomer reads to find a seed section's code in
one hop, and docs/DESIGN.md names the folders of each layer: a renamed module, class
or function leaves them pointing at nothing. Every backticked path in both must
exist; every backticked class, constant or ``Class.member`` in ARCHITECTURE.md must
be defined in the source, and every other backticked identifier there must still
occur in it (a function renamed away fails).
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("docs/ARCHITECTURE.md", "docs/DESIGN.md")
SOURCES = (ROOT / "smith_tui", ROOT / "widgets")

#: The first segment of a backticked path: a top-level folder or a package of smith_tui.
PATH_ROOTS = frozenset(
    {"smith_tui", "widgets", "styles", "data", "docs", "tests", "bench", ".ci"}
    | {p.name for p in (ROOT / "smith_tui").iterdir() if p.is_dir()}
)
PATH = re.compile(r"[\w.-]+(/[\w.*-]*)+|[\w-]+\.py")
#: ``Class``, ``CONSTANT``, ``Class.member`` (a trailing call ``(…)`` is allowed).
CLASS_NAME = re.compile(r"(_?[A-Z]\w*)(?:\.(\w+))?(?:\(.*\))?")
#: ``function``, ``module.function``, ``_private`` (a trailing call ``(…)`` is allowed).
IDENTIFIER = re.compile(r"(_?[a-z]\w*(?:\.\w+)*)(?:\(.*\))?")
#: Names from elsewhere the architecture page mentions: pydantic's ``Field``, Python's ``None``.
NOT_OURS = frozenset({"Field", "None"})


def _backticked(doc: str) -> list[str]:
    return re.findall(r"`([^`\n]+)`", (ROOT / doc).read_text(encoding="utf-8"))


def _paths(doc: str) -> list[str]:
    found = []
    for token in _backticked(doc):
        if not PATH.fullmatch(token):
            continue
        if "/" in token and token.split("/")[0] not in PATH_ROOTS:
            continue  # a protocol method (``session/request_permission``), not a file
        found.append(token)
    return sorted(set(found))


def _exists(token: str) -> bool:
    for base in (ROOT, ROOT / "smith_tui"):
        if "*" in token:
            if any(base.glob(token)):
                return True
        elif (base / token).exists():
            return True
    return False


@cache
def _trees() -> list[ast.Module]:
    return [
        ast.parse(path.read_text(encoding="utf-8"))
        for folder in SOURCES
        for path in folder.rglob("*.py")
    ]


@cache
def _source_text() -> str:
    return "\n".join(
        path.read_text(encoding="utf-8") for folder in SOURCES for path in folder.rglob("*.py")
    )


def _assigned(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


@cache
def _defined() -> dict[str, list[ast.ClassDef]]:
    """Every name defined anywhere (functions, classes, assignments), with its classes."""
    names: dict[str, list[ast.ClassDef]] = {}
    for tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                names.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.setdefault(node.name, [])
            for name in _assigned(node):
                names.setdefault(name, [])
    return names


def _members(cls: ast.ClassDef, seen: frozenset[str] = frozenset()) -> set[str]:
    """What a class defines: methods, class attributes, ``self.x = …``, and its bases' members."""
    found: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.add(node.name)
        found.update(_assigned(node))
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                if target.value.id == "self":
                    found.add(target.attr)
    for base in cls.bases:
        name = base.id if isinstance(base, ast.Name) else None
        if name and name not in seen:
            for parent in _defined().get(name, []):
                found |= _members(parent, seen | {cls.name})
    return found


@pytest.mark.parametrize("doc", DOCS)
def test_every_path_in_the_docs_exists(doc: str) -> None:
    paths = _paths(doc)
    assert paths, f"no backticked path found in {doc}: the extraction is broken"
    missing = [p for p in paths if not _exists(p)]
    assert not missing, f"{doc} names paths that do not exist: {missing}"


def test_every_class_and_member_the_architecture_names_is_defined() -> None:
    defined = _defined()
    wrong = []
    checked = 0
    for token in sorted(set(_backticked("docs/ARCHITECTURE.md"))):
        match = CLASS_NAME.fullmatch(token)
        if not match or match.group(1) in NOT_OURS:
            continue
        checked += 1
        name, member = match.groups()
        if name not in defined:
            wrong.append(f"{token}: {name} is not defined")
        elif member and not any(member in _members(cls) for cls in defined[name]):
            wrong.append(f"{token}: {name} has no {member}")
    assert checked > 50, f"only {checked} names checked: the extraction is broken"
    assert not wrong, "docs/ARCHITECTURE.md names code that is not there:\n" + "\n".join(wrong)


def test_every_identifier_the_architecture_names_occurs_in_the_source() -> None:
    text = _source_text()
    wrong = []
    for token in sorted(set(_backticked("docs/ARCHITECTURE.md"))):
        match = IDENTIFIER.fullmatch(token)
        if not match or PATH.fullmatch(token):
            continue
        for part in match.group(1).split("."):
            if not re.search(rf"\b{re.escape(part)}\b", text):
                wrong.append(f"{token}: {part}")
    assert not wrong, "docs/ARCHITECTURE.md names what the source never mentions:\n" + (
        "\n".join(wrong)
    )


def test_a_renamed_name_fails() -> None:
    # The checks above would pass on any page if the lookups found everything.
    assert "TurnLoop" in _defined()
    assert "run" in _members(_defined()["TurnLoop"][0])
    assert "no_such_method" not in _members(_defined()["TurnLoop"][0])
    assert "NoSuchClass" not in _defined()
    assert not _exists("engine/no_such_module.py")
    assert _exists("engine/turn/loop.py") and _exists("data/prompts/*.md")
