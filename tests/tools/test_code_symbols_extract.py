"""Heuristic symbol extraction for each supported language, on real source files."""

from __future__ import annotations

from pathlib import Path

import pytest

from smith_tui.tools.builtin.code.symbols import extract_symbols, language_for, symbols_of_file


def rows(text: str, language: str) -> list[tuple[int, str, str, int]]:
    return [(s.line, s.kind, s.qualified, s.depth) for s in extract_symbols(text, language)]


PYTHON = '''"""Module docstring.

def not_a_function():
    class NotAClass: pass
"""
import os

MAX_SIZE: int = 10
Pair: TypeAlias = tuple[int, int]
x = 1


class Engine(Base):
    """Runs things."""

    LIMIT = 3

    def run(self, a,
            b):
        def helper():
            return "def fake():"
        return helper

    async def stop(self) -> None: ...

    @property
    def name(self):
        return 1


def main(
    argv,
):
    def nested():
        pass


class Empty: pass
'''


def test_python_nesting_docstrings_and_multiline_signatures() -> None:
    assert rows(PYTHON, "python") == [
        (8, "constant", "MAX_SIZE", 0),
        (9, "type", "Pair", 0),
        (13, "class", "Engine", 0),
        (18, "method", "Engine.run", 1),
        (20, "function", "Engine.run.helper", 2),
        (24, "method", "Engine.stop", 1),
        (27, "method", "Engine.name", 1),
        (31, "function", "main", 0),
        (34, "function", "main.nested", 1),
        (38, "class", "Empty", 0),
    ]


LUA = """local M = {}
local MAX_RETRIES = 5
--[[
function commented_out() end
]]
function M.new(opts)
  return setmetatable({}, M)
end
function M:start()
end
local function helper()
  local function inner() end
end
M.stop = function(self) end
function M.sub.deep() end
return M
"""


def test_lua_functions_methods_and_constants() -> None:
    assert rows(LUA, "lua") == [
        (2, "constant", "MAX_RETRIES", 0),
        (6, "function", "M.new", 1),
        (9, "method", "M.start", 1),
        (11, "function", "helper", 0),
        (12, "function", "inner", 1),
        (14, "function", "M.stop", 1),
        (15, "function", "M.sub.deep", 1),
    ]


C = """#include <stdio.h>
#define BUFFER_SIZE 4096
#define SQUARE(x) ((x) * (x))
typedef int (*callback_t)(int);
typedef unsigned long ulong_t;
typedef struct {
    int x;
} point_t;
struct node {
    struct node *next;
};
enum color { RED, GREEN };
static const int LIMIT = 4;
struct node;
void prototype_only(int x);
/* int commented(void) { return 0; } */
static struct node *make_node(int value)
{
    if (value) { return 0; }
    return 0;
}
int
main(int argc, char **argv) {
    const char *s = "not_a_function(void) {";
    return 0;
}
"""


def test_c_macros_types_structs_and_function_definitions_only() -> None:
    assert rows(C, "c") == [
        (2, "constant", "BUFFER_SIZE", 0),
        (3, "macro", "SQUARE", 0),
        (4, "type", "callback_t", 0),
        (5, "type", "ulong_t", 0),
        (6, "struct", "point_t", 0),
        (9, "struct", "node", 0),
        (12, "enum", "color", 0),
        (13, "constant", "LIMIT", 0),
        (17, "function", "make_node", 0),
        (23, "function", "main", 0),
    ]


JS = """import x from "y";
export function alpha(a) { return a; }
export default class Widget extends Base {
  constructor(x) { super(x); }
  static create() { return new Widget(); }
  async load(url) {
    if (url) { return 1; }
    function inner() {}
  }
  handler = (e) => { this.x = e; };
  get size() { return 1; }
}
const beta = async (a, b) => a + b;
const MAX_ITEMS = 10;
let notAFunction = 3;
"""


def test_javascript_functions_classes_methods_arrows() -> None:
    assert rows(JS, "javascript") == [
        (2, "function", "alpha", 0),
        (3, "class", "Widget", 0),
        (4, "method", "Widget.constructor", 1),
        (5, "method", "Widget.create", 1),
        (6, "method", "Widget.load", 1),
        (10, "method", "Widget.handler", 1),
        (11, "method", "Widget.size", 1),
        (13, "function", "beta", 0),
        (14, "constant", "MAX_ITEMS", 0),
    ]


