"""``byline eval``: the answer-quality evaluation (``bench/eval.py``) from the main command.

The harness lives in ``bench/`` beside the packages, not inside them (it needs the project's
fixtures and the shared data sets), so this command works from a checkout of the project.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent.parent


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``eval``; its options are the harness's own (see ``byline eval --help``).

    The harness parses them, so ``byline eval ARGS`` takes exactly what ``python -m bench.eval
    ARGS`` does. ``prefix_chars="+"`` makes this subparser see ``--data`` as a plain word to pass
    on: with the usual "-" argparse would try to match it here, fail, and exit 2.
    """
    parser = commands.add_parser(
        "eval",
        help="measure answer quality on SQuAD, out-of-corpus questions and quotes (options: byline eval --help)",
        prefix_chars="+",
        add_help=False,
    )
    parser.add_argument("eval_args", nargs=argparse.REMAINDER, help="options for bench/eval.py, e.g. --data PATH")


def run(args: argparse.Namespace) -> int:
    if not (PROJECT / "bench" / "eval.py").exists():
        print("byline eval needs a checkout of the project (bench/eval.py was not found).", file=sys.stderr)
        return 2
    if str(PROJECT) not in sys.path:
        sys.path.insert(0, str(PROJECT))
    # the checkout's bench/, which is not in the wheel: only `byline eval` needs it.
    from bench.eval import main

    return main(list(args.eval_args))
