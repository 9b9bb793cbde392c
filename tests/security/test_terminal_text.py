"""Issue 20, "The terminal shows text, never commands".

Outside text (model answers, reasoning, tool output, file names, server errors) carrying
terminal escapes must reach the screen as visible text. :func:`smith_tui.terminal_text.visible`
is the one function that makes it so; these tests check it directly, and then check the real
``smith`` in tmux: ``pipe-pane -o`` records every byte the app writes to its terminal while
the scripted model streams the sequences, and none of them may arrive raw. The control writes
the same bytes raw into a plain tmux pane and finds them in the recording, so the recording
does see such bytes.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.app import App
from textual.strip import Strip

from smith_tui.engine.transcript_text import transcript_text
from smith_tui.terminal_text import has_controls, visible
from smith_tui.widgets.activity import ToolCallRecord
from smith_tui.widgets.output_tail import OutputTail
from smith_tui.widgets.text_pager import TextPager
from smith_tui.widgets.textual_fixes import _STRIP_RENDER
from tests.support.llm_server import ScriptedLLMServer, error_body, http_error, text_reply
from tests.support.llm_server import tool_call as call
from tests.support.runtime import open_runtime
from tests.support.smith_cli import server_args, smith_env
from tests.support.tmux import TmuxPane, tmux_env

SECTION = "terminal"
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

#: How the tests start the real program: this interpreter, so any user's Python works.
SMITH_COMMAND = [sys.executable, "-m", "smith_tui.cli"]


@dataclass(frozen=True)
class Payload:
    """One hostile escape sequence tagged with where it comes from."""

    name: str
    raw: str
    """The characters the outside text carries."""
    leak: bytes
    """Bytes that would arrive in the terminal's input if the sequence got through."""
    shown: str
    """What the screen shows instead."""


def payloads(tag: str) -> list[Payload]:
    """The sequences of the issue, each with a marker unique to ``tag``."""
    mark = base64.b64encode(f"SMITH-{tag}".encode()).decode().rstrip("=")
    return [
        Payload(
            "OSC 52 (clipboard)",
            f"\x1b]52;c;{mark}\x07",
            f"\x1b]52;c;{mark}".encode(),
            f"␛]52;c;{mark}␇",
        ),
        Payload(
            "OSC 0 (title)",
            f"\x1b]0;PWNED-{tag}\x07",
            f"\x1b]0;PWNED-{tag}".encode(),
            f"␛]0;PWNED-{tag}␇",
        ),
        Payload(
            "kitty graphics APC",
            f"\x1b_Ga=T;{tag}\x1b\\",
            f"\x1b_Ga=T;{tag}".encode(),
            f"␛_Ga=T;{tag}␛\\",
        ),
        Payload("DCS", f"\x1bP1$r{tag}\x1b\\", f"\x1bP1$r{tag}".encode(), f"␛P1$r{tag}␛\\"),
        Payload("CSI 2J (clear)", f"\x1b[2J{tag}", f"\x1b[2J{tag}".encode(), f"␛[2J{tag}"),
        Payload("C1 CSI", f"\x9b2J{tag}", f"\x9b2J{tag}".encode(), f"\\x9b2J{tag}"),
    ]


def joined(tag: str, sep: str = "\n\n") -> str:
    """Every payload of ``tag``, one per paragraph."""
    return sep.join(p.raw for p in payloads(tag))


def leaked(tag: str, recording: bytes) -> list[str]:
    """The payloads of ``tag`` that arrived raw in ``recording``."""
    return [p.name for p in payloads(tag) if p.leak in recording]


# -- the function ---------------------------------------------------------------------------


