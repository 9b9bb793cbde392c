"""The usage pane: tokens per role for the turn and the session, cost, context fill, history.

Session totals per role come from ``UsageUpdated.totals``; the current turn is the sum of
the deltas seen between the top-level ``TurnStarted`` and ``TurnFinished`` (sub-agents
included, under their own role). Cost is the call's cost the engine reports
(``UsageUpdated.cost``: the provider's, else catalog prices), else computed from each delta
and the prices set with :meth:`UsagePane.set_pricing`. With ``budget.*`` limits set, one
line per limit shows the turn's spend against it (``BudgetUpdated``), marked from 80%.
The context gauge follows the last top-level request, and the sparkline shows the tokens
of each finished turn.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.content import Content
from textual.widget import Widget
from textual.widgets import ProgressBar, Sparkline, Static

from smith_tui.engine import events as ev
from smith_tui.engine.presentation import format_tokens, role_label
from smith_tui.engine.roles import list_roles
from smith_tui.engine.spend_limits import LIMITS, WARN_SHARE
from smith_tui.engine.usage_ledger import format_cost

#: Finished turns kept for the sparkline.
HISTORY = 60
#: Context fill (percent) from which the gauge turns to a warning, then an error.
WARN_PCT = 60
HIGH_PCT = 85

_COLUMNS = (6, 12)


class ContextBar(ProgressBar):
    """Textual's progress bar without its once-a-second timer.

    `ProgressBar` re-reads its ETA every second for as long as it is mounted; this gauge
    shows no ETA and changes only when `update` is called with a new fill, so the timer
    only woke an idle app up.
    """

    def _on_mount(self, event: events.Mount) -> None:
        """Draw the current fill once; `ProgressBar`'s handler (the timer) does not run."""
        event.prevent_default()  # no base class's handler runs after this one ...
        super()._on_mount(event)  # ... so `Widget`'s runs here
        self.update()


@dataclass(frozen=True)
class Pricing:
    """Dollars per prompt token and per completion token of one model."""

    prompt: float
    completion: float

    def cost(self, usage: dict[str, int]) -> float:
        """The cost of ``usage`` (``input_tokens``/``output_tokens``)."""
        return (
            int(usage.get("input_tokens", 0) or 0) * self.prompt
            + int(usage.get("output_tokens", 0) or 0) * self.completion
        )


def _in_out(usage: dict[str, int] | None) -> str:
    if not usage or not (usage.get("input_tokens") or usage.get("output_tokens")):
        return "·"
    inp = format_tokens(int(usage.get("input_tokens", 0) or 0))
    return f"{inp}/{format_tokens(int(usage.get('output_tokens', 0) or 0))}"


def _add(bucket: dict[str, int], delta: dict[str, int]) -> None:
    for key in ("input_tokens", "output_tokens", "total_tokens"):
        bucket[key] = bucket.get(key, 0) + int(delta.get(key, 0) or 0)


