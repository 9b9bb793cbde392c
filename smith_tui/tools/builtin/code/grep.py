"""``code_grep``: ranked content search over the project with ``rg --json``.

rg writes each file's results as one contiguous block (``begin`` … ``end``),
so the output is consumed block by block: the match count comes from the
``end`` record, definition lines are counted with one regular expression over
the block, and only the few lines that can be shown are decoded as JSON. That
keeps the Python side cheap even when a pattern matches hundreds of thousands
of lines.

Nobody reads hundreds of thousands of matches, and rg's JSON for them costs
more than the search itself, so the search is bounded twice: rg stops counting
a file at ``FILE_MATCH_CAP`` matching lines (``--max-count``), and once
``MATCH_CAP`` matching lines have been read and another file matches, rg's
process group is killed and the result says that it is partial.
"""

from __future__ import annotations

import base64
import contextlib
import heapq
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema

from smith_tui.tools.args import DEFAULT_CODE_MAX_CHARS, Flag, Name, NotBool, max_output_chars
from smith_tui.tools.builtin.code.render import clip_line, fit_blocks, plural
from smith_tui.tools.builtin.code.rg import COMMON_FLAGS, find_rg, rg_env, strip_dot
from smith_tui.tools.files import project_root, resolve_in_project
from smith_tui.tools.process import spawn
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

NAME = "code_grep"
MATCH_CAP = 20_000
"""The search stops once this many matching lines have been read and more files match."""
FILE_MATCH_CAP = 1_000
"""rg stops counting a file at this many matching lines (at least the largest max_results)."""

_DEFINITION_LINES_KEPT = 5
_DEFINITION_SCAN_BYTES = 1 << 20  # per file: enough to rank, bounded for huge results
_HEAD_BYTES = 256 * 1024  # per file: raw records kept for display

# The text of a record that starts with a definition keyword (after indentation
# and modifiers). It runs over raw JSON bytes (hence the escaped tab) and
# starts with a literal, so the regex engine can skip between records quickly;
# whether the record is a match or a context line is checked afterwards.
_DEFINITION = re.compile(
    rb'"lines":\{"text":"(?:\\t| )*+'
    rb"(?:(?:export|default|pub(?:\([^)]*\))?|async|static|local|public|private|protected|"
    rb"abstract|inline|unsafe|extern|const|declare|final|virtual) +)*+"
    rb"(?:def|class|function|fn|func|struct|enum|trait|interface|impl|union|typedef|"
    rb"namespace|module|macro_rules!|type +\w+ *=|#define)\b"
)
_COUNTS = re.compile(rb'"matched_lines":(\d+)')


@dataclass
class _FileHits:
    """What rg found in one file."""

    path: str
    matches: int = 0
    definitions: int = 0  # counted up to _DEFINITION_LINES_KEPT
    head: bytes = b""  # the first records, raw JSON lines (the last may be cut short)
    head_complete: bool = True  # whether ``head`` holds every record of the file
    definition_records: list[bytes] = field(default_factory=list)


def _text(obj: dict[str, Any]) -> str:
    """Decode rg's ``{"text": …}`` / ``{"bytes": base64}`` value."""
    text = obj.get("text")
    if isinstance(text, str):
        return text
    return base64.b64decode(obj.get("bytes", "")).decode("utf-8", "replace")


class _Held:
    """Heap entry ordering files worst-first, so the worst held file is at the top."""

    __slots__ = ("hits", "key")

    def __init__(self, key: tuple[int, int, int, int, str], hits: _FileHits) -> None:
        self.key = key
        self.hits = hits

    def __lt__(self, other: _Held) -> bool:
        return self.key > other.key


