"""The plan screen: a plan-mode turn's plan, waiting for the user's decision.

Shown when the engine emits :class:`~smith_tui.engine.events.PlanPresented`. It shows the
plan (title, steps, files, risks) and answers with a :class:`PlanDecision`:

- ``enter`` / ``f``: approve and run it in a fresh context (a new conversation holding the
  plan, the project instructions and the files it names, not the research);
- ``a``: approve and run it here, after the research;
- ``m``: the mode the run uses (``auto-edit`` first; ``plan`` is not offered);
- ``e``: edit the plan in ``$VISUAL`` / ``$EDITOR`` (as Markdown; a text that does not
  read as a plan says why and is offered again, nothing typed is lost);
- ``r``: reject, with feedback (typed then) that goes back to the model;
- ``escape``: close; nothing runs and the plan stays in the conversation's notes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Input, Static

from smith_tui.app.screens.modal import SmithModal
from smith_tui.config.permission_settings import PERMISSION_MODES
from smith_tui.terminal_text import visible
from smith_tui.tools.builtin.plan import Plan, PlanError, parse_plan, render_plan

RUN_MODES: tuple[str, ...] = (
    "auto-edit",
    *(m for m in PERMISSION_MODES if m not in ("auto-edit", "plan")),
)
"""The modes a plan may run in, the default first."""

Action = Literal["fresh", "approve", "reject"]


@dataclass(frozen=True)
class PlanDecision:
    """What the user decided about a plan (the plan as approved: maybe edited)."""

    action: Action
    plan: Plan
    mode: str = "auto-edit"
    feedback: str = ""


def plan_rows(plan: Plan) -> list[Widget]:
    """The plan as widgets: the title, then numbered steps, the files and the risks, each
    entry wrapping under itself."""
    rows: list[Widget] = [Static(Text(visible(plan.title), style="bold"), classes="plan-title")]
    sections = (
        ("Steps", [f"{n:>2}." for n in range(1, len(plan.steps) + 1)], plan.steps),
        ("Files", ["  •"] * len(plan.files), plan.files),
        ("Risks", ["  !"] * len(plan.risks), plan.risks),
    )
    for heading, marks, entries in sections:
        rows.append(Static(heading, classes="plan-heading"))
        if not entries:
            rows.append(Static(Text("  (none named)", style="dim")))
        for mark, entry in zip(marks, entries, strict=True):
            rows.append(
                Horizontal(
                    Static(mark, classes="plan-mark"),
                    Static(Text(visible(" ".join(entry.split()))), classes="plan-entry"),
                    classes="plan-item",
                )
            )
    return rows


class PlanScreen(SmithModal):
    """Approve, edit or reject ``plan``; dismisses with a :class:`PlanDecision` or ``None``."""

    AUTO_FOCUS = "#plan-body"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("enter,f", "fresh", "Approve, fresh context"),
        Binding("a", "approve", "Approve here"),
        Binding("m", "next_mode", "Mode"),
        Binding("e", "edit", "Edit"),
        Binding("r", "ask_feedback", "Reject…"),
    ]

    def __init__(self, plan: Plan, *, mode: str = "auto-edit") -> None:
        super().__init__()
        self.plan = plan
        self.mode = mode if mode in RUN_MODES else RUN_MODES[0]
        self.draft: str | None = None
        """Edited text that did not read as a plan: the next edit starts from it."""

    def compose(self) -> ComposeResult:
        """The plan, a line for problems, the keys and the (hidden) feedback field."""
        with Vertical(id="plan-dialog") as dialog:
            dialog.border_title = "Plan — waiting for your approval"
            yield VerticalScroll(*plan_rows(self.plan), id="plan-body")
            yield Static("", id="plan-problem")
            yield Static(self._keys(), id="plan-keys")
            yield Input(
                placeholder="What should change? (sent to the model; enter rejects, esc goes back)",
                id="plan-feedback",
            )

    def on_mount(self) -> None:
        """The feedback field and the problem line appear only when needed."""
        self.query_one("#plan-feedback", Input).display = False
        self.query_one("#plan-problem", Static).display = False

    def _keys(self) -> Text:
        return Text.assemble(
            "Approve and run: ",
            ("enter", "bold"),
            " in a fresh context   ",
            ("a", "bold"),
            " here   ",
            ("m", "bold"),
            " mode: ",
            (self.mode, "bold"),
            "\n",
            ("e", "bold"),
            " edit in $EDITOR   ",
            ("r", "bold"),
            " reject with feedback   ",
            ("esc", "bold"),
            " close (nothing runs)",
        )

    async def _show(self) -> None:
        body = self.query_one("#plan-body", VerticalScroll)
        await body.remove_children()
        await body.mount_all(plan_rows(self.plan))
        self.query_one("#plan-keys", Static).update(self._keys())

    def _problem(self, message: str) -> None:
        problem = self.query_one("#plan-problem", Static)
        problem.update(Text(visible(message)))
        problem.display = bool(message)

    # -- decisions ------------------------------------------------------------------------
    def action_fresh(self) -> None:
        """Approve; run it as a new turn in a fresh context."""
        self.dismiss(PlanDecision("fresh", self.plan, self.mode))

    def action_approve(self) -> None:
        """Approve; run it here, with the research in the context."""
        self.dismiss(PlanDecision("approve", self.plan, self.mode))

    def action_next_mode(self) -> None:
        """The next mode the run may use."""
        self.mode = RUN_MODES[(RUN_MODES.index(self.mode) + 1) % len(RUN_MODES)]
        self.query_one("#plan-keys", Static).update(self._keys())

    def action_ask_feedback(self) -> None:
        """Show the feedback field; enter there rejects with it."""
        field = self.query_one("#plan-feedback", Input)
        field.display = True
        field.focus()

    def action_close(self) -> None:
        """Escape: hide the feedback field, else close without a decision."""
        field = self.query_one("#plan-feedback", Input)
        if field.display:
            field.display = False
            self.query_one("#plan-body").focus()
            return
        self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Reject with the typed feedback."""
        event.stop()
        self.dismiss(PlanDecision("reject", self.plan, self.mode, event.value.strip()))

    # -- editing --------------------------------------------------------------------------
    def action_edit(self) -> None:
        """Open the plan in the user's editor (the app is suspended meanwhile)."""
        self.run_worker(self.edit_externally(), group="plan-edit", exclusive=True)

    async def edit_externally(self) -> None:
        """Edit the plan as Markdown in ``$VISUAL`` / ``$EDITOR``; take it back if it reads
        as a plan, else say why and keep the text for the next edit (the app's ``ctrl+g``)."""
        from smith_tui.app.external_editor import edit_externally

        result = await edit_externally(self.app, self.draft or render_plan(self.plan))
        if result.text is None:
            self._problem(result.error or "the editor did not save the plan")
            return
        try:
            self.plan = parse_plan(result.text)
        except PlanError as exc:
            self.draft = result.text
            self._problem(f"The edited plan was not taken: {exc}. Press e to fix it.")
            return
        self.draft = None
        self._problem("")
        await self._show()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While feedback is typed, letters are text: only escape (and enter) stay keys."""
        if action in ("fresh", "approve", "next_mode", "edit", "ask_feedback"):
            return not self.query_one("#plan-feedback", Input).has_focus
        return True
