"""``smith acp``: Smith as an Agent Client Protocol agent over stdio.

An editor (Zed, Toad, any ACP client) starts ``smith acp`` and drives the same engine
the TUI and ``smith -p`` use. This package is a front end: it subscribes to engine
events and turns them into session updates, asks the client for permission, and reads
and writes files through the client when it offers to. The protocol itself is the
official ``agent-client-protocol`` SDK (import name ``acp``).
"""

from __future__ import annotations

from smith_tui.acp.server import serve

__all__ = ["serve"]