class _BlockReader:
    """Splits rg's JSON stream into per-file blocks and summarises each.

    Every file is counted, but only the ``keep_files`` best-ranked files seen so
    far hold copies of their records: a file outside that set can never be
    shown, so its records are not even copied. Memory and copying stay bounded
    however much rg finds. Once ``match_cap`` matching lines have been counted,
    the next file's ``begin`` record sets ``stopped`` and nothing more is read.
    """

    def __init__(self, keep_records: int, keep_files: int, match_cap: int) -> None:
        self.keep_records = keep_records
        self.keep_files = keep_files
        self.match_cap = match_cap
        self.files: list[_FileHits] = []
        self.matches = 0
        self.stopped = False
        self._held: list[_Held] = []  # heap, worst held file first
        self._buffer = bytearray()
        self._resume = 0

    def feed(self, chunk: bytes) -> bool:
        """Consume the next piece of rg's output; False once the match cap is reached."""
        buffer = self._buffer
        buffer.extend(chunk)
        pos = 0
        resume = self._resume
        while True:
            begin = buffer.find(b'{"type":"begin"', pos)
            if begin < 0:
                pos = buffer.rfind(b"\n") + 1  # keep a partial last record
                resume = 0
                break
            if self.matches >= self.match_cap:
                # Checked at a begin record, so "stopped" means more files match.
                self.stopped = True
                buffer.clear()
                return False
            end = buffer.find(b'\n{"type":"end"', max(begin, resume))
            end_end = buffer.find(b"\n", end + 1) if end >= 0 else -1
            if end_end < 0:
                # Incomplete block: keep it, and next time search for its end
                # from about here instead of rescanning the whole block.
                resume = end - begin if end >= 0 else max(0, len(buffer) - begin - 16)
                pos = begin
                break
            self._block(buffer, begin, buffer.find(b"\n", begin), end)
            pos = end_end + 1
            resume = 0
        del buffer[:pos]
        self._resume = resume
        return True

    def _block(self, buffer: bytearray, begin: int, body: int, end: int) -> None:
        """Summarise one file from offsets into ``buffer``.

        ``begin`` starts the begin record, ``body`` is the newline ending it, and
        ``end`` is the newline in front of the end record.
        """
        hits = _FileHits(_begin_path(buffer[begin:body]))
        counts = _COUNTS.search(buffer, end + 1, buffer.find(b"\n", end + 1))
        hits.matches = int(counts.group(1)) if counts else 0
        self.matches += hits.matches
        definitions: list[int] = []
        scan_end = min(end + 1, body + _DEFINITION_SCAN_BYTES)
        for found in _DEFINITION.finditer(buffer, body, scan_end):
            start = buffer.rfind(b"\n", body, found.start()) + 1
            if buffer.startswith(b'{"type":"match"', start):  # not a context line
                definitions.append(start)
                if len(definitions) >= _DEFINITION_LINES_KEPT:
                    break
        hits.definitions = len(definitions)
        self.files.append(hits)
        key = _rank_key(hits)
        held = self._held
        if len(held) >= self.keep_files and not key < held[0].key:
            return
        hits.definition_records = [bytes(buffer[s : buffer.find(b"\n", s)]) for s in definitions]
        head_end = min(end, body + 1 + _HEAD_BYTES)
        hits.head = bytes(buffer[body + 1 : head_end])
        hits.head_complete = head_end == end
        if len(held) < self.keep_files:
            heapq.heappush(held, _Held(key, hits))
        else:
            dropped = heapq.heapreplace(held, _Held(key, hits)).hits
            dropped.head = b""
            dropped.definition_records = []


_BEGIN = re.compile(rb'\{"type":"begin","data":\{"path":\{"text":"([^"\\]*)"\}\}\}')


def _begin_path(record: bytes | bytearray) -> str:
    """The path of a ``begin`` record (fast path for paths without escapes)."""
    plain = _BEGIN.fullmatch(record)
    if plain is not None:
        return strip_dot(plain.group(1).decode("utf-8", "replace"))
    return strip_dot(_text(json.loads(record)["data"]["path"]))


def _rank_key(hits: _FileHits) -> tuple[int, int, int, int, str]:
    """Files with definitions first, then more matches, then shorter paths."""
    return (
        -min(hits.definitions, 1),
        -hits.matches,
        hits.path.count("/"),
        len(hits.path),
        hits.path,
    )


def _counted(count: int, capped: bool, noun: str = "matching line") -> str:
    """``"3 matching lines"``, or ``"1000+ matching lines"`` when counting stopped there."""
    return f"{count}+ {noun}s" if capped else plural(count, noun)


