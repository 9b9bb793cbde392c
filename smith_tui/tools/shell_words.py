"""A bash command line read as bash reads it: the commands it runs and their literal words.

:func:`read_command` parses a command string with tree-sitter's bash grammar and returns a
:class:`Reading`: every simple command that would run anywhere in it (inside ``$(…)``,
backquotes, subshells, groups, pipelines, lists, function bodies, behind wrappers such as
``sudo``/``env``/``nice``/``timeout``/``xargs`` and inside ``bash -c '…'``/``eval`` strings,
which are parsed again), each word either literal (its text after bash's quote removal) or
marked not literal with the reason. The tree gives the structure and the word boundaries;
each word's text is then decoded by :func:`decode_word`, which accepts only quoting it fully
understands, so a grammar that reads a word more loosely than bash cannot make it literal.

Two verdicts come with it, for the permission rules (:mod:`smith_tui.tools.permission_policy`):

- ``obstacle``: ``None`` when the line is *plain* — only simple commands of literal words
  joined by ``;``, newlines, ``&&``, ``||`` and ``|``, no redirection, no assignment-only
  command, no ``eval``/``source``/``.``/shell ``-c`` — else the first part that is not.
- ``unsure``: the reasons the line may run something that cannot be seen in it: a parse
  error, a command name that is not literal, code bash evaluates from data (arithmetic on
  variables, which runs array subscripts; ``${!x}``; ``${x@P}``; ``[[ … -eq … ]]``;
  ``declare``/``printf -v``/``read`` of a subscripted name; ``let``), a wrapper whose
  options are not understood, a shell reading its commands from input, or nesting past
  :data:`MAX_DEPTH`.

Aliases are not expanded by non-interactive bash (the ``bash`` tool runs ``bash -c``), so
a name is the program or builtin or function it says; an alias definition is reported as
unsure all the same, since ``shopt -s expand_aliases`` turns expansion on.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

MAX_DEPTH = 6
"""How many strings inside strings (``bash -c "bash -c '…'"``) are read before giving up."""

_SAFE_UNQUOTED = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,^~#"
)
"""Characters that stand for themselves outside quotes (``~`` only where it cannot expand)."""

_PARSER_LOCK = threading.Lock()
_PARSER: Any = None


def _parser() -> Any:
    """The bash parser, loaded once on first use."""
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_bash

        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _PARSER


@dataclass(frozen=True)
class Word:
    """One word of a command as bash splits it."""

    source: str
    """The word as written."""
    value: str | None
    """The word after quote removal, or ``None`` when bash would expand it."""
    why: str = ""
    """Why the word is not literal (``a parameter expansion``); empty when it is."""

    def describe(self) -> str:
        """``\\`${x@P}\\` (a parameter expansion)`` — the word and why, for messages."""
        return f"`{_cut(self.source)}` ({self.why})"


@dataclass(frozen=True)
class Command:
    """One simple command that would run."""

    words: tuple[Word, ...]
    """Every word as written, leading assignments (``X=1``) included."""
    assignments: int = 0
    """How many of ``words`` are leading assignments."""
    via: tuple[str, ...] = ()
    """The wrappers it was found behind, outermost first (``sudo``, ``bash -c``)."""

    @property
    def argv(self) -> tuple[Word, ...]:
        """The command's name and arguments, without the leading assignments."""
        return self.words[self.assignments :]

    def literal(self, *, with_assignments: bool = True) -> str | None:
        """The words joined with spaces, or ``None`` when one is not literal."""
        words = self.words if with_assignments else self.argv
        values = [word.value for word in words]
        return None if any(v is None for v in values) else " ".join(v or "" for v in values)


