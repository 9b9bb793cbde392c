"""Two real processes writing one database at once lose nothing."""

import itertools
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from smith_tui.store import Store, StoreError

REPO_ROOT = Path(__file__).resolve().parents[2]

WRITER = """
import sys, time
from pathlib import Path
from smith_tui.store import Store

db, conversation, name, rounds, go = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), Path(sys.argv[5])
store = Store.open(db)
if conversation == "-":
    conversation = store.conversations.create("proj", name)
(go.parent / f"ready-{name}").touch()
while not go.exists():
    time.sleep(0.005)
for n in range(rounds):
    with store.atomic():
        store.conversations.append_messages(
            conversation,
            [
                {"role": "assistant", "content": None,
                 "tool_calls": [{"id": f"{name}-{n}", "type": "function",
                                 "function": {"name": "bash", "arguments": "{}"}}]},
                {"role": "tool", "content": f"{name} result {n}", "tool_call_id": f"{name}-{n}"},
                {"role": "assistant", "content": f"{name} says {n}"},
            ],
            turn_id=f"turn-{name}",
            round=n,
        )
        store.usage.record(conversation, f"turn-{name}", name, "m", 1, 1)
    time.sleep(0.002)  # a real engine does other work between rounds
store.close()
print("done", name)
"""


def run_writers(db: Path, conversation: str, rounds: int, go: Path) -> list[str]:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), conversation, name, str(rounds), str(go)],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alpha", "beta")
    ]
    deadline = time.monotonic() + 60
    ready = [go.parent / f"ready-{name}" for name in ("alpha", "beta")]
    while not all(path.exists() for path in ready) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()  # both have the database open: start them together
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err
        outputs.append(out.strip())
    return outputs


def test_two_processes_append_to_one_conversation(tmp_path: Path) -> None:
    db = tmp_path / "smith.db"
    with Store.open(db) as store:
        conversation = store.conversations.create("proj")
    rounds = 150
    assert run_writers(db, conversation, rounds, tmp_path / "go") == ["done alpha", "done beta"]

    with Store.open(db) as store:
        messages = store.conversations.list_messages(conversation)
        assert len(messages) == 2 * rounds * 3
        assert [m.position for m in messages] == list(range(2 * rounds * 3))
        # Each round was one transaction, so its three messages sit together in order.
        for start in range(0, len(messages), 3):
            first, result, reply = messages[start : start + 3]
            writer, n = first.tool_calls[0]["id"].split("-")  # type: ignore[index]
            assert result.content == f"{writer} result {n}"
            assert reply.content == f"{writer} says {n}"
        order = [m.turn_id for m in messages[::3]]
        switches = sum(1 for a, b in itertools.pairwise(order) if a != b)
        assert switches >= 5, "the writers did not actually overlap"
        for writer in ("alpha", "beta"):
            rounds_seen = [m.round for m in messages if m.turn_id == f"turn-{writer}"][::3]
            assert rounds_seen == list(range(rounds))
        totals = store.usage.totals_by_role(conversation)
        assert totals["alpha"].calls == totals["beta"].calls == rounds
        assert len(store.search_messages("result")) == 20  # default limit, index intact


def test_two_processes_create_the_same_new_database(tmp_path: Path) -> None:
    db = tmp_path / "fresh" / "smith.db"
    assert run_writers(db, "-", 20, tmp_path / "go") == ["done alpha", "done beta"]
    with Store.open(db) as store:
        conversations = store.conversations.list_all()
        assert sorted(c.title for c in conversations) == ["alpha", "beta"]  # type: ignore[type-var]
        for conversation in conversations:
            assert store.conversations.count_messages(conversation.id) == 60


def test_open_waits_out_a_lock_reported_without_the_busy_handler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite answers "locked" at once when waiting could deadlock (two processes creating
    # one new file); opening retries that instead of failing.
    from smith_tui.store import store as store_module

    real = store_module.bring_up_to_date
    calls = []

    def locked_twice(db: object) -> int:
        calls.append(1)
        if len(calls) <= 2:
            raise sqlite3.OperationalError("database is locked")
        return real(db)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module, "bring_up_to_date", locked_twice)
    with Store.open(tmp_path / "smith.db") as store:
        store.conversations.create("proj", "after the lock")
    assert len(calls) == 3


def test_open_reports_other_errors_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from smith_tui.store import store as store_module

    calls = []

    def broken(db: object) -> int:
        calls.append(1)
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(store_module, "bring_up_to_date", broken)
    with pytest.raises(StoreError, match="disk I/O error"):
        Store.open(tmp_path / "smith.db")
    assert calls == [1]
