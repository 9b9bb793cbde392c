"""Read-only code exploration tools backed by ripgrep: map, grep, files, symbols, outline.

Every tool honours .gitignore, leaves out hidden files and never looks inside
.git. ``TOOLS`` lists their specs for the registry.
"""

from __future__ import annotations

from typing import Any

from smith_tui.tools.builtin.code.file_search import TOOL as CODE_FILES
from smith_tui.tools.builtin.code.grep import TOOL as CODE_GREP
from smith_tui.tools.builtin.code.map import TOOL as CODE_MAP
from smith_tui.tools.builtin.code.outline import TOOL as CODE_OUTLINE
from smith_tui.tools.builtin.code.symbols_tool import TOOL as CODE_SYMBOLS
from smith_tui.tools.spec import ToolSpec

TOOLS: list[ToolSpec[Any]] = [CODE_MAP, CODE_GREP, CODE_FILES, CODE_SYMBOLS, CODE_OUTLINE]

__all__ = ["CODE_FILES", "CODE_GREP", "CODE_MAP", "CODE_OUTLINE", "CODE_SYMBOLS", "TOOLS"]
