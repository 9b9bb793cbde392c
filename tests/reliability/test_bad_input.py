"""Bad input corpus: every input a user (or a model) can get wrong, and what ``smith`` says.

Each row feeds one bad input and checks that the answer is clear - no traceback, a non-zero
exit code where there is one, a message that names what to fix - and that nothing was
written or lost: the database and config files keep their bytes (or the database is not
created), ``/config set`` leaves the stored overrides as they were, and a tool call with bad
arguments changes no file of the project and no note or memory entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from smith_tui.engine.runtime import OVERRIDES_KEY
from tests.reliability.support import (
    CliRun,
    has_traceback,
    record,
    run_inprocess,
    write_config,
)
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import make_git_repo, open_runtime
from tests.support.smith_cli import server_args, smith_env


def _digest(path: Path) -> str | None:
    """SHA-256 of a file, or None when it does not exist."""
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` except ``.git`` internals, with its digest."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def _seed_db(tmp: Path, repo: Path, server: ScriptedLLMServer) -> Path:
    """``tmp/smith.db`` with one conversation (so "nothing lost" has something to lose),
    written by a headless turn with the good config file ``tmp/config.json``."""
    server.enqueue(text_reply("seeded"))
    db = tmp / "smith.db"
    args = ["-p", "seed", *server_args(server.base_url, db, write_config(tmp))]
    run = run_inprocess(args, cwd=repo, env=smith_env(tmp))
    assert run.code == 0, run.stderr
    return db


def _refusal_failures(run: CliRun, code: int, says: Sequence[str]) -> list[str]:
    """What is wrong with how a run refused bad input: its exit code is not ``code``, it
    printed a traceback, or its stderr does not name each of ``says``."""
    failures = []
    if run.code != code:
        failures.append(f"exit code {run.code}, expected {code}")
    if has_traceback(run.stdout, run.stderr):
        failures.append("traceback printed")
    missing = [s for s in says if s not in run.stderr]
    if missing:
        failures.append(f"message does not name {missing}")
    return failures


def _conclude(
    kind: str,
    name: str,
    expected: str,
    shown: str,
    failures: list[str],
    *,
    code: int | None = None,
    known: str | None = None,
) -> None:
    """Record the row, then fail (or xfail, for a ``known`` issue that is reported)."""
    record(
        "bad_input",
        kind=kind,
        input=name,
        expected=expected,
        observed=" ".join(shown.split())[:300],
        exit_code=code,
        passed=not failures,
        pending=known if failures else None,
        failures=failures,
    )
    if failures and known:
        pytest.xfail(f"{known}: {'; '.join(failures)}")
    assert not failures, f"{name}: {'; '.join(failures)}\n{shown}"


# ------------------------------------------------------------------ config files and flags


@dataclass(frozen=True)
class CliCase:
    """A ``smith -p`` run with one bad config file or flag."""

    kind: str
    name: str
    says: tuple[str, ...]
    """Every one of these must appear in stderr (what to fix)."""
    config: str | bytes | None = None
    """Raw content of the ``--config`` file (None: a valid one)."""
    args: tuple[str, ...] = ()
    api_url: bool = True
    code: int = 2
    prepare: Callable[[Path], list[str]] | None = None
    """Builds extra arguments from the run folder (for paths)."""


def _config_is_dir(tmp: Path) -> list[str]:
    folder = tmp / "config-folder.json"
    folder.mkdir()
    return ["--config", str(folder)]


def _db_is_dir(tmp: Path) -> list[str]:
    folder = tmp / "db-folder"
    folder.mkdir()
    return ["--db", str(folder)]


CLI_CASES: list[CliCase] = [
    CliCase("config file", "not JSON", ("config.json", "JSON"), config='{"llm_config": '),
    CliCase("config file", "a JSON list, not an object", ("config.json",), config="[1, 2]"),
    CliCase("config file", "a JSON string, not an object", ("config.json",), config='"fast"'),
    CliCase("config file", "not UTF-8", ("config.json",), config=b'{"x": "\xff\xfe"}'),
    CliCase(
        "config file",
        "wrong type: retry_max_retries is text",
        ("retry_max_retries",),
        config='{"llm_config": {"retry_max_retries": "two"}}',
    ),
    CliCase(
        "config file",
        "out of range: retry_max_retries -1",
        ("retry_max_retries",),
        config='{"llm_config": {"retry_max_retries": -1}}',
    ),
    CliCase(
        "config file",
        "zero stall timeout",
        ("stream_stall_timeout",),
        config='{"llm_config": {"stream_stall_timeout": 0}}',
    ),
    CliCase(
        "config file",
        "unknown top-level key (typo)",
        ("llm_confg",),
        config='{"llm_confg": {"api_url": "http://127.0.0.1:1/v1"}}',
    ),
    CliCase(
        "config file",
        "unknown nested key (typo)",
        ("retry_max_retrys",),
        config='{"llm_config": {"retry_max_retrys": 3}}',
    ),
    CliCase(
        "config file",
        "api_url is not a URL",
        ("api_url",),
        config='{"llm_config": {"api_url": "localhost port 8080"}}',
        api_url=False,
    ),
    CliCase(
        "config file",
        "api_url with an ftp scheme",
        ("api_url",),
        config='{"llm_config": {"api_url": "ftp://127.0.0.1/v1"}}',
        api_url=False,
    ),
    CliCase(
        "config file",
        "api_url is a number",
        ("api_url",),
        config='{"llm_config": {"api_url": 8080}}',
        api_url=False,
    ),
    CliCase(
        "config file",
        "models.default is a number",
        ("models",),
        config='{"models": {"default": 7}}',
    ),
    CliCase(
        "config file",
        "active_role names no role",
        ("active_role",),
        config='{"active_role": "ghost"}',
    ),
    CliCase(
        "config file", "--config names a folder", ("config-folder.json",), prepare=_config_is_dir
    ),
    CliCase(
        "config file",
        "--config names a missing file",
        ("missing.json",),
        args=("--config", "/nonexistent/missing.json"),
    ),
    CliCase(
        "flag",
        "--output-format yaml",
        ("--output-format", "yaml"),
        args=("--output-format", "yaml"),
    ),
    CliCase("flag", "--role ghost", ("--role", "ghost"), args=("--role", "ghost")),
    CliCase("flag", "unknown flag --frobnicate", ("--frobnicate",), args=("--frobnicate",)),
    CliCase("flag", "-p with only spaces", ("prompt is empty",), args=("-p", "   ")),
    CliCase(
        "flag",
        "--resume an unknown id",
        ("no conversation with id 'nope'",),
        args=("--resume", "nope"),
    ),
    CliCase("flag", "--db names a folder", ("db-folder",), prepare=_db_is_dir),
    CliCase(
        "flag",
        "--api-url is not a URL",
        ("api", "not-a-url"),
        args=("--api-url", "not-a-url"),
        api_url=False,
    ),
    CliCase(
        "flag",
        "--api-url with an ftp scheme",
        ("api", "ftp://"),
        args=("--api-url", "ftp://127.0.0.1/v1"),
        api_url=False,
    ),
]


def _ids(cases: list[Any]) -> list[str]:
    return [f"{c.kind}: {c.name}" for c in cases]


@pytest.mark.parametrize("case", CLI_CASES, ids=_ids(CLI_CASES))
def test_cli_input(
    case: CliCase, tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    """A bad config file or flag: exit code 2, a message naming it, nothing written."""
    db = _seed_db(tmp_path, repo, llm_server)
    env = smith_env(tmp_path)
    config = tmp_path / "config.json"  # the good one, unless the case brings its own
    if case.config is not None:
        if isinstance(case.config, bytes):
            config.write_bytes(case.config)
        else:
            config.write_text(case.config, encoding="utf-8")
    before = {"db": _digest(db), "config": _digest(config)}
    args = ["-p", "hello", "--db", str(db), "--config", str(config)]
    if case.api_url:
        args += ["--api-url", llm_server.base_url]
    extra = case.prepare(tmp_path) if case.prepare else []
    # later flags win: case flags come last
    run = run_inprocess([*args, *extra, *case.args], cwd=repo, env=env)
    after = {"db": _digest(db), "config": _digest(config)}
    failures = _refusal_failures(run, case.code, case.says)
    if before != after:
        failures.append("a file changed: " + ", ".join(k for k in before if before[k] != after[k]))
    if len(llm_server.chat_requests()) != 1:
        failures.append("a request reached the server")
    _conclude(
        case.kind,
        case.name,
        f"exit {case.code}, names {', '.join(case.says)}; db and config unchanged",
        run.stderr,
        failures,
        code=run.code,
    )


# ------------------------------------------------------------------ /config set


CONFIG_COMMANDS: list[tuple[str, tuple[str, ...]]] = [
    ("/config set llm_config.retry_max_retries abc", ("retry_max_retries",)),
    ("/config set llm_config.retry_max_retries -3", ("retry_max_retries",)),
    ("/config set llm_config.stream_stall_timeout 0", ("stream_stall_timeout",)),
    ("/config set no.such.path 1", ("no.such.path",)),
    ("/config set llm_config.api_key sk-secret", ("api_key",)),
    ("/config set llm_config.api_url notaurl", ("api_url",)),
    ("/config set llm_config.retry_max_retries", ("set PATH VALUE",)),
    ("/config unset no.such.path", ("no.such.path",)),
    ('/config set llm_config.api_url "unclosed', ("cannot parse",)),
]


@pytest.mark.parametrize("line", [c[0] for c in CONFIG_COMMANDS])
async def test_config_command(line: str, tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    """A bad ``/config`` command: refused with its reason, the stored overrides unchanged."""
    says = dict(CONFIG_COMMANDS)[line]
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    try:
        runtime.set_config("llm_config.retry_max_retries", "1")  # something to keep
        before = runtime.store.config.get(OVERRIDES_KEY)
        output = await runtime.submit(line)
        after = runtime.store.config.get(OVERRIDES_KEY)
    finally:
        await runtime.aclose()
    text = str(getattr(output, "text", "") or getattr(output, "message", "") or output)
    failures = []
    if getattr(output, "ok", None) is not False:
        failures.append("the command was not refused")
    if "Traceback" in text:
        failures.append("traceback in the answer")
    missing = [s for s in says if s not in text]
    if missing:
        failures.append(f"answer does not name {missing}")
    if before != after:
        failures.append(f"stored overrides changed: {before} -> {after}")
    _conclude(
        "/config", line, f"refused, names {', '.join(says)}; overrides unchanged", text, failures
    )


# ------------------------------------------------------------------ tool arguments


TOOL_CASES: list[tuple[str, str, Any, tuple[str, ...]]] = [
    # (tool, case name, arguments, what the error must name)
    ("bash", "command is a number", {"command": 5}, ("command",)),
    ("bash", "command missing", {}, ("command",)),
    ("bash", "negative timeout", {"command": "true", "timeout_s": -1}, ("timeout_s",)),
    ("read", "path missing", {}, ("path",)),
    ("read", "offset 0", {"path": "README.md", "offset": 0}, ("offset",)),
    ("read", "file does not exist", {"path": "no/such/file.txt"}, ("no/such/file.txt",)),
    (
        "edit",
        "unknown operation",
        {"path": "README.md", "expected_hash": "0" * 64, "operation": "explode", "start_line": 1},
        ("operation",),
    ),
    (
        "edit",
        "stale expected_hash",
        {
            "path": "README.md",
            "expected_hash": "0" * 64,
            "operation": "replace",
            "start_line": 1,
            "text": "x",
        },
        ("hash",),
    ),
    (
        "edit",
        "expected_hash not a digest",
        {"path": "README.md", "expected_hash": "abc", "operation": "delete", "start_line": 1},
        ("expected_hash",),
    ),
    ("write", "content missing", {"path": "new.txt"}, ("content",)),
    (
        "write",
        "path outside the project",
        {"path": "/etc/smith-test.txt", "content": "x"},
        ("/etc/smith-test.txt",),
    ),
    ("web_search", "query is a number", {"query": 5}, ("query",)),
    ("web_fetch", "not a URL", {"url": "not a url"}, ("url",)),
    ("web_fetch", "ftp URL", {"url": "ftp://example.com/x"}, ("ftp",)),
    ("code_map", "depth 99", {"depth": 99}, ("depth",)),
    ("code_grep", "pattern missing", {}, ("pattern",)),
    ("code_files", "max_results 0", {"query": "x", "max_results": 0}, ("max_results",)),
    ("code_symbols", "unknown kind", {"name": "x", "kind": "gizmo"}, ("kind",)),
    ("code_outline", "path missing", {}, ("path",)),
    ("record", "key with surrounding spaces", {"key": " padded ", "value": "v"}, ("key",)),
    ("recall", "key missing", {}, ("key",)),
    ("note", "unknown action", {"action": "explode"}, ("action",)),
    ("todo", "items is text", {"items": "buy milk"}, ("items",)),
    ("dispatch", "unknown target role", {"target_role": "ghost", "task": "x"}, ("ghost",)),
    ("dispatch", "task missing", {"target_role": "worker"}, ("task",)),
    ("git", "subcommand push", {"command": "push"}, ("command",)),
]


def _counts(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as con:
        notes = con.execute(
            "SELECT COUNT(*) FROM notes WHERE note_id NOT LIKE 'turn_record-%'"
        ).fetchone()[0]
        memory = con.execute("SELECT COUNT(*) FROM project_memory").fetchone()[0]
        children = con.execute(
            "SELECT COUNT(*) FROM conversations WHERE parent_id IS NOT NULL"
        ).fetchone()[0]
    return {"notes": notes, "memory": memory, "children": children}


@pytest.mark.parametrize(
    ("tool", "name", "arguments", "says"),
    TOOL_CASES,
    ids=[f"{t}: {n}" for t, n, _, _ in TOOL_CASES],
)
async def test_tool_arguments(
    tool: str,
    name: str,
    arguments: Any,
    says: tuple[str, ...],
    tmp_path: Path,
    llm_server: ScriptedLLMServer,
) -> None:
    """A model's call with bad arguments: an error result that names the argument, the turn
    goes on, and no file, note, memory entry or child conversation appears."""
    repo = make_git_repo(tmp_path / "repo")
    role = "orchestrator" if tool == "git" else "direct"
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call(tool, arguments, id="call_bad")]), text_reply("Noted.")
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, cwd=repo)
    db = tmp_path / "smith.db"
    try:
        runtime.conversations.new()
        tree, counts = _tree(repo), _counts(db)
        result = await runtime.run_turn("use the tool", role=role)
        messages = list(runtime.conversations.messages)
    finally:
        await runtime.aclose()
    answer = next((m for m in messages if m.get("tool_call_id") == "call_bad"), {})
    content = str(answer.get("content") or "")
    failures = []
    if result.stop_reason != "completed":
        failures.append(f"turn ended {result.stop_reason}")
    if (answer.get("metadata") or {}).get("ok") is not False:
        failures.append("the call was not refused")
    if "Traceback" in content:
        failures.append("traceback in the result")
    missing = [s for s in says if s not in content]
    if missing:
        failures.append(f"result does not name {missing}")
    if _tree(repo) != tree:
        failures.append("a project file changed")
    if _counts(db) != counts:
        failures.append(f"stored state changed: {counts} -> {_counts(db)}")
    _conclude(
        f"tool {tool}",
        f"{tool}: {name}",
        f"error result naming {', '.join(says)}; nothing written",
        content,
        failures,
    )


# ------------------------------------------------------------------ databases and folders


def _garbage(db: Path) -> None:
    db.write_bytes(b"this is not a database at all\n" * 400)


def _truncated(db: Path) -> None:
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])


def _newer_schema(db: Path) -> None:
    with sqlite3.connect(db) as con:
        con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")


def _foreign(db: Path) -> None:
    db.unlink()
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        con.execute("INSERT INTO invoices VALUES (1, 9.5)")


DB_CASES: list[tuple[str, Callable[[Path], None], tuple[str, ...]]] = [
    ("garbage bytes", _garbage, ("smith.db",)),
    ("truncated to a third", _truncated, ("smith.db",)),
    ("schema version 99 (newer smith)", _newer_schema, ("smith.db", "99")),
    ("another program's SQLite file", _foreign, ("smith.db",)),
]


@pytest.mark.parametrize(("name", "damage", "says"), DB_CASES, ids=[c[0] for c in DB_CASES])
def test_damaged_database(
    name: str,
    damage: Callable[[Path], None],
    says: tuple[str, ...],
    tmp_path: Path,
    repo: Path,
    llm_server: ScriptedLLMServer,
) -> None:
    """A database smith cannot use: exit 2, a message naming the file, its bytes unchanged."""
    db = _seed_db(tmp_path, repo, llm_server)
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    damage(db)
    before = _digest(db)
    siblings = sorted(p.name for p in tmp_path.iterdir())
    config = write_config(tmp_path)
    run = run_inprocess(
        ["-p", "hello", *server_args(llm_server.base_url, db, config)],
        cwd=repo,
        env=smith_env(tmp_path),
    )
    failures = _refusal_failures(run, 2, says)
    if _digest(db) != before:
        failures.append("the database bytes changed")
    new = sorted(set(p.name for p in tmp_path.iterdir()) - set(siblings))
    if [n for n in new if not n.startswith("smith.db-")]:
        failures.append(f"new files: {new}")
    _conclude(
        "database",
        name,
        f"exit 2, names {', '.join(says)}; bytes unchanged",
        run.stderr,
        failures,
        code=run.code,
    )


def test_unreadable_config_folder(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    """``$XDG_CONFIG_HOME/smith`` with mode 000: a clear message, not a traceback."""
    folder = tmp_path / "xdg-config" / "smith"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"default_model": "scripted-model"}))
    folder.chmod(0)
    try:
        if os.access(folder / "config.json", os.R_OK) or os.geteuid() == 0:
            record(
                "bad_input",
                kind="config folder",
                input="config folder with mode 000",
                expected="exit 2, names the folder",
                observed="skipped: running as root, mode 000 does not stop reads",
                passed=None,
                failures=[],
            )
            pytest.skip("running as root: mode 000 does not stop reads")
        run = run_inprocess(
            ["-p", "hello", "--api-url", llm_server.base_url, "--db", str(tmp_path / "s.db")],
            cwd=repo,
            env=smith_env(tmp_path),
        )
    finally:
        folder.chmod(0o755)
    failures = _refusal_failures(run, 2, ["config.json"])
    if (tmp_path / "s.db").exists():
        failures.append("a database was created")
    _conclude(
        "config folder",
        "config folder with mode 000",
        "exit 2, names config.json; no database created",
        run.stderr,
        failures,
        code=run.code,
    )


def test_corpus_size() -> None:
    """At least 40 bad inputs (the issue's floor)."""
    total = len(CLI_CASES) + len(CONFIG_COMMANDS) + len(TOOL_CASES) + len(DB_CASES) + 2
    assert total >= 40, total


def test_config_folder_is_a_file(tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer) -> None:
    """``$XDG_CONFIG_HOME/smith`` is a file, so the default config cannot be read (the check
    that works as root, where mode 000 does not stop reads)."""
    (tmp_path / "xdg-config").mkdir()
    blocker = tmp_path / "xdg-config" / "smith"
    blocker.write_text("not a folder\n")
    before = _digest(blocker)
    db = tmp_path / "s.db"
    run = run_inprocess(
        ["-p", "hello", "--api-url", llm_server.base_url, "--db", str(db)],
        cwd=repo,
        env=smith_env(tmp_path),
    )
    failures = _refusal_failures(run, 2, [str(blocker)])
    if _digest(blocker) != before or llm_server.chat_requests():
        failures.append("the config path changed or a request was sent")
    if db.exists():
        failures.append("an empty database was created")
    _conclude(
        "config folder",
        "config folder is a regular file",
        "exit 2, names the config path; nothing created",
        run.stderr,
        failures,
        code=run.code,
    )
