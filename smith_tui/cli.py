"""Command-line entry point for ``smith``."""

from __future__ import annotations

import argparse
import asyncio
import gc
import signal
import sys
import types
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smith_tui import __version__
from smith_tui.terminal_text import visible

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

# On import, httpx loads its command-line client (click, rich and pygments: about 35 ms of
# every start) unless that fails with ImportError. smith never runs it; marking the module
# absent makes httpx take its own fallback, as when the 'cli' extra is not installed.
if "httpx" not in sys.modules:
    # None marks a module absent for the import system; the stubs allow modules only.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

# pydantic looks for its plugins (third-party packages that watch every validation, a
# development aid) when it builds its first model: importlib.metadata and a scan of every
# installed package's entry points, 10-20 ms of every start. smith's models run none: its
# loader is given as one that finds none, as with PYDANTIC_DISABLE_PLUGINS=__all__.
if "pydantic" not in sys.modules:
    _no_plugins = types.ModuleType("pydantic.plugin._loader", "smith: pydantic plugins off")
    _no_plugins.get_plugins = lambda: ()  # type: ignore[attr-defined]
    sys.modules.setdefault("pydantic.plugin._loader", _no_plugins)


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser for ``smith``."""
    parser = argparse.ArgumentParser(
        prog="smith",
        description="Agent Smith TUI: a full-screen terminal coding agent.",
    )
    parser.add_argument("--version", action="version", version=f"smith {__version__}")
    parser.add_argument(
        "-p",
        "--prompt",
        nargs="?",
        const="",
        help="run one turn headless ('-' reads stdin; no prompt with --plan-file)",
    )
    parser.add_argument(
        "--plan-file",
        metavar="FILE",
        help="headless: run an approved plan (the Markdown or JSON that plan mode prints) "
        "in a fresh context",
    )
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
    parser.add_argument(
        "--permission-mode",
        choices=_permission_modes(),
        help=(
            "which tool calls may run (default: permissions.mode, else ask in the app and "
            "yolo headless; headless, a call that would ask is denied)"
        ),
    )
    parser.add_argument(
        "--max-tokens",
        metavar="N",
        type=_positive_int,
        help="headless: stop the turn once it used N tokens, sub-agents included "
        "(budget.turn_tokens)",
    )
    parser.add_argument(
        "--max-cost",
        metavar="USD",
        type=_positive_dollars,
        help="headless: stop the turn once it cost USD dollars, sub-agents included "
        "(budget.turn_cost_usd; the provider's reported cost, else the catalog's prices)",
    )
    parser.add_argument(
        "--no-checkpoint",
        action="store_true",
        help="do not checkpoint the project's files before the turn changes them",
    )
    parser.add_argument(
        "command",
        nargs="?",
        metavar="{" + ",".join(COMMANDS) + "}",
        help="undo: restore the files to before the last turn that changed them, then exit; "
        "acp: serve the Agent Client Protocol on stdio (for Zed and other editors); "
        "doctor: ask the configured server what it supports (exit 1 if turns cannot work)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="the same as --output-format json (headless turns, smith doctor)",
    )
    return parser


COMMANDS = ("undo", "acp", "doctor")
"""The commands ``smith COMMAND`` runs (any other last word is a prompt after a bare ``-p``)."""


def _prompt_after_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``smith -p --permission-mode plan "TEXT"``: a bare ``-p`` takes the last word as its
    prompt; any other word that is not a command is refused as argparse would."""
    if args.command is None or args.command in COMMANDS:
        return
    if args.prompt == "" and args.plan_file is None:
        args.prompt, args.command = args.command, None
        return
    choices = ", ".join(repr(name) for name in COMMANDS)
    parser.error(f"argument command: invalid choice: {args.command!r} (choose from {choices})")


def _permission_modes() -> tuple[str, ...]:
    """``--permission-mode``'s choices: the one list of modes (config/modes.py, which the
    parser reads without importing the config schema and pydantic)."""
    from smith_tui.config.modes import PERMISSION_MODES

    return PERMISSION_MODES


def _positive_int(text: str) -> int:
    """``--max-tokens``: a whole number above zero."""
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of tokens such as 50000, got {text!r}"
        ) from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 tokens, got {text!r}")
    return value


