"""``git``: read-only repository inspection for the orchestrator (status, log, diff, show, blame).

Safety rests on three layers:

* an allowlist of subcommands and, per subcommand, of options (with a check of
  each option's value); anything else is refused with a message saying why;
* a fixed command line that disables every way a repository's own config can
  make git run a program (pager, external diff, textconv, fsmonitor, hooks,
  filter drivers, gpg, transports) and keeps ``status`` from writing the index;
* a scrubbed environment: no inherited ``GIT_*`` variables, no system or
  global config, and a private copy of the index (``GIT_INDEX_FILE``) so that
  no command can rewrite the repository's own.

Positional arguments (revisions and paths) can never start with ``-`` and may
not point outside the project.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smith_tui.config.secrets import scrubbed_environ
from smith_tui.tools.args import max_chars
from smith_tui.tools.budget import budget_text
from smith_tui.tools.files import project_root
from smith_tui.tools.process import run_capture
from smith_tui.tools.spec import ToolContext, ToolError, ToolOutput, ToolSpec

NAME = "git"
COMMANDS: tuple[str, ...] = ("status", "log", "diff", "show", "blame")
DEFAULT_MAX_CHARS = 16_000
MAX_ARGS = 64
MAX_ARG_CHARS = 4096
_OUTPUT_CAP = 16 * 1024 * 1024
_TIME_LIMIT = 60.0
_NO_PROGRAM = "/nonexistent/smith-git-tool-runs-no-programs"

SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.pager", "cat"),
    ("diff.external", ""),
    ("core.fsmonitor", "false"),
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
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("color.ui", "false"),
)
"""``-c`` overrides on every call: each neutralises a config key that could run a program."""

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


def _check_path(value: str, root: Path) -> None:
    """Refuse a path (or path-like revision) that leads outside the project."""
    if value.startswith(":"):
        return  # pathspec magic (":/", ":(icase)…") or index path: confined by git
    parts = value.replace("\\", "/").split("/")
    if not value.startswith("/") and ".." not in parts:
        return
    if value.startswith("~"):
        return
    full = (root / value).resolve() if not value.startswith("/") else Path(value).resolve()
    if full != root and root not in full.parents:
        raise _bad(f"path {value!r} is outside the project root {root}")


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


def build_command(command: Any, args: Any, root: Path) -> list[str]:
    """Validate the model's request and return the git arguments after the global options.

    Raises :class:`ToolError` with a precise message for anything not allowed.
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
        _check_path(value, root)
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
    )
    if extra:
        env["GIT_CONFIG_COUNT"] = str(len(extra))
        for number, (key, value) in enumerate(extra):
            env[f"GIT_CONFIG_KEY_{number}"] = key
            env[f"GIT_CONFIG_VALUE_{number}"] = value
    return env


def base_argv(git: str) -> list[str]:
    """git with the global options every call uses."""
    argv = [git, "--no-pager"]
    for key, value in SAFE_CONFIG:
        argv += ["-c", f"{key}={value}"]
    argv.append("--no-optional-locks")
    return argv


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


async def _filter_overrides(git: str, root: Path, ctx: ToolContext) -> list[tuple[str, str]]:
    """Config pairs that switch off every filter driver the repository defines.

    Filter drivers (``filter.<name>.clean``/``smudge``/``process``) run programs
    when git reads work-tree files; their names are only known from the config.
    """
    argv = [*base_argv(git), "config", "-z", "--name-only", "--get-regexp", r"^filter\."]
    code, out, _, _ = await _run(argv, root, ctx, git_env())
    if code not in (0, 1):
        return []
    drivers = set()
    for key in out.split("\x00"):
        if key.startswith("filter.") and key.count(".") >= 2:
            drivers.add(key[len("filter.") : key.rindex(".")])
    pairs: list[tuple[str, str]] = []
    for driver in sorted(drivers):
        for field in ("clean", "smudge", "process"):
            pairs.append((f"filter.{driver}.{field}", ""))
        pairs.append((f"filter.{driver}.required", "false"))
    return pairs


async def handler(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """Run one allowed, read-only git command in the project."""
    if not isinstance(args, Mapping):
        raise _bad(f"arguments must be a JSON object, got {type(args).__name__}")
    unknown = sorted(str(k) for k in args if k not in ("command", "args"))
    if unknown:
        raise _bad(f"unknown argument(s) {', '.join(map(repr, unknown))}; accepted: command, args")
    root = project_root(ctx)
    tail = build_command(args.get("command"), args.get("args"), root)
    git = find_git()
    code, out, err, _ = await _run(
        [*base_argv(git), "rev-parse", "--is-inside-work-tree", "--git-path", "index"],
        root,
        ctx,
        git_env(),
    )
    lines = out.splitlines()
    if code != 0 or not lines or lines[0].strip() != "true":
        raise ToolError(
            f"{NAME}: {root} is not inside a git work tree ({err or out.strip() or 'no repository'})",
            code="not_a_repository",
        )
    index = root / lines[1] if len(lines) > 1 else None
    overrides = await _filter_overrides(git, root, ctx)
    with tempfile.TemporaryDirectory(prefix="smith-git-") as scratch:
        env = git_env(overrides)
        # Work on a copy of the index: some read commands (git diff) refresh and
        # rewrite it even with optional locks off; the copy takes those writes.
        private_index = Path(scratch) / "index"
        if index is not None and index.is_file():
            await asyncio.to_thread(shutil.copy2, index, private_index)
        env["GIT_INDEX_FILE"] = str(private_index)
        code, out, err, truncated = await _run([*base_argv(git), *tail], root, ctx, env)
    shown = " ".join([args["command"], *(args.get("args") or [])])
    if code != 0 and not truncated:  # a truncated run was stopped by us
        raise ToolError(
            f"{NAME}: `git {shown}` failed (exit {code}): {budget_text(err or out, 2000)}",
            code="git_failed",
            data={"exit_code": code},
        )
    if not out.strip():
        empty = "no differences" if args["command"] == "diff" else "no output"
        out = f"(git {shown}: {empty})"
    if truncated:
        out += f"\n[output stopped after {_OUTPUT_CAP} bytes]"
    content = budget_text(out, max_chars(ctx, DEFAULT_MAX_CHARS))
    return ToolOutput(
        content,
        metadata={"command": args["command"], "args": tail[1:], "chars": len(out)},
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
    input_schema={
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "enum": list(COMMANDS),
                "description": "The git subcommand to run.",
            },
            "args": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Options, revisions and paths for the subcommand, one per "
                "entry; put paths after '--' to make them unambiguous.",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    },
    handler=handler,
    role_allowlist=frozenset({"orchestrator"}),
)