class UsagePane(Widget):
    """Token usage per role, cost, context-window gauge and tokens-per-turn sparkline."""

    DEFAULT_CSS = """
    UsagePane {
        height: auto;
        layout: vertical;
    }
    UsagePane > Static { height: auto; }
    UsagePane > #usage-context-bar { height: 1; }
    UsagePane > #usage-context-bar Bar { width: 1fr; }
    UsagePane > #usage-context-bar.-warn Bar > .bar--bar { color: $warning; }
    UsagePane > #usage-context-bar.-high Bar > .bar--bar { color: $error; }
    UsagePane > #usage-sparkline { height: 1; }
    """

    def __init__(
        self,
        *,
        history: int = HISTORY,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """Create the pane; ``history`` is how many finished turns the sparkline keeps."""
        super().__init__(name=name, id=id, classes=classes)
        self.session: dict[str, dict[str, int]] = {}
        """Session tokens per role name (from ``UsageUpdated.totals``)."""
        self.turn: dict[str, dict[str, int]] = {}
        """Tokens per role name of the current (or last) top-level turn."""
        self.turn_cost = 0.0
        """Cost of the current (or last) turn, from priced models only."""
        self.session_cost = 0.0
        """Cost since the pane started, from priced models only."""
        self.unpriced = False
        """Whether some usage came from a model without a price."""
        self.reported_cost = False
        """Whether some call came with its cost (no catalog price needed to show cost)."""
        self.budget: dict[str, dict[str, float]] = {}
        """The current (or last) turn's spend against each ``budget`` limit set."""
        self.budget_warning = ""
        """The last budget warning of the current (or last) turn."""
        self.context_tokens = 0
        """Tokens in the context of the last top-level request."""
        self.context_window = 0
        """The context window of that request's model (0 when unknown)."""
        self.context_model = ""
        """The model of the last top-level request."""
        self.turn_history: deque[int] = deque(maxlen=history)
        """Total tokens of each finished top-level turn, oldest first."""
        self.turn_running = False
        self._turn_total = 0
        self._pricing: dict[str, Pricing] = {}
        self._windows: dict[str, int] = {}
        self.table = Static(id="usage-table")
        self.context_label = Static(id="usage-context-label")
        self.context_bar = ContextBar(
            total=100, show_eta=False, show_percentage=True, id="usage-context-bar"
        )
        self.history_label = Static(id="usage-history-label")
        self.sparkline = Sparkline([], id="usage-sparkline")

    def compose(self) -> ComposeResult:
        """Table, context label and bar, history label and sparkline."""
        yield self.table
        yield self.context_label
        yield self.context_bar
        yield self.history_label
        yield self.sparkline

    def on_mount(self) -> None:
        """Draw the initial (empty) state."""
        self._refresh_all()

    # -- pricing --------------------------------------------------------------------------
    def set_pricing(
        self, model_id: str, prompt_price_per_token: float, completion_price_per_token: float
    ) -> None:
        """Price ``model_id``'s tokens (dollars per token) for the cost lines."""
        self._pricing[model_id] = Pricing(
            float(prompt_price_per_token), float(completion_price_per_token)
        )

    def load_catalog(self, models: Iterable[Any]) -> None:
        """Take prices from catalog descriptors (``pricing['prompt'|'completion']``)."""
        for model in models:
            window = getattr(model, "context_window", None)
            if isinstance(window, int) and window > 0:
                self._windows[str(model.id)] = window
            pricing = getattr(model, "pricing", None) or {}
            if "prompt" in pricing or "completion" in pricing:
                self.set_pricing(
                    str(model.id), pricing.get("prompt", 0.0), pricing.get("completion", 0.0)
                )

    @property
    def priced(self) -> bool:
        """Whether any price is known (or some call reported its cost)."""
        return bool(self._pricing) or self.reported_cost

    # -- events ---------------------------------------------------------------------------
    def handle_event(self, event: ev.Event) -> None:
        """Follow usage and top-level turns; every other event is ignored."""
        if isinstance(event, ev.UsageUpdated):
            self._usage(event)
        elif isinstance(event, ev.BudgetUpdated):
            self.budget = {key: dict(value) for key, value in event.spend.items()}
            self._refresh_table()
        elif isinstance(event, ev.BudgetWarning):
            self.budget_warning = event.message
            self._refresh_table()
        elif isinstance(event, ev.TurnStarted) and event.job_id is None:
            self.turn = {}
            self.budget = {}
            self.budget_warning = ""
            self.turn_cost = 0.0
            self._turn_total = 0
            self.turn_running = True
            self._refresh_table()
        elif isinstance(event, ev.TurnFinished) and event.job_id is None:
            if self.turn_running:
                # A turn that used no tokens (cancelled or failed before any answer) has
                # nothing to show: a sparkline of zeros alone would draw one full bar.
                if self._turn_total:
                    self.turn_history.append(self._turn_total)
                self.turn_running = False
                self._refresh_history()

    def show_conversation(self, records: Iterable[Any]) -> None:
        """Show the stored usage of the conversation now on screen (after a switch).

        ``records`` are its usage rows (``UsageRecord``-like, oldest first); a child's
        row carries its parent turn's id. The turn column shows the last turn, the
        sparkline every turn, the gauge the last top-level request; the session column
        (this run's totals) stays as it is.
        """
        per_turn: dict[str, dict[str, dict[str, int]]] = {}
        last_top: Any = None
        for record in records:
            counts = {
                "input_tokens": int(record.input_tokens or 0),
                "output_tokens": int(record.output_tokens or 0),
                "total_tokens": int(record.total_tokens or 0),
            }
            _add(per_turn.setdefault(record.turn_id, {}).setdefault(record.role, {}), counts)
            if record.job_id is None:
                last_top = record
        self.turn = dict(per_turn[list(per_turn)[-1]]) if per_turn else {}
        self.turn_cost = 0.0
        self._turn_total = 0
        self.turn_running = False
        self.turn_history.clear()
        for roles in per_turn.values():
            total = sum(values.get("total_tokens", 0) for values in roles.values())
            if total:
                self.turn_history.append(total)
        if last_top is None:
            self.context_tokens, self.context_model = 0, ""
        else:
            self.context_tokens = int(last_top.input_tokens) + int(last_top.output_tokens)
            self.context_window = self._windows.get(last_top.model, self.context_window)
            self.context_model = last_top.model
        self._refresh_all()

    def _usage(self, event: ev.UsageUpdated) -> None:
        self.session = {role: dict(values) for role, values in event.totals.items()}
        _add(self.turn.setdefault(event.role, {}), event.delta)
        self._turn_total += int(event.delta.get("total_tokens", 0) or 0)
        pricing = self._pricing.get(event.model)
        cost = event.cost
        if cost is not None:
            self.reported_cost = True
        elif pricing is not None:
            cost = pricing.cost(event.delta)
        if cost is not None:
            self.turn_cost += cost
            self.session_cost += cost
        elif event.delta.get("total_tokens"):
            self.unpriced = True
        if event.job_id is None:
            self.context_tokens = event.context_tokens
            self.context_window = event.context_window
            self.context_model = event.model
            self._refresh_context()
        self._refresh_table()

    # -- rendering ------------------------------------------------------------------------
    def table_text(self) -> Content:
        """The token table: a header, one row per role, then cost when prices are known."""
        role_w, turn_w = _COLUMNS
        parts: list[str | tuple[str, str]] = [
            (f"{'':<{role_w}}{'turn in/out':<{turn_w}}session", "dim")
        ]
        for spec in list_roles():
            if spec.from_file and spec.name not in self.turn and spec.name not in self.session:
                continue  # a sub-agent from an agent file gets its line once it ran
            alias, style = role_label(spec.name)
            if len(alias) >= role_w:
                alias = alias[: role_w - 2] + "…"
            turn = _in_out(self.turn.get(spec.name))
            session = _in_out(self.session.get(spec.name))
            parts += ["\n", (f"{alias:<{role_w}}", style), f"{turn:<{turn_w}}{session}"]
        if self.priced:
            mark = "+" if self.unpriced else ""
            turn_cost = format_cost(self.turn_cost) + mark
            session_cost = format_cost(self.session_cost) + mark
            parts += ["\n", (f"{'cost':<{role_w}}", "bold"), f"{turn_cost:<{turn_w}}{session_cost}"]
        for limit in LIMITS:
            spend = self.budget.get(limit.key)
            if spend is None:
                continue
            used, maximum = float(spend["used"]), float(spend["limit"])
            if limit.unit == "usd":
                amount = f"{format_cost(used)}/{format_cost(maximum)}"
            else:
                amount = f"{format_tokens(int(used))}/{format_tokens(int(maximum))}"
            share = used / maximum if maximum > 0 else 0.0
            style = "bold red" if share >= 1 else "bold yellow" if share >= WARN_SHARE else "dim"
            label = "turn" if limit.scope == "turn" else "conv"
            parts += [
                "\n",
                (f"{label:<{role_w}}", "bold"),
                (f"{amount} {min(999, round(100 * share))}%", style),
            ]
        return Content.assemble(*parts)

    @property
    def context_percent(self) -> float | None:
        """How full the context window is (0-100), or None when the window is unknown."""
        if self.context_window <= 0:
            return None
        return min(100.0, 100.0 * self.context_tokens / self.context_window)

    def context_text(self) -> str:
        """The context line: ``context 54k / 128k`` (or a dash before the first request)."""
        if self.context_window <= 0:
            return "context —"
        used, window = format_tokens(self.context_tokens), format_tokens(self.context_window)
        return f"context {used} / {window}"

    def history_text(self) -> str:
        """The sparkline's caption: turns counted and the largest."""
        if not self.turn_history:
            return "tokens/turn —"
        largest = format_tokens(max(self.turn_history))
        count = len(self.turn_history)
        return f"tokens/turn ({count} turn{'s' if count != 1 else ''}, max {largest})"

    def _refresh_all(self) -> None:
        self._refresh_table()
        self._refresh_context()
        self._refresh_history()

    def _refresh_table(self) -> None:
        self.table.update(self.table_text())
        self.table.tooltip = self.budget_warning or None

    def _refresh_context(self) -> None:
        self.context_label.update(self.context_text())
        percent = self.context_percent
        self.context_bar.update(total=100, progress=round(percent or 0.0, 1))
        self.context_bar.set_class(percent is not None and WARN_PCT <= percent < HIGH_PCT, "-warn")
        self.context_bar.set_class(percent is not None and percent >= HIGH_PCT, "-high")

    def _refresh_history(self) -> None:
        self.history_label.update(self.history_text())
        self.sparkline.data = list(self.turn_history)
