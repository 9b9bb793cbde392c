"""Smith's ACP extension methods: pause, step and resume a running turn from the editor.

``_smith/pause``, ``_smith/step`` and ``_smith/resume`` take ``sessionId`` and an optional
``jobId`` (a sub-agent of the running turn, as the ``dispatch`` tool call's updates name
it) and answer ``{"state": "pausing" | "paused" | "running"}``: what the turn does now
(engine/turn_control.py: a pause holds at the next round boundary, a step runs one more
round). ``initialize`` advertises them in the agent capabilities' ``_meta``
(:func:`capabilities_meta`). While a turn holds, the editor is told twice: a thought
chunk says so in words, and a ``_smith/paused`` / ``_smith/resumed`` notification says
it for an editor that shows it its own way (:func:`follow`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from acp import RequestError, update_agent_thought_text

NAMESPACE = "smith"
METHODS = ("pause", "step", "resume")
"""The extension methods, without the ``_smith/`` prefix."""


def capabilities_meta() -> dict[str, Any]:
    """The ``_meta`` of the agent capabilities: which extension methods Smith answers."""
    return {
        NAMESPACE: {
            "executionControl": {
                "methods": [f"_{NAMESPACE}/{name}" for name in METHODS],
                "params": {"sessionId": "string", "jobId": "string (optional)"},
                "notifications": [f"_{NAMESPACE}/paused", f"_{NAMESPACE}/resumed"],
            }
        }
    }


def handles(method: str) -> bool:
    """Whether ``method`` (as the SDK passes it: without the leading ``_``) is one of ours."""
    return method in {f"{NAMESPACE}/{name}" for name in METHODS}


def call(sessions: Mapping[str, Any], method: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Answer ``_smith/pause|step|resume``; bad params are an invalid-params error that says
    what to send, a session without a running turn (or job) an invalid-request error."""
    session_id = params.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        raise RequestError.invalid_params({"sessionId": "required: the session's id (a string)"})
    job_id = params.get("jobId")
    if job_id is not None and (not isinstance(job_id, str) or not job_id):
        raise RequestError.invalid_params(
            {"jobId": "when given, the id of a running sub-agent job (a string)"}
        )
    session = sessions.get(session_id)
    if session is None:
        raise RequestError.invalid_params(
            {"sessionId": f"no open session {session_id!r}; create or load it first"}
        )
    runtime = session.runtime
    name = method.split("/", 1)[1]
    act: Callable[[str | None], str | None] = {
        "pause": runtime.pause_turn,
        "step": runtime.step_turn,
        "resume": runtime.resume_turn,
    }[name]
    state = act(job_id)
    if state is None:
        what = f"sub-agent job {job_id!r}" if job_id else "turn"
        raise RequestError.invalid_request(
            {"details": f"no running {what} in session {session_id!r} to {name}"}
        )
    answer: dict[str, Any] = {"state": state}
    if job_id:
        answer["jobId"] = job_id
    return answer


def follow(session: Any) -> Callable[[], None]:
    """Tell the editor when the session's turn (or a sub-agent) holds and goes on; returns
    the unsubscribe."""
    from smith_tui.engine import events as ev

    def on_event(event: ev.Event) -> None:
        if isinstance(event, ev.TurnPaused):
            who = f"sub-agent {event.job_id}" if event.job_id else "turn"
            where = "before its next request" if event.at == "request" else "before its tools"
            if event.job_id is None:
                session.send(
                    update_agent_thought_text(f"\n[paused {where}: _smith/step or _smith/resume]\n")
                )
            params = {"sessionId": session.session_id, "jobId": event.job_id, "at": event.at}
            session.notify(f"{NAMESPACE}/paused", {**params, "rounds": event.rounds, "who": who})
        elif isinstance(event, ev.TurnResumed):
            params = {"sessionId": session.session_id, "jobId": event.job_id, "how": event.how}
            session.notify(f"{NAMESPACE}/resumed", params)

    unsubscribe: Callable[[], None] = session.runtime.bus.subscribe(on_event)
    return unsubscribe
