"""Symbols of brace languages: C (and C++ basics), JavaScript/TypeScript, Go and Rust.

Each line is reduced to code (string literals emptied, comments dropped) and
the brace depth at its start is tracked. Only lines at depth 0, or directly
inside a container whose members we want (a class, impl, trait, interface,
namespace, module), are tested against the definition patterns; function
bodies are never looked into.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from smith_tui.tools.builtin.code.symbol import Symbol, signature_of

# ---------------------------------------------------------------- scanning


@dataclass
class _Container:
    body_depth: int
    symbol: Symbol | None  # None: transparent (extern "C" {}, anonymous namespace)
    members: str  # "top" (same rules as depth 0) or the language's member rule set
    opened: bool


@dataclass
class _Line:
    number: int
    raw: str
    code: str
    depth: int  # brace depth at the start of the line
    container: _Container | None  # innermost container whose body this line is in


_C_TOKENS = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\]){1,8}\'|//|/\*')
_JS_TOKENS = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`(?:\\.|[^`\\])*`|//|/\*')
_GO_TOKENS = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\]){1,10}\'|`[^`]*`|//|/\*')
_RUST_TOKENS = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])\'|//|/\*')


class _Stripper:
    """Removes comments and string contents, remembering an open ``/* … */``."""

    def __init__(self, tokens: re.Pattern[str]) -> None:
        self.tokens = tokens
        self.in_block = False

    def strip(self, line: str) -> str:
        pos = 0
        out: list[str] = []
        if self.in_block:
            end = line.find("*/")
            if end < 0:
                return ""
            pos = end + 2
            self.in_block = False
        while True:
            match = self.tokens.search(line, pos)
            if match is None:
                out.append(line[pos:])
                break
            out.append(line[pos : match.start()])
            token = match.group()
            if token == "//":
                break
            if token == "/*":
                end = line.find("*/", match.end())
                if end < 0:
                    self.in_block = True
                    break
                out.append(" ")
                pos = end + 2
                continue
            out.append('""')
            pos = match.end()
        return "".join(out)


def _scan(lines: list[str], tokens: re.Pattern[str]) -> list[_Line]:
    """Reduce each line to code and note the brace depth at its start."""
    stripper = _Stripper(tokens)
    prepared: list[_Line] = []
    depth = 0
    for number, raw in enumerate(lines, start=1):
        code = stripper.strip(raw)
        prepared.append(_Line(number, raw, code, depth, None))
        depth = max(0, depth + code.count("{") - code.count("}"))
    return prepared


_Found = tuple[Symbol, str | None]
Rule = Callable[[_Line, _Container | None, list[_Line], int], _Found | None]
"""A definition matcher: (line, enclosing container, all lines, index) → found or None."""


def _walk(
    lines: list[str],
    tokens: re.Pattern[str],
    top_rule: Rule,
    member_rules: dict[str, Rule],
) -> list[Symbol]:
    """Run ``top_rule`` on depth-0 lines and member rules inside containers.

    A rule returns ``(symbol, members)``: ``members`` names the rule set for the
    body the definition opens (``"top"``, a key of ``member_rules``, ``"skip"``)
    or is ``None`` for definitions without a body we care about.
    """
    prepared = _scan(lines, tokens)
    symbols: list[Symbol] = []
    stack: list[_Container] = []
    for index, line in enumerate(prepared):
        depth = line.depth
        while stack and (
            (stack[-1].opened and depth < stack[-1].body_depth)
            or (not stack[-1].opened and depth > stack[-1].body_depth)
        ):
            stack.pop()
        if stack and not stack[-1].opened and depth == stack[-1].body_depth:
            stack[-1].opened = True
        if not line.code.strip():
            continue
        inner = stack[-1] if stack else None
        if inner is None:
            if depth != 0:
                continue
            rule = top_rule
        elif not inner.opened:
            # Still between a container header and its "{": only depth 0 rules.
            if depth != 0:
                continue
            rule = top_rule
        elif depth != inner.body_depth:
            continue
        elif inner.members == "top":
            rule = top_rule
        else:
            member_rule = member_rules.get(inner.members)
            if member_rule is None:
                continue
            rule = member_rule
        found = rule(line, inner if inner and inner.opened else None, prepared, index)
        if found is None:
            continue
        symbol, members = found
        if symbol.name:
            symbols.append(symbol)
        if members is not None and _opens_body(prepared, index):
            stack.append(
                _Container(
                    depth + 1,
                    symbol if symbol.name else None,
                    members,
                    "{" in line.code,
                )
            )
    return symbols


def _opens_body(prepared: list[_Line], index: int, lookahead: int = 8) -> bool:
    """Whether the definition at ``index`` is followed by ``{`` before any ``;``."""
    for line in prepared[index : index + lookahead]:
        code = line.code
        brace, semi = code.find("{"), code.find(";")
        if brace >= 0 and (semi < 0 or brace < semi):
            return True
        if semi >= 0:
            return False
    return False


def _nest(container: _Container | None) -> tuple[int, str | None]:
    """Depth and parent name for a symbol defined in ``container``."""
    if container is None or container.symbol is None:
        return 0, None
    return container.symbol.depth + 1, container.symbol.qualified


def _make(
    name: str, kind: str, line: _Line, container: _Container | None, parent: str | None = None
) -> Symbol:
    depth, nested_parent = _nest(container)
    if parent is not None:
        depth = max(depth, 1)
    return Symbol(name, kind, line.number, depth, parent or nested_parent, signature_of(line.raw))


# ---------------------------------------------------------------- C / C++

_C_KEYWORDS = frozenset(
    "if else while for do switch case return sizeof typeof defined goto break continue "
    "static_assert _Static_assert alignof decltype new delete throw catch".split()
)
_C_DEFINE = re.compile(r"\s*#\s*define\s+([A-Za-z_]\w*)(\()?")
_C_TYPEDEF_FN = re.compile(r"\s*typedef\b[^;]*\(\s*\*\s*([A-Za-z_]\w*)\s*\)")
_C_TYPEDEF = re.compile(
    r"\s*typedef\b(?!\s+(?:struct|union|enum)\s*(?:\w+\s*)?\{).*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*;"
)
_C_TYPEDEF_OPEN = re.compile(r"\s*typedef\s+(struct|union|enum)\b[^;]*\{")
_C_TAG = re.compile(
    r"\s*(?:typedef\s+)?(?:template\s*<[^>]*>\s*)?(struct|union|enum|class)\s+(?:class\s+)?([A-Za-z_]\w*)\s*(?:final\s*)?(?::[^;{]*)?(?:\{|$)"
)
_C_NAMESPACE = re.compile(r"\s*(?:inline\s+)?namespace\s*([A-Za-z_][\w:]*)?\s*(?:\{|$)")
_C_EXTERN = re.compile(r'\s*extern\s+""\s*(?:\{|$)')
_C_FUNCTION = re.compile(
    r"\s*(?:[A-Za-z_][\w\s\*&:<>,~]*?[\s\*&>])?((?:[A-Za-z_]\w*::)*~?[A-Za-z_]\w*|operator\s*\S+)\s*\("
)
_C_CONSTANT = re.compile(
    r"\s*(?:static\s+)?(?:const\s+|constexpr\s+)[\w\s\*]*?\b([A-Z][A-Z0-9_]*)\s*(?:\[[^\]]*\])?\s*="
)
_C_CLOSE_TYPEDEF = re.compile(r"\s*\}\s*([A-Za-z_]\w*)\s*(?:,[^;]*)?;")
_C_KIND = {"struct": "struct", "union": "struct", "enum": "enum", "class": "class"}


def _c_top(
    line: _Line, container: _Container | None, lines: list[_Line], index: int
) -> _Found | None:
    raw, code = line.raw, line.code
    if match := _C_DEFINE.match(raw):
        kind = "macro" if match.group(2) else "constant"
        return _make(match.group(1), kind, line, container), None
    if code.lstrip().startswith("#"):
        return None
    if match := _C_TYPEDEF_FN.match(code):
        return _make(match.group(1), "type", line, container), None
    if match := _C_TYPEDEF_OPEN.match(code):
        name = _c_typedef_name(lines, index)
        kind = _C_KIND[match.group(1)]
        return _make(name or "", kind, line, container), "skip"
    if match := _C_TYPEDEF.match(code):
        return _make(match.group(1), "type", line, container), None
    if match := _C_EXTERN.match(code):
        return Symbol("", "module", line.number), "top"
    if match := _C_NAMESPACE.match(code):
        if match.group(1):
            return _make(match.group(1), "module", line, container), "top"
        return Symbol("", "module", line.number), "top"
    if (match := _C_TAG.match(code)) and "(" not in code.split("{")[0]:
        kind = _C_KIND[match.group(1)]
        if code.rstrip().endswith(";") and "{" not in code:
            return None
        return _make(match.group(2), kind, line, container), "skip"
    if match := _C_CONSTANT.match(code):
        return _make(match.group(1), "constant", line, container), None
    match = _C_FUNCTION.match(code)
    if match is None or "=" in code[: match.start(1)]:
        return None
    name = match.group(1)
    if name.split("::")[-1] in _C_KEYWORDS or not _opens_body(lines, index):
        return None
    if "::" in name:
        parent, _, short = name.rpartition("::")
        return _make(short, "method", line, container, parent=parent), "skip"
    return _make(name, "function", line, container), "skip"


def _c_typedef_name(lines: list[_Line], index: int) -> str | None:
    """Name given after the closing brace of ``typedef struct { … } Name;``."""
    start_depth = lines[index].depth
    for line in lines[index + 1 : index + 2000]:
        if line.depth == start_depth + 1 and (match := _C_CLOSE_TYPEDEF.match(line.code)):
            return match.group(1)
        if line.depth <= start_depth:
            break
    return None


def extract_c(lines: list[str]) -> list[Symbol]:
    """Symbols of a C (or simple C++) source given as lines."""
    return _walk(lines, _C_TOKENS, _c_top, {})


# ---------------------------------------------------------------- JavaScript / TypeScript

_JS_PREFIX = r"\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?"
_JS_IDENT = r"[A-Za-z_$][\w$]*"
_JS_FUNCTION = re.compile(rf"{_JS_PREFIX}(?:async\s+)?function\s*\*?\s*({_JS_IDENT})")
_JS_CLASS = re.compile(rf"{_JS_PREFIX}(?:abstract\s+)?class\s+({_JS_IDENT})")
_JS_INTERFACE = re.compile(rf"{_JS_PREFIX}interface\s+({_JS_IDENT})")
_JS_TYPE = re.compile(rf"{_JS_PREFIX}type\s+({_JS_IDENT})\s*(?:<.*?>)?\s*=")
_JS_ENUM = re.compile(rf"{_JS_PREFIX}(?:const\s+)?enum\s+({_JS_IDENT})")
_JS_NAMESPACE = re.compile(
    rf"{_JS_PREFIX}(?:namespace|module)\s+({_JS_IDENT}(?:\.{_JS_IDENT})*)\s*\{{"
)
_JS_ARROW = re.compile(
    rf"{_JS_PREFIX}(?:const|let|var)\s+({_JS_IDENT})\s*(?::[^=]+)?=\s*(?:async\s+)?"
    rf"(?:function\b|\(.*=>|{_JS_IDENT}\s*=>|\(\s*$|<)"
)
_JS_CONSTANT = re.compile(rf"{_JS_PREFIX}const\s+([A-Z][A-Z0-9_]*)\s*(?::[^=]+)?=")
_JS_MODIFIERS = r"\s*(?:(?:public|private|protected|static|readonly|async|abstract|override|declare|get|set|accessor)\s+)*"
_JS_METHOD = re.compile(rf"{_JS_MODIFIERS}\*?\s*(#?{_JS_IDENT})\s*\??\s*(?:<[^>]*>)?\s*\(")
_JS_FIELD_ARROW = re.compile(
    rf"{_JS_MODIFIERS}(#?{_JS_IDENT})\s*(?::[^=]+)?=\s*(?:async\s+)?(?:\([^)]*\)|{_JS_IDENT})\s*(?::[^=]+)?=>"
)
_JS_KEYWORDS = frozenset(
    "if for while switch catch return function new super typeof await yield do else".split()
)


def _js_top(
    line: _Line, container: _Container | None, lines: list[_Line], index: int
) -> _Found | None:
    code = line.code
    if match := _JS_FUNCTION.match(code):
        return _make(match.group(1), "function", line, container), "skip"
    if match := _JS_CLASS.match(code):
        return _make(match.group(1), "class", line, container), "class"
    if match := _JS_INTERFACE.match(code):
        return _make(match.group(1), "interface", line, container), "skip"
    if match := _JS_ENUM.match(code):
        return _make(match.group(1), "enum", line, container), "skip"
    if match := _JS_NAMESPACE.match(code):
        return _make(match.group(1), "module", line, container), "top"
    if match := _JS_TYPE.match(code):
        return _make(match.group(1), "type", line, container), None
    if match := _JS_ARROW.match(code):
        return _make(match.group(1), "function", line, container), "skip"
    if match := _JS_CONSTANT.match(code):
        return _make(match.group(1), "constant", line, container), "skip"
    return None


def _js_member(
    line: _Line, container: _Container | None, lines: list[_Line], index: int
) -> _Found | None:
    code = line.code
    match = _JS_FIELD_ARROW.match(code) or _JS_METHOD.match(code)
    if match is None or match.group(1) in _JS_KEYWORDS:
        return None
    return _make(match.group(1), "method", line, container), "skip"


def extract_js(lines: list[str]) -> list[Symbol]:
    """Symbols of a JavaScript or TypeScript source given as lines."""
    return _walk(lines, _JS_TOKENS, _js_top, {"class": _js_member})


# ---------------------------------------------------------------- Go

_GO_METHOD = re.compile(
    r"func\s+\(\s*(?:[A-Za-z_]\w*\s+)?\*?\s*([A-Za-z_]\w*)(?:\[[^\]]*\])?\s*\)\s*([A-Za-z_]\w*)"
)
_GO_FUNCTION = re.compile(r"func\s+([A-Za-z_]\w*)")
_GO_TYPE = re.compile(r"type\s+([A-Za-z_]\w*)(?:\[[^\]]*\])?\s+(struct|interface)?")
_GO_CONST = re.compile(r"const\s+([A-Za-z_]\w*)")
_GO_GROUP = re.compile(r"(const|var|type)\s*\(\s*$")
_GO_GROUP_ITEM = re.compile(r"\s+([A-Za-z_]\w*)")
_GO_INTERFACE_METHOD = re.compile(r"\s*([A-Za-z_]\w*)\s*\(")


def extract_go(lines: list[str]) -> list[Symbol]:
    """Symbols of a Go source given as lines."""
    group: list[str | None] = [None]  # kind of the open "const ( … )" style group

    def top(
        line: _Line, container: _Container | None, prepared: list[_Line], index: int
    ) -> _Found | None:
        code = line.code
        if group[0] is not None:
            if code.startswith(")"):
                group[0] = None
                return None
            match = _GO_GROUP_ITEM.match(code)
            if match is None or group[0] == "var":
                return None
            kind = "constant" if group[0] == "const" else "type"
            return _make(match.group(1), kind, line, container), None
        if match := _GO_GROUP.match(code):
            group[0] = match.group(1)
            return None
        if match := _GO_METHOD.match(code):
            return _make(match.group(2), "method", line, container, parent=match.group(1)), "skip"
        if match := _GO_FUNCTION.match(code):
            return _make(match.group(1), "function", line, container), "skip"
        if match := _GO_TYPE.match(code):
            flavour = match.group(2)
            kind = {"struct": "struct", "interface": "interface"}.get(flavour or "", "type")
            members = "interface" if flavour == "interface" else "skip"
            return _make(match.group(1), kind, line, container), members
        if match := _GO_CONST.match(code):
            return _make(match.group(1), "constant", line, container), None
        return None

    def member(
        line: _Line, container: _Container | None, prepared: list[_Line], index: int
    ) -> _Found | None:
        match = _GO_INTERFACE_METHOD.match(line.code)
        if match is None:
            return None
        return _make(match.group(1), "method", line, container), None

    return _walk(lines, _GO_TOKENS, top, {"interface": member})


# ---------------------------------------------------------------- Rust

_RS_VIS = r"\s*(?:pub(?:\s*\([^)]*\))?\s+)?"
_RS_FN = re.compile(
    rf"{_RS_VIS}(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?"
    r"(?:extern\s+(?:\"\"\s+)?)?fn\s+([A-Za-z_]\w*)"
)
_RS_ITEM = re.compile(
    rf"{_RS_VIS}(?:unsafe\s+)?(?:auto\s+)?(struct|union|enum|trait|type|mod)\s+([A-Za-z_]\w*)"
)
_RS_CONST = re.compile(rf"{_RS_VIS}(?:const|static)\s+(?:mut\s+)?([A-Za-z_]\w*)\s*:")
_RS_MACRO = re.compile(r"\s*(?:#\[macro_export\]\s*)?macro_rules!\s*([A-Za-z_]\w*)")
_RS_IMPL = re.compile(r"\s*(?:unsafe\s+)?impl\b")
_RS_EXTERN = re.compile(r'\s*(?:unsafe\s+)?extern\s+(?:""\s*)?\{')
_RS_KIND = {"struct": "struct", "union": "struct", "enum": "enum", "trait": "trait", "type": "type"}


def _drop_generics(text: str) -> str:
    previous = None
    while previous != text:
        previous = text
        text = re.sub(r"<[^<>]*>", "", text)
    return text


def _rs_impl_name(code: str) -> str:
    head = code.split("{")[0]
    head = re.split(r"\bwhere\b", head)[0]
    head = _drop_generics(_RS_IMPL.sub("", head, count=1)).strip()
    trait, _, target = head.partition(" for ")
    target = (target or trait).strip().lstrip("&").strip()
    return target.split("::")[-1].strip() or "?"


def _rs_top(
    line: _Line, container: _Container | None, lines: list[_Line], index: int
) -> _Found | None:
    code = line.code
    if match := _RS_FN.match(code):
        return _make(match.group(1), "function", line, container), "skip"
    if match := _RS_MACRO.match(code):
        return _make(match.group(1), "macro", line, container), "skip"
    if _RS_IMPL.match(code):
        head = _drop_generics(code.split("{")[0])
        name = _rs_impl_name(code)
        label = " ".join(head.split())
        symbol = Symbol(name, "impl", line.number, _nest(container)[0], _nest(container)[1], label)
        return symbol, "impl"
    if _RS_EXTERN.match(code):
        return Symbol("", "module", line.number), "top"
    if match := _RS_ITEM.match(code):
        keyword, name = match.groups()
        if keyword == "mod":
            return _make(name, "module", line, container), "top"
        members = "impl" if keyword == "trait" else "skip"
        return _make(name, _RS_KIND[keyword], line, container), members
    if match := _RS_CONST.match(code):
        return _make(match.group(1), "constant", line, container), "skip"
    return None


def _rs_member(
    line: _Line, container: _Container | None, lines: list[_Line], index: int
) -> _Found | None:
    code = line.code
    if match := _RS_FN.match(code):
        return _make(match.group(1), "method", line, container), "skip"
    if match := _RS_CONST.match(code):
        return _make(match.group(1), "constant", line, container), "skip"
    return None


def extract_rust(lines: list[str]) -> list[Symbol]:
    """Symbols of a Rust source given as lines."""
    return _walk(lines, _RUST_TOKENS, _rs_top, {"impl": _rs_member})