@dataclass(frozen=True)
class Reading:
    """What a command line would run, as far as can be told without running it."""

    top: tuple[Command, ...]
    """The simple commands as written at the top level (what allow rules are matched to)."""
    commands: tuple[Command, ...]
    """Every command that would run: the top ones, nested ones and unwrapped ones."""
    obstacle: str | None
    """``None`` when the line is plain; else the first part that is not (for messages)."""
    unsure: tuple[str, ...]
    """Why the line may run something not listed in ``commands`` (empty: nothing hidden)."""

    @property
    def plain(self) -> bool:
        """Only literal simple commands, nothing expanded, redirected or re-read."""
        return self.obstacle is None


def _cut(text: str, limit: int = 60) -> str:
    text = text.replace("\n", "⏎")
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- one word -------------------------------------------------------------------------------

_ANSI_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip


def _ansi_c(body: str) -> str | None:
    """The text of ``$'body'``, or ``None`` for an escape not decoded here."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= len(body):
            return None
        esc = body[i + 1]
        if esc in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[esc])
            i += 2
            continue
        spec = {"x": (16, 2), "u": (16, 4), "U": (16, 8)}.get(esc)
        if spec is not None:
            base, most = spec
            digits = re.match(rf"[0-9A-Fa-f]{{1,{most}}}", body[i + 2 :])
            if not digits:
                return None
            code = int(digits.group(), base)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                return None
            out.append(chr(code))
            i += 2 + len(digits.group())
            continue
        octal = re.match(r"[0-7]{1,3}", body[i + 1 :])
        if octal:
            out.append(chr(int(octal.group(), 8) & 0xFF))
            i += 1 + len(octal.group())
            continue
        return None  # \c and unknown escapes: not worth guessing
    return "".join(out)


def _plain_text(text: str) -> bool:
    """Decoded ``$'…'`` text that is safe to call literal: no ``$ ` ( )``, no control bytes
    (a NUL would cut the word short in bash)."""
    return not any(ch in "$`()" or (ord(ch) < 32 and ch not in "\t\n") for ch in text)


def _dollar_kind(text: str, i: int) -> str:
    after = text[i + 1 : i + 3]
    if after.startswith("(("):
        return "an arithmetic expansion"
    if after.startswith("("):
        return "a command substitution"
    if after.startswith("["):
        return "an arithmetic expansion"
    if after.startswith('"'):
        return "a locale-translated string"
    return "a parameter expansion"


def decode_word(text: str) -> Word:
    """``text`` (one bash word as written) after quote removal, or why it is not literal.

    Understood: plain characters, backslash escapes, '…', "…" without ``$`` or backquotes,
    and ``$'…'`` whose text is plain. Anything bash would expand — parameters, command and
    process substitution, arithmetic, globs, braces, a tilde that expands — is not literal.
    """
    out: list[str] = []
    i = 0
    n = len(text)

    def bad(why: str) -> Word:
        return Word(text, None, why)

    while i < n:
        ch = text[i]
        if ch == "\\":
            if i + 1 >= n:
                out.append("\\")
                i += 1
            elif text[i + 1] == "\n":
                i += 2  # a line continuation
            else:
                out.append(text[i + 1])
                i += 2
        elif ch == "'":
            end = text.find("'", i + 1)
            if end < 0:
                return bad("an unclosed quote")
            out.append(text[i + 1 : end])
            i = end + 1
        elif ch == '"':
            i += 1
            while True:
                if i >= n:
                    return bad("an unclosed quote")
                c = text[i]
                if c == '"':
                    i += 1
                    break
                if c == "$":
                    return bad(_dollar_kind(text, i))
                if c == "`":
                    return bad("a command substitution")
                if c == "\\" and i + 1 < n and text[i + 1] in '$`"\\\n':
                    if text[i + 1] != "\n":
                        out.append(text[i + 1])
                    i += 2
                    continue
                out.append(c)
                i += 1
        elif ch == "$":
            if text.startswith("$'", i):
                end = i + 2
                while end < n and text[end] != "'":
                    end += 2 if text[end] == "\\" else 1
                if end >= n:
                    return bad("an unclosed quote")
                decoded = _ansi_c(text[i + 2 : end])
                if decoded is None:
                    return bad("a $'…' string with an escape not decoded here")
                if not _plain_text(decoded):
                    return bad(f"a $'…' string that decodes to {decoded!r}")
                out.append(decoded)
                i = end + 1
            else:
                return bad(_dollar_kind(text, i))
        elif ch == "`":
            return bad("a command substitution")
        elif ch in "<>" and text.startswith("(", i + 1):
            return bad("a process substitution")
        elif ch in "*?[":
            return bad("a glob pattern")
        elif ch in "{}":
            return bad("a brace expansion")
        elif ch == "~" and (i == 0 or text[i - 1] in "=:"):
            return bad("a tilde expansion")
        elif ch == "#" and i == 0:
            return bad("a comment")
        elif ch in _SAFE_UNQUOTED or (ord(ch) > 127 and ch.isprintable()):
            out.append(ch)
            i += 1
        else:
            return bad(f"the shell syntax {ch!r}")
    return Word(text, "".join(out))


