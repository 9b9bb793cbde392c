"""``mcp_servers`` in the configuration: validation, the config screen, /config show and get."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from smith_tui.app.screens.config_rows import HIDDEN
from smith_tui.app.screens.config_screen import ConfigScreen
from smith_tui.config import ConfigError
from smith_tui.config.validation import check_config
from tests.support.screen_host import SIZE, ScreenHost, offline_runtime

SERVERS = {
    "gh": {
        "command": "github-mcp",
        "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_literal_token_1234", "LOG": "debug"},
    },
    "web": {
        "url": "https://mcp.example.com/mcp",
        "headers": {"X-Team": "team-secret-abc"},
        "headers_env": {"Authorization": "WEB_MCP_TOKEN"},
        "roles": ["orchestrator"],
    },
}


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ({}, "mcp_servers.x: give either command"),
        ({"command": "a", "url": "http://h"}, "not both"),
        ({"url": "http://h", "args": ["-v"]}, "args, env and cwd are for command servers"),
        ({"command": "a", "headers": {"A": "b"}}, "headers are for url servers"),
        ({"command": "a", "roles": ["boss"]}, "mcp_servers.x.roles[0]: must be one of"),
        ({"command": "a", "timeout_s": 0}, "mcp_servers.x.timeout_s: must be greater than 0"),
        ({"url": "ftp://h"}, "mcp_servers.x.url: must be an http:// or https:// URL"),
        ({"command": "a", "env": {"not a name": "v"}}, "NAME of an environment variable"),
    ],
)
def test_a_bad_server_entry_says_what_to_fix(server: dict, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        check_config({"mcp_servers": {"x": server}})
    assert message in str(caught.value)


def test_a_server_name_that_cannot_be_part_of_a_tool_name_is_refused() -> None:
    with pytest.raises(ConfigError) as caught:
        check_config({"mcp_servers": {"a__b": {"command": "x"}}})
    assert "mcp_servers: MCP server names use letters, digits" in str(caught.value)
    assert "'a__b'" in str(caught.value)


def test_defaults_offer_tools_to_direct_worker_and_explorer() -> None:
    server = check_config({"mcp_servers": {"t": {"command": "x"}}}).mcp_servers["t"]
    assert server.roles == ["direct", "worker", "explorer"]
    assert server.enabled and server.timeout_s == 30


async def test_the_config_screen_shows_each_server_with_env_and_headers_hidden(
    tmp_path: Path,
) -> None:
    runtime = offline_runtime(tmp_path, config={"mcp_servers": SERVERS})
    app = ScreenHost(lambda: ConfigScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ConfigScreen)
        rows = {row.path: row for row in screen.rows}
        gh, web = rows["mcp_servers.gh"], rows["mcp_servers.web"]
        assert gh.value["env"] == {"GITHUB_PERSONAL_ACCESS_TOKEN": HIDDEN, "LOG": HIDDEN}
        assert gh.value["command"] == "github-mcp"
        assert web.value["headers"] == {"X-Team": HIDDEN}
        assert web.value["headers_env"]["Authorization"] == HIDDEN  # a secret-looking name
        assert not gh.editable and not rows["mcp_servers"].editable
        everything = repr([row.value for row in screen.rows])
        assert "ghp_literal_token_1234" not in everything
        assert "team-secret-abc" not in everything

        table = screen.query_one("#config-table", DataTable)
        table.move_cursor(row=[row.path for row in screen.rows].index("mcp_servers.gh"))
        await pilot.pause()
        about = str(screen.query_one("#config-about", Static).render())
        assert "enter: edit every server as JSON" in about  # the MCP editor, not the value box
        assert "/mcp restart" in about
    await runtime.aclose()


async def test_config_show_and_get_hide_mcp_env_and_header_values(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path, config={"mcp_servers": SERVERS})
    try:
        shown = await runtime.submit("/config show")
        got = await runtime.submit("/config get mcp_servers.gh.env")
        url = await runtime.submit("/config get mcp_servers.web.url")
    finally:
        await runtime.aclose()
    assert "ghp_literal_token_1234" not in shown.text and "team-secret-abc" not in shown.text
    assert '"GITHUB_PERSONAL_ACCESS_TOKEN": "***"' in shown.text
    assert got.data["value"] == {"GITHUB_PERSONAL_ACCESS_TOKEN": "***", "LOG": "***"}
    assert url.data["value"] == "https://mcp.example.com/mcp"
