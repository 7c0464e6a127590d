"""Answer-quality evaluation of Byline, end to end through the real pipeline.

    .venv/bin/python -m bench.eval --data ../shared/data --cache /tmp/byline-eval

Prints one table: SQuAD 2.0 paragraphs as one-paragraph articles (recall@1/5 of the gold
paragraph among the cited then closest passages, MRR, answer hit, abstention), out-of-corpus
questions against the BBC corpus (abstention), quote attribution against hand labels
(precision, recall, verbatim), each for Byline and for a dense-only baseline where it applies.
Thresholds are fitted on the even-numbered questions (``--half fit``); the table reports the
odd-numbered ones (``--half test``, the default). Built data directories are cached under
``--cache`` so that reruns skip ingest. Missing data is skipped with a message, not an error.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from bench.quality.eval_common import DenseBaseline, Tally, ratio
from bench.quality.eval_natural import (
    ANSWERABLE,
    ChunkBaseline,
    NaturalQuestion,
    check_effects,
    load_natural,
    run_chunk_baseline,
    run_natural,
)
from bench.quality.eval_quotes import load_labels, run_attribution, run_natural_attribution, stored_quotes_verbatim
from bench.quality.eval_speakers import load_speaker_questions, run_speaker_questions
from bench.quality.eval_squad import (
    build_library,
    load_ooc,
    load_squad,
    run_ooc,
    run_ooc_baseline,
    run_squad,
    run_squad_baseline,
)
from retrieval.index.embedder import Embedder
from retrieval.library import Library

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=PROJECT.parent / "shared" / "data")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/byline-eval"))
    parser.add_argument("--half", choices=["fit", "test", "all"], default="test")
    parser.add_argument("--squad-paragraphs", type=int, default=0, help="only the first N paragraphs (0: all)")
    parser.add_argument(
        "--ooc",
        type=Path,
        nargs="+",
        default=[
            HERE / "data" / "out_of_corpus.txt",
            HERE / "data" / "out_of_corpus_heldout.txt",
            HERE / "data" / "out_of_corpus_blind2.txt",
            HERE / "data" / "out_of_corpus_blind3.txt",
            HERE / "data" / "out_of_corpus_blind4.txt",
            HERE / "data" / "out_of_corpus_blind5.txt",
            HERE / "data" / "out_of_corpus_blind6.txt",
        ],
        help="out-of-corpus question files; each is reported on its own row, then all together",
    )
    parser.add_argument(
        "--labels",
        type=Path,
        nargs="+",
        default=[
            PROJECT / "tests" / "fixtures" / "quote_labels.tsv",
            PROJECT / "tests" / "fixtures" / "quote_labels_heldout.tsv",
        ],
        help="hand-labelled quote files; each is reported on its own rows",
    )
    parser.add_argument(
        "--speakers",
        type=Path,
        nargs="+",
        default=[HERE / "data" / "speaker_questions.tsv", HERE / "data" / "speaker_questions_blind.tsv"],
        help="in-corpus 'what did X say about Y' question files (question, article, speaker); one row each",
    )
    parser.add_argument(
        "--natural",
        type=Path,
        nargs="+",
        default=sorted((HERE / "data" / "natural").glob("*.tsv")),
        help=(
            "questions that look like users (kind, article, question, expected, speaker); "
            "see bench/quality/eval_natural.py"
        ),
    )
    parser.add_argument(
        "--natural-part",
        choices=["dev", "test", *BLIND_PARTS, "seen", "all"],
        default="test",
        help=(
            "dev: the part rules are tuned on; test: the reported part; final: written after the rules"
            f" froze; {BLIND_PARTS[1]}-{BLIND_PARTS[-1]}: the blind parts of later rounds; seen: every part but"
            " those not yet scored"
            f" ({', '.join(UNSCORED_PARTS)}); all: every part"
        ),
    )
    parser.add_argument(
        "--skip", nargs="*", default=[], choices=["squad", "ooc", "quotes", "baseline", "speakers", "natural"]
    )
    parser.add_argument(
        "--checks", action="store_true", help="per refusing check, what it costs and stops on the natural part"
    )
    parser.add_argument("--errors", action="store_true", help="print each attribution and speaker-question error")
    return parser.parse_args(argv)


def _set_name(path: Path, prefix: str, first: str) -> str:
    """A question file's row name: ``first`` for the set the rules were designed on, else the
    file's suffix ("held-out", "blind-2")."""
    suffix = path.stem.removeprefix(prefix).strip("_").replace("heldout", "held-out").replace("blind", "blind-")
    return suffix.removesuffix("-") or first


