"""The first-run screen: shown when no LLM server is configured."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Markdown

from smith_tui.config import API_URL_VARIABLE, DEFAULT_API_KEY_ENV, EXAMPLE_API_URL

TEXT = """\
# Welcome to Agent Smith

Smith talks to an OpenAI-compatible **Chat-Completions** server (llama.cpp, vLLM,
Ollama, a hosted API, …), and none is configured yet.

Tell Smith where the server is, in one of these ways:

* set `llm_config.api_url` in your config file `{config}`, e.g.

  ```json
  {{"llm_config": {{"api_url": "{example}"}}}}
  ```

* or export `{url_var}={example}`,
* or start `smith --api-url {example}`.

If the server needs a key, export it in **`{key_var}`** (or in the variable that
`llm_config.api_key_env` names). The key itself never goes into the config file.
"""


class FirstRunScreen(Screen):
    """Explains how to point Smith at a server; offers the config screen or quitting.

    Once a server is configured (in the config screen) it gives way to the main screen.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "app.open_config", "Open config"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, runtime: Any) -> None:
        super().__init__(id="first-run")
        self.runtime = runtime

    def compose(self) -> ComposeResult:
        """The explanation and two buttons."""
        key_var = self.runtime.config.effective.get("llm_config", {}).get(
            "api_key_env", DEFAULT_API_KEY_ENV
        )
        text = TEXT.format(
            config=self.runtime.config.user_config_path,
            example=EXAMPLE_API_URL,
            url_var=API_URL_VARIABLE,
            key_var=key_var or DEFAULT_API_KEY_ENV,
        )
        with VerticalScroll(id="first-run-body"):
            yield Markdown(text, id="first-run-text")
            with Horizontal(id="first-run-buttons"):
                yield Button("Open config (c)", id="configure", variant="primary")
                yield Button("Quit (q)", id="quit", variant="error")
        yield Footer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Act on a button."""
        if event.button.id == "configure":
            self.app.action_open_config()  # type: ignore[attr-defined]
        else:
            self.app.exit(0)

    def on_screen_resume(self) -> None:
        """Leave once a server has been configured (e.g. in the config screen)."""
        if self.runtime.server_configured:
            self.dismiss()