def _render_file(
    hits: _FileHits, max_matches: int, context: int, keep_records: int, file_cap: int
) -> tuple[str, int]:
    """One file's block: header and numbered lines; returns it and the matches shown."""
    records: dict[int, tuple[bool, str]] = {}
    shown_matches = 0
    head = hits.head.split(b"\n", keep_records)[:keep_records]
    if not hits.head_complete and len(head) < keep_records:
        head = head[:-1]  # the cut-off last line
    for raw in hits.definition_records + head:
        if not raw.startswith(b'{"type":"match"') and not raw.startswith(b'{"type":"context"'):
            continue
        record = json.loads(raw)
        data = record["data"]
        number = data.get("line_number")
        if number is None or number in records:
            continue
        is_match = record["type"] == "match"
        if is_match:
            if shown_matches >= max_matches:
                continue
            shown_matches += 1
        records[number] = (is_match, clip_line(_text(data["lines"])))
    capped = hits.matches >= file_cap
    lines = [f"{hits.path} ({_counted(hits.matches, capped)})"]
    previous = None
    for number in sorted(records):
        is_match, text = records[number]
        if context and previous is not None and number > previous + 1:
            lines.append("  --")
        mark = ":" if is_match else "-"
        lines.append(f"  {number}{mark} {text}")
        previous = number
    if hits.matches > shown_matches:
        more = hits.matches - shown_matches
        at_least = "at least " if capped else ""
        lines.append(f"  [… {at_least}{more} more matching lines in this file]")
    return "\n".join(lines), shown_matches


def _globs(value: Any) -> Any:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values:
        raise ValueError("must be a string or a list of strings such as '*.py'")
    for item in values:
        if not isinstance(item, str) or not item.strip() or "\x00" in item:
            raise ValueError(
                f"entries must be non-empty strings such as '*.py' or '!tests/**', got {item!r}"
            )
    return values


