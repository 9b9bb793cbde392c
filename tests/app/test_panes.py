"""The side panes and the todo panel, driven by realistic engine event sequences.

:class:`PanesHost` hosts the four widgets side by side with a hand-driven clock; the
event builders here are shared with the runtime and snapshot tests.
"""

from __future__ import annotations

import time
from importlib.resources import files
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical

from smith_tui.engine import events as ev
from smith_tui.engine.presentation import key_argument
from smith_tui.widgets.activity import ToolActivity, clean_output
from smith_tui.widgets.dispatch_tree import DispatchTree
from smith_tui.widgets.todo_panel import TodoPanel
from smith_tui.widgets.usage_pane import UsagePane
from tests.app.app_harness import screen_text, wait_until

SIZE = (132, 30)


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class PanesHost(App[None]):
    """The four widgets side by side; records the messages the dispatch tree posts."""

    CSS_PATH = str(files("smith_tui.styles") / "panes.tcss")
    CSS = """
    #row { height: 1fr; }
    #row > * { width: 1fr; border: round $panel-lighten-2; }
    #right { layout: vertical; }
    #right > UsagePane { height: auto; }
    """

    def __init__(self, clock: FakeClock | None = None) -> None:
        super().__init__()
        self.clock = clock or FakeClock()
        self.posted: list[Any] = []

    def compose(self) -> ComposeResult:
        with Horizontal(id="row"):
            yield ToolActivity(id="tools", clock=self.clock)
            yield DispatchTree(id="dispatch", clock=self.clock)
            with Vertical(id="right"):
                yield UsagePane(id="usage")
                yield TodoPanel(id="todo")

    @property
    def panes(self) -> list[Any]:
        return [self.query_one(f"#{name}") for name in ("tools", "dispatch", "usage", "todo")]

    def feed(self, *events: ev.Event) -> None:
        """Deliver events to every pane, as the main screen does."""
        panes = self.panes
        for event in events:
            for pane in panes:
                pane.handle_event(event)

    def on_dispatch_tree_job_selected(self, message: DispatchTree.JobSelected) -> None:
        self.posted.append(message)

    def on_dispatch_tree_cancel_requested(self, message: DispatchTree.CancelRequested) -> None:
        self.posted.append(message)


# -- event builders ---------------------------------------------------------------------