# -- the tree -------------------------------------------------------------------------------

_COMMAND_NODES = frozenset({"command", "declaration_command", "unset_command"})
_PLAIN_JOINS = frozenset({"program", "list", "pipeline"})
_PLAIN_TOKENS = frozenset({";", "&&", "||", "|", "comment"})
_WORD_NODES = frozenset(
    {"command_name", "word", "string", "raw_string", "ansi_c_string", "number", "concatenation",
     "simple_expansion", "expansion", "command_substitution", "process_substitution",
     "arithmetic_expansion", "translated_string", "variable_assignment", "$", "special_variable_name"}
)  # fmt: skip
_NAME_BUILTINS = frozenset(
    {"declare", "typeset", "local", "readonly", "export", "unset", "read", "mapfile",
     "readarray", "printf", "wait", "test", "[", "getopts", "let"}
)  # fmt: skip
"""Builtins that take variable names, whose subscripts bash evaluates as arithmetic."""
_ARITH_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v"})


@dataclass
class _Walk:
    source: bytes
    depth: int
    via: tuple[str, ...]
    top: list[Command] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)
    obstacles: list[str] = field(default_factory=list)
    unsure: list[str] = field(default_factory=list)

    def text(self, node: Any) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _words(walk: _Walk, node: Any) -> tuple[list[Word], int, list[Any]]:
    """The words of a command node (adjacent pieces joined, as bash joins them), how many
    lead as assignments, and the children that are not words (redirections)."""
    spans: list[tuple[int, int, bool]] = []
    others: list[Any] = []
    seen_name = False
    for child in node.children:
        if child.type.endswith("redirect"):
            others.append(child)
            continue
        if child.type == "command_name":
            seen_name = True
        is_assignment = child.type == "variable_assignment" and not seen_name
        if spans and spans[-1][1] == child.start_byte and not child.type == "command_name":
            start, _, assign = spans[-1]
            spans[-1] = (start, child.end_byte, assign)
        else:
            spans.append((child.start_byte, child.end_byte, is_assignment))
        if child.type not in _WORD_NODES and node.type == "command":
            others.append(child)
    words = [decode_word(walk.source[a:b].decode("utf-8", "replace")) for a, b, _ in spans]
    leading = 0
    for _, _, assign in spans:
        if not assign:
            break
        leading += 1
    return words, leading, others


