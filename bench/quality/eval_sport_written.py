"""Natural questions over invented sport reports: the nearest stand-in for the held-out sport news.

Byline is measured, out of sight, on natural questions over BBC sport reports, a section this
project never holds. ``bench/data/sport_written/`` is the stand-in: sport reports *invented* by
writers who were asked for the BBC Sport style of 2004-2005 (many quotes a manager, pronouns,
"the Portuguese added"), and natural questions written over them by other writers, blind to
Byline's rules (see that folder's README). The library is those articles alone, as the held-out
one is sport alone. Rows and judging are the natural parts' (``eval_natural``), and the quotes the
speaker and "who said" questions expect are checked against the attribution Byline stores.

    python -m bench.quality.eval_sport_written [--errors]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.paths import DATA
from bench.quality.eval_natural import ANSWERABLE, KINDS, load_natural, run_natural
from bench.quality.eval_quotes import run_natural_attribution
from retrieval.library import Library

SPORT_WRITTEN = DATA / "sport_written"
# Read for misses when rules change (dev); the other sets are scored only once a round is
# frozen: test (written with dev), test2 (written after round 22 began), blind (written after it
# froze).
PARTS = {
    "dev": ("set1", "set3", "set4"),
    "test": ("set2", "set5"),
    "test2": ("set6", "set7", "set8", "set9", "set10"),
    # Written over sets 6-10 after round 22 froze, and scored once (``blind_set<N>.tsv``).
    "blind": ("blind",),
    # Sets 11-14 (48 more reports) and their ``_a`` questions, read for misses in round 23.
    "dev2": ("set11", "set12", "set13", "set14"),
    # Written over sets 11-14 beside dev2, by other writers, committed unread, scored once after
    # round 23 froze (``blind2_set<N>.tsv``).
    "blind2": ("blind2",),
    # Sets 15-18 (48 more reports, round 24) and their ``_a`` questions, read for misses in round 24.
    "dev3": ("set15", "set16", "set17", "set18"),
    # Written over sets 15-18 beside dev3 by other writers, committed unread, scored once after
    # round 24 froze (``blind3_set<N>.tsv``).
    "blind3": ("blind3",),
    # Sets 19-22 (48 more reports, round 25) and their ``_a`` questions, read for misses in round 25.
    "dev4": ("set19", "set20", "set21", "set22"),
    # Written over sets 19-22 beside dev4 by other writers, committed unread, scored once after
    # round 25 froze (``blind4_set<N>.tsv``).
    "blind4": ("blind4",),
    # Sets 23-26 (48 more reports, round 26) and their ``_a`` questions, read for misses in round 26.
    "dev5": ("set23", "set24", "set25", "set26"),
    # Written over sets 23-26 beside dev5 by other writers, committed unread, scored once after
    # round 26 froze (``blind5_set<N>.tsv``).
    "blind5": ("blind5",),
    # Sets 27-30 (48 more reports, round 27) carry only a blind part, written by four more
    # writers, committed unread while round 27 was under way and scored once after it froze
    # (``blind6_set<N>.tsv``).
    "blind6": ("blind6",),
    # Sets 31-34 (48 more reports, round 28) and their ``_a`` questions, read for misses in round 28.
    "dev6": ("set31", "set32", "set33", "set34"),
    # Written over sets 31-34 beside dev6 by other writers, committed unread, scored once after
    # round 28 froze (``blind7_set<N>.tsv``).
    "blind7": ("blind7",),
    # Sets 35-38 (48 more reports, round 29) carry only a blind part, written by four more
    # writers, committed unread while round 29 was under way and scored once after it froze
    # (``blind8_set<N>.tsv``).
    "blind8": ("blind8",),
    # The ``_a`` questions over sets 35-38, written in round 30 after blind8 was scored, read for
    # misses in round 30.
    "dev7": ("set35", "set36", "set37", "set38"),
    # Sets 39-42 (48 more reports, round 30) carry only a blind part, written by four more
    # writers, committed unread while round 30 was under way and scored once after it froze
    # (``blind9_set<N>.tsv``).
    "blind9": ("blind9",),
    # Sets 43-46 (48 more reports, round 31) carry only a blind part, written by four more
    # writers, committed unread while round 31 was under way and scored once after it froze
    # (``blind10_set<N>.tsv``).
    "blind10": ("blind10",),
}


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", type=Path, default=SPORT_WRITTEN / "articles")
    parser.add_argument("--questions", type=Path, nargs="*", default=sorted(SPORT_WRITTEN.glob("*.tsv")))
    parser.add_argument("--library", type=Path, default=Path("/tmp/byline-sport-written"))
    parser.add_argument("--part", choices=[*PARTS, "all"], default="all", help="dev: sets 1, 3, 4 (see PARTS)")
    parser.add_argument("--errors", action="store_true", help="print every miss")
    return parser.parse_args(argv)


def _in_part(path: Path, part: str) -> bool:
    return part == "all" or path.stem.split("_")[0] in PARTS[part]


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    questions = [q for path in args.questions if _in_part(path, args.part) for q in load_natural(path, split=False)]
    if not questions or not args.articles.is_dir():
        print(f"No questions or no articles under {SPORT_WRITTEN}.", file=sys.stderr)
        return 1
    library = Library.open(args.library)
    library.ingest([args.articles])
    library.warm_up()
    tally, misses = run_natural(library, questions)
    library.close()
    print(f"{len(questions)} questions ({args.part}) over {library.article_count()} invented sport reports")
    for kind in KINDS:
        if tally.asked[kind]:
            print(f"  {kind:14} {tally.right[kind]:4}/{tally.asked[kind]:<4} {tally.score(kind):.3f}")
    answerable = sum(tally.asked[k] for k in ANSWERABLE)
    print(
        f"  answerable refused {sum(tally.refused[k] for k in ANSWERABLE)}/{answerable} "
        f"{tally.answerable_refusal:.3f}  by {dict(tally.refused_by)}"
    )
    print(f"  overall {sum(tally.right.values())}/{sum(tally.asked.values())} {tally.overall:.3f}")
    expected = [
        (q.article, q.expected, q.speaker)
        for q in questions
        if q.kind in ("speaker", "who_said") and q.expected and q.speaker
    ]
    attribution = run_natural_attribution(expected, args.articles)
    print(
        f"  expected quotes attributed right {attribution.right}/{attribution.checked} "
        f"(wrong {attribution.wrong}, none {attribution.unattributed}, no quote {attribution.not_found})"
    )
    if args.errors:
        print("\n".join(misses))
        print("\n".join(f"  attribution: {e}" for e in attribution.errors))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