def _positive_dollars(text: str) -> float:
    """``--max-cost``: dollars above zero (``0.5``, ``$2``)."""
    try:
        value = float(text.strip().removeprefix("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an amount in dollars such as 0.50, got {text!r}"
        ) from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a dollar amount above 0, got {text!r}")
    return value


EXIT_DENIED = 3
"""Headless exit code of a turn that completed but had a tool call denied."""

NO_SERVER_MESSAGE = """smith: no LLM server is configured.

Set one of these:
  * llm_config.api_url in {config}  (e.g. "http://127.0.0.1:8080/v1" for llama.cpp)
  * the SMITH_API_URL environment variable
  * the --api-url flag
and, if the server needs a key, export it in LLM_API_KEY
(or the variable named by llm_config.api_key_env).
"""


def _front_end_mode(*, headless: bool) -> str:
    """The permission mode when no layer sets ``permissions.mode``."""
    return "yolo" if headless else "ask"


def _options(args: argparse.Namespace, *, headless: bool) -> Any:
    from smith_tui.engine.runtime import RuntimeOptions

    return RuntimeOptions(
        cwd=Path.cwd(),
        config_path=args.config,
        db_path=args.db,
        ephemeral=_ephemeral(args),
        model=args.model,
        auto_resume=not headless and not args.resume,
        permission_mode=_front_end_mode(headless=headless),
    )


def _ephemeral(args: argparse.Namespace) -> dict[str, Any]:
    """This run's flags as the config's ``ephemeral`` layer."""
    ephemeral: dict[str, Any] = {}
    if args.api_url:
        ephemeral["llm_config"] = {"api_url": args.api_url}
    if args.role:
        ephemeral["active_role"] = args.role
    if args.no_checkpoint:
        ephemeral["checkpoints"] = {"enabled": False}
    if args.permission_mode:
        ephemeral["permissions"] = {"mode": args.permission_mode}
    budget: dict[str, Any] = {}
    if args.max_tokens is not None:
        budget["turn_tokens"] = args.max_tokens
    if args.max_cost is not None:
        budget["turn_cost_usd"] = args.max_cost
    if budget:
        ephemeral["budget"] = budget
    return ephemeral


def _open_runtime(args: argparse.Namespace, *, headless: bool) -> Any:
    """Open the runtime or print why not; returns ``None`` on a user error."""
    # Importing the engine and opening the runtime allocate only what lives as long as the
    # process (modules, classes, the config): the cycle collector would walk it again and
    # again for nothing (about 30 ms of a headless turn's 0.4 s). Off while it is built,
    # then frozen out of the collector's view, as the app does for its own import.
    gc.disable()
    try:
        from smith_tui.config import ConfigError
        from smith_tui.engine.runtime import Runtime
        from smith_tui.store import StoreError

        try:
            return Runtime.open(_options(args, headless=headless))
        except (ConfigError, StoreError) as exc:
            sys.stderr.write(f"smith: {visible(exc.message)}\n")
            return None
    finally:
        gc.freeze()
        gc.enable()


def _keep_dataclass_code() -> None:
    """Reuse the code ``@dataclass`` compiled on earlier starts (smith_tui/dataclass_code.py:
    a fifth of a headless turn's CPU, and of the app's start-up, Textual's classes too)."""
    from smith_tui.config.locations import cache_dir
    from smith_tui.dataclass_code import install

    install(cache_dir())


def _start_up_done() -> None:
    """A runtime of the app or of ``smith acp`` is open: write what start-up compiled now (a
    signal may end the program without the exit hook; nothing is written when every class
    was in the cache), and let go of the cache's texts (about 2 MB it would otherwise keep)."""
    from smith_tui import dataclass_code

    if dataclass_code.installed is not None:
        dataclass_code.installed.save()
        dataclass_code.installed.release()


def _runtime_class() -> Any:
    from smith_tui.engine.runtime import Runtime

    return Runtime


def _pick_conversation(runtime: Runtime, args: argparse.Namespace) -> None:
    if args.resume:
        runtime.conversations.load(args.resume, reason="resume")
    elif args.continue_:
        if runtime.conversations.continue_latest() is None:
            runtime.conversations.new()
    else:
        runtime.conversations.new()


async def _headless(
    runtime: Runtime, args: argparse.Namespace, prompt: str, plan: Any = None
) -> int:
    from smith_tui.app.headless import HeadlessPrinter

    printer = HeadlessPrinter(args.output_format)
    runtime.bus.subscribe(printer)
    for warning in runtime.hook_setup.warnings(runtime.scope.project_root):
        sys.stderr.write(f"smith: warning: {visible(warning)}\n")  # nobody here to trust them
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, runtime.cancel_turn, "interrupted")
    try:
        _pick_conversation(runtime, args)
        # A command file or /init runs as its turn; any other text (a "/" one too) is the prompt.
        prepared = None
        if prompt.lstrip().startswith("/"):
            prepared = await runtime.services.command.prepare_turn(prompt)
        if plan is not None:
            result = await runtime.plans.approve(plan, mode=runtime.permission_mode)
        elif prepared is not None:
            result = await runtime.run_turn(
                prepared.prompt, model=prepared.model, tools=prepared.tools
            )
        else:
            result = await runtime.run_turn(prompt)
        printer.finish(
            {
                "result": result.text,
                "stop_reason": result.stop_reason,
                "usage": result.usage,
                "usage_by_role": runtime.usage.totals(),
                "conversation_id": runtime.conversations.conversation_id,
                "error": result.error.to_dict() if result.error else None,
                "permission_mode": runtime.permission_mode,
                "denied": printer.denied,
                "budget": printer.spend,
                "plan": printer.plan.plan if printer.plan is not None else None,
            }
        )
        if result.stop_reason != "completed":
            return 1
        if printer.plan is not None:
            return 0  # the plan is the answer; what plan mode refused on the way is not
        if plan is None and runtime.permission_mode == "plan":
            sys.stderr.write("smith: plan mode: the turn ended without presenting a plan\n")
            return 1
        return EXIT_DENIED if printer.denied else 0
    finally:
        await runtime.aclose()