def _ms(tally: Tally) -> str:
    if not tally.seconds:
        return "-"
    ordered = sorted(tally.seconds)
    return f"{1000 * statistics.median(ordered):.0f} / {1000 * ordered[int(0.95 * (len(ordered) - 1))]:.0f}"


def _f(value: float) -> str:
    return "-" if value != value else f"{value:.3f}"  # NaN: not measured


def evaluate(args: argparse.Namespace, out: list[str]) -> dict[str, float]:
    """Run what the data allows; append table rows to ``out``; return the headline numbers."""
    results: dict[str, float] = {}
    embedder = Embedder()
    squad_file = args.data / "squad2-dev-subset.json"
    baseline_threshold = 0.0
    rows: list[tuple[str, str, str, str]] = []
    if "squad" not in args.skip and squad_file.exists():
        drafts, questions = load_squad(squad_file, args.squad_paragraphs)
        suffix = f"-{args.squad_paragraphs}" if args.squad_paragraphs else ""
        library = build_library(args.cache / f"squad{suffix}", drafts, embedder)
        ours, _ = run_squad(library, questions, args.half)
        results.update(
            squad_recall_at_1=ratio(ours.at1, ours.answerable),
            squad_recall_at_5=ratio(ours.at5, ours.answerable),
            squad_mrr=ratio(ours.reciprocal, ours.answerable),
            squad_answer_hit=ratio(ours.hit, ours.answerable),
            squad_false_abstention=ratio(ours.false_abstained, ours.answerable),
            squad_impossible_abstention=ratio(ours.abstained_impossible, ours.impossible),
            squad_spans_verbatim=ratio(ours.spans_good, ours.spans_checked),  # type: ignore[attr-defined]
        )
        base = None
        if "baseline" not in args.skip:
            base, baseline_threshold = run_squad_baseline(
                library, DenseBaseline(library, embedder), questions, args.half
            )
        library.close()
        n = f"{ours.answerable} answerable, {ours.impossible} impossible"
        for label, mine, theirs, target in [
            ("recall@1", ratio(ours.at1, ours.answerable), base and ratio(base.at1, base.answerable), ">= 0.85"),
            ("recall@5", ratio(ours.at5, ours.answerable), base and ratio(base.at5, base.answerable), ">= 0.98"),
            (
                "MRR (top 5)",
                ratio(ours.reciprocal, ours.answerable),
                base and ratio(base.reciprocal, base.answerable),
                "",
            ),
            ("answer hit", ratio(ours.hit, ours.answerable), base and ratio(base.hit, base.answerable), ">= 0.75"),
            (
                "false abstention",
                ratio(ours.false_abstained, ours.answerable),
                base and ratio(base.false_abstained, base.answerable),
                "<= 0.03",
            ),
            (
                "abstention, is_impossible",
                ratio(ours.abstained_impossible, ours.impossible),
                base and ratio(base.abstained_impossible, base.impossible),
                "(report)",
            ),
            ("answer spans verbatim", results["squad_spans_verbatim"], None, "1.000"),
        ]:
            shown = _f(theirs) if isinstance(theirs, float) else "-"
            rows.append((f"SQuAD {label}", _f(mine), shown, target))
        rows.append(("SQuAD ask ms p50 / p95", _ms(ours), "-", ""))
        out.append(f"SQuAD: {len(drafts)} paragraphs, {args.half} half: {n}")
    elif "squad" not in args.skip:
        out.append(f"SQuAD: skipped ({squad_file} not found)")

    bbc = args.data / "bbc-news"
    ooc_files = [path for path in args.ooc if path.exists()]
    if "ooc" not in args.skip and bbc.is_dir() and ooc_files:
        library = Library.open(args.cache / "bbc", embedder)
        if library.store.article_count() == 0:
            print("Ingesting the BBC corpus once (2-3 minutes); later runs reuse it.", file=sys.stderr)
        library.ingest([bbc])
        baseline = DenseBaseline(library, embedder) if "baseline" not in args.skip and baseline_threshold else None
        sets = [(_set_name(path, "out_of_corpus", "fit"), load_ooc(path)) for path in ooc_files]
        if len(sets) > 1:
            sets.append(("all", [q for _, questions in sets for q in questions]))
        for name, questions_ooc in sets:
            ours_ooc, _ = run_ooc(library, questions_ooc)
            key = "ooc_abstention" if name == "all" or len(sets) == 1 else f"ooc_abstention_{name}"
            results[key] = ratio(ours_ooc.abstained, ours_ooc.asked)
            theirs_ooc = run_ooc_baseline(baseline, questions_ooc, baseline_threshold) if baseline else None
            rows.append(
                (
                    f"Out-of-corpus abstention, {name} ({ours_ooc.asked} q)",
                    _f(results[key]),
                    _f(ratio(theirs_ooc.abstained, theirs_ooc.asked)) if theirs_ooc else "-",
                    ">= 0.95" if name == "all" or len(sets) == 1 else "",
                )
            )
        rows.append((f"BBC ask ms p50 / p95 ({library.store.article_count()} articles)", _ms(ours_ooc), "-", ""))
        for path in [p for p in args.speakers if p.exists()] if "speakers" not in args.skip else []:
            name = _set_name(path, "speaker_questions", "fit")
            speaker_tally, misses = run_speaker_questions(library, bbc, load_speaker_questions(path))
            results[f"speaker_right_{name}"] = ratio(speaker_tally.right, speaker_tally.asked)
            results[f"speaker_abstention_{name}"] = ratio(speaker_tally.abstained, speaker_tally.asked)
            label = f"In-corpus speaker questions, {name} ({speaker_tally.asked} q)"
            rows.append((f"{label}: right", _f(results[f"speaker_right_{name}"]), "-", ""))
            rows.append((f"{label}: abstained", _f(results[f"speaker_abstention_{name}"]), "-", ""))
            if args.errors:
                out.extend(f"  speaker miss: {m}" for m in misses)
        if "natural" not in args.skip:
            _natural_rows(args, library, embedder, rows, out, results)
        checked, good = stored_quotes_verbatim(library)
        results["bbc_quotes_verbatim"] = ratio(good, checked)
        rows.append((f"All stored BBC quotes verbatim ({checked})", _f(ratio(good, checked)), "-", "1.000"))
        library.close()
    elif "ooc" not in args.skip:
        out.append(f"Out-of-corpus: skipped ({bbc} or the question files {[str(p) for p in args.ooc]} not found)")
    if "ooc" in args.skip and not {"natural", "speakers"} <= set(args.skip):
        # They run on the BBC library the out-of-corpus step opens and ingests.
        out.append("Natural and in-corpus speaker questions skipped too: they run with the out-of-corpus step.")

    label_files = [path for path in args.labels if path.exists()]
    if "quotes" not in args.skip and bbc.is_dir() and label_files:
        for path in label_files:
            tally = run_attribution(load_labels(path), bbc)
            name = path.stem.removeprefix("quote_labels").strip("_") or "dev"
            results[f"attribution_precision_{name}"] = tally.precision
            results[f"attribution_recall_{name}"] = tally.recall
            results[f"quotes_verbatim_{name}"] = ratio(tally.quotes_verbatim, tally.quotes_checked)
            label = f"{name}: {tally.labelled} quotes, {tally.articles} articles"
            rows.append((f"Attribution precision ({label})", _f(tally.precision), "-", ">= 0.97"))
            rows.append((f"Attribution recall ({name})", _f(tally.recall), "-", ">= 0.90"))
            rows.append(
                (
                    f"Extracted quotes verbatim ({name}, {tally.quotes_checked})",
                    _f(ratio(tally.quotes_verbatim, tally.quotes_checked)),
                    "-",
                    "1.000",
                )
            )
            if args.errors:
                out.extend(f"  {e}" for e in tally.errors)
        _natural_attribution_row(args, bbc, rows, out, results)
    elif "quotes" not in args.skip:
        out.append(f"Quote attribution: skipped ({bbc} or the label files not found)")

    if rows:
        width = max(len(r[0]) for r in rows)
        out.append(f"{'metric':<{width}}  {'Byline':>7}  {'dense':>7}  target")
        out.append("-" * (width + 28))
        out.extend(f"{r[0]:<{width}}  {r[1]:>7}  {r[2]:>7}  {r[3]}" for r in rows)
    return results