def test_visible_shows_each_kind_of_control() -> None:
    assert visible("a\x1b[2Jb") == "a␛[2Jb"
    assert visible("\x07\x00\x08\x0b\x0c\x7f") == "␇␀␈␋␌␡"
    assert visible("\x9b2J\x85") == "\\x9b2J\\x85"
    assert visible("keep\ttabs\nand lines") == "keep\ttabs\nand lines"
    assert visible("windows\r\nline") == "windows\nline"
    assert visible("over\rwrite") == "over␍write"
    assert visible("lone \ud800 surrogate") == "lone \ufffd surrogate"
    assert visible("ünïcödé ✓ 日本 \xa0 ␛") == "ünïcödé ✓ 日本 \xa0 ␛"


def test_visible_returns_clean_text_itself() -> None:
    text = "nothing to do here\n" * 100
    assert visible(text) is text


def _is_control(char: str) -> bool:
    code = ord(char)
    return (code < 0x20 and char not in "\t\n") or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF


#: Mostly the characters that matter (C0, DEL, C1, surrogates), some of the rest of Unicode.
_CHARACTERS = st.one_of(
    st.characters(max_codepoint=0xA0),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=()),
    st.characters(exclude_categories=()),
)


@given(st.text(alphabet=_CHARACTERS))
def test_visible_leaves_no_control_character(text: str) -> None:
    out = visible(text)
    assert not [c for c in out if _is_control(c)]
    assert not has_controls(out)
    out.encode("utf-8")  # nothing a terminal's encoder would choke on or pass as a raw byte
    assert visible(out) == out
    # Nothing but control characters changes: the rest of the text is all there, in order.
    rest = iter(out)
    assert all(c in rest for c in text if not _is_control(c))


def test_visible_is_cheap_on_clean_text() -> None:
    text = "a streamed answer with `code` and words, " * 2000  # 80 KB
    start = time.perf_counter()
    for _ in range(20):
        visible(text)
    # Measured at about 0.2 ms per call; the bound only catches a lost fast path.
    assert (time.perf_counter() - start) / 20 < 0.02


# -- the real app in tmux -------------------------------------------------------------------


def _file_name(tag: str) -> str:
    """A file name carrying the payloads (no slash in any of them)."""
    return "f-" + "".join(p.raw for p in payloads(tag)) + ".txt"


def _printf_command(tag: str) -> str:
    """A bash command that prints the payloads of ``tag`` (its own text has no escape)."""
    octal = "".join(
        f"\\{ord(ch):03o}" if ord(ch) < 0x20 or ch in "\\'%" else ch for ch in joined(tag, "\n")
    )
    c1 = "\\302\\233"  # printf writes U+009B as its UTF-8 bytes
    return "printf '" + octal.replace("\\x9b", c1).replace("\x9b", c1) + "\\n'"


@dataclass
class Session:
    """What one scripted run of the real app recorded."""

    recording: bytes
    screens: dict[str, str]
    answer: str
    """The first answer as the model sent it (``/copy`` copied it)."""