def usage(
    turn_id: str,
    inp: int,
    out: int,
    totals: dict[str, dict[str, int]],
    *,
    role: str = "direct",
    job_id: str | None = None,
    model: str = "big-model",
    context_window: int = 128_000,
) -> ev.UsageUpdated:
    """A usage event whose ``totals`` is updated in place like the tracker's."""
    bucket = totals.setdefault(role, {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0})
    bucket["input_tokens"] += inp
    bucket["output_tokens"] += out
    bucket["total_tokens"] += inp + out
    return ev.UsageUpdated(
        turn_id=turn_id,
        model=model,
        delta={"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out},
        totals={r: dict(v) for r, v in totals.items()},
        context_tokens=inp + out,
        context_window=context_window,
        role=role,
        job_id=job_id,
    )


def tool_start(turn: str, call: str, name: str, args: str, **kw: Any) -> ev.ToolCallStarted:
    return ev.ToolCallStarted(turn_id=turn, call_id=call, name=name, arguments=args, **kw)


def tool_end(turn: str, call: str, name: str, **kw: Any) -> ev.ToolCallFinished:
    kw.setdefault("ok", True)
    kw.setdefault("duration_s", 0.5)
    kw.setdefault("summary", "done")
    return ev.ToolCallFinished(turn_id=turn, call_id=call, name=name, **kw)


def dispatch_turn_events(totals: dict[str, dict[str, int]]) -> list[ev.Event]:
    """A top-level turn that dispatches an explorer and a worker (still running at the end)."""
    explorer_result = {
        "status": "ok",
        "summary": "Config is read by load_config in smith/config.py.",
        "findings": ["load_config merges user and project files"],
        "evidence": ["smith/config.py:42"],
        "limitations": [],
        "job_id": "job-explore",
        "role": "explorer",
        "usage": {"input_tokens": 2400, "output_tokens": 300, "total_tokens": 2700},
    }
    return [
        ev.TurnStarted(
            turn_id="t1", conversation_id="c1", prompt="Find the config loader and fix it"
        ),
        usage("t1", 5000, 200, totals),
        tool_start("t1", "d1", "dispatch", '{"target_role": "explorer", "task": "find config"}'),
        ev.DispatchStarted(
            turn_id="t1",
            target_role="explorer",
            task="Find where config is loaded",
            job_id="job-explore",
        ),
        ev.TurnStarted(
            turn_id="job-explore-t1",
            conversation_id="c2",
            prompt="# Task",
            role="explorer",
            job_id="job-explore",
        ),
        usage(
            "job-explore-t1",
            1200,
            100,
            totals,
            role="explorer",
            job_id="job-explore",
            model="small-model",
            context_window=32_000,
        ),
        tool_start(
            "job-explore-t1",
            "call_1",
            "code_grep",
            '{"pattern": "load_config"}',
            role="explorer",
            job_id="job-explore",
        ),
        tool_end("job-explore-t1", "call_1", "code_grep", role="explorer", job_id="job-explore"),
        usage(
            "job-explore-t1",
            1200,
            200,
            totals,
            role="explorer",
            job_id="job-explore",
            model="small-model",
            context_window=32_000,
        ),
        tool_start(
            "job-explore-t1",
            "call_2",
            "report",
            '{"status": "ok"}',
            role="explorer",
            job_id="job-explore",
        ),
        tool_end("job-explore-t1", "call_2", "report", role="explorer", job_id="job-explore"),
        ev.TurnFinished(
            turn_id="job-explore-t1",
            conversation_id="c2",
            stop_reason="completed",
            role="explorer",
            job_id="job-explore",
        ),
        ev.DispatchFinished(
            target_role="explorer",
            status="ok",
            summary=explorer_result["summary"],
            result=explorer_result,
            job_id="job-explore",
        ),
        tool_end("t1", "d1", "dispatch", duration_s=4.0),
        usage("t1", 6000, 150, totals),
        tool_start("t1", "d2", "dispatch", '{"target_role": "worker", "task": "fix loader"}'),
        ev.DispatchStarted(
            turn_id="t1",
            target_role="worker",
            task="Fix the loader's merge order",
            job_id="job-work",
        ),
        usage(
            "job-work-t1",
            3000,
            400,
            totals,
            role="worker",
            job_id="job-work",
            model="small-model",
            context_window=32_000,
        ),
        tool_start(
            "job-work-t1",
            "call_3",
            "bash",
            '{"command": "pytest -q tests/config"}',
            role="worker",
            job_id="job-work",
        ),
        ev.ToolOutputDelta(
            turn_id="job-work-t1",
            call_id="call_3",
            text="collected 12 items\n",
            role="worker",
            job_id="job-work",
        ),
        ev.ToolOutputDelta(
            turn_id="job-work-t1",
            call_id="call_3",
            text="....F...",
            role="worker",
            job_id="job-work",
        ),
    ]


# -- tool activity ----------------------------------------------------------------------


async def test_activity_shows_two_calls_with_output_tail_and_ticking_elapsed() -> None:
    app = PanesHost()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(ToolActivity)
        assert pane.line_texts() == []
        assert "no tool calls yet" in screen_text(app)
        app.feed(
            ev.TurnStarted(turn_id="t1", conversation_id="c", prompt="list and read"),
            tool_start("t1", "a", "read", '{"path": "src/app.py"}'),
            tool_end("t1", "a", "read", duration_s=0.3),
            tool_start("t1", "b", "bash", '{"command": "ls -la"}'),
            ev.ToolOutputDelta(turn_id="t1", call_id="b", text="one\ntwo\nthr"),
            ev.ToolOutputDelta(turn_id="t1", call_id="b", text="ee\nfour\nfi"),
        )
        await pilot.pause()
        lines = pane.line_texts()
        assert lines[0].startswith("✓ Smith read src/app.py") and lines[0].endswith("0.3s")
        assert lines[1].startswith("▶ Smith bash ls -la") and lines[1].endswith("0.0s")
        # the last three lines of output, the unfinished one included
        assert [line.strip() for line in lines[2:]] == ["│ three", "│ four", "│ fi"]
        assert pane.ticking
        app.clock.advance(12.4)
        await wait_until(pilot, lambda: "12s" in screen_text(app), "the elapsed time to tick")
        app.feed(tool_end("t1", "b", "bash", duration_s=12.5))
        await pilot.pause()
        lines = pane.line_texts()
        assert len(lines) == 2 and lines[1].startswith("✓ Smith bash") and lines[1].endswith("12s")
        assert not pane.ticking
        screen = screen_text(app)
        assert "✓ Smith bash ls -la" in screen and "four" not in screen


async def test_activity_marks_errors_cancellations_and_sub_agent_calls() -> None:
    app = PanesHost()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(ToolActivity)
        app.feed(
            tool_start("t1", "a", "edit", '{"path": "a.py", "operation": "replace"}'),
            tool_end("t1", "a", "edit", ok=False, error="expected_hash does not match"),
            tool_start("t1", "b", "bash", '{"command": "sleep 100"}'),
            tool_end("t1", "b", "bash", ok=False, cancelled=True, duration_s=2.0),
            tool_start(
                "j-t1", "a", "web_fetch", '{"url": "https://x.io/a"}', role="explorer", job_id="j"
            ),
            tool_start("t1", "c", "read", '{"path": "b.py"}'),
            ev.TurnFinished(turn_id="t1", conversation_id="c", stop_reason="cancelled"),
        )
        await pilot.pause()
        lines = pane.line_texts()
        assert lines[0].startswith("✗ Smith edit a.py")
        assert lines[1].startswith("⊘ Smith bash sleep 100")
        # same call id in another turn is another call; it is still running
        assert lines[2].startswith("▶ Link web_fetch https://x.io/a")
        # the cancelled turn's call that never finished
        assert lines[3].startswith("⊘ Smith read b.py")
        assert [c.state for c in pane.calls] == ["error", "cancelled", "running", "cancelled"]
        strip = pane._line_strip(2, 40)
        link = next(seg for seg in strip if seg.text.strip() == "Link")
        assert link.style is not None and link.style.color is not None
        assert link.style.color.get_truecolor().hex == "#00e5ff"


async def test_activity_stays_bounded_and_fast_after_2000_calls() -> None:
    app = PanesHost()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(ToolActivity)
        # The bounds are on this thread's CPU time: the work is synchronous here, and wall
        # time on a loaded machine measured the other processes (3.1 s for the feed).
        started = time.thread_time()
        for i in range(2000):
            app.feed(
                tool_start("t1", f"c{i}", "bash", f'{{"command": "echo {i}"}}'),
                ev.ToolOutputDelta(turn_id="t1", call_id=f"c{i}", text=f"{i}\n"),
                tool_end("t1", f"c{i}", "bash", duration_s=0.01),
            )
        feed_s = time.thread_time() - started
        await pilot.pause()
        assert len(pane.calls) == 500
        assert pane.calls[0].call_id == "c1500" and pane.calls[-1].call_id == "c1999"
        assert pane.virtual_size.height == 500
        assert list(pane.children) == []  # lines, not widgets
        started = time.thread_time()
        screen = screen_text(app)
        render_s = time.thread_time() - started
        assert "echo 1999" in screen  # it follows the newest call
        pane.scroll_home(animate=False)
        await pilot.pause()
        assert "echo 1500" in screen_text(app)
        # a reader who scrolled up is not pulled back down by new calls
        app.feed(tool_start("t1", "late", "bash", '{"command": "echo late"}'))
        await pilot.pause()
        assert pane.scroll_y == 0 and "echo 1501" in screen_text(app)
        assert feed_s < 2.0, f"feeding 2000 calls took {feed_s:.2f}s of CPU"
        assert render_s < 0.5, f"rendering the screen took {render_s:.2f}s of CPU"


def test_key_argument_and_output_cleaning() -> None:
    assert key_argument("bash", '{"command": "git   status\\n -s"}') == "git status -s"
    assert key_argument("code_grep", '{"pattern": "def main", "path": "src"}') == "def main"
    assert key_argument("git", '{"command": "log", "args": ["-n", "3"]}') == "log -n 3"
    assert key_argument("dispatch", '{"target_role": "worker", "task": "fix"}') == "worker: fix"
    assert key_argument("todo", '{"items": [{}, {}]}') == "2 items"
    assert key_argument("read", "not json") == "not json"
    assert clean_output("\x1b[31mred\x1b[0m\tx\x07") == "red    x"


# -- dispatch tree ----------------------------------------------------------------------


async def test_dispatch_tree_shows_turn_jobs_status_elapsed_and_tokens() -> None:
    app = PanesHost()
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(DispatchTree)
        totals: dict[str, dict[str, int]] = {}
        events = dispatch_turn_events(totals)
        app.feed(*events[:4])  # the explorer was dispatched
        assert tree.job_label("job-explore").startswith("● Link running 0.0s")
        assert tree.ticking
        app.clock.advance(3.0)
        await wait_until(pilot, lambda: "● Link running 3.0s" in screen_text(app), "a tick")
        app.feed(*events[4:])
        await pilot.pause()
        root = tree.job_tree.root
        [turn_node] = root.children
        assert str(turn_node.label).startswith("● #1 Find the config loader and fix it")
        assert "17k tok" in str(turn_node.label)  # 5200 + 6150 top level, 2700 + 3400 in jobs
        labels = [str(node.label) for node in turn_node.children]
        assert labels[0] == "✓ Link ok 3.0s 2.7k tok · Find where config is loaded"
        assert labels[1] == "● Niobe running 0.0s 3.4k tok · Fix the loader's merge order"
        assert tree.running_jobs == ["job-work"]
        app.clock.advance(65)
        app.feed(
            ev.DispatchFinished(
                target_role="worker",
                status="partial",
                summary="half done",
                result={"status": "partial", "summary": "half done", "changes": ["loader.py"]},
                job_id="job-work",
            ),
            ev.TurnFinished(turn_id="t1", conversation_id="c1", stop_reason="completed"),
        )
        await pilot.pause()
        assert tree.job_label("job-work").startswith("◐ Niobe partial 1m05s")
        assert tree.turn_label("t1").startswith("✓ #1")
        assert not tree.ticking


async def test_dispatch_tree_nests_jobs_and_shows_cancelled_jobs() -> None:
    app = PanesHost()
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(DispatchTree)
        app.feed(
            ev.TurnStarted(turn_id="t1", conversation_id="c", prompt="plan", role="orchestrator"),
            ev.DispatchStarted(
                turn_id="t1", target_role="worker", task="outer", job_id="j1", role="orchestrator"
            ),
            ev.DispatchStarted(
                turn_id="j1-t1",
                target_role="explorer",
                task="inner",
                job_id="j2",
                parent_job_id="j1",
                role="worker",
            ),
            ev.DispatchFinished(
                target_role="explorer",
                status="blocked",
                summary="cancelled",
                result={
                    "status": "blocked",
                    "summary": "the explorer was cancelled",
                    "cancelled": True,
                },
                job_id="j2",
            ),
        )
        await pilot.pause()
        [turn_node] = tree.job_tree.root.children
        assert str(turn_node.label).startswith("● #1 Tank plan")
        [outer] = turn_node.children
        [inner] = outer.children
        assert str(inner.label).startswith("⊘ Link cancelled")
        assert tree.jobs["j2"].status == "cancelled"


async def test_dispatch_tree_copes_with_events_out_of_order() -> None:
    app = PanesHost()
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(DispatchTree)
        app.feed(
            # usage of a job before its start, a start without a turn, an end without a start
            usage("j1-t1", 100, 20, {}, role="worker", job_id="j1"),
            ev.DispatchStarted(turn_id="t9", target_role="worker", task="patch", job_id="j1"),
            ev.DispatchFinished(
                target_role="explorer",
                status="ok",
                summary="looked",
                job_id="j2",
                result={},
            ),
        )
        await pilot.pause()
        [turn] = tree.turns.values()
        assert turn.prompt == "(earlier turn)"
        assert tree.job_label("j1").startswith("● Niobe running 0.0s 120 tok")
        assert tree.job_label("j2").startswith("✓ Link ok")
        assert tree.jobs["j2"].result == {"status": "ok", "summary": "looked"}


async def test_selecting_a_job_shows_its_report_and_posts_job_selected() -> None:
    app = PanesHost()
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(DispatchTree)
        app.feed(*dispatch_turn_events({}))
        await pilot.pause()
        tree.job_tree.focus()
        explorer = tree.jobs["job-explore"].node
        assert explorer is not None
        tree.job_tree.move_cursor(explorer)
        await pilot.press("enter")
        await pilot.pause()
        assert tree.job_tree.tooltip == "Find where config is loaded"
        [message] = app.posted
        assert isinstance(message, DispatchTree.JobSelected)
        assert message.job_id == "job-explore" and message.result["status"] == "ok"
        screen = screen_text(app)
        assert "Config is read by load_config" in screen
        assert "Findings" in screen and "smith/config.py:42" in screen
        await pilot.press("escape")
        await pilot.pause()
        assert "smith/config.py:42" not in screen_text(app)


async def test_focusing_the_tree_puts_the_cursor_on_the_newest_job_before_any_paint() -> None:
    # A job added since the tree last painted has no line number yet (Textual numbers the
    # lines when it draws them): alt+d pressed then (the side panes hidden, or a busy
    # machine) must still land on that job, not on "Session".
    app = PanesHost()
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(DispatchTree)
        app.feed(*dispatch_turn_events({}))  # no pause: nothing painted since
        tree.focus_tree()
        node = tree.job_tree.cursor_node
        assert node is not None and node.data == ("job", "job-work")
        await pilot.pause()
        assert tree.job_tree.has_focus


async def test_cancel_key_posts_cancel_requested_for_a_running_job_only() -> None:
    app = PanesHost()
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(DispatchTree)
        app.feed(*dispatch_turn_events({}))
        await pilot.pause()
        tree.job_tree.focus()
        tree.job_tree.move_cursor(tree.jobs["job-explore"].node)
        await pilot.press("x")  # finished: nothing to cancel
        tree.job_tree.move_cursor(tree.jobs["job-work"].node)
        await pilot.press("x")
        await pilot.press("delete")
        await pilot.pause()
        assert [type(m).__name__ for m in app.posted] == ["CancelRequested", "CancelRequested"]
        assert {m.job_id for m in app.posted} == {"job-work"}


async def test_dispatch_tree_keeps_the_last_turns_only() -> None:
    app = PanesHost()
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(DispatchTree)
        tree.max_turns = 3
        for i in range(5):
            app.feed(
                ev.TurnStarted(turn_id=f"t{i}", conversation_id="c", prompt=f"turn {i}"),
                ev.DispatchStarted(
                    turn_id=f"t{i}", target_role="explorer", task="look", job_id=f"j{i}"
                ),
            )
        await pilot.pause()
        assert list(tree.turns) == ["t2", "t3", "t4"]
        assert sorted(tree.jobs) == ["j2", "j3", "j4"]
        assert len(tree.job_tree.root.children) == 3


# -- usage ------------------------------------------------------------------------------


async def test_usage_per_role_turn_and_session_cost_gauge_and_sparkline() -> None:
    app = PanesHost()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(UsagePane)
        pane.set_pricing("big-model", 2e-6, 8e-6)
        totals: dict[str, dict[str, int]] = {}
        app.feed(*dispatch_turn_events(totals))
        app.feed(ev.TurnFinished(turn_id="t1", conversation_id="c1", stop_reason="completed"))
        await pilot.pause()
        rows = pane.table_text().plain.splitlines()
        assert rows[1].split() == ["Smith", "11k/350", "11k/350"]
        assert rows[2].split() == ["Tank", "·", "·"]
        assert rows[3].split() == ["Niobe", "3.0k/400", "3.0k/400"]
        assert rows[4].split() == ["Link", "2.4k/300", "2.4k/300"]
        # only big-model is priced: 11000*2e-6 + 350*8e-6; the small model's use is flagged
        assert rows[5].split() == ["cost", "$0.02+", "$0.02+"]
        assert pane.turn_cost == 11000 * 2e-6 + 350 * 8e-6
        # the gauge follows the last top-level request only (6150 of 128k)
        assert pane.context_text() == "context 6.2k / 128k"
        assert pane.context_bar.percentage == 0.048
        assert list(pane.sparkline.data or []) == [pane.turn_history[0]] == [17450]
        # a second turn: the turn column restarts, the session keeps adding up
        app.feed(
            ev.TurnStarted(turn_id="t2", conversation_id="c1", prompt="again"),
            usage("t2", 110_000, 1000, totals),
            ev.TurnFinished(turn_id="t2", conversation_id="c1", stop_reason="completed"),
        )
        await pilot.pause()
        rows = pane.table_text().plain.splitlines()
        assert rows[1].split() == ["Smith", "110k/1.0k", "121k/1.4k"]
        assert rows[4].split() == ["Link", "·", "2.4k/300"]
        assert list(pane.sparkline.data or []) == [17450, 111_000]
        assert pane.context_percent is not None and round(pane.context_percent) == 87
        assert pane.context_bar.has_class("-high")
        assert pane.history_text() == "tokens/turn (2 turns, max 111k)"
        screen = screen_text(app)
        assert "context 111k / 128k" in screen and "87%" in screen


async def test_usage_without_prices_or_context_window() -> None:
    app = PanesHost()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(UsagePane)
        assert pane.context_text() == "context —"
        app.feed(
            ev.TurnStarted(turn_id="t1", conversation_id="c", prompt="hi"),
            usage("t1", 100, 20, {}, context_window=0),
        )
        await pilot.pause()
        assert "cost" not in pane.table_text().plain
        assert pane.context_text() == "context —" and pane.context_percent is None
        assert pane.history_text() == "tokens/turn —"


def test_load_catalog_takes_prices() -> None:
    from smith_tui.llm.catalog import ModelDescriptor

    pane = UsagePane()
    pane.load_catalog(
        [
            ModelDescriptor(id="a", name="a", pricing={"prompt": 1e-6, "completion": 2e-6}),
            ModelDescriptor(id="b", name="b"),
        ]
    )
    pane.handle_event(usage("t", 1000, 1000, {}, model="a"))
    assert pane.session_cost == 1000 * 1e-6 + 1000 * 2e-6
    assert not pane.unpriced


# -- todo -------------------------------------------------------------------------------


async def test_todo_panel_hidden_while_empty_and_marks_each_status() -> None:
    app = PanesHost()
    async with app.run_test(size=SIZE) as pilot:
        todo = app.query_one(TodoPanel)
        assert todo.styles.display == "none"
        app.feed(
            ev.TodoUpdated(
                items=[
                    {"content": "read the loader", "status": "done"},
                    {"content": "fix merge order\nsecond line", "status": "in_progress"},
                    {"content": "run the tests", "status": "pending"},
                ]
            )
        )
        await pilot.pause()
        assert todo.styles.display == "block"
        assert todo.item_lines() == [
            "[x] read the loader",
            "[~] fix merge order",
            "[ ] run the tests",
        ]
        screen = screen_text(app)
        assert "Todo 1/3" in screen and "[~] fix merge order" in screen
        app.feed(ev.TodoUpdated(items=[]))
        await pilot.pause()
        assert todo.styles.display == "none"
        assert "Todo" not in screen_text(app)
