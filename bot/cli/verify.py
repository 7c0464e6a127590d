"""``byline verify``: check one quote, or a fact-checker's list of them, hooked into ``bot/cli/main.py``.

``byline verify "TEXT" [--speaker NAME] [--json]`` prints one verdict. ``byline verify --batch
FILE --json`` reads one ``{"text": …, "speaker": …}`` object per line (``-`` is standard input)
and prints one verdict object per line, in order, each with the input's ``id`` when it had one;
a line that is not such an object gets ``{"line": N, "error": …}`` instead, and the rest go on.
The exit status is 1 when any line was bad, else 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from bot.asking import clean_input
from bot.commands.verify_render import plain_text
from bot.output import print_error, print_json
from bot.service import Service
from retrieval.errors import BylineError
from retrieval.features.quote_check import check_quote
from retrieval.library import Library

USAGE = 'Give the quote to check, e.g. byline verify "We were the better team" --speaker Mourinho'


def add_parser(commands: argparse._SubParsersAction) -> None:
    verify = commands.add_parser(
        "verify", help="is this quote real? verbatim, altered, said by someone else (misattributed), or not found"
    )
    verify.add_argument("text", nargs="?", help="the quote as you have it, e.g. \"Mourinho: 'We were robbed'\"")
    verify.add_argument("--speaker", default="", help="who it is said to be by (default: whoever the article says)")
    verify.add_argument("--batch", type=Path, help='a file of JSON lines {"text": …, "speaker": …} (\'-\': stdin)')
    verify.add_argument("--json", action="store_true", help="print JSON (one object per line with --batch)")


def run(service: Service, args: argparse.Namespace) -> int:
    if args.batch is not None:
        if args.text:
            print_error("Give either a quote or --batch FILE, not both.", args.json)
            return 2
        return run_batch(service.library, args.batch, args.json)
    if not args.text or not args.text.strip():
        print_error(
            'Give the quote to check, e.g. byline verify "We were the better team" --speaker Mourinho', args.json
        )
        return 2
    try:
        check = check_quote(service.library, clean_input(args.text), clean_input(args.speaker))
    except BylineError as error:
        print_error(str(error), args.json)
        return 1
    if args.json:
        print_json(check.to_json())
    else:
        print(plain_text(check))
    return 0


def run_batch(library: Library, path: Path, as_json: bool, out: TextIO | None = None) -> int:
    """Check every line of ``path``; one verdict (or error) per line, flushed as it is decided."""
    out = out or sys.stdout
    bad = 0
    try:
        for number, line in _lines(path):
            result = _check_line(library, number, line)
            bad += "error" in result
            if as_json:
                out.write(json.dumps(result, ensure_ascii=False) + "\n")
            else:
                out.write(_plain(result) + "\n\n")
            out.flush()
    except OSError as error:
        print_error(f"Cannot read {path}: {error.strerror or error}", as_json)
        return 2
    return 1 if bad else 0


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    handle = sys.stdin if str(path) == "-" else path.open(encoding="utf-8", errors="replace")
    try:
        for number, line in enumerate(handle, 1):
            if line.strip():  # blank lines are spacing, not quotes
                yield number, line
    finally:
        if handle is not sys.stdin:
            handle.close()


def _check_line(library: Library, number: int, line: str) -> dict[str, Any]:
    """The verdict for one line, or ``{"line": N, "error": …}`` saying what is wrong with it."""
    try:
        item = json.loads(line)
    except json.JSONDecodeError as error:
        return {"line": number, "error": f"not JSON ({error.msg})"}
    if not isinstance(item, dict):
        return {"line": number, "error": 'not an object: give {"text": "…", "speaker": "…"}'}
    text, speaker = item.get("text"), item.get("speaker") or ""
    if not isinstance(text, str) or not text.strip():
        return _with_id(item, {"line": number, "error": 'no "text": give the quote as a string'})
    if not isinstance(speaker, str):
        return _with_id(item, {"line": number, "error": '"speaker" must be a string (or null)'})
    try:
        check = check_quote(library, clean_input(text), clean_input(speaker))
    except BylineError as error:
        return _with_id(item, {"line": number, "error": str(error)})
    return _with_id(item, {"line": number, **check.to_json()})


def _with_id(item: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    if "id" in item and isinstance(item["id"], (str, int)):
        return {"id": item["id"], **result}
    return result


def _plain(result: dict[str, Any]) -> str:
    head = f"line {result['line']}" + (f" ({result['id']})" if "id" in result else "")
    if "error" in result:
        return f"{head}: error: {result['error']}"
    where = result["citation"]
    text = f"“{result['text']}”" if result["text"] else "—"
    cited = f" — {where['title']}, ¶{where['paragraph']}" if where else ""
    speaker = f" ({result['speaker']})" if result["speaker"] else ""
    return f"{head}: {result['verdict']}{speaker}: {text}{cited}"
