"""``git``: read-only repository inspection for the orchestrator (status, log, diff, show, blame).

Safety rests on these layers:

* an allowlist of subcommands and, per subcommand, of options (with a check of
  each option's value); anything else is refused with a message saying why;
* a fixed command line that disables every way a repository's own config can
  make git run a program (pager, external diff, textconv, fsmonitor, hooks,
  filter drivers, gpg, transports) and keeps ``status`` from writing the index;
* a scrubbed environment: no inherited ``GIT_*`` variables, no system or
  global config, no transport of any kind (so a partial clone never fetches a
  missing object: that object is an error instead), and a private copy of the
  index (``GIT_INDEX_FILE``) so that no command can rewrite the repository's own;
* no config includes: a repository whose config has ``include.path`` or
  ``includeIf.<cond>.path`` is refused before any git command reads it, and
  ``core.excludesFile`` and similar file settings are overridden, so git reads
  no file outside the project;
* a pinned location: the work tree is the folder holding the ``.git`` found
  from the project root (``GIT_WORK_TREE``, so ``core.worktree`` cannot move
  it), and the repository (``GIT_DIR``) must belong to that folder.

Positional arguments (revisions and paths, ``~`` and ``:`` forms included) can
never start with ``-`` and may not point outside the project.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from smith_tui.config.secrets import scrubbed_environ
from smith_tui.store.git_includes import config_includes, work_tree_of
from smith_tui.tools.args import max_chars
from smith_tui.tools.files import project_root
from smith_tui.tools.output_budget import budget_text
from smith_tui.tools.process import run_capture
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

NAME = "git"
COMMANDS: tuple[str, ...] = ("status", "log", "diff", "show", "blame")
DEFAULT_MAX_CHARS = 16_000
MAX_ARGS = 64
MAX_ARG_CHARS = 4096
_OUTPUT_CAP = 16 * 1024 * 1024
_TIME_LIMIT = 60.0
_NO_PROGRAM = "/nonexistent/smith-git-tool-runs-no-programs"

# Every value must mean "off" on old and new git alike: "cat" is the pager git
# never starts, and core.fsmonitor takes the empty value because git before
# 2.36 reads "false" as the name of a hook program.
SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.pager", "cat"),
    ("diff.external", ""),
    ("core.fsmonitor", ""),
    ("core.hooksPath", "/dev/null"),
    ("protocol.allow", "never"),
    ("core.sshCommand", _NO_PROGRAM),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("gpg.program", _NO_PROGRAM),
    ("gpg.openpgp.program", _NO_PROGRAM),
    ("gpg.ssh.program", _NO_PROGRAM),
    ("gpg.x509.program", _NO_PROGRAM),
    ("log.showSignature", "false"),
    ("blame.ignoreRevsFile", ""),
    ("core.untrackedCache", "false"),
    # Files git would read from outside the project: the empty value (or
    # /dev/null, where git fails on a missing file) also replaces the default
    # ~/.config/git/ignore and attributes.
    ("core.excludesFile", ""),
    ("core.attributesFile", ""),
    ("mailmap.file", ""),
    ("diff.orderFile", "/dev/null"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("color.ui", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)
"""``-c`` overrides on every call: each neutralises a config key that could run a program
or read a file outside the project."""

_FORCED_FLAGS: dict[str, tuple[str, ...]] = {
    "status": ("--ignore-submodules=all",),
    "log": ("--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=all"),
    "diff": ("--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=all"),
    "show": ("--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=all"),
    "blame": ("--no-textconv",),
}

# Options refused with a specific reason (any subcommand).
_REFUSED: dict[str, str] = {
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
    _check_path(value, root)
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

_NUMERIC_LIMIT = frozenset({"log", "show"})  # "-5" means "--max-count=5"


# --------------------------------------------------------------------------- argument checks


def _bad(message: str) -> ToolError:
    return ToolError(f"{NAME}: {message}", code="invalid_arguments")


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


def _check_path(value: str, root: Path, top: Path | None = None) -> str:
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


def _check_text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _bad(f"{where} must be a string, got {type(value).__name__} {value!r}")
    if "\x00" in value:
        raise _bad(f"{where} {value!r} contains a NUL character")
    if "\n" in value or "\r" in value:
        raise _bad(f"{where} {value!r} contains a line break")
    if len(value) > MAX_ARG_CHARS:
        raise _bad(f"{where} is {len(value)} characters long; the limit is {MAX_ARG_CHARS}")
    return value


def _refusal(command: str, name: str) -> ToolError:
    reason = _REFUSED.get(name)
    if reason is None and name.startswith("--exec"):
        reason = "runs a program"
    if reason is not None:
        return _bad(f"option {name!r} is not allowed: it {reason}")
    return _bad(
        f"option {name!r} is not allowed for git {command} (this tool only accepts a fixed "
        "set of read-only options)"
    )


def _value(command: str, name: str, opt: Opt, value: str, root: Path) -> str:
    try:
        return opt.check(value, root)
    except ValueError as exc:
        raise _bad(f"git {command} {name}: {exc}; got {value!r}") from None


def _parse_option(
    command: str, arg: str, following: str | None, root: Path
) -> tuple[list[str], bool]:
    """Check one option; return its normalised form and whether it used the next argument."""
    table = OPTIONS[command]
    if arg.startswith("--"):
        name, has_value, value = arg.partition("=")
        opt = table.get(name)
        if opt is None or name in _REFUSED:
            raise _refusal(command, name)
        if opt.value == "none":
            if has_value:
                raise _bad(f"option {name!r} takes no value")
            return [name], False
        if has_value:
            return [f"{name}={_value(command, name, opt, value, root)}"], False
        if opt.value == "optional":
            return [name], False
        if following is None:
            raise _bad(f"option {name!r} needs a value")
        _check_text(following, f"the value of {name}")
        return [f"{name}={_value(command, name, opt, following, root)}"], True
    if command in _NUMERIC_LIMIT and arg[1:].isdigit():
        return [f"--max-count={arg[1:]}"], False
    name = arg[:2]
    opt = table.get(name)
    if opt is None or name in _REFUSED:
        raise _refusal(command, name)
    rest = arg[2:]
    if opt.value == "none":
        if not rest:
            return [name], False
        flags = [f"-{ch}" for ch in arg[1:]]
        for flag in flags:
            spec = table.get(flag)
            if spec is None or flag in _REFUSED:
                raise _refusal(command, flag)
            if spec.value != "none":
                raise _bad(f"option {flag!r} takes a value and cannot be combined in {arg!r}")
        return flags, False
    if rest:
        return [name + _value(command, name, opt, rest, root)], False
    if opt.value == "optional":
        return [name], False
    if following is None:
        raise _bad(f"option {name!r} needs a value")
    _check_text(following, f"the value of {name}")
    return [name + _value(command, name, opt, following, root)], True


def build_command(command: Any, args: Any, root: Path, top: Path | None = None) -> list[str]:
    """Validate the model's request and return the git arguments after the global options.

    ``top`` is the top of the work tree when the project root is a folder inside
    it. Raises :class:`ToolError` with a precise message for anything not allowed.
    """
    if not isinstance(command, str) or not command:
        raise _bad(f"'command' must be one of {', '.join(COMMANDS)}")
    if command not in COMMANDS:
        raise _bad(
            f"'command' {command!r} is not available; this read-only tool runs only "
            f"{', '.join(COMMANDS)}"
        )
    if args is None:
        args = []
    if not isinstance(args, list):
        raise _bad(f"'args' must be a list of strings, got {type(args).__name__}")
    if len(args) > MAX_ARGS:
        raise _bad(f"'args' has {len(args)} entries; the limit is {MAX_ARGS}")
    for index, arg in enumerate(args):
        _check_text(arg, f"args[{index}]")
    options: list[str] = []
    positionals: list[str] = []
    paths: list[str] = []
    index = 0
    after_separator = False
    while index < len(args):
        arg = args[index]
        index += 1
        if after_separator:
            paths.append(arg)
        elif arg == "--":
            after_separator = True
        elif arg == "-":
            raise _bad("'-' (standard input) is not supported")
        elif arg.startswith("-"):
            following = args[index] if index < len(args) else None
            normalised, used_next = _parse_option(command, arg, following, root)
            options += normalised
            index += int(used_next)
        else:
            positionals.append(arg)
    for value in positionals + paths:
        if not value.strip():
            raise _bad("empty revision or path in 'args'")
    positionals = [_check_path(value, root, top) for value in positionals]
    paths = [_check_path(value, root, top) for value in paths]
    forced = list(_FORCED_FLAGS[command])
    if command == "blame":
        files = paths or positionals[-1:]
        revs = positionals if paths else positionals[:-1]
        if len(files) != 1:
            raise _bad(
                "git blame needs exactly one file, e.g. args ['src/app.py'] or ['HEAD~2', '--', 'src/app.py']"
            )
        if len(revs) > 1:
            raise _bad(f"git blame takes at most one revision before the file, got {revs}")
        return ["blame", *forced, *options, *revs, "--", files[0]]
    tail = ["--", *paths] if after_separator else []
    return [command, *forced, *options, "--end-of-options", *positionals, *tail]


# --------------------------------------------------------------------------- running git


def find_git() -> str:
    """Path of the git executable, or a :class:`ToolError` when it is missing."""
    found = shutil.which("git")
    if found is None:
        raise ToolError("git is not installed or not on PATH", code="git_missing")
    return found


def git_env(extra: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    """The scrubbed environment: no inherited GIT_* variables, no system/global config.

    ``extra`` config pairs are passed as GIT_CONFIG_KEY_n/VALUE_n, which keeps
    names containing ``=`` or odd characters intact.
    """
    env = {
        key: value
        for key, value in scrubbed_environ().items()
        if not key.startswith("GIT_") and key not in {"PAGER", "LESS", "SSH_ASKPASS", "EDITOR"}
    }
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_ATTR_NOSYSTEM="1",
        GIT_PAGER="cat",
        PAGER="cat",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        # No transport at all: an empty allow-list refuses every protocol and
        # wins over any protocol.<name>.allow in the repository's config (git
        # 2.6.1 on), so a partial clone's lazy fetch dies before it connects.
        GIT_ALLOW_PROTOCOL="",
        GIT_PROTOCOL_FROM_USER="0",
        # No lazy fetch attempt at all: git 2.44 on, and the 2024 security
        # releases back to 2.39.4 (older git ignores it; the allow-list holds).
        GIT_NO_LAZY_FETCH="1",
        # Set-but-empty beats core.gitProxy and core.askPass from any config.
        GIT_PROXY_COMMAND="",
        GIT_ASKPASS="",
    )
    if extra:
        env["GIT_CONFIG_COUNT"] = str(len(extra))
        for number, (key, value) in enumerate(extra):
            env[f"GIT_CONFIG_KEY_{number}"] = key
            env[f"GIT_CONFIG_VALUE_{number}"] = value
    return env


def base_argv(git: str, extra: Sequence[tuple[str, str]] = ()) -> list[str]:
    """git with the global options every call uses.

    ``extra`` config pairs (also given to :func:`git_env`) are repeated as
    ``-c`` options for git before 2.31, which ignores GIT_CONFIG_COUNT; a key
    holding ``=`` cannot be written that way and relies on the environment.
    """
    argv = [git, "--no-pager"]
    for key, value in (*SAFE_CONFIG, *(pair for pair in extra if "=" not in pair[0])):
        argv += ["-c", f"{key}={value}"]
    argv.append("--no-optional-locks")
    return argv


def tree_entries(ls_tree_output: bytes, wanted: set[str]) -> dict[str, tuple[str, str]]:
    """Mode and object id of each of ``wanted`` in the output of ``git ls-tree -r -z``."""
    found: dict[str, tuple[str, str]] = {}
    for record in ls_tree_output.split(b"\0"):
        meta, _, raw = record.partition(b"\t")
        path = os.fsdecode(raw)
        if path in wanted:
            mode, _kind, oid = meta.decode("ascii").split(" ")
            found[path] = (mode, oid)
    return found


def run_git_blocking(
    argv: Sequence[str],
    *,
    what: str,
    cwd: Path,
    env: Mapping[str, str],
    fail: Callable[[str], Exception],
    stdin: bytes | None = None,
    ok: Sequence[int] = (0,),
    time_limit: float = 300.0,
) -> bytes:
    """Run one git command to its end (blocking: call it off the event loop) and return its
    stdout; ``fail(message)`` is raised when it cannot start, times out or exits outside
    ``ok``, naming the subcommand ``what`` (``git add failed: …``)."""
    try:
        done = subprocess.run(
            list(argv),
            cwd=cwd,
            env=dict(env),
            input=stdin,
            capture_output=True,
            timeout=time_limit,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise fail(f"git {what} could not run: {exc}") from None
    if done.returncode not in ok:
        detail = done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
        raise fail(f"git {what} failed: {detail}")
    return done.stdout


async def _run(
    argv: list[str], root: Path, ctx: ToolContext, env: Mapping[str, str]
) -> tuple[int, str, str, bool]:
    result = await run_capture(
        argv, cwd=root, cancel=ctx.cancel, env=env, time_limit=_TIME_LIMIT, max_bytes=_OUTPUT_CAP
    )
    return (
        result.returncode,
        result.stdout.decode("utf-8", "replace"),
        result.stderr.decode("utf-8", "replace").strip(),
        result.truncated,
    )


@dataclass(frozen=True)
class _Repository:
    """Where the tool's git runs: the pinned work tree, its repository and index."""

    work_tree: Path
    git_dir: Path
    index: Path

    def env(self, extra: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
        """:func:`git_env` pinned to this repository and work tree."""
        env = git_env(extra)
        env.update(GIT_DIR=str(self.git_dir), GIT_WORK_TREE=str(self.work_tree))
        return env


def _not_a_repository(message: str) -> ToolError:
    return ToolError(f"{NAME}: {message}", code="not_a_repository")


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _linked_back(git_dir: Path, work_tree: Path) -> bool:
    """Whether a linked worktree's repository (``.git/worktrees/<name>``) names ``work_tree``."""
    try:
        text = (git_dir / "gitdir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return False
    return bool(text) and (git_dir / text).resolve() == (work_tree / ".git").resolve()


async def _submodule_of(git: str, git_dir: Path, work_tree: Path, ctx: ToolContext) -> bool:
    """Whether a submodule's repository (``.git/modules/<name>``) names ``work_tree``."""
    argv = [*base_argv(git), "config", "--file", str(git_dir / "config"), "core.worktree"]
    code, out, _, _ = await _run(argv, work_tree, ctx, git_env())
    value = out.strip()
    return code == 0 and bool(value) and (git_dir / value).resolve() == work_tree


def _resolved(base: Path, *texts: str) -> list[Path]:
    return [(base / text.strip()).resolve() for text in texts]


async def _locate(git: str, root: Path, ctx: ToolContext) -> _Repository:
    """Find the repository of ``root`` and pin where git may look.

    The work tree is the nearest folder (``root`` or a parent) holding a
    ``.git``; ``core.worktree`` cannot move it. The repository must be the one
    git's own discovery finds (which also applies ``safe.directory``) and must
    lie inside that folder, or name it back as a linked worktree or submodule
    does: a ``.git`` file pointing at some other repository is refused.
    """
    await _refuse_config_includes(git, root)
    work_tree = work_tree_of(root)
    code, out, err, _ = await _run(
        [*base_argv(git), "rev-parse", "--absolute-git-dir"], root, ctx, git_env()
    )
    if code != 0 or work_tree is None:
        raise _not_a_repository(
            f"{root} is not inside a git work tree ({err or out.strip() or 'no repository'})"
        )
    found = out
    pinned = git_env()
    pinned.update(GIT_DIR=str(work_tree / ".git"), GIT_WORK_TREE=str(work_tree))
    query = ["--is-inside-work-tree", "--absolute-git-dir", "--git-common-dir", "--git-path"]
    code, out, err, _ = await _run(
        [*base_argv(git), "rev-parse", *query, "index"], root, ctx, pinned
    )
    lines = out.splitlines()
    if code != 0 or len(lines) < 4 or lines[0].strip() != "true":
        raise _not_a_repository(
            f"{root} is not inside a git work tree ({err or out.strip() or 'no repository'})"
        )
    found_dir, git_dir, common, index = _resolved(root, found, *lines[1:4])
    if git_dir != found_dir:
        raise _not_a_repository(
            f"git finds the repository {found_dir} from {root}, not the one named by "
            f"{work_tree / '.git'}; the git tool only reads the project's own repository"
        )
    linked = not _within(git_dir, work_tree) and _linked_back(git_dir, work_tree)
    own = _within(git_dir, work_tree) or linked
    if not own:
        own = await _submodule_of(git, git_dir, work_tree, ctx)
    shared = common == git_dir or _within(common, work_tree)
    if linked and git_dir.parent == common / "worktrees":
        shared = True
    if not own or not shared:
        where = git_dir if not own else common
        raise _not_a_repository(
            f"{work_tree / '.git'} leads to the repository {where}, which is outside the "
            f"project and does not name {work_tree} as its work tree; the git tool only "
            "reads the project's own repository"
        )
    _refuse_outside_alternates(common, work_tree)
    return _Repository(work_tree, git_dir, index)


async def _refuse_config_includes(git: str, root: Path) -> None:
    """Refuse a repository whose config includes other files, before git reads that config.

    Every git command follows ``include.path`` and ``includeIf.<cond>.path``,
    which can name any file on the machine (a FIFO or device would block git);
    no option turns that off, so the tool runs no git command on such a repository.
    """
    found = await asyncio.to_thread(config_includes, root, git)
    if not found:
        return
    listed = "; ".join(item.describe() for item in found[:5])
    raise ToolError(
        f"{NAME}: the repository's config includes other files or cannot be read safely "
        f"({listed}); the git tool does not follow config includes, since they can read "
        "files outside the project. Remove the include (or run git yourself) to use this tool.",
        code="git_failed",
        data={"includes": [item.describe() for item in found]},
    )


def _refuse_outside_alternates(common: Path, work_tree: Path) -> None:
    """Refuse a repository that borrows objects from a folder outside the project.

    ``objects/info/alternates`` makes git read objects from other object stores
    (``clone --shared``/``--reference``); a hostile repository could name another
    repository on the machine and have ``show`` print its files.
    """
    alternates = common / "objects" / "info" / "alternates"
    try:
        text = alternates.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise _not_a_repository(f"cannot read {alternates}: {exc.strerror or exc}") from None
    for line in text.splitlines():
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        target = (alternates.parent.parent / entry).resolve()
        if not _within(target, work_tree):
            raise _not_a_repository(
                f"the repository borrows objects from {target} ({alternates}), which is "
                "outside the project; the git tool only reads the project's own objects "
                "(run `git repack -a -d` and remove that file to make the repository "
                "self-contained)"
            )


@dataclass(frozen=True)
class _Overrides:
    """Config pairs that neutralise what the repository's config defines by name."""

    pairs: list[tuple[str, str]]
    partial_clone: bool


async def _repository_overrides(git: str, repo: _Repository, ctx: ToolContext) -> _Overrides:
    """Switch off every filter driver and every per-protocol permission in the config.

    Filter drivers (``filter.<name>.clean``/``smudge``/``process``) run programs
    when git reads work-tree files, and ``protocol.<name>.allow=always`` beats
    the generic ``protocol.allow=never``; their names are only known from the
    config. A partial clone (promisor remote) is noted so that a missing object
    can be explained.
    """
    argv = [*base_argv(git), "config", "-z", "--name-only", "--get-regexp", OVERRIDE_PATTERN]
    code, out, _, _ = await _run(argv, repo.work_tree, ctx, repo.env())
    if code not in (0, 1):
        return _Overrides([], False)
    return overrides_for(out)


OVERRIDE_PATTERN = r"^(filter|protocol|remote|extensions)\."
"""The config keys :func:`overrides_for` reads (``git config -z --name-only --get-regexp``)."""


def overrides_for(names: str) -> _Overrides:
    """The pairs that switch off the filter drivers and per-protocol permissions named in
    ``names`` (NUL-separated config key names matching :data:`OVERRIDE_PATTERN`)."""
    out = names
    drivers, protocols = set(), set()
    partial = False
    for key in out.split("\x00"):
        section, _, rest = key.partition(".")
        name, dot, _field = rest.rpartition(".")
        if section == "filter" and dot:
            drivers.add(name)
        elif section == "protocol" and dot:
            protocols.add(name)
        elif key == "extensions.partialclone" or (section == "remote" and _field == "promisor"):
            partial = True
    pairs: list[tuple[str, str]] = []
    for driver in sorted(drivers):
        for field in ("clean", "smudge", "process"):
            pairs.append((f"filter.{driver}.{field}", ""))
        pairs.append((f"filter.{driver}.required", "false"))
    pairs += [(f"protocol.{name}.allow", "never") for name in sorted(protocols)]
    return _Overrides(pairs, partial)


class Args(ToolArgs):
    """Arguments of ``git``; which options and paths are allowed is checked by the tool."""

    command: Literal[COMMANDS] = Field(  # type: ignore[valid-type]
        description="The git subcommand to run."
    )
    args: list[str] = Field(
        [],
        description="Options, revisions and paths for the subcommand, one per "
        "entry; put paths after '--' to make them unambiguous.",
    )


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Run one allowed, read-only git command in the project."""
    root = project_root(ctx)
    git = find_git()
    repo = await _locate(git, root, ctx)
    tail = build_command(args.command, args.args, root, repo.work_tree)
    overrides = await _repository_overrides(git, repo, ctx)
    with tempfile.TemporaryDirectory(prefix="smith-git-") as scratch:
        env = repo.env(overrides.pairs)
        # Work on a copy of the index: some read commands (git diff) refresh and
        # rewrite it even with optional locks off; the copy takes those writes.
        private_index = Path(scratch) / "index"
        if repo.index.is_file():
            await asyncio.to_thread(shutil.copy2, repo.index, private_index)
        env["GIT_INDEX_FILE"] = str(private_index)
        argv = [*base_argv(git, overrides.pairs), *tail]
        code, out, err, truncated = await _run(argv, root, ctx, env)
    shown = " ".join([args.command, *args.args])
    if code != 0 and not truncated:  # a truncated run was stopped by us
        note = ""
        if overrides.partial_clone:
            note = (
                " (this repository is a partial clone: the git tool never fetches objects "
                "that are missing locally, so commands that need them fail)"
            )
        raise ToolError(
            f"{NAME}: `git {shown}` failed (exit {code}){note}: {budget_text(err or out, 2000)}",
            code="git_failed",
            data={"exit_code": code},
        )
    if not out.strip():
        empty = "no differences" if args.command == "diff" else "no output"
        out = f"(git {shown}: {empty})"
    if truncated:
        out += f"\n[output stopped after {_OUTPUT_CAP} bytes]"
    content = budget_text(out, max_chars(ctx, DEFAULT_MAX_CHARS))
    return ToolOutput(
        content,
        metadata={"command": args.command, "args": tail[1:], "chars": len(out)},
    )


TOOL = ToolSpec(
    name=NAME,
    description=(
        "Inspect the project's git repository without changing anything: status, log, diff, "
        "show or blame, e.g. to review what a worker changed. Pass the subcommand as "
        "'command' and further git arguments as 'args' (a list of strings), e.g. "
        "{command: 'diff', args: ['--stat', 'HEAD~1']}, {command: 'log', args: ['--oneline', "
        "'-n', '20', '--', 'src/']}, {command: 'blame', args: ['-L', '10,40', 'src/app.py']}. "
        "Only read-only options are accepted (no --output, external diff, textconv, -c, "
        "--git-dir, …); paths must stay inside the project. Long output is cut in the "
        "middle with a note."
    ),
    args=Args,
    handler=handler,
    role_allowlist=frozenset({"orchestrator"}),
)
