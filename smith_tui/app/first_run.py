"""The welcome screen: shown when no LLM server is configured; asks for its URL.

One field takes the server URL; enter saves it as ``llm_config.api_url`` in the config
file the screen names. Meanwhile a worker thread asks the usual local ports (Ollama,
llama.cpp, LM Studio, vLLM) whether a server answers there, and offers what it finds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from smith_tui.app.footer import SmithFooter
from smith_tui.config import API_URL_VARIABLE, DEFAULT_API_KEY_ENV, EXAMPLE_API_URL
from smith_tui.errors import error_text

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

INTRO = """\
[b]Welcome to Agent Smith[/b]

Smith talks to an OpenAI-compatible [b]Chat-Completions[/b] server (llama.cpp, vLLM, \
Ollama, LM Studio, a hosted API, …). Where is yours?"""

SAVED_WHERE = "Enter saves it as [b]llm_config.api_url[/b] in [b]{config}[/b]."

OTHER_WAYS = """\
Other ways: export [b]{url_var}[/b]=URL, or start [b]smith --api-url URL[/b].
If the server needs a key, export it in [b]{key_var}[/b] (or in the variable that \
[b]llm_config.api_key_env[/b] names); the key itself never goes into the config file."""

URL_SETTING = "llm_config.api_url"


def _usual_ports() -> str:
    from smith_tui.llm import server_probe

    return ", ".join(f"{name} {port}" for name, port in server_probe.USUAL_SERVERS)


def url_problem(url: str) -> str:
    """Why ``url`` cannot be a server URL, or ``""`` when it can."""
    if not url:
        return f"Type the server's URL, e.g. {EXAMPLE_API_URL}."
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{url!r} is not an http:// or https:// URL (e.g. {EXAMPLE_API_URL})."
    return ""


async def report_server(app: Any, runtime: Runtime, url: str) -> str:
    """Ask the server at ``url`` for its models (``GET /models``) and say what it answered;
    returns the words shown."""
    try:
        models = list(await runtime.services.model.catalog())
    except Exception as exc:
        why = error_text(exc)
        text = (
            f"{url} did not list its models (GET /models): {why}. If that is not the server, "
            f"change {URL_SETTING} (f2)."
        )
        app.notify(text, severity="warning", timeout=15)
        return text
    ids = [str(getattr(model, "id", model)) for model in models]
    if not ids:
        text = f"{url} answers, but lists no models: name one with /config set default_model ID."
    else:
        listed = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
        text = f"{url} answers: {len(ids)} model{'s' if len(ids) != 1 else ''} ({listed})."
    app.notify(text, timeout=10)
    if ids:
        text += "\n" + await probe_server(app, runtime)
    return text


async def probe_server(app: Any, runtime: Runtime) -> str:
    """What ``smith doctor`` finds, in one line: streaming, tool calls, usage, max_tokens
    (two small requests to the model the session would use)."""
    from smith_tui.engine import server_doctor

    try:
        found = await server_doctor.diagnose(runtime.config.model, runtime.llm, None)
    except Exception as exc:  # a finding, never a crash of the welcome screen
        text = f"checking the server failed: {error_text(exc)}"
        app.notify(text, severity="warning", timeout=15)
        return text
    checks = server_doctor.checks_of(found)
    text = server_doctor.summary(checks)
    failed = server_doctor.verdict(checks) != 0
    app.notify(text, severity="warning" if failed else "information", timeout=20)
    return text


class FirstRunScreen(Screen[None]):
    """Asks for the server URL (offering local servers that answer) and saves it.

    Once a server is configured (here or in the config screen) it gives way to the main
    screen.
    """

    AUTO_FOCUS = "#first-run-url"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down", "found_list", "Found servers", show=False),
    ]

    def __init__(self, runtime: Runtime) -> None:
        super().__init__(id="first-run")
        self.runtime = runtime
        self.found: list[Any] = []
        """The local servers that answered (``FoundServer``)."""
        self.probing = True
        """Whether the local ports are still being asked."""

    def compose(self) -> ComposeResult:
        """Intro, the URL field, what was found, other ways, buttons."""
        key_var = self.runtime.config.effective.get("llm_config", {}).get(
            "api_key_env", DEFAULT_API_KEY_ENV
        )
        config = escape(str(self.runtime.config.user_config_path))
        with VerticalScroll(id="first-run-body"):
            yield Static(INTRO, id="first-run-intro")
            yield Input(placeholder=EXAMPLE_API_URL, id="first-run-url")
            yield Static(SAVED_WHERE.format(config=config), id="first-run-where")
            yield Static("", id="first-run-error", markup=False)
            yield Static(
                f"Looking for servers on this machine ({_usual_ports()})…",
                id="first-run-probe",
                markup=False,
            )
            yield OptionList(id="first-run-found")
            yield Static(
                OTHER_WAYS.format(url_var=API_URL_VARIABLE, key_var=key_var or DEFAULT_API_KEY_ENV),
                id="first-run-other",
            )
            with Horizontal(id="first-run-buttons"):
                yield Button("Save (enter)", id="save", variant="primary")
                yield Button("Settings (f2)", id="configure")
                yield Button("Quit (ctrl+q)", id="quit", variant="error")
        yield SmithFooter()

    def on_mount(self) -> None:
        """Ask the usual local ports in a thread (the screen stays responsive)."""
        self.query_one("#first-run-found", OptionList).display = False
        self.run_worker(self._probe, thread=True, group="probe", exit_on_error=False)

    def _probe(self) -> None:
        from smith_tui.llm import server_probe

        try:
            found = server_probe.probe_local_servers_sync(server_probe.LOCAL_SERVERS)
        except Exception:  # probing is a courtesy: the field works without it
            found = []
        self.app.call_from_thread(self.show_found, found)

    def show_found(self, found: list[Any]) -> None:
        """Offer the servers that answered; put the first in the field if it is empty."""
        self.found, self.probing = list(found), False
        status = self.query_one("#first-run-probe", Static)
        options = self.query_one("#first-run-found", OptionList)
        if not found:
            status.update(f"No server answered on this machine's usual ports ({_usual_ports()}).")
            return
        status.update("Found on this machine (↓ to choose, enter to use):")
        options.clear_options()
        options.add_options([Option(server.describe(), id=server.url) for server in found])
        options.display = True
        url_box = self.query_one("#first-run-url", Input)
        if not url_box.value:
            url_box.value = found[0].url
            url_box.cursor_position = len(url_box.value)

    def action_found_list(self) -> None:
        """Down from the field moves into the list of found servers."""
        options = self.query_one("#first-run-found", OptionList)
        if options.display and options.option_count:
            options.focus()
            if options.highlighted is None:
                options.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on a found server: use it."""
        event.stop()
        url = str(event.option.id or "")
        self.query_one("#first-run-url", Input).value = url
        self.save(url)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the field: save the URL."""
        event.stop()
        self.save(event.value.strip())

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        """Act on a button."""
        event.stop()
        if event.button.id == "save":
            self.save(self.query_one("#first-run-url", Input).value.strip())
        elif event.button.id == "configure":
            await self.app.run_action("open_config")
        else:
            self.app.exit(0)

    def save(self, url: str) -> bool:
        """Write ``url`` into the config file and go on to the main screen (if it is valid)."""
        from smith_tui.config.user_file import write_user_setting

        problem = url_problem(url)
        path = self.runtime.config.user_config_path
        if not problem:
            try:
                write_user_setting(path, URL_SETTING, url)
                self.runtime.reload_config()
            except Exception as exc:  # the config explains what to fix
                problem = error_text(exc)
        error = self.query_one("#first-run-error", Static)
        error.update(problem)
        error.set_class(bool(problem), "-shown")
        if problem:
            self.query_one("#first-run-url", Input).focus()
            return False
        self.app.notify(f"Saved {URL_SETTING} = {url} in {path}; asking it for its models…")
        # On the app: the check outlives this screen, and its answer shows on the next one.
        self.app.run_worker(
            report_server(self.app, self.runtime, url), group="check-server", exit_on_error=False
        )
        self._leave()
        return True

    def on_screen_resume(self) -> None:
        """Leave once a server has been configured (e.g. in the config screen)."""
        if self.runtime.server_configured:
            self._leave()

    def _leave(self) -> None:
        if not self.is_current:
            return
        self.dismiss()
        load_prices = getattr(self.app, "load_prices", None)
        if load_prices is not None:
            load_prices()  # the catalog could not be read without a server
