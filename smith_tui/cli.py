"""Command-line entry point for ``smith``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from smith_tui import __version__


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser for ``smith``."""
    parser = argparse.ArgumentParser(
        prog="smith",
        description="Agent Smith TUI: a full-screen terminal coding agent.",
    )
    parser.add_argument("--version", action="version", version=f"smith {__version__}")
    parser.add_argument("-p", "--prompt", help="run one turn headless ('-' reads stdin)")
    parser.add_argument("--model", help="model id to use for this run")
    parser.add_argument("--role", choices=["direct", "orchestrator"], help="active role")
    parser.add_argument(
        "--output-format",
        choices=["text", "json", "stream-json"],
        default="text",
        help="headless output format",
    )
    parser.add_argument(
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the most recent conversation of this project",
    )
    parser.add_argument("--resume", metavar="ID", help="resume conversation ID")
    parser.add_argument("--api-url", help="Chat-Completions base URL (overrides config)")
    parser.add_argument("--db", metavar="PATH", help="SQLite database path")
    parser.add_argument("--config", metavar="PATH", help="user config JSON path")
    return parser


NO_SERVER_MESSAGE = """smith: no LLM server is configured.

Set one of these:
  * llm_config.api_url in {config}  (e.g. "http://127.0.0.1:8080/v1" for llama.cpp)
  * the SMITH_API_URL environment variable
  * the --api-url flag
and, if the server needs a key, export it in LLM_API_KEY
(or the variable named by llm_config.api_key_env).
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``smith``; returns the process exit code."""
    args = build_parser().parse_args(argv)
    api_url = args.api_url or os.environ.get("SMITH_API_URL")
    if not api_url:
        config_path = args.config or "~/.config/smith/config.json"
        sys.stderr.write(NO_SERVER_MESSAGE.format(config=config_path))
        return 2
    sys.stderr.write("smith: the interactive application is not built yet.\n")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