def _check_plain(walk: _Walk, node: Any) -> None:
    """Record the first part of a top-level join that keeps the line from being plain."""
    if node.type in _PLAIN_JOINS:
        previous = None
        for child in node.children:
            if previous is not None:
                gap = walk.source[previous.end_byte : child.start_byte].decode("utf-8", "replace")
                if gap.replace("\\\n", "").strip(" \t\n"):
                    walk.obstacles.append(f"`{_cut(gap.strip())}` (shell syntax)")
            previous = child
            if child.type in _PLAIN_TOKENS:
                continue
            if child.type == "&":
                walk.obstacles.append("`&` (a background job)")
            elif child.type == "|&":
                walk.obstacles.append("`|&` (a redirection)")
            elif child.type in _PLAIN_JOINS or child.type == "command":
                _check_plain(walk, child)
            elif child.is_error or child.is_missing:
                walk.obstacles.append(f"`{_cut(walk.text(child))}` (it does not parse as bash)")
            else:
                kind = child.type.replace("_", " ")
                walk.obstacles.append(f"`{_cut(walk.text(child))}` (a {kind})")
        return
    if node.type == "command":
        words, leading, others = _words(walk, node)
        for other in others:
            what = "a redirection" if other.type.endswith("redirect") else "shell syntax"
            walk.obstacles.append(f"`{_cut(walk.text(other))}` ({what})")
        for word in words:
            if word.value is None:
                walk.obstacles.append(f"{word.describe()} is not a literal word")
                return
        if leading == len(words):
            walk.obstacles.append(f"`{_cut(walk.text(node))}` (an assignment without a command)")


def _walk(walk: _Walk, node: Any) -> None:
    """Visit every node: record commands, and whatever bash evaluates out of sight."""
    kind = node.type
    if node.is_error or node.is_missing:
        walk.unsure.append(f"`{_cut(walk.text(node)) or kind}` does not parse as bash")
    elif kind in _COMMAND_NODES:
        words, leading, _ = _words(walk, node)
        _found(walk, Command(tuple(words), leading, walk.via))
    elif kind in ("arithmetic_expansion", "c_style_for_statement") or (
        kind == "compound_statement" and node.children and node.children[0].type == "(("
    ):
        if re.search(r"[A-Za-z_$`]", _arith_text(walk, node)):
            walk.unsure.append(
                f"`{_cut(walk.text(node))}` (arithmetic on variables, which can run commands "
                "through array subscripts)"
            )
    elif kind == "expansion":
        _expansion(walk, node)
    elif kind == "subscript":
        index = node.child_by_field_name("index")
        if index is not None and not re.fullmatch(r"[0-9@*]+", walk.text(index)):
            walk.unsure.append(
                f"`{_cut(walk.text(node))}` (a subscript bash evaluates as arithmetic)"
            )
    elif kind == "test_command":
        for op in _descendants(node):
            if op.type == "test_operator" and walk.text(op) in _ARITH_OPS:
                walk.unsure.append(
                    f"`{_cut(walk.text(node))}` (`[[ {walk.text(op)} ]]` evaluates its operands "
                    "as arithmetic)"
                )
                break
    for child in node.children:
        _walk(walk, child)


def _arith_text(walk: _Walk, node: Any) -> str:
    if node.type != "c_style_for_statement":
        return walk.text(node)[2:]  # past `$((`, `$[` or `((`
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    return walk.source[node.start_byte + 3 : end].decode("utf-8", "replace")


def _expansion(walk: _Walk, node: Any) -> None:
    children = node.children
    text = walk.text(node)
    if len(children) > 1 and children[1].type == "!":
        walk.unsure.append(f"`{_cut(text)}` (an indirect expansion, which evaluates subscripts)")
    for i, child in enumerate(children):
        if child.type == "@" and i + 1 < len(children) and walk.text(children[i + 1]) == "P":
            walk.unsure.append(f"`{_cut(text)}` (a prompt expansion, which runs substitutions)")
        if child.type == ":" and i + 1 < len(children):
            offset = children[i + 1]
            if offset.type not in ("number", ":", "}"):
                walk.unsure.append(f"`{_cut(text)}` (a substring offset evaluated as arithmetic)")


def _descendants(node: Any) -> Iterator[Any]:
    for child in node.children:
        yield child
        yield from _descendants(child)