TS = """export interface Shape {
  area(): number;
}
export type Id = string | number;
export enum Direction { Up, Down }
export abstract class Base<T> implements Shape {
  private readonly items: T[] = [];
  public abstract area(): number;
  protected describe<K>(key: K): string { return `${key}`; }
}
namespace Tools {
  export function inner(): void {}
}
"""


def test_typescript_interfaces_types_enums_namespaces() -> None:
    assert rows(TS, "typescript") == [
        (1, "interface", "Shape", 0),
        (4, "type", "Id", 0),
        (5, "enum", "Direction", 0),
        (6, "class", "Base", 0),
        (8, "method", "Base.area", 1),
        (9, "method", "Base.describe", 1),
        (11, "module", "Tools", 0),
        (12, "function", "Tools.inner", 1),
    ]


GO = """package main

const Pi = 3.14
const (
\tModeA = iota
\tModeB
)
var (
\tcounter int
)
type Server struct {
\tName string
}
type Handler interface {
\tServe(x int) error
}
type ID int
func (s *Server) Start() error {
\treturn nil
}
func main() {
\tgo func() {}()
}
"""


def test_go_functions_methods_types_and_const_groups() -> None:
    assert rows(GO, "go") == [
        (3, "constant", "Pi", 0),
        (5, "constant", "ModeA", 0),
        (6, "constant", "ModeB", 0),
        (11, "struct", "Server", 0),
        (14, "interface", "Handler", 0),
        (15, "method", "Handler.Serve", 1),
        (17, "type", "ID", 0),
        (18, "method", "Server.Start", 1),
        (21, "function", "main", 0),
    ]


RUST = """pub const MAX: usize = 10;
pub struct Point { x: i32 }
pub enum Shape { Circle, Square }
pub trait Draw {
    fn draw(&self);
    fn name(&self) -> String { String::new() }
}
impl<T: Clone> Draw for Wrapper<T> {
    fn draw(&self) {}
}
impl Point {
    pub fn new(x: i32) -> Self { Point { x } }
    pub async fn label<'a>(&'a self) -> &'a str { "{" }
}
pub(crate) fn helper() {
    fn local_only() {}
}
mod inner {
    pub fn deep() {}
}
macro_rules! my_macro { () => {} }
type Alias = Vec<u8>;
"""


def test_rust_items_impls_traits_and_modules() -> None:
    assert rows(RUST, "rust") == [
        (1, "constant", "MAX", 0),
        (2, "struct", "Point", 0),
        (3, "enum", "Shape", 0),
        (4, "trait", "Draw", 0),
        (5, "method", "Draw.draw", 1),
        (6, "method", "Draw.name", 1),
        (8, "impl", "Wrapper", 0),
        (9, "method", "Wrapper.draw", 1),
        (11, "impl", "Point", 0),
        (12, "method", "Point.new", 1),
        (13, "method", "Point.label", 1),
        (15, "function", "helper", 0),
        (18, "module", "inner", 0),
        (19, "function", "inner.deep", 1),
        (21, "macro", "my_macro", 0),
        (22, "type", "Alias", 0),
    ]


def test_signature_is_the_shortened_definition_line() -> None:
    symbol = extract_symbols("def f(a,   b):\n    pass\n", "python")[0]
    assert symbol.signature == "def f(a, b):"


@pytest.mark.parametrize(
    ("name", "language"),
    [
        ("a.py", "python"),
        ("a.pyi", "python"),
        ("a.lua", "lua"),
        ("a.h", "c"),
        ("a.TS", "typescript"),
        ("a.mjs", "javascript"),
        ("a.go", "go"),
        ("a.rs", "rust"),
        ("a.txt", None),
        ("Makefile", None),
    ],
)
def test_language_by_suffix(name: str, language: str | None) -> None:
    assert language_for(name) == language


def test_unknown_language_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="no symbol extractor"):
        extract_symbols("x", "cobol")


def test_symbols_of_file_skips_binary_and_unsupported(tmp_path: Path) -> None:
    source = tmp_path / "ok.py"
    source.write_text("def f():\n    pass\n")
    binary = tmp_path / "bin.py"
    binary.write_bytes(b"def f():\x00\x01\x02")
    other = tmp_path / "notes.txt"
    other.write_text("def f():")
    assert [s.name for s in symbols_of_file(source) or []] == ["f"]
    assert symbols_of_file(binary) is None
    assert symbols_of_file(other) is None
    assert symbols_of_file(tmp_path / "missing.py") is None
