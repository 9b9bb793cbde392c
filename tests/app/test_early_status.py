"""The first frame's mode and sandbox (app/early_status.py) agree with the runtime's.

Each case writes a real config file and a real ``/config set`` patch in a real store, reads
the raw values as the first frame does, then opens the real runtime on the same files and
flags: equal whenever the runtime opens, nothing at all when a raw value is invalid.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from smith_tui.app.early_status import (
    OVERRIDES_KEY,
    OVERRIDES_TABLE,
    SANDBOX_DEFAULTS,
    EarlyStatus,
    read_early_status,
)
from smith_tui.config import ConfigError
from smith_tui.config.schema import SandboxConfig
from smith_tui.engine import runtime_config
from smith_tui.engine.runtime import Runtime, RuntimeOptions
from smith_tui.engine.sandbox_status import sandbox_state_of
from smith_tui.store import Store, config_entries
from smith_tui.store.models import ConfigRow
from tests.app.app_harness import isolate_environment

CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    # (name, config file, persisted /config set patch, this run's flags); in the last three
    # the value is invalid (the runtime refuses to open): that value is not shown
    ("nothing set", {}, {}, {}),
    ("file", {"permissions": {"mode": "auto-edit"}, "sandbox": {"network": True}}, {}, {}),
    ("patch over file", {"permissions": {"mode": "yolo"}}, {"permissions": {"mode": "plan"}}, {}),
    (
        "flag over patch",
        {"sandbox": {"mode": "on"}},
        {"permissions": {"mode": "plan"}, "sandbox": {"mode": "off"}},
        {"permissions": {"mode": "read-only"}},
    ),
    ("null mode", {"permissions": {"mode": None}}, {}, {}),
    ("unknown mode", {"permissions": {"mode": "bogus"}}, {}, {}),
    ("network not a bool", {"sandbox": {"network": "yes"}}, {}, {}),
    ("not a table", {"sandbox": "off"}, {}, {}),
]


def _read(tmp_path: Path, flags: dict[str, Any], *, probe: bool = True) -> EarlyStatus:
    return read_early_status(
        config_path=tmp_path / "config.json",
        db_path=tmp_path / "smith.db",
        ephemeral=flags,
        default_mode="ask",
        probe=probe,
    )


@pytest.mark.parametrize(
    ("config", "patch", "flags"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_first_frame_shows_what_the_runtime_opens_with_or_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    config: dict[str, Any],
    patch: dict[str, Any],
    flags: dict[str, Any],
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    store = Store.open(tmp_path / "smith.db")
    try:
        store.config.set(config_entries.RUNTIME_OVERRIDES, patch)
    finally:
        store.close()
    early = _read(tmp_path, flags)
    options = RuntimeOptions(
        cwd=tmp_path,
        config_path=str(tmp_path / "config.json"),
        db_path=str(tmp_path / "smith.db"),
        ephemeral=flags,
        permission_mode="ask",
    )
    try:
        runtime = Runtime.open(options)
    except ConfigError as exc:
        # The invalid value is not shown, rather than a guess (the other one may be).
        shown = early.mode if "permissions" in exc.message else early.sandbox
        assert shown == "", exc.message
        return
    try:
        state = sandbox_state_of(runtime.config.model)
        assert state is not None
        assert early == EarlyStatus(runtime.permission_mode, state.label(), state.active)
        # Without bwrap's probe (as the app reads it) the sandbox is known only when off.
        unprobed = _read(tmp_path, flags, probe=False)
        known = state.mode == "off"
        assert unprobed == (early if known else EarlyStatus(runtime.permission_mode))
    finally:
        runtime.store.close()


def test_a_missing_database_is_not_created_and_a_present_one_is_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    assert _read(tmp_path, {}).mode == "ask"
    assert not (tmp_path / "smith.db").exists()
    store = Store.open(tmp_path / "smith.db")
    try:
        store.config.set(config_entries.RUNTIME_OVERRIDES, {"permissions": {"mode": "plan"}})
    finally:
        store.close()
    before = {p.name: (p.read_bytes(), os.stat(p).st_mtime_ns) for p in tmp_path.glob("smith.db*")}
    assert _read(tmp_path, {}).mode == "plan"
    after = {p.name: (p.read_bytes(), os.stat(p).st_mtime_ns) for p in tmp_path.glob("smith.db*")}
    assert after == before
    # Another smith has it open (its write-ahead log holds the latest patch): read through it.
    store = Store.open(tmp_path / "smith.db")
    try:
        store.config.set(config_entries.RUNTIME_OVERRIDES, {"permissions": {"mode": "yolo"}})
        assert (tmp_path / "smith.db-wal").exists()
        assert _read(tmp_path, {}).mode == "yolo"
    finally:
        store.close()


def test_an_unreadable_database_or_config_file_shows_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    (tmp_path / "smith.db").write_bytes(b"not a database, " * 64)
    assert _read(tmp_path, {}) == EarlyStatus()
    (tmp_path / "smith.db").unlink()
    (tmp_path / "config.json").write_text("{ broken", encoding="utf-8")
    assert _read(tmp_path, {}) == EarlyStatus()
    (tmp_path / "config.json").unlink()  # --config names a file that must exist
    assert _read(tmp_path, {}) == EarlyStatus()


def test_the_reader_names_the_stores_entry_and_the_schemas_defaults() -> None:
    """Where the early reader looks and what it assumes are the store's and the schema's."""
    assert OVERRIDES_KEY == config_entries.RUNTIME_OVERRIDES == runtime_config.OVERRIDES_KEY
    assert OVERRIDES_TABLE == ConfigRow._meta.table_name  # type: ignore[attr-defined]
    defaults = SandboxConfig()
    assert SANDBOX_DEFAULTS == {"mode": defaults.mode, "network": defaults.network}


FIRST_FRAME_PATH = """
import smith_tui.app.app as app
from smith_tui import cli


def run_app(**options):
    print(options["early_status"]())  # what the first frame shows
    return 0


app.run_app = run_app
raise SystemExit(cli.main([]))
"""


def test_the_binarys_way_to_its_first_frame_leaves_the_schema_for_later(tmp_path: Path) -> None:
    """The CLI's parser (``--permission-mode``'s choices) and the early reader, the sandbox
    module included, import none of what the first frame leaves for later (pydantic, the
    config schema, the store, the engine…: tests/test_headless_imports.py's list)."""
    from tests.test_headless_imports import NOT_BEFORE_THE_FIRST_FRAME, _imported

    (tmp_path / "cfg" / "smith").mkdir(parents=True)
    (tmp_path / "cfg" / "smith" / "config.json").write_text(
        '{"permissions": {"mode": "plan"}, "sandbox": {"mode": "off"}}', encoding="utf-8"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "LLM_"))}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_DATA_HOME=str(tmp_path / "data"))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", FIRST_FRAME_PATH],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (
        "mode='plan', sandbox='sandbox off'" in done.stdout
    )  # the reader ran, as the binary runs it
    imported = _imported(done.stderr)
    assert "smith_tui.tools.sandbox" in imported and "textual.app" in imported
    early = {
        name
        for name in imported
        if any(name == late or name.startswith(late + ".") for late in NOT_BEFORE_THE_FIRST_FRAME)
    }
    assert early == set()