# -- wrappers -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Wrapper:
    """How a program that runs another one reads its own options."""

    valued: frozenset[str] = frozenset()
    """Options followed by a value (``-u user``, ``--user user``)."""
    flags: frozenset[str] = frozenset()
    """Options alone; short ones may be grouped (``-rt``)."""
    operands: int = 0
    """Operands before the command (``timeout``'s duration)."""
    assignments: bool = False
    """``NAME=value`` words may come before the command (``env``, ``sudo``)."""
    line: frozenset[str] = frozenset()
    """Options whose value is a command line (``env -S``)."""
    numeric: bool = False
    """``-5`` is an option (``nice``)."""


def _w(valued: str = "", flags: str = "", **kw: Any) -> _Wrapper:
    return _Wrapper(frozenset(valued.split()), frozenset(flags.split()), **kw)


WRAPPERS: dict[str, _Wrapper] = {
    "env": _w(
        "-u --unset -C --chdir",
        "-i --ignore-environment -0 --null -v --debug -",
        assignments=True,
        line=frozenset({"-S", "--split-string"}),
    ),
    "command": _w("", "-p -v -V"),
    "builtin": _w(),
    "exec": _w("-a", "-c -l"),
    "nice": _w("-n --adjustment", "", numeric=True),
    "nohup": _w(),
    "timeout": _w(
        "-s --signal -k --kill-after", "--preserve-status --foreground -v --verbose", operands=1
    ),
    "xargs": _w(
        "-a --arg-file -d --delimiter -E -I -L --max-lines -n --max-args -P --max-procs -s "
        "--max-chars --process-slot-var",
        "-0 --null -o --open-tty -p --interactive -r --no-run-if-empty -t --verbose -x --exit",
    ),
    "sudo": _w(
        "-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role -t "
        "--type -U --other-user -T --command-timeout -R --chroot",
        "-A --askpass -b --background -E --preserve-env -H --set-home -k --reset-timestamp -K "
        "--remove-timestamp -n --non-interactive -P --preserve-groups -S --stdin -B --bell "
        "-s --shell -i --login",
        assignments=True,
    ),
    "doas": _w("-u -C", "-n -s -L"),
    "stdbuf": _w("-i --input -o --output -e --error"),
    "setsid": _w("", "-c --ctty -f --fork -w --wait"),
    "ionice": _w("-c --class -n --classdata -p --pid -P --pgid -u --uid", "-t --ignore"),
    "time": _w("-f --format -o --output", "-p -a --append -v --verbose --portability -q --quiet"),
    "coproc": _w(),
    "busybox": _w(),
}
"""Programs (and keywords) that run the command after their own options."""
SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "rbash"})
"""Shells whose ``-c`` string is read again as a command line."""
_SHELL_VALUED = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_SHELL_LONG = frozenset(
    {"--login", "--noprofile", "--norc", "--posix", "--restricted", "--noediting", "--verbose",
     "--debugger", "--dump-strings", "--dump-po-strings", "--pretty-print", "--protected",
     "--emulate"}
)  # fmt: skip
RE_READ = frozenset({"eval", "source", "."})
"""Builtins that run text as commands (``eval`` of literal words is read again)."""


def _found(walk: _Walk, command: Command) -> None:
    """Record ``command`` and what it runs in turn (wrapped commands, ``-c`` strings)."""
    walk.commands.append(command)
    argv = command.argv
    if not argv:
        return
    name = argv[0]
    if name.value is None:
        walk.unsure.append(f"the command name {name.describe()} is not literal")
        return
    base = os.path.basename(name.value)
    _name_builtin(walk, base, argv)
    if base in WRAPPERS:
        _unwrap(walk, base, command)
    elif base in SHELLS:
        _shell(walk, base, argv[1:])
    elif base == "eval":
        walk.obstacles.append("`eval` (it runs text as commands)")
        _reread(walk, "eval", argv[1:])
    elif base in ("source", "."):
        walk.obstacles.append(f"`{base}` (it runs a file's commands)")
    elif base == "trap":
        operands = [w for w in argv[1:] if not (w.value or "").startswith("-")]
        if operands:
            walk.obstacles.append("`trap` (its action runs later)")
            _reread(walk, "trap", operands[:1])
    elif base == "alias" and any("=" in (w.value or "=") for w in argv[1:]):
        walk.unsure.append("`alias` defines text that runs later")
    elif base == "find":
        _find_exec(walk, command)


