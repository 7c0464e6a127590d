"""How ``byline`` commands print: JSON for programs, one error shape, and quiet pipes.

Every ``--json`` command prints one JSON document on stdout; an error under ``--json`` is
``{"error": "..."}`` on stdout too (so ``| jq`` sees it) and a non-zero exit status. Without
``--json`` an error is one ``byline: ...`` line on stderr.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

from retrieval.answering.question import parse
from retrieval.models import Answer


def print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def print_error(message: str, as_json: bool = False) -> None:
    if as_json:
        print(json.dumps({"error": message}, ensure_ascii=False))
    else:
        print(f"byline: {message}", file=sys.stderr)


def plural(count: int, word: str, many: str = "") -> str:
    """``1 quote``, ``2 quotes``, ``1,024 stories`` (``many`` for irregular plurals)."""
    return f"{count:,} {word if count == 1 else (many or word + 's')}"


def read_as(answer: Answer) -> str:
    """``Read as: …`` when the question was rewritten from the conversation ("and about spam?"
    after "What did Bill Gates say?"), so the user sees whose words and which topic were used;
    "" for a question that was answered as asked."""
    standalone = answer.standalone_question
    if not standalone or parse(answer.question).standalone == standalone:
        return ""
    return f"(Read as: {standalone})"


def pipe_safe(run: Callable[[], int]) -> int:
    """Run a command whose output may go to a reader that stops early (``| head -1``).

    When the reader closes the pipe, writing raises BrokenPipeError, and Python would print a
    traceback, and another at exit when it flushes stdout again. The rest of the output goes
    nowhere instead, as with any Unix tool, and the exit status is 1 (what Python's own docs
    suggest for EPIPE)."""
    try:
        code = run()
        sys.stdout.flush()  # a full buffer is written here, where the error can be caught
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
