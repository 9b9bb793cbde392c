"""The questions a turn asks the user in the app: permission for a tool call (the runtime's
ask port) and the approval of a presented plan.

Both push a modal screen over the main one. A permission question waits for its answer and
closes when the turn is cancelled; a plan's decision runs in a worker of the turn group.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from smith_tui.errors import error_text

if TYPE_CHECKING:
    from textual.app import App

    from smith_tui.app.terminal_notify import Notifier
    from smith_tui.engine import events as ev
    from smith_tui.engine.runtime import Runtime


async def ask_permission(app: App[Any], notifier: Notifier | None, request: Any) -> Any:
    """Show the permission question for ``request`` and wait for the answer (a dismissed
    screen denies), the status line saying who asks and ``notifier`` calling the user.
    Cancelling the turn cancels this wait, which closes the question."""
    from smith_tui.app.screens.permission_screen import PermissionScreen
    from smith_tui.engine.permission_gate import PermissionReply
    from smith_tui.engine.presentation import role_label
    from smith_tui.widgets.status_line import StatusLine

    answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def answered(reply: Any) -> None:
        if not answer.done():
            answer.set_result(reply or PermissionReply("deny"))

    screen = PermissionScreen(request)
    app.push_screen(screen, answered)
    status = app.get_default_screen().query_one(StatusLine)
    asker = f" ({role_label(request.role)[0]})" if request.job_id is not None else ""
    status.asking = f"{request.tool}{asker}"
    if notifier is not None:
        notifier.attention("permission", f"{request.tool}{asker} asks for permission")
    try:
        return await answer
    except asyncio.CancelledError:
        if app.screen is screen:
            app.pop_screen()
        raise
    finally:
        status.asking = ""


def show_plan(app: App[Any], runtime: Runtime, presented: ev.PlanPresented) -> None:
    """Show a presented plan for approval; what the user decides runs in a worker."""
    from smith_tui.app.screens.plan_screen import PlanScreen
    from smith_tui.tools.builtin.plan import Plan

    def decided(decision: Any) -> None:
        if decision is not None:
            app.run_worker(_run_plan(app, runtime, decision), group="turn", exit_on_error=False)

    app.push_screen(PlanScreen(Plan.model_validate(presented.plan)), decided)


async def _run_plan(app: App[Any], runtime: Runtime, decision: Any) -> None:
    plans = runtime.plans
    try:
        if decision.action == "reject":
            await plans.reject(decision.feedback)
        else:
            await plans.approve(decision.plan, mode=decision.mode, fresh=decision.action == "fresh")
    except Exception as exc:  # turn errors are events; this is the rest (a busy runtime)
        app.notify(error_text(exc), title="Could not run the plan", severity="error")
