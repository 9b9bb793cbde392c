"""Token usage accounting per role, per turn and per dispatch job."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def format_tokens(count: int) -> str:
    """A compact token count: ``850``, ``1.2k``, ``12k``, ``1.2M``."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{count // 1000}k"
    return f"{count / 1_000_000:.1f}M"


def format_cost(dollars: float) -> str:
    """Dollars with enough digits to see small amounts: ``$0.0012``, ``$1.23``."""
    if dollars < 0.01:
        return f"${dollars:.4f}"
    return f"${dollars:.2f}"


def usage_counts(usage: Any) -> dict[str, int]:
    """Return ``{input_tokens, output_tokens, total_tokens}`` from a usage object or dict."""
    if usage is None:
        return {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    get = usage.get if isinstance(usage, dict) else lambda k, d=None: getattr(usage, k, d)
    inp = int(get("input_tokens", 0) or 0)
    out = int(get("output_tokens", 0) or 0)
    total = int(get("total_tokens", 0) or 0) or inp + out
    return {"input_tokens": inp, "output_tokens": out, "total_tokens": total}


@dataclass
class UsageTracker:
    """Token totals for the parent role and each child role."""

    by_role: dict[str, dict[str, int]] = field(default_factory=dict)
    by_job: dict[str, dict[str, int]] = field(default_factory=dict)
    cost: float = 0.0
    costs: dict[str, float] = field(default_factory=dict)
    """Dollars per role, as the usage pane counts them (reported, else priced; top level
    and children alike)."""

    def add(self, role: str, usage: Any, *, job_id: str | None = None) -> dict[str, int]:
        """Add one call's usage; returns the normalised counts that were added."""
        counts = usage_counts(usage)
        for bucket in (self.by_role.setdefault(role, {}),) + (
            (self.by_job.setdefault(job_id, {}),) if job_id else ()
        ):
            for key, value in counts.items():
                bucket[key] = bucket.get(key, 0) + value
        cost = getattr(usage, "cost", None) if not isinstance(usage, dict) else usage.get("cost")
        if isinstance(cost, int | float):
            self.cost += float(cost)
        return counts

    def add_cost(self, role: str, cost: float | None) -> None:
        """Count one call's cost (:func:`~smith_tui.engine.spend_limits.call_cost`) for ``role``."""
        if cost is not None:
            self.costs[role] = self.costs.get(role, 0.0) + cost

    def totals(self) -> dict[str, dict[str, int]]:
        """Return a copy of the per-role totals."""
        return {role: dict(values) for role, values in self.by_role.items()}

    def grand_total(self) -> dict[str, int]:
        """Return the sum over all roles."""
        total = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
        for values in self.by_role.values():
            for key in total:
                total[key] += values.get(key, 0)
        return total