async def _doctor(runtime: Runtime, args: argparse.Namespace) -> int:
    from smith_tui.engine import server_doctor as doctor

    try:
        found = await doctor.diagnose(runtime.config.model, runtime.llm, args.model)
    finally:
        await runtime.aclose()
    checks = doctor.checks_of(found)
    render = doctor.render_json if args.output_format == "json" else doctor.render_text
    sys.stdout.write(render(found, checks))
    return doctor.verdict(checks)


def _doctor_main(args: argparse.Namespace) -> int:
    if args.prompt is not None:
        sys.stderr.write("smith: 'smith doctor' takes no prompt; run it on its own\n")
        return 2
    runtime = _open_runtime(args, headless=True)
    if runtime is None:
        return 2
    if not runtime.server_configured:
        sys.stderr.write(
            "smith: no LLM server is configured: set llm_config.api_url in "
            f"{visible(str(runtime.config.user_config_path))}, SMITH_API_URL or --api-url\n"
        )
        asyncio.run(runtime.aclose())
        return 1
    return asyncio.run(_doctor(runtime, args))


async def _undo(runtime: Runtime) -> int:
    try:
        out = await runtime.submit("/undo")
    finally:
        await runtime.aclose()
    (sys.stdout if out.ok else sys.stderr).write(f"{visible(out.text)}\n")
    return 0 if out.ok else 1


def _acp(args: argparse.Namespace) -> int:
    """``smith acp``: one runtime per editor session, in the session's folder, asking the
    editor before tool calls (permission mode ``ask`` unless configured)."""
    import dataclasses

    from smith_tui.acp import serve

    if args.prompt is not None:
        sys.stderr.write("smith: 'smith acp' takes no prompt; the editor sends them\n")
        return 2

    def open_runtime(cwd: Path, extra: Mapping[str, Any]) -> Runtime:
        # Here, in a session's thread, not before serving: the engine's import must not
        # delay `initialize`'s answer (smith_tui.acp.preload loads it meanwhile).
        options = _options(args, headless=False)
        options.auto_resume = False
        ephemeral = {**options.ephemeral, **extra}
        runtime: Runtime = _runtime_class().open(
            dataclasses.replace(options, cwd=cwd, ephemeral=ephemeral)
        )
        _start_up_done()
        return runtime

    return serve(open_runtime, __version__)


