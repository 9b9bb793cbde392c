"""A subset of the fault matrix in the full-screen app (Textual Pilot, real runtime).

The same faults as ``test_fault_matrix.py``; here the user's view is the screen: the row
checks the request count, the stop reason stored for the turn, that the screen shows what
the user must be told, and the strict-provider check of the stored transcript.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    screen_text,
    submit,
    wait_until,
)
from tests.reliability.support import FAST_CONFIG, merge, record
from tests.reliability.test_fault_matrix import FAULTS
from tests.support.llm_server import ScriptedLLMServer
from tests.support.strict import stored_wire, strict_problems

APP_ROWS = {
    "HTTP 401": "HTTP 401",
    "HTTP 503, then recovery": "Recovered answer.",
    "disconnect after output": "closed the connection",
    "malformed JSON event": "not valid JSON",
    "tool call with broken JSON arguments": "Fixed it.",
    "tool-call id reused from an earlier round": "Both rounds ran.",
}


@pytest.mark.parametrize("name", list(APP_ROWS))
async def test_fault_in_the_app(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    fault = next(f for f in FAULTS if f.name == name)
    on_screen = APP_ROWS[name]
    config = merge(FAST_CONFIG, fault.config)
    llm_server.enqueue(*fault.replies())
    text = ""
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            await submit(pilot, "please answer")
            await wait_until(pilot, lambda: llm_server.chat_requests(), what="the first request")
            await wait_until(pilot, lambda: not runtime.busy, within=30, what="the turn to end")
            try:
                await wait_until(pilot, lambda: on_screen in screen_text(app), within=5)
            except AssertionError:
                pass  # reported below with the screen
            text = screen_text(app)
        turns = runtime.store.turns.list_for_conversation(runtime.conversations.conversation_id)
        stop = turns[-1].stop_reason if turns else None
    problems = strict_problems(
        [*stored_wire(tmp_path / "smith.db"), {"role": "user", "content": "next question"}]
    )
    requests = len(llm_server.chat_requests())
    failures = []
    if requests != fault.attempts:
        failures.append(f"{requests} requests, expected {fault.attempts}")
    if stop != fault.stop:
        failures.append(f"stop reason {stop}, expected {fault.stop}")
    if on_screen not in text:
        failures.append(f"the screen does not show {on_screen!r}")
    if "Traceback" in text:
        failures.append("a traceback is on screen")
    if problems:
        failures.append("stored transcript refused by a strict provider: " + "; ".join(problems))
    shown = next((line.strip() for line in text.splitlines() if on_screen in line), "")
    record(
        "fault",
        fault=fault.name,
        via="app (Pilot)",
        expected=f"{fault.attempts} request(s), {fault.stop}, screen shows “{on_screen}”, "
        "strict-valid",
        requests=requests,
        stop=stop,
        exit_code=None,
        shown=" ".join(shown.split())[:200],
        strict="valid" if not problems else "; ".join(problems),
        passed=not failures,
        pending=None,
        failures=failures,
    )
    assert not failures, "; ".join(failures) + "\n" + text
