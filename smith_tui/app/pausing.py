"""The app's pause, step and resume of the running turn (engine/turn_control.py).

The pause key pauses the running turn at its next round boundary, or resumes it when it
is paused; the step key lets it run one more round. In the dispatch tree, ``p`` and
``s`` do the same to the sub-agent under the cursor. Quitting while anything is paused
asks first (:func:`ask_before_quit`).
"""

from __future__ import annotations

from typing import Any

from smith_tui.app.bindings import key_for

#: What a state returned by the runtime is said as.
_SAID = {
    "pausing": "Pausing at the next round boundary (the stream or tool in flight finishes)…",
    "paused": "Paused.",
    "running": "Going on.",
}


def _who(job_id: str | None) -> str:
    return f"Sub-agent {job_id}" if job_id else "The turn"


def toggle(app: Any, job_id: str | None = None) -> None:
    """Pause the running turn (or sub-agent ``job_id``), or resume it when it is paused."""
    runtime = app.runtime
    control = runtime.turn_control(job_id) if runtime is not None else None
    if control is None:
        what = "That sub-agent has already finished" if job_id else "No turn is running"
        app.notify(f"{what}: nothing to pause.", timeout=3)
        return
    if control.paused:
        runtime.resume_turn(job_id)
        app.notify(f"{_who(job_id)} goes on.", timeout=2)
        return
    state = runtime.pause_turn(job_id)
    keys = f"{key_for(app.keymap, 'pause')} resumes, {key_for(app.keymap, 'step')} steps"
    if job_id:
        keys = "p resumes, s steps"
    app.notify(f"{_SAID.get(state or '', '')} {keys}.", timeout=4)


def step(app: Any, job_id: str | None = None) -> None:
    """Let the running turn (or sub-agent ``job_id``) run one more round, then hold again."""
    runtime = app.runtime
    if runtime is None or runtime.step_turn(job_id) is None:
        what = "That sub-agent has already finished" if job_id else "No turn is running"
        app.notify(f"{what}: nothing to step.", timeout=3)
        return
    app.notify(f"{_who(job_id)} runs one more round.", timeout=2)


def ask_before_quit(app: Any) -> bool:
    """When a turn (or a sub-agent) is paused, ask before quitting and return ``True``
    (the answer quits, or not); ``False`` when there is nothing to ask."""
    runtime = app.runtime
    if runtime is None or not runtime.paused:
        return False
    from smith_tui.app.screens.confirm import ConfirmScreen

    def answered(confirmed: bool | None) -> None:
        if confirmed:
            app.run_worker(app.action_quit(confirmed=True), group="quit")

    app.push_screen(
        ConfirmScreen(
            "The turn is paused. Quit anyway? It is cancelled (what it did so far is kept).",
            confirm_label="Quit",
            title="Paused turn",
        ),
        answered,
    )
    return True