def _wait(predicate, what: str, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(what)


@pytest.fixture(scope="module")
def tui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """The real ``smith`` in tmux, its raw output recorded, while the model streams every
    payload in its answer and reasoning, then runs bash that prints them (with a command that
    carries them) and reads a file whose name carries them, and the server fails with them."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    tmp = tmp_path_factory.mktemp("terminal")
    project = tmp / "project"
    project.mkdir()
    (project / _file_name("FILENAME")).write_text("hello\n")
    answer = "Answer:\n\n" + joined("ANSWER") + "\n\n```\n" + joined("FENCE", "\n") + "\n```\n"
    answer += "\nEnd of the answer.\n"
    command = _printf_command("TOOLOUT") + "; : '" + joined("COMMAND", " ") + "'"
    server = ScriptedLLMServer().start()
    server.enqueue(
        text_reply(answer, reasoning=joined("REASON"), chunk_chars=5),
        text_reply("Running.", tool_calls=[call("bash", {"command": command})]),
        text_reply("Reading.", tool_calls=[call("read", {"path": _file_name("FILENAME")})]),
        text_reply("second turn over"),
        http_error(400, error_body(400, "bad request " + joined("SERVERERR", " "))),
    )
    config = tmp / "config.json"
    config.write_text("{}", encoding="utf-8")
    recording = tmp / "raw.bin"
    line = " ".join(SMITH_COMMAND + server_args(server.base_url, tmp / "smith.db", config))
    env = tmux_env(tmp)
    pane = TmuxPane(f"{line}; echo SMITH-EXIT=$?; sleep 60", project, env, size=(160, 100))
    screens: dict[str, str] = {}
    try:
        subprocess.run(
            ["tmux", "pipe-pane", "-o", "-t", pane.name, f"cat >> {recording}"], check=True, env=env
        )
        pane.wait_for("Ask Smith")
        pane.type("show me")
        pane.send("Enter")
        pane.wait_for("End of the answer.")
        pane.wait_for("● idle")
        screens["answer"] = pane.wait_still()
        pane.type("/copy")
        pane.send("Enter")
        pane.wait_for("Copied the last answer")
        pane.type("run it")
        pane.send("Enter")
        screens["dialog"] = pane.wait_for("wants to run bash")
        pane.send("y")
        screens["turn"] = pane.wait_for("second turn over")
        pane.wait_for("● idle")
        pane.type("again")
        pane.send("Enter")
        screens["error"] = pane.wait_for("✗ error")
        # The pager shows what the transcript folds away: reasoning and tool results.
        # (The pane is tall enough for the pager to show the whole conversation.)
        pane.send("M-h")
        pane.wait_for("(reasoning)")
        screens["pager"] = pane.wait_still()
        pane.send("Escape")
        pane.wait_until_gone("(reasoning)")
        pane.send("C-q")
        pane.wait_for("SMITH-EXIT=0")
        # Stop the pipe, then wait for its reader to have written all it got.
        subprocess.run(["tmux", "pipe-pane", "-t", pane.name], check=True, env=env)
        _wait(lambda: b"SMITH-EXIT=0" in recording.read_bytes(), "the recording missed the end")
        yield Session(recording.read_bytes(), screens, answer)
    finally:
        pane.kill()
        server.stop()


SOURCES = {
    "ANSWER": ("answer", "the model's answer text"),
    "FENCE": ("answer", "a code block in the model's answer"),
    "REASON": ("pager", "the model's reasoning"),
    "COMMAND": ("dialog", "a bash command (the permission dialog and the tool row)"),
    "TOOLOUT": ("pager", "what a bash command prints"),
    "FILENAME": ("turn", "a file name"),
    "SERVERERR": ("error", "the server's error message"),
}


@needs_tmux
@pytest.mark.parametrize("tag", list(SOURCES))
@pytest.mark.attack(SECTION, "escape sequences in outside text reach the real terminal")
def test_no_escape_reaches_the_terminal(tui: Session, tag: str) -> None:
    assert tui.recording, "nothing was recorded"
    assert not leaked(tag, tui.recording), f"{SOURCES[tag][1]}: arrived raw"
    screen = tui.screens[SOURCES[tag][0]]
    shown = [p.name for p in payloads(tag) if p.shown in screen]
    assert shown, f"{SOURCES[tag][1]}: no payload is visible on screen:\n{screen}"


@needs_tmux
def test_smiths_own_osc52_copy_still_reaches_the_terminal(tui: Session) -> None:
    # /copy writes the answer to the clipboard with Smith's own OSC 52: that one stays.
    copy = b"\x1b]52;c;" + base64.b64encode(tui.answer.encode()) + b"\x07"
    assert copy in tui.recording


@needs_tmux
@pytest.mark.control(
    SECTION, "the same bytes written raw to a tmux pane arrive in pipe-pane's recording"
)
def test_raw_bytes_do_arrive_in_the_recording(tmp_path: Path) -> None:
    env = tmux_env(tmp_path)
    recording = tmp_path / "raw.bin"
    script = tmp_path / "raw.txt"
    script.write_bytes(joined("RAW", "\n").encode() + b"\nRAW-DONE\n")
    pane = TmuxPane("sh", tmp_path, env)
    try:
        subprocess.run(
            ["tmux", "pipe-pane", "-o", "-t", pane.name, f"cat >> {recording}"], check=True, env=env
        )
        pane.type(f"cat {script}")
        pane.send("Enter")
        _wait(
            lambda: recording.exists() and b"RAW-DONE\r\n" in recording.read_bytes(),
            "the raw bytes never reached the recording",
        )
    finally:
        pane.kill()
    assert leaked("RAW", recording.read_bytes()) == [p.name for p in payloads("RAW")]


# -- headless -------------------------------------------------------------------------------


def _headless(tmp_path: Path, server: ScriptedLLMServer, *extra: str) -> tuple[bytes, bytes]:
    """Run ``smith -p`` (this interpreter, the real entry point) and return stdout, stderr."""
    config = tmp_path / "config.json"
    config.write_text("{}", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    done = subprocess.run(
        [
            *SMITH_COMMAND,
            "-p",
            "go",
            *extra,
            *server_args(server.base_url, tmp_path / "db", config),
        ],
        cwd=project,
        env=smith_env(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    return done.stdout, done.stderr


def _headless_script(server: ScriptedLLMServer) -> None:
    command = "true '" + joined("HCOMMAND", " ") + "'"
    server.enqueue(
        text_reply(joined("HANSWER"), tool_calls=[call("bash", {"command": command})]),
        http_error(400, error_body(400, "bad request " + joined("HERROR", " "))),
    )


@pytest.mark.attack(SECTION, "escape sequences in smith -p text output (answer, tool line, error)")
def test_headless_text_output_shows_escapes(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    _headless_script(llm_server)
    stdout, stderr = _headless(tmp_path, llm_server)
    assert b"\x1b" not in stdout + stderr and b"\xc2\x9b" not in stdout + stderr
    assert not leaked("HANSWER", stdout)
    assert not leaked("HCOMMAND", stderr) and not leaked("HERROR", stderr)
    out, err = stdout.decode(), stderr.decode()
    assert all(p.shown in out for p in payloads("HANSWER")), out
    assert "→ bash true '␛]52;c;" in err, err
    assert f"bad request {payloads('HERROR')[0].shown}" in err, err


@pytest.mark.control(SECTION, "the same run's stream-json output carries the raw sequences")
def test_headless_stream_json_carries_the_raw_text(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    # The payloads reach smith intact (only the text printer shows them); JSON escapes them.
    _headless_script(llm_server)
    stdout, _ = _headless(tmp_path, llm_server, "--output-format", "stream-json")
    assert b"\x1b" not in stdout
    deltas = [json.loads(line) for line in stdout.decode().splitlines() if '"text_delta"' in line]
    text = "".join(event.get("text", "") for event in deltas)
    assert all(p.raw in text for p in payloads("HANSWER")), text


@pytest.mark.attack(SECTION, "escape sequences in a Markdown /export, read later with cat")
async def test_the_markdown_export_shows_escapes(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply(joined("EXPORT")))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    try:
        await runtime.run_turn("hello")
        markdown, as_json = tmp_path / "out.md", tmp_path / "out.json"
        assert (await runtime.submit(f"/export {markdown}")).ok
        assert (await runtime.submit(f"/export {as_json}")).ok
        messages = runtime.conversations.messages
    finally:
        await runtime.aclose()
    data = markdown.read_bytes()
    assert not leaked("EXPORT", data) and b"\x1b" not in data
    assert all(p.shown in data.decode() for p in payloads("EXPORT"))
    # JSON keeps the text exactly, escaped: no raw byte in the file, the payload when read.
    assert b"\x1b" not in as_json.read_bytes()
    assert joined("EXPORT") in json.loads(as_json.read_text())[-1]["content"]
    # Without the defence the Markdown carries the raw sequences (what `cat` would obey).
    assert leaked("EXPORT", transcript_text(messages, markdown=True).encode()) == [
        p.name for p in payloads("EXPORT")
    ]


@pytest.mark.attack(SECTION, "escape sequences in the transcript pager's text")
async def test_the_pager_shows_escapes() -> None:
    messages = [
        {"role": "assistant", "content": joined("PAGER"), "reasoning": joined("PREASON")},
        {"role": "tool", "name": "bash", "tool_call_id": "c1", "content": "x\r\ny\rz\x9b"},
    ]
    app = App[None]()
    async with app.run_test() as pilot:
        pager = TextPager(transcript_text(messages))
        await app.mount(pager)
        await pilot.pause()
        assert not has_controls(pager.text)
        for tag in ("PAGER", "PREASON"):
            assert all(p.shown in pager.text for p in payloads(tag)), pager.text
        assert "x\ny␍z\\x9b" in pager.text
        drawn = "".join(strip.render(Console()) for strip in map(pager.render_line, range(20)))
        assert "␛]0;PWNED-PREASON␇" in drawn and not leaked("PREASON", drawn.encode())


@pytest.mark.attack(SECTION, "a widget that forgets to show outside text still draws no escape")
def test_the_last_line_drops_what_a_widget_forgot() -> None:
    strip = Strip([Segment("plain "), Segment(joined("FORGOT", " "), RichStyle(bold=True))])
    drawn = strip.render(Console()).encode()
    assert not leaked("FORGOT", drawn) and "\x1b]" not in drawn.decode()
    assert b"]0;PWNED-FORGOT" in drawn  # the text stays, without its controls
    assert strip.render(Console()) == drawn.decode()
    clean = Strip([Segment("ordinary text", RichStyle(bold=True))])
    assert clean.render(Console()) == _STRIP_RENDER(clean, Console())


@pytest.mark.control(SECTION, "Textual's own Strip.render writes a segment's escapes raw")
def test_textual_alone_writes_escapes_raw() -> None:
    strip = Strip([Segment("plain "), Segment(joined("FORGOT", " "), RichStyle(bold=True))])
    drawn = _STRIP_RENDER(strip, Console()).encode()
    assert leaked("FORGOT", drawn) == [p.name for p in payloads("FORGOT")]


@pytest.mark.attack(SECTION, "escape sequences in a running tool's live output (the tools pane)")
def test_the_live_output_tail_drops_escapes() -> None:
    # The pane drops escape sequences whole (colour codes of ordinary output are noise there).
    record = ToolCallRecord(("t", "c"), "c", "bash", "smith", None, "", 0.0, output=OutputTail(10))
    record.add_output(joined("TAIL", "\n") + "\nprogress 10%\rprogress 99%\n")
    lines = record.tail_lines(10)
    assert not [line for line in lines if has_controls(line)], lines
    assert lines == ["", "", "Ga=T;TAIL", "1$rTAIL", "TAIL", "2JTAIL", "progress 99%"]


# -- notifications (issue 24) ------------------------------------------------------------------


class _Unfocused:
    """A stand-in app whose terminal does not have the focus (the notifier notifies)."""

    app_focus = False


def _notification_bytes_for(outside: str, env: dict[str, str]) -> str:
    from smith_tui.app.terminal_notify import Notifier
    from smith_tui.config.notifications import NotificationsConfig

    written: list[str] = []
    config = NotificationsConfig(after_s=0)
    notifier = Notifier(
        _Unfocused(), lambda: config, title=lambda: outside, env=env, write=written.append
    )
    notifier.passthrough = True
    notifier.attention("permission", f"{outside} asks for permission")  # a tool's name
    notifier.follow([_Event("turn_started"), _Event("turn_finished")])  # the title
    assert len(written) == 2
    return "".join(written)


@dataclass(frozen=True)
class _Event:
    type: str
    job_id: str | None = None
    stop_reason: str = "completed"


@pytest.mark.parametrize(
    "env",
    [{"TERM": "xterm-kitty"}, {"TERM": "foot"}, {"TMUX": "/tmp/t,1,0", "KITTY_WINDOW_ID": "1"}],
    ids=["osc9", "osc777", "tmux-passthrough"],
)
@pytest.mark.attack(SECTION, "escape sequences in a notification's tool name or title")
def test_a_notification_carries_outside_text_only_as_text(env: dict[str, str]) -> None:
    data = _notification_bytes_for(joined("NOTE", " "), env)
    assert not leaked("NOTE", data.encode()), data
    # Only the notification's own framing is control: ESC ] … BEL, inside tmux wrapped as
    # ESC P tmux; ESC ESC ] … BEL ESC \ (four escapes).
    assert {c for c in data if has_controls(c)} <= {"\x1b", "\x07"}, repr(data)
    assert data.count("\x07") == 2, repr(data)
    assert data.count("\x1b") == 2 * (4 if "TMUX" in env else 1), repr(data)


@pytest.mark.control(SECTION, "the same text put into an OSC 9 unsanitised carries the sequences")
def test_control_a_naive_notification_leaks_the_sequences() -> None:
    naive = f"\x1b]9;Smith: {joined('NOTE', ' ')} asks for permission\x07"
    assert leaked("NOTE", naive.encode()) == [p.name for p in payloads("NOTE")]


def _hostile_history(tmp_path: Path) -> Any:
    """A runtime whose store holds a conversation with escapes in its title and messages, and
    a fork of it."""
    from smith_tui.engine import forks
    from tests.support.screen_host import offline_runtime

    runtime = offline_runtime(tmp_path)
    title = payloads("HTITLE")[1].raw + "talk"
    store = runtime.store
    source = store.conversations.create(runtime.project_id, title)
    store.conversations.append_messages(
        source, [{"role": "user", "content": "needle " + payloads("HMSG")[4].raw}]
    )
    forks.fork_conversation(store, source)
    return runtime


@pytest.mark.attack(
    SECTION, "escape sequences in conversation titles and messages on the history screen"
)
async def test_the_history_screen_shows_escapes(tmp_path: Path) -> None:
    from smith_tui.app.screens.history_screen import HistoryScreen
    from tests.support.pilot import screen_text, wait_for_history_hits, wait_until
    from tests.support.screen_host import ScreenHost

    runtime = _hostile_history(tmp_path)
    async with ScreenHost(lambda: HistoryScreen(runtime)).run_test(size=(160, 45)) as pilot:
        app = pilot.app
        await wait_until(pilot, lambda: bool(getattr(app.screen, "rows", None)), "the rows")
        text = screen_text(app)
        shown = payloads("HTITLE")[1].shown + "talk"
        # The source and, under it, its fork (the fork tree): both titles as visible text.
        assert text.count(shown) == 2 and "↳ " + shown + " (fork)" in text
        assert not has_controls(text)
        app.screen.query_one("#history-search").value = "needle"
        await wait_for_history_hits(pilot, "needle")
        text = screen_text(app)
        assert payloads("HMSG")[4].shown in text and shown in text  # message hits, title
        assert not has_controls(text)
    await runtime.aclose()


@pytest.mark.control(SECTION, "the same title drawn as plain Rich text writes its escape raw")
def test_control_a_naive_title_carries_the_escape(tmp_path: Path) -> None:
    import io

    from rich.text import Text

    runtime = _hostile_history(tmp_path)
    stored = runtime.store.conversations.list_for_project(runtime.project_id)
    console = Console(file=io.StringIO(), force_terminal=True, width=160)
    for conv in stored:
        console.print(Text(conv.title or ""))
    drawn = console.file.getvalue().encode()
    assert payloads("HTITLE")[1].leak in drawn
    runtime.store.close()