def _name_builtin(walk: _Walk, base: str, argv: tuple[Word, ...]) -> None:
    if base not in _NAME_BUILTINS:
        return
    if base == "printf" and not any(w.value == "-v" or w.value is None for w in argv[1:]):
        return
    if base == "let":
        walk.unsure.append("`let` (arithmetic on variables, which can run commands)")
        return
    if base in ("test", "[") and not any(w.value in _ARITH_OPS for w in argv[1:]):
        return
    for word in argv[1:]:
        if word.value is None or "[" in word.value or "$" in word.value:
            walk.unsure.append(
                f"`{base}` with {word.describe() if word.value is None else f'`{_cut(word.source)}`'}"
                " (a name or number bash evaluates)"
            )
            return
    if base in ("declare", "typeset", "local") and any(
        (w.value or "").startswith("-") and "i" in (w.value or "") for w in argv[1:]
    ):
        walk.unsure.append(f"`{base} -i` (later assignments are evaluated as arithmetic)")


def _unwrap(walk: _Walk, base: str, command: Command) -> None:
    """Follow ``base``'s options to the command it runs; not understood = unsure."""
    spec = WRAPPERS[base]
    rest = list(command.argv[1:])
    operands = spec.operands
    options_done = False
    i = 0
    while i < len(rest):
        word = rest[i]
        value = word.value
        if value is None:
            walk.unsure.append(f"`{base}` is followed by {word.describe()}, not a literal word")
            return
        if value == "--" and not options_done:
            options_done = True
            i += 1
            continue
        if value.startswith("-") and len(value) > 1 and not options_done:
            option, equals, attached = value.partition("=")
            if option in spec.line:
                walk.obstacles.append(f"`{base} {option}` (it runs a command line)")
                line = [Word(attached, attached)] if equals else rest[i + 1 : i + 2]
                _reread(walk, f"{base} {option}", line)
                i += 1 if equals else 2
                continue
            if option in spec.valued:
                i += 1 if equals else 2
            elif option in spec.flags or (spec.numeric and re.fullmatch(r"-\d+", value)):
                i += 1
            elif not value.startswith("--") and _short_cluster(spec, value):
                i += 2 if _short_cluster(spec, value) == "valued" else 1
            else:
                walk.unsure.append(f"`{base} {_cut(value)}` is an option not understood here")
                return
            continue
        if spec.assignments and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", value, re.DOTALL):
            i += 1
            continue
        if operands:
            options_done = True
            operands -= 1
            i += 1
            continue
        break
    inner = rest[i:]
    if base == "xargs" and inner:
        inner.append(Word("…", None, "arguments xargs reads from its input"))
    if not inner:
        return
    if len(command.via) >= 4 * MAX_DEPTH:
        walk.unsure.append(f"`{base}` wraps commands nested too deep to follow")
        return
    _found(walk, Command(tuple(inner), 0, (*command.via, base)))


def _short_cluster(spec: _Wrapper, value: str) -> str:
    """``flags`` when every letter of ``-abc`` is a flag, ``valued`` when the last takes a
    value (``-un`` then ``name``), ``attached`` for ``-n5``; empty when not understood."""
    letters = value[1:]
    for j, letter in enumerate(letters):
        option = f"-{letter}"
        if option in spec.valued:
            return "valued" if j == len(letters) - 1 else "attached"
        if option not in spec.flags:
            return ""
    return "flags"