def _natural_questions(args: argparse.Namespace) -> list[NaturalQuestion]:
    questions = []
    for path in [p for p in args.natural if p.exists()]:
        final = path.stem.startswith("final")
        questions += load_natural(path, split=not final)
    if args.natural_part == "all":
        return questions
    if args.natural_part == "seen":
        return [q for q in questions if not q.part.startswith(tuple(p + "_" for p in UNSCORED_PARTS))]
    # "final" is the files final_*.tsv (parts "final_business", ...), "final2" the files final2_*.tsv, ...
    wanted = args.natural_part
    return [q for q in questions if q.part == wanted or q.part.startswith(wanted + "_")]


def _natural_rows(
    args: argparse.Namespace,
    library: Library,
    embedder: Embedder,
    rows: list[tuple[str, str, str, str]],
    out: list[str],
    results: dict[str, float],
) -> None:
    """One row per kind of user question: Byline, the dense top sentence, the chunk baseline."""
    questions = _natural_questions(args)
    if not questions:
        return
    ours, misses = run_natural(library, questions)
    chunks = run_chunk_baseline(ChunkBaseline(library, embedder, args.cache), questions)
    dense = run_chunk_baseline(_DenseTop(library, embedder), questions)  # type: ignore[arg-type]
    part = args.natural_part
    for kind, target in NATURAL_TARGETS.items():
        if not ours.asked[kind]:
            continue
        results[f"natural_{kind}"] = ours.score(kind)
        theirs = f"{_f(dense.score(kind))} / {_f(chunks.score(kind))}" if kind in ANSWERABLE else "-"
        rows.append((f"Natural ({part}) {kind} ({ours.asked[kind]} q)", _f(ours.score(kind)), theirs, target))
    results["natural_refusal"] = ours.answerable_refusal
    rows.append((f"Natural ({part}) answerable refused", _f(ours.answerable_refusal), "0 / 0", "<= 0.10"))
    rows.append((f"Natural ({part}) overall ({sum(ours.asked.values())} q)", _f(ours.overall), "-", ""))
    rows.append((f"Natural ({part}) ask ms p50 / p95", _ms(ours), "-", ""))  # type: ignore[arg-type]
    refusals = ", ".join(f"{name} {count}" for name, count in ours.refused_by.most_common())
    out.append(f"Natural ({part}): answerable questions refused by: {refusals or 'none'}")
    if args.errors:
        out.extend(f"  natural miss: {m}" for m in misses)
    if args.checks:
        out.append(f"Natural ({part}): what each check costs and stops")
        out.extend(check_effects(library, questions))


