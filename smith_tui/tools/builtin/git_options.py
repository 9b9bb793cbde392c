"""What the ``git`` tool accepts: its subcommands, each one's options with a check of each
value, the flags it forces and the ones it refuses, and where a revision or path may point
(never outside the project). :mod:`smith_tui.tools.builtin.git_argv` reads a request
against these tables.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from smith_tui.tools.args import bad_arguments
from smith_tui.tools.spec import ToolError

NAME = "git"
GitCommand = Literal["status", "log", "diff", "show", "blame"]
"""A git subcommand the tool runs."""
COMMANDS: tuple[str, ...] = get_args(GitCommand)
MAX_ARGS = 64
MAX_ARG_CHARS = 4096

FORCED_FLAGS: dict[str, tuple[str, ...]] = {
    "status": ("--ignore-submodules=all",),
    "log": ("--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=all"),
    "diff": ("--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=all"),
    "show": ("--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=all"),
    "blame": ("--no-textconv",),
}

# Options refused with a specific reason (any subcommand).
REFUSED: dict[str, str] = {
    "--output": "writes its output to a file",
    "-o": "writes its output to a file",
    "--output-directory": "writes files",
    "--ext-diff": "runs an external diff program",
    "--textconv": "runs textconv filter programs",
    "-c": "could set configuration (use --cc for combined diffs)",
    "--config-env": "sets configuration",
    "--exec": "runs a program",
    "--exec-path": "runs programs from another folder",
    "--upload-pack": "runs a program",
    "--receive-pack": "runs a program",
    "--git-dir": "points git at another repository",
    "--work-tree": "points git at another work tree",
    "-C": "could point git at another folder (use --find-copies for copy detection)",
    "--namespace": "changes the ref namespace",
    "--no-index": "compares files outside the repository",
    "--open-files-in-pager": "runs a pager program",
    "-O": "reads an order file",
    "--contents": "reads a file from outside the repository history",
    "--ignore-revs-file": "reads a file",
    "--show-signature": "runs gpg",
    "--remerge-diff": "writes temporary objects into the repository",
    "--stdin": "reads standard input",
    "--exit-code": "changes the exit status",
    "--quiet": "changes the exit status",
    "--ignore-submodules": "is fixed to 'all' so that submodules' own config never runs",
    "--submodule": "would run git inside submodules",
    "--color": "is disabled (plain text output only)",
    "--color-words": "is disabled (plain text output only)",
    "--color-moved": "is disabled (plain text output only)",
}


def _bad(message: str) -> ToolError:
    return bad_arguments(NAME, message)


# --------------------------------------------------------------------------- paths and revisions

_MAGIC_WORDS = ("top", "literal", "glob", "icase", "exclude")
_SHORT_MAGIC = "/!^"


def _outside(text: str, base: Path, root: Path, *, follow: bool = True) -> bool:
    """Whether ``text`` (relative to ``base``) names something outside ``root``.

    The check is lexical, as git normalises paths; with ``follow`` a path that
    is absolute or has ``..`` parts must also stay inside once symlinks are
    followed.
    """
    raw = text.replace("\\", "/")
    joined = raw if raw.startswith("/") else f"{base}/{raw}"
    candidates = [Path(os.path.normpath(joined))]
    if follow and (raw.startswith("/") or ".." in raw.split("/")):
        candidates.append(Path(joined).resolve())
    return any(full != root and root not in full.parents for full in candidates)


def _check_tree_paths(value: str, root: Path, top: Path) -> None:
    """Refuse ``rev:path`` (and ``:stage:path``) lookups whose path climbs out of the project.

    Every text after a ``:`` is checked, since a revision such as
    ``main@{10:00}:path`` can hold colons of its own. Such a path is relative to
    the repository top, or to the project root when it starts with ``./`` or ``../``.
    """
    for index, char in enumerate(value):
        if char != ":":
            continue
        path = value[index + 1 :]
        relative = path in (".", "..") or path.startswith(("./", "../"))
        base = root if relative else top
        if _outside(path.lstrip("/"), base, root, follow=False):
            raise _bad(
                f"{value!r} names the path {path!r}, which is outside the project root {root}"
            )


def _check_magic(value: str, root: Path, top: Path) -> None:
    """Check a ``:``-pathspec (``:/x``, ``:!x``, ``:(top,icase)x``) or ``:path`` lookup."""
    body = value[1:]
    if body.startswith("("):
        close = body.find(")")
        if close < 0:
            raise _bad(f"pathspec {value!r} has no ')' closing its magic words")
        words = [word.strip() for word in body[1:close].split(",") if word.strip()]
        for word in words:
            if word not in _MAGIC_WORDS:
                raise _bad(
                    f"pathspec magic {word!r} in {value!r} is not supported; use "
                    f"{', '.join(_MAGIC_WORDS)}"
                )
        rest, from_top = body[close + 1 :], "top" in words
    else:
        count = len(body) - len(body.lstrip(_SHORT_MAGIC))
        signs, rest = body[:count], body[count:]
        if count and rest.startswith(":"):
            rest = rest[1:]
        from_top = "/" in signs
    if _outside(rest, top if from_top else root, root):
        raise _bad(f"pathspec {value!r} is outside the project root {root}")
    _check_tree_paths(value, root, top)


def check_path(value: str, root: Path, top: Path | None = None) -> str:
    """Refuse a path, pathspec or path-like revision that leads outside the project.

    ``top`` is the top of the work tree (``root`` when not given), which ``:/``
    and ``:(top)`` pathspecs and ``rev:path`` lookups are relative to. Returns
    the argument to pass on: ``~`` and ``~user`` are expanded to the home
    folder the model most likely meant (git itself would not expand them).
    """
    top = root if top is None else top
    if value.startswith(":"):
        _check_magic(value, root, top)
        return value
    if value.startswith("~"):
        expanded = os.path.expanduser(value)
        if expanded != value:
            if _outside(expanded, root, root):
                raise _bad(f"path {value!r} ({expanded}) is outside the project root {root}")
            return expanded
    if _outside(value, root, root):
        raise _bad(f"path {value!r} is outside the project root {root}")
    _check_tree_paths(value, root, top)
    return value


# --------------------------------------------------------------------------- value checks

Check = Callable[[str, "Path"], str]


def _int(value: str, root: Path) -> str:
    if not value.isdigit():
        raise ValueError("expects a non-negative whole number")
    return value


def _text(value: str, root: Path) -> str:
    return value


def _choice(*allowed: str) -> Check:
    def check(value: str, root: Path) -> str:
        if value not in allowed:
            raise ValueError(f"expects one of {', '.join(allowed)}")
        return value

    return check


def _pattern(regex: str, what: str) -> Check:
    compiled = re.compile(regex)

    def check(value: str, root: Path) -> str:
        if not compiled.fullmatch(value):
            raise ValueError(f"expects {what}")
        return value

    return check


def _format(value: str, root: Path) -> str:
    # %G… placeholders verify signatures, which runs gpg.
    if re.search(r"%G", value):
        raise ValueError("may not use %G… placeholders (signature checks run gpg)")
    return value


def _rev(value: str, root: Path) -> str:
    if value.startswith("-"):
        raise ValueError("expects a revision, not something starting with '-'")
    return value


def _inside(value: str, root: Path) -> str:
    check_path(value, root)
    return value


_SIMILARITY = _pattern(r"\d{1,3}%?", "a similarity such as 50 or 50%")
_BREAK = _pattern(r"\d{1,3}%?(/\d{1,3}%?)?", "a score such as 60 or 50/70")
_STAT = _pattern(r"\d{1,4}(,\d{1,4}){0,2}", "width[,name-width[,count]]")
_DIRSTAT = _pattern(r"[a-z0-9%.,]+", "dirstat parameters such as 'files,10'")
_DIFF_FILTER = _pattern(r"[ACDMRTUXBacdmrtuxb*]+", "letters from ACDMRTUXB")
_DATE_FORMAT = _pattern(
    r"(relative|local|iso|iso8601|iso-strict|iso8601-strict|rfc|rfc2822|short|raw|human|"
    r"unix|default)(-local)?|format(-local)?:[^\n]*",
    "a date format such as iso, short, relative or format:%Y-%m-%d",
)


@dataclass(frozen=True)
class Opt:
    """How an allowed option takes a value: ``none``, ``optional`` (``=v``) or ``required``."""

    value: str = "none"
    check: Check = _text


_F = Opt()


def _o(check: Check = _text) -> Opt:
    return Opt("optional", check)


def _r(check: Check = _text) -> Opt:
    return Opt("required", check)


_DIFF_OPTS: dict[str, Opt] = {
    **dict.fromkeys(
        "-p -u --patch -s --no-patch --raw --patch-with-raw --numstat --shortstat --summary "
        "--name-only --name-status --compact-summary --patch-with-stat --full-index --binary "
        "--no-prefix --minimal --patience --histogram --function-context -W --no-renames "
        "--find-copies-harder -D --irreversible-delete --pickaxe-all --pickaxe-regex -R "
        "--no-relative -a --text --ignore-cr-at-eol --ignore-space-at-eol -b "
        "--ignore-space-change -w --ignore-all-space --ignore-blank-lines "
        "--ita-invisible-in-index --no-color --no-ext-diff --no-textconv --indent-heuristic "
        "--no-indent-heuristic --no-abbrev".split(),
        _F,
    ),
    "--stat": _o(_STAT),
    "--dirstat": _o(_DIRSTAT),
    "-M": _o(_SIMILARITY),
    "--find-renames": _o(_SIMILARITY),
    "--find-copies": _o(_SIMILARITY),
    "-B": _o(_BREAK),
    "--break-rewrites": _o(_BREAK),
    "--word-diff": _o(_choice("plain", "porcelain", "none")),
    "--relative": _o(_inside),
    "--abbrev": _o(_int),
    "-U": _r(_int),
    "--unified": _r(_int),
    "--inter-hunk-context": _r(_int),
    "--diff-algorithm": _r(_choice("patience", "minimal", "histogram", "myers", "default")),
    "--anchored": _r(),
    "--word-diff-regex": _r(),
    "-l": _r(_int),
    "--diff-filter": _r(_DIFF_FILTER),
    "-S": _r(),
    "-G": _r(),
    "--find-object": _r(_rev),
    "-I": _r(),
    "--ignore-matching-lines": _r(),
    "--src-prefix": _r(),
    "--dst-prefix": _r(),
    "--line-prefix": _r(),
    "--stat-width": _r(_int),
    "--stat-name-width": _r(_int),
    "--stat-count": _r(_int),
    "--stat-graph-width": _r(_int),
}

_LOG_OPTS: dict[str, Opt] = {
    **_DIFF_OPTS,
    **dict.fromkeys(
        "--all-match --invert-grep -i --regexp-ignore-case -E --extended-regexp -F "
        "--fixed-strings --basic-regexp --merges --no-merges --no-min-parents --no-max-parents "
        "--first-parent --all --follow --oneline --abbrev-commit --no-abbrev-commit "
        "--no-decorate --graph --reverse --relative-date --topo-order --date-order "
        "--author-date-order --parents --children --left-right --cherry-pick --cherry-mark "
        "--cherry --boundary --simplify-by-decoration --full-history --dense --sparse "
        "--simplify-merges --ancestry-path --do-walk --source --use-mailmap --mailmap "
        "--no-mailmap --no-use-mailmap --log-size --walk-reflogs -g --cc -m --no-notes "
        "--expand-tabs --no-expand-tabs --show-notes-by-default --no-walk".split(),
        _F,
    ),
    "-n": _r(_int),
    "--max-count": _r(_int),
    "--skip": _r(_int),
    "--since": _r(),
    "--after": _r(),
    "--until": _r(),
    "--before": _r(),
    "--author": _r(),
    "--committer": _r(),
    "--grep": _r(),
    "--min-parents": _r(_int),
    "--max-parents": _r(_int),
    "--date": _r(_DATE_FORMAT),
    "-L": _r(),
    "--format": _r(_format),
    "--pretty": _o(_format),
    "--decorate": _o(_choice("short", "full", "auto", "no")),
    "--decorate-refs": _r(),
    "--decorate-refs-exclude": _r(),
    "--branches": _o(),
    "--tags": _o(),
    "--remotes": _o(),
    "--exclude": _r(),
    "--notes": _o(_rev),
    # "remerge" is left out: it writes temporary objects into the repository.
    "--diff-merges": _r(
        _choice(
            "off",
            "none",
            "on",
            "first-parent",
            "1",
            "separate",
            "m",
            "combined",
            "c",
            "dense-combined",
            "cc",
        )
    ),
}

_DIFF_ONLY: dict[str, Opt] = {
    **_DIFF_OPTS,
    **dict.fromkeys("--cached --staged --merge-base -1 -2 -3 --base --ours --theirs".split(), _F),
}

_BLAME_OPTS: dict[str, Opt] = {
    **dict.fromkeys(
        "-l -t -s -e --show-email -f --show-name -n --show-number -p --porcelain "
        "--line-porcelain --incremental --root --show-stats -w --minimal --first-parent -b "
        "--score-debug --no-textconv --reverse".split(),
        _F,
    ),
    "--abbrev": _o(_int),
    "--date": _r(_DATE_FORMAT),
    "-L": _r(),
    "-M": _o(_int),
    "--ignore-rev": _r(_rev),
}

_STATUS_OPTS: dict[str, Opt] = {
    **dict.fromkeys(
        "-s --short -b --branch --show-stash --long --no-renames --renames --ahead-behind "
        "--no-ahead-behind --no-column".split(),
        _F,
    ),
    "--porcelain": _o(_choice("v1", "v2")),
    "-u": _o(_choice("no", "normal", "all")),
    "--untracked-files": _o(_choice("no", "normal", "all")),
    "--ignored": _o(_choice("traditional", "no", "matching")),
    "--find-renames": _o(_SIMILARITY),
}

OPTIONS: dict[str, dict[str, Opt]] = {
    "status": _STATUS_OPTS,
    "log": _LOG_OPTS,
    "diff": _DIFF_ONLY,
    "show": _LOG_OPTS,
    "blame": _BLAME_OPTS,
}
"""The options each subcommand accepts; everything else is refused."""

NUMERIC_LIMIT = frozenset({"log", "show"})  # "-5" means "--max-count=5"