def _shell(walk: _Walk, base: str, args: tuple[Word, ...]) -> None:
    i = 0
    runs_string = False
    while i < len(args):
        value = args[i].value
        if value is None:
            walk.unsure.append(
                f"`{base}` is followed by {args[i].describe()}, so what it runs is not known"
            )
            return
        if value in ("-", "--"):
            i += 1
            break
        if value in _SHELL_VALUED:
            i += 2
            continue
        if value.startswith("--"):
            if value not in _SHELL_LONG:
                walk.unsure.append(f"`{base} {value}` is an option not understood here")
                return
            i += 1
            continue
        if value[:1] in "-+" and len(value) > 1:
            runs_string = runs_string or "c" in value[1:]
            if "s" in value[1:]:
                walk.unsure.append(f"`{base} {value}` reads its commands from its input")
                return
            i += 1
            continue
        break
    operands = args[i:]
    if runs_string:
        walk.obstacles.append(f"`{base} -c` (a command line run by another shell)")
        if not operands:
            return
        _reread(walk, f"{base} -c", operands[:1])
    elif not operands:
        walk.unsure.append(f"`{base}` reads its commands from its input")


def _reread(walk: _Walk, what: str, words: list[Word] | tuple[Word, ...]) -> None:
    """Read the literal text of ``words`` (joined with spaces) again as a command line."""
    if any(w.value is None for w in words):
        bad = next(w for w in words if w.value is None)
        walk.unsure.append(f"the text `{what}` runs is not literal: {bad.describe()}")
        return
    if walk.depth >= MAX_DEPTH:
        walk.unsure.append(f"`{what}` nests command lines too deep to follow")
        return
    text = " ".join(w.value or "" for w in words)
    inner = _read(text, walk.depth + 1, (*walk.via, what))
    walk.commands.extend(inner.commands)
    walk.unsure.extend(inner.unsure)


def _find_exec(walk: _Walk, command: Command) -> None:
    argv = command.argv
    i = 1
    while i < len(argv):
        if argv[i].value in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(argv) and argv[j].value not in (";", "+"):
                j += 1
            inner = argv[i + 1 : j]
            if inner:
                _found(walk, Command(tuple(inner), 0, (*command.via, "find")))
            i = j
        i += 1


# -- the whole line -------------------------------------------------------------------------


def _read(text: str, depth: int, via: tuple[str, ...]) -> Reading:
    source = text.encode("utf-8", "surrogatepass")
    with _PARSER_LOCK:
        tree = _parser().parse(source)
    walk = _Walk(source, depth, via)
    root = tree.root_node
    _walk(walk, root)
    if root.has_error and not walk.unsure:
        walk.unsure.append("the command does not parse as bash")
    _check_plain(walk, root)
    obstacle = walk.obstacles[0] if walk.obstacles else None
    if obstacle is None and walk.unsure:
        obstacle = walk.unsure[0]
    top = _top_commands(walk, root) if obstacle is None else []
    return Reading(tuple(top), tuple(walk.commands), obstacle, tuple(dict.fromkeys(walk.unsure)))


def _top_commands(walk: _Walk, node: Any) -> list[Command]:
    if node.type == "command":
        words, leading, _ = _words(walk, node)
        return [Command(tuple(words), leading)]
    found: list[Command] = []
    for child in node.children:
        if child.type in _PLAIN_JOINS or child.type == "command":
            found.extend(_top_commands(walk, child))
    return found


@lru_cache(maxsize=512)
def read_command(text: str) -> Reading:
    """What the bash command line ``text`` would run (see the module docstring)."""
    try:
        return _read(text, 0, ())
    except RecursionError:  # thousands of nested parentheses: not sure is the answer
        why = "the command nests too deep to read"
        return Reading((), (), why, (why,))


__all__ = [
    "MAX_DEPTH",
    "SHELLS",
    "WRAPPERS",
    "Command",
    "Reading",
    "Word",
    "decode_word",
    "read_command",
]
