"""The prompt widget: submit, multi-line, history and the completion dropdown keys."""

from __future__ import annotations

from textual.app import App, ComposeResult

from smith_tui.widgets.completion.candidates import Completer, CompletionSources
from smith_tui.widgets.completion.menu import CompletionMenu
from smith_tui.widgets.prompt_input import PromptHistory, PromptInput
from tests.app.app_harness import wait_until


class PromptHost(App[None]):
    """Hosts one prompt and its menu; records submissions."""

    def __init__(self, completer: Completer | None = None) -> None:
        super().__init__()
        self.completer = completer
        self.submitted: list[str] = []

    def compose(self) -> ComposeResult:
        yield CompletionMenu(id="completion")
        yield PromptInput(id="prompt", completer=self.completer)

    def on_mount(self) -> None:
        prompt = self.query_one(PromptInput)
        prompt.menu = self.query_one(CompletionMenu)
        prompt.focus()

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        self.submitted.append(message.text)


async def test_enter_submits_and_clears_blank_does_not() -> None:
    app = PromptHost()
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        await pilot.press("enter")
        await pilot.press("space", "enter")
        assert app.submitted == []
        assert prompt.text == " "  # kept: nothing was sent
        await pilot.press("backspace")
        await pilot.press(*"hello", "enter")
        await pilot.pause()
        assert app.submitted == ["hello"]
        assert prompt.text == ""


async def test_ctrl_j_and_shift_enter_make_new_lines() -> None:
    app = PromptHost()
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        await pilot.press("a", "ctrl+j", "b", "shift+enter", "c")
        assert prompt.text == "a\nb\nc"
        assert prompt.document.line_count == 3
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == ["a\nb\nc"]


async def test_up_and_down_walk_history_and_restore_the_draft() -> None:
    app = PromptHost()
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        for line in ("first", "second"):
            await pilot.press(*line, "enter")
        await pilot.press(*"draft")
        await pilot.press("up")
        assert prompt.text == "second"
        await pilot.press("up")
        assert prompt.text == "first"
        await pilot.press("up")  # oldest: stays
        assert prompt.text == "first"
        await pilot.press("down")
        assert prompt.text == "second"
        await pilot.press("down")
        assert prompt.text == "draft"
        assert not prompt.prompt_history.browsing


async def test_up_inside_multiline_text_moves_the_cursor_not_history() -> None:
    app = PromptHost()
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        await pilot.press(*"old", "enter")
        await pilot.press("x", "ctrl+j", "y")
        await pilot.press("up")
        assert prompt.text == "x\ny"
        assert prompt.cursor_location[0] == 0
        await pilot.press("up")  # now on the first line: history
        assert prompt.text == "old"


def test_history_keeps_one_copy_of_repeats_and_skips_blanks() -> None:
    history = PromptHistory(["a", "a", " ", "b"])
    assert history.entries == ["a", "b"]
    assert history.newer() is None  # not browsing
    assert history.older("") == "b"
    assert history.older("") == "a"
    assert history.older("") is None


def _static_completer() -> Completer:
    async def models() -> list[str]:
        return ["alpha-7b", "beta-70b"]

    return Completer(
        CompletionSources(
            commands=lambda: ["help", "model", "models", "new"],
            config_paths=lambda: ["llm_config.api_url", "models.default"],
            roles=lambda: ["direct", "orchestrator"],
            model_ids=models,
        )
    )


async def test_menu_keys_move_accept_and_close() -> None:
    app = PromptHost(_static_completer())
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        menu = app.query_one(CompletionMenu)
        await pilot.press("slash", "m")
        await wait_until(pilot, lambda: menu.is_open, what="menu")
        assert [c.value for c in menu.completion.candidates] == ["/model", "/models"]
        await pilot.press("down")
        assert menu.selected.value == "/models"
        await pilot.press("up")
        assert menu.selected.value == "/model"
        await pilot.press("tab")
        assert prompt.text == "/model "
        await wait_until(pilot, lambda: menu.is_open, what="model ids")
        assert [c.value for c in menu.completion.candidates] == ["alpha-7b", "beta-70b"]
        await pilot.press("b", "enter")  # enter accepts while the menu is open
        assert prompt.text == "/model beta-70b "
        assert app.submitted == []
        await pilot.pause()
        assert not menu.is_open
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == ["/model beta-70b "]
        await pilot.press("slash")
        await wait_until(pilot, lambda: menu.is_open, what="menu")
        await pilot.press("escape")
        assert not menu.is_open
        assert prompt.text == "/"


async def test_enter_on_a_complete_command_submits() -> None:
    app = PromptHost(_static_completer())
    async with app.run_test() as pilot:
        await pilot.press(*"/new")
        await pilot.pause(0.05)
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == ["/new"]


async def test_enter_with_a_menu_for_older_text_submits_what_is_typed() -> None:
    # Keys can outrun the completion worker: a worker that finished for "/ex" can open its
    # menu after "port" is typed but before the prompt's change handler runs. Enter must
    # then send "/export", not splice "/export " over "/ex" ("/export port").
    completer = Completer(CompletionSources(commands=lambda: ["new", "export"]))
    app = PromptHost(completer)
    async with app.run_test() as pilot:
        menu = app.query_one(CompletionMenu)
        await pilot.press(*"/export")
        await pilot.pause(0.05)
        stale = await completer.complete("/ex", 0, 3)
        assert stale is not None and [c.value for c in stale.candidates] == ["/export"]
        menu.show(stale)
        assert menu.is_open
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == ["/export"]


async def test_a_worker_answer_for_older_text_opens_no_menu() -> None:
    app = PromptHost(Completer(CompletionSources(commands=lambda: ["export", "exports"])))
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        menu = app.query_one(CompletionMenu)
        await pilot.press(*"/export")
        await pilot.pause(0.05)
        menu.close()
        # The answer for "/ex" arrives with no newer refresh started (same generation).
        await prompt._complete(prompt._completion_generation, "/ex", 0, 3)
        assert not menu.is_open
        await prompt._complete(prompt._completion_generation, "/export", 0, 7)
        assert menu.is_open


async def test_a_recalled_command_opens_no_menu_so_up_keeps_walking() -> None:
    app = PromptHost(_static_completer())
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        menu = app.query_one(CompletionMenu)
        for line in ("hello", "/mo"):
            prompt.load_text(line)
            prompt.submit()
        await pilot.pause()
        await pilot.press("up")
        await pilot.pause(0.05)
        assert prompt.text == "/mo" and not menu.is_open
        await pilot.press("up")
        assert prompt.text == "hello"
        await pilot.press("ctrl+u", "slash")  # typing again completes as usual
        await wait_until(pilot, lambda: menu.is_open, what="menu")
