"""Per-hunk review in the app: from a turn's diff, revert one hunk of three; the file keeps
the other two byte for byte, and the next request tells the model what was reverted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from smith_tui.app.screens.hunk_review_screen import HunkReviewScreen
from smith_tui.app.screens.turn_diff_screen import TurnDiffScreen
from smith_tui.widgets.transcript.turn_changes import TurnChanges
from tests.app.app_harness import isolated_runtime, make_app, running, submit, wait_for_text
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.pilot import screen_text, wait_until

OLD = "".join(f"row {n}\n" for n in range(1, 31))
NEW = (
    OLD.replace("row 3\n", "row three\n")
    .replace("row 15\n", "row fifteen\n")
    .replace("row 27\n", "row 27\nrow 27b\n")
)


async def test_reverting_one_hunk_from_the_diff_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("write", {"path": "rows.txt", "content": NEW})]),
        text_reply("Rewrote rows.txt."),
    )
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url) as runtime:
        rows = Path(runtime.options.cwd) / "rows.txt"
        rows.write_text(OLD)
        app = make_app(runtime)
        async with running(app, size=(100, 40)) as pilot:
            await submit(pilot, "rewrite the rows")
            await wait_for_text(pilot, "Rewrote rows.txt.")
            await wait_until(pilot, lambda: not runtime.busy, "the turn to end")
            await wait_until(pilot, lambda: len(app.screen.query(TurnChanges)) == 1, "the mark")
            [mark] = list(app.screen.query(TurnChanges))
            mark.focus()
            await pilot.pause()
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, TurnDiffScreen), "the diff")
            await wait_for_text(pilot, "r: keep or revert hunks")
            await pilot.press("r")
            await wait_until(pilot, lambda: isinstance(app.screen, HunkReviewScreen), "review")
            screen: Any = app.screen
            await wait_until(pilot, lambda: len(screen.files) == 1, "the hunks")
            assert len(screen.files[0].hunks) == 3
            await wait_for_text(pilot, "hunk 1/3")
            await pilot.press("down")  # the second hunk: row 15
            await pilot.press("space")
            await wait_for_text(pilot, "☒ revert")
            await pilot.press("a")
            await wait_until(pilot, lambda: screen.result is not None, "the revert")
            # The status grows to its second line a layout after its text changes: wait for
            # the end of the sentence, then check its start.
            text = await wait_for_text(pilot, "/undo takes it back")
            assert "Reverted 1 hunk in 1 file" in text
            assert rows.read_text() == NEW.replace("row fifteen\n", "row 15\n")
            await pilot.press("escape")
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is app.main_screen, "back")

            llm_server.enqueue(text_reply("Understood."))
            await submit(pilot, "carry on")
            await wait_for_text(pilot, "Understood.")
            body = llm_server.chat_requests()[-1]
            user = [m for m in body["messages"] if m["role"] == "user"][-2]
            assert "reverted: rows.txt (hunks @@ -15,1 +15,1 @@" in user["content"]
            assert user["content"].endswith("carry on")
            # The transcript shows what was typed; the note is for the model.
            shown = screen_text(app)
            assert "carry on" in shown and "[Smith: the user reviewed" not in shown
            assert runtime.messages[-2]["metadata"]["prompt"] == "carry on"
            # Told once: the request after that one does not repeat it.
            llm_server.enqueue(text_reply("Next."))
            await submit(pilot, "and then")
            await wait_for_text(pilot, "Next.")
            last = [m for m in llm_server.chat_requests()[-1]["messages"] if m["role"] == "user"]
            assert last[-2]["content"] == "and then"


def _files() -> list[Any]:
    from smith_tui.tools.checkpoints.hunk_review import ReviewFile
    from smith_tui.tools.checkpoints.hunks import hunks, split_lines

    old, new = tuple(split_lines(OLD.encode())), tuple(split_lines(NEW.encode()))
    return [
        ReviewFile("rows.txt", "M", "100644", "100644", old, new, tuple(hunks(old, new))),
        ReviewFile("notes/new.md", "A", None, "100644", whole_only="added"),
    ]


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
def test_the_review_screen_snapshot(
    snap_compare: Any, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from smith_tui.engine import review
    from tests.app.app_harness import wait_for_still_screen
    from tests.support.screen_host import ScreenHost

    async def files(runtime: Any, checkpoint_id: str) -> list[Any]:
        return _files()

    monkeypatch.setattr(review, "files", files)
    title = "Review: turn 2 · ‘rewrite the rows’: 2 files changed"
    app = ScreenHost(lambda: HunkReviewScreen(None, "0123abcd4567", title))  # type: ignore[arg-type]

    async def marked(pilot: Any) -> None:
        await wait_until(pilot, lambda: "hunk 1/3" in screen_text(pilot.app), "the rows")
        await pilot.press("down", "space")
        await wait_until(pilot, lambda: "☒ revert" in screen_text(pilot.app), "the mark")
        await wait_for_still_screen(pilot)

    assert snap_compare(app, terminal_size=size, run_before=marked)
