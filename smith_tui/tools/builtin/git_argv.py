"""The ``git`` tool's request read against its tables: the git arguments after the global
options, or a :class:`~smith_tui.tools.spec.ToolError` saying what is not allowed and why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from smith_tui.tools.args import bad_arguments
from smith_tui.tools.builtin.git_options import (
    COMMANDS,
    FORCED_FLAGS,
    MAX_ARG_CHARS,
    MAX_ARGS,
    NAME,
    NUMERIC_LIMIT,
    OPTIONS,
    REFUSED,
    Opt,
    check_path,
)
from smith_tui.tools.spec import ToolError


def _bad(message: str) -> ToolError:
    return bad_arguments(NAME, message)


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
    reason = REFUSED.get(name)
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
        if opt is None or name in REFUSED:
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
    if command in NUMERIC_LIMIT and arg[1:].isdigit():
        return [f"--max-count={arg[1:]}"], False
    name = arg[:2]
    opt = table.get(name)
    if opt is None or name in REFUSED:
        raise _refusal(command, name)
    rest = arg[2:]
    if opt.value == "none":
        if not rest:
            return [name], False
        flags = [f"-{ch}" for ch in arg[1:]]
        for flag in flags:
            spec = table.get(flag)
            if spec is None or flag in REFUSED:
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
    positionals = [check_path(value, root, top) for value in positionals]
    paths = [check_path(value, root, top) for value in paths]
    forced = list(FORCED_FLAGS[command])
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