def _natural_attribution_row(
    args: argparse.Namespace,
    bbc: Path,
    rows: list[tuple[str, str, str, str]],
    out: list[str],
    results: dict[str, float],
) -> None:
    """The quotes the natural speaker and "who said" questions expect: attributed to whom."""
    expected = [
        (q.article, q.expected, q.speaker)
        for q in _natural_questions(args)
        if q.kind in ("speaker", "who_said") and q.expected and q.speaker
    ]
    if not expected:
        return
    tally = run_natural_attribution(expected, bbc)
    results["natural_attribution"] = ratio(tally.right, tally.checked)
    rows.append(
        (
            f"Natural ({args.natural_part}) expected quotes attributed right ({tally.checked})",
            _f(ratio(tally.right, tally.checked)),
            "-",
            f"wrong {tally.wrong}, none {tally.unattributed}, no quote {tally.not_found}",
        )
    )
    if args.errors:
        out.extend(f"  natural attribution: {e}" for e in tally.errors)


class _DenseTop:
    """The dense baseline's top sentence as the whole answer (no abstention)."""

    def __init__(self, library: Library, embedder: Embedder) -> None:
        self.dense = DenseBaseline(library, embedder)

    def answer(self, question: str) -> str:
        return self.dense.ask(question)[1]


# The blind parts, by their files' names ("final_*.tsv" is "final", "final12_*.tsv" "final12"), in
# the order they were written.
BLIND_PARTS: list[str] = sorted(
    {path.stem.split("_")[0] for path in (HERE / "data" / "natural").glob("final*_*.tsv")},
    key=lambda part: int(part.removeprefix("final") or 1),
)

# Blind parts written but not yet scored: "seen" (what a rule change is tuned on) leaves them out.
# Each blind part is named here from the day its writers get their lists until its one scoring;
# at which rules each was scored is in docs/quality.md's first table of "Questions that look
# like users". None is waiting now, and no unused BBC article is left for another.
UNSCORED_PARTS: tuple[str, ...] = ()

NATURAL_TARGETS = {
    "speaker": ">= 0.75",
    "fact": ">= 0.70",
    "who_said": ">= 0.80",
    "absent": ">= 0.95",
    "detail_absent": ">= 0.80",
}


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    if not args.data.is_dir():
        print(f"No evaluation data at {args.data}: nothing to evaluate (pass --data).")
        return 0
    lines: list[str] = []
    evaluate(args, lines)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
