"""MCP client: start the configured MCP servers and offer their tools (tools layer).

:mod:`smith_tui.mcp.manager` runs each server of ``mcp_servers`` through the official
SDK (``mcp``), :mod:`smith_tui.mcp.adapter` turns their tools into
:class:`~smith_tui.tools.spec.ToolSpec` objects named ``mcp__<server>__<tool>``.
This module imports nothing heavy, so the engine can name :data:`TOOL_PREFIX` cheaply.
"""

from __future__ import annotations

TOOL_PREFIX = "mcp__"
"""Names of MCP servers' tools start with this: ``mcp__<server>__<tool>``."""