def _read_plan_file(args: argparse.Namespace) -> Any:
    """``--plan-file``: the plan it holds, or ``None`` after saying what is wrong."""
    from smith_tui.tools.builtin.plan import MAX_PLAN_TEXT, PlanError, parse_plan

    if args.prompt is None or args.prompt.strip():
        sys.stderr.write(
            "smith: --plan-file runs headless and takes no prompt: smith -p --plan-file FILE\n"
        )
        return None
    path = Path(args.plan_file)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_PLAN_TEXT * 4 + 1)
        text = data.decode("utf-8")
        return parse_plan(text)
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        sys.stderr.write(f"smith: cannot read the plan file {visible(str(path))}: {reason}\n")
    except PlanError as exc:
        sys.stderr.write(f"smith: {visible(str(path))}: {visible(str(exc))}\n")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``smith``; returns the process exit code."""
    if argv is None:  # the program itself (not a test calling in): before the big imports
        _keep_dataclass_code()
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["search"]:
        from smith_tui.app.search_command import main as search

        return search(words[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    _prompt_after_options(parser, args)
    if args.json:
        args.output_format = "json"
    if args.command == "doctor":
        return _doctor_main(args)
    if args.command == "acp":
        return _acp(args)
    if args.command == "undo":
        if args.prompt is not None:
            sys.stderr.write("smith: 'smith undo' takes no prompt; run it on its own\n")
            return 2
        runtime = _open_runtime(args, headless=True)
        return 2 if runtime is None else asyncio.run(_undo(runtime))
    headless = args.prompt is not None
    for flag, value in (("--max-tokens", args.max_tokens), ("--max-cost", args.max_cost)):
        if value is not None and not headless:
            key = "turn_tokens" if flag == "--max-tokens" else "turn_cost_usd"
            sys.stderr.write(
                f"smith: {flag} limits a headless turn (-p PROMPT); in the app use "
                f"/config set budget.{key} VALUE\n"
            )
            return 2
    plan = None
    if args.plan_file is not None:
        plan = _read_plan_file(args)
        if plan is None:
            return 2
        prompt = ""
    elif headless:
        prompt = (sys.stdin.read() if args.prompt == "-" else args.prompt).strip()
        if not prompt.strip():
            sys.stderr.write("smith: the prompt is empty; pass text to -p (or pipe it with -p -)\n")
            return 2
    if not headless:
        # The status line's mode and sandbox for the first frame: read in a thread (a few
        # ms, bwrap's probe included) while Textual is imported below.
        from smith_tui.app.early_status import start_early_status

        early_status = start_early_status(
            config_path=args.config,
            db_path=args.db,
            ephemeral=_ephemeral(args),
            default_mode=_front_end_mode(headless=False),
            probe=True,  # ~30 ms of the first frame on 2 cores; the runtime reuses the answer
        )
        # The app paints its prompt first and opens the runtime in a thread after that.
        # What its import allocates (modules, classes) lives as long as the process: the
        # cycle collector would walk it again and again for nothing (~20 ms of the first
        # paint). Frozen before the collector is back on, or its first collection would
        # walk all of it at once (another ~20 ms).
        gc.disable()
        try:
            from smith_tui.app.app import run_app
        finally:
            gc.freeze()
            gc.enable()

        def opener() -> Runtime:
            runtime: Runtime = _runtime_class().open(_options(args, headless=False))
            _start_up_done()
            return runtime

        return run_app(
            opener=opener,
            resume=args.resume,
            continue_=args.continue_,
            early_status=early_status,
        )
    runtime = _open_runtime(args, headless=headless)
    if runtime is None:
        return 2
    if not runtime.server_configured:
        runtime.store.close()
        sys.stderr.write(NO_SERVER_MESSAGE.format(config=runtime.config.user_config_path))
        return 2
    from smith_tui.engine.runtime import UserRequestError

    if plan is not None and runtime.permission_mode == "plan":
        runtime.store.close()
        sys.stderr.write(
            "smith: a plan file runs the plan, which plan mode would refuse: pass "
            "--permission-mode auto-edit (or yolo, ask, read-only)\n"
        )
        return 2
    try:
        return asyncio.run(_headless(runtime, args, prompt, plan))
    except UserRequestError as exc:
        sys.stderr.write(f"smith: {visible(exc.message)}\n")
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