class Args(ToolArgs):
    """Arguments of ``code_grep``."""

    pattern: Annotated[Name, Field(max_length=1000)] = Field(
        description="Rust-regex pattern (or literal text with fixed_strings)."
    )
    path: Annotated[Name, Field(max_length=1000)] | None = Field(
        None,
        description="File or folder to search, relative to the project root "
        "(default: the whole project).",
    )
    glob: Annotated[
        list[str],
        BeforeValidator(_globs),
        WithJsonSchema(
            {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
        ),
    ] = Field(
        [],
        description="Only search files matching this glob, e.g. '*.py' or "
        "'src/**/*.ts'; prefix with '!' to exclude, e.g. '!tests/**'.",
    )
    case_insensitive: Flag = Field(False, description="Match regardless of case (default false).")
    fixed_strings: Flag = Field(
        False, description="Treat pattern as literal text, not a regex (default false)."
    )
    context: Annotated[int, Field(ge=0, le=10), NotBool] = Field(
        0, description="Lines of context before and after each match (default 0)."
    )
    max_results: Annotated[int, Field(ge=1, le=1000), NotBool] = Field(
        50, description="Most matching lines to show (default 50)."
    )


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Search file contents and return ranked, grouped matches."""
    return await search(args, ctx)


async def search(
    args: Args,
    ctx: ToolContext,
    *,
    match_cap: int = MATCH_CAP,
    file_match_cap: int = FILE_MATCH_CAP,
) -> ToolOutput:
    """The ``code_grep`` handler with its caps as parameters (tests lower them).

    ``match_cap``: stop reading rg's output (and kill rg) once this many
    matching lines were read and another file matches. ``file_match_cap``: rg's
    ``--max-count``, the matching lines counted per file.
    """
    if match_cap < 1 or file_match_cap < 1:
        raise ValueError("match_cap and file_match_cap must be at least 1")
    pattern = args.pattern
    root = project_root(ctx)
    _, rel = resolve_in_project(NAME, root, args.path)
    context, limit = args.context, args.max_results
    reader = _BlockReader(
        keep_records=limit * (2 * context + 1) + 2 * context, keep_files=limit, match_cap=match_cap
    )
    await _run_rg(_rg_argv(args, rel, file_match_cap), root, ctx, reader)

    where = "the project" if rel == "." else rel
    if not reader.files:
        return ToolOutput(
            f"No matches for {pattern!r} in {where}.",
            metadata={"matches": 0, "files": 0, "complete": True},
        )
    ranked = sorted(reader.files, key=_rank_key)
    total = reader.matches
    capped_files = sum(1 for f in ranked if f.matches >= file_match_cap)
    blocks, shown_matches = _render_files(ranked, limit, context, reader, file_match_cap)
    partial = reader.stopped or capped_files > 0
    header = (
        f"{_counted(total, partial)} for {pattern!r} in "
        f"{_counted(len(ranked), reader.stopped, 'file')} under {where}"
    )
    if len(blocks) < len(ranked) or shown_matches < total:
        header += (
            f" (showing {shown_matches} in the top {len(blocks)} files; "
            "files with definitions and more matches first)"
        )
    header += _cap_notes(reader, len(ranked), capped_files, match_cap, file_match_cap)
    text, shown_files = fit_blocks(
        header,
        blocks,
        max_output_chars(ctx, NAME, DEFAULT_CODE_MAX_CHARS),
        unit="files",
        hint="narrow 'path' or 'glob'",
    )
    return ToolOutput(
        text,
        metadata={
            "matches": total,
            "files": len(ranked),
            "files_shown": shown_files,
            "complete": not partial,
        },
    )


def _render_files(
    ranked: list[_FileHits], limit: int, context: int, reader: _BlockReader, file_match_cap: int
) -> tuple[list[str], int]:
    """The blocks of the best files, up to ``limit`` matching lines shared among the top
    few; the blocks and how many matches they show."""
    per_file = max(10, limit // max(1, min(len(ranked), 5)))
    blocks: list[str] = []
    shown_matches = 0
    for hits in ranked:
        if shown_matches >= limit:
            break
        block, count = _render_file(
            hits, min(per_file, limit - shown_matches), context, reader.keep_records, file_match_cap
        )
        blocks.append(block)
        shown_matches += count
    return blocks, shown_matches


def _rg_argv(args: Args, rel: str, file_match_cap: int) -> list[str]:
    """rg's command line for the search ``args`` ask for, beneath ``rel``."""
    argv = [find_rg(), *COMMON_FLAGS, "--json", f"--max-count={file_match_cap}"]
    argv.append("--ignore-case" if args.case_insensitive else "--case-sensitive")
    if args.fixed_strings:
        argv.append("--fixed-strings")
    if args.context:
        argv.append(f"--context={args.context}")
    argv += [f"--glob={g}" for g in args.glob]
    argv += ["--regexp", args.pattern, "--", rel]
    return argv


async def _run_rg(argv: list[str], root: Path, ctx: ToolContext, reader: _BlockReader) -> None:
    """Feed rg's output to ``reader`` until it has enough (then rg is killed); rg's own
    error, when it found nothing, is a tool error."""
    async with spawn(argv, cwd=root, cancel=ctx.cancel, env=rg_env(), time_limit=120) as rg:
        async with contextlib.aclosing(rg.chunks()) as chunks:
            async for chunk in chunks:
                if not reader.feed(chunk):
                    break
        if reader.stopped:
            rg.kill()
            # Read to EOF: the pipe must close before the exit status is reaped.
            async for _ in rg.chunks():
                pass
        returncode, stderr = await rg.finish()
    if returncode == 2 and not reader.files:
        message = stderr.decode("utf-8", "replace").strip() or "rg failed"
        raise ToolError(f"{NAME}: {message}", code="rg_failed")


def _cap_notes(
    reader: _BlockReader, files: int, capped_files: int, match_cap: int, file_match_cap: int
) -> str:
    """The header's notes on a search the caps cut short (empty when none did)."""
    notes = ""
    if reader.stopped:
        notes += (
            f"\n[Search stopped after {plural(reader.matches, 'matching line')} in "
            f"{plural(files, 'file')} (limit {match_cap}): more files match, and which "
            "files were searched first depends on rg's parallel walk, so these counts and "
            "this ranking cover only part of the search. Narrow the pattern, or pass 'path' "
            "or 'glob', for complete results.]"
        )
    if capped_files:
        notes += (
            f"\n[{plural(capped_files, 'file')} reached {file_match_cap} matching lines, where "
            f"counting stops per file (shown as '{file_match_cap}+'), so the total is a lower "
            "bound.]"
        )
    return notes


TOOL = ToolSpec(
    name=NAME,
    description=(
        "Search file contents in the project with ripgrep (regular expressions by default). "
        "Honours .gitignore and skips hidden files and .git. Results are grouped by file "
        "with line numbers ('12:' matching line, '11-' context line), ranked with files "
        "that define something matching first, then files with more matches, then shorter "
        "paths, and cut to a character budget. Counting stops at "
        f"{FILE_MATCH_CAP} matching lines per file, and the search stops after about "
        f"{MATCH_CAP} matching lines in all (the result says so: then narrow the pattern, "
        "path or glob). Use it to find where a name is used; use code_symbols to find where "
        "it is defined."
    ),
    args=Args,
    handler=handler,
)
