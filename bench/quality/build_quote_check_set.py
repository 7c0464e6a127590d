"""Build the labelled quote-check set (``bench/data/quote_check/*.jsonl``) from the BBC news folder.

Run once, before the matcher (``retrieval/features/quote_check.py``) exists or is tuned::

    python -m bench.quality.build_quote_check_set ../shared/data/bbc-news

Real items come from the quotes Byline's extraction finds in the article files (``extract_quotes``,
read straight from the files, not from a library): a quote is used only when its speaker is a full
name whose surname is written in the quote's paragraph or the one before it, so that the label does
not inherit a doubtful attribution. Each quote is used once. Kinds and the verdict each expects:

- ``verbatim``: a whole quote (verbatim), shown in one of several ways: bare, in straight or curly
  marks, lower-cased, punctuation dropped, with the speaker inline ("Blair: “…”", "“…” - Blair")
  or in the speaker field, or with no speaker.
- ``partial``: five or more consecutive words of a longer quote (verbatim).
- ``ellipsis``: two pieces of one quote joined by "…" or "..." (verbatim).
- ``unattributed``: a quote the article gives no speaker for, asked without one (verbatim).
- ``altered``: a whole quote with one to three words changed, inserted or dropped (altered).
- ``misattributed``: a whole or partial quote asked of another person quoted in the same article
  (misattributed).
- ``fabricated``: hand-written quotes in the same style, about the same people and topics
  (``fabricated.tsv``), checked here to share no run of six words with any article (not_found).

Articles are split in two by a hash of their path: ``dev.jsonl`` (for tuning) and ``test.jsonl``
(held out: read only for the final figure); fabricated quotes alternate between the two.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.paths import DATA
from retrieval.reading.entities import entity_spans
from retrieval.reading.loader import read_article_file
from retrieval.reading.people import strip_honorific
from retrieval.reading.quotes import FoundQuote, extract_quotes
from retrieval.reading.text import paragraphs

SECTIONS = ("business", "entertainment", "politics", "tech")
OUT = DATA / "quote_check"
FABRICATED = OUT / "fabricated.tsv"
SEED = 35

# How many items of each kind, over both files.
QUOTAS = {
    "verbatim": 80,
    "partial": 70,
    "ellipsis": 60,
    "unattributed": 20,
    "altered": 90,
    "misattributed": 70,
}
EXPECTED = {
    "verbatim": "verbatim",
    "partial": "verbatim",
    "ellipsis": "verbatim",
    "unattributed": "verbatim",
    "altered": "altered",
    "misattributed": "misattributed",
    "fabricated": "not_found",
}

# Word swaps of the kind a retelling makes: a synonym, a stronger or weaker word, an opposite.
SWAPS = {
    "good": "great",
    "great": "good",
    "very": "really",
    "really": "very",
    "big": "huge",
    "huge": "big",
    "important": "vital",
    "think": "believe",
    "believe": "think",
    "people": "voters",
    "said": "stated",
    "will": "would",
    "would": "will",
    "can": "could",
    "could": "can",
    "must": "should",
    "should": "must",
    "more": "less",
    "less": "more",
    "increase": "rise",
    "higher": "lower",
    "lower": "higher",
    "strong": "robust",
    "difficult": "hard",
    "hard": "difficult",
    "clear": "obvious",
    "new": "fresh",
    "want": "need",
    "need": "want",
    "always": "often",
    "never": "rarely",
    "many": "most",
    "most": "many",
    "all": "every",
    "every": "all",
    "government": "administration",
    "company": "firm",
    "firm": "company",
    "market": "sector",
    "years": "decades",
    "year": "decade",
    "best": "finest",
    "better": "stronger",
    "worse": "weaker",
    "happy": "delighted",
    "delighted": "pleased",
    "pleased": "happy",
    "deeply": "very",
    "hope": "expect",
    "expect": "hope",
    "help": "support",
    "support": "back",
    "problem": "issue",
    "problems": "issues",
    "issue": "problem",
    "issues": "problems",
    "country": "nation",
    "world": "globe",
    "money": "cash",
    "plans": "proposals",
    "plan": "proposal",
    "work": "job",
    "business": "industry",
    "first": "last",
    "last": "first",
    "right": "correct",
    "wrong": "mistaken",
    "change": "reform",
    "growth": "expansion",
    "fans": "audiences",
    "film": "movie",
    "music": "songs",
    "users": "customers",
    "customers": "users",
    "technology": "tech",
    "public": "nation",
    "economy": "recovery",
    "still": "now",
    "now": "today",
    "today": "now",
    "make": "create",
    "made": "created",
    "get": "obtain",
    "going": "planning",
    "see": "watch",
    "take": "grab",
    "give": "offer",
    "there": "here",
    "this": "that",
    "that": "this",
    "these": "those",
    "our": "their",
    "their": "our",
    "we": "they",
    "they": "we",
}
NEGATABLE = ("is", "are", "was", "were", "will", "would", "can", "could", "should", "do", "does", "did", "has", "have")
DROPPABLE = ("very", "really", "also", "just", "still", "not", "all", "only", "even", "now", "so")

_WORD = re.compile(r"\S+")
_LETTERS = re.compile(r"[^\w£$€%]+")


@dataclass(frozen=True)
class Found:
    """A quote as the builder uses it: the article it is in and who said it."""

    path: str  # relative to the BBC folder, e.g. "politics/010.txt"
    quote: FoundQuote
    paragraph_text: str
    before_text: str


def norm_words(text: str) -> list[str]:
    """Lower-cased words without punctuation, for comparing items with articles here only."""
    text = unicodedata.normalize("NFKC", text).replace("’", "'").replace("‘", "'").lower()
    return [w for w in _LETTERS.sub(" ", text.replace("'", "")).split() if w]


def surname(name: str) -> str:
    bare = strip_honorific(name)
    return bare.split()[-1] if bare else ""


def is_full_name(speaker: str) -> bool:
    """A person named in full ("Tony Blair", "Mr Tony Blair"), not a description or pronoun."""
    bare = strip_honorific(speaker).split()
    return 2 <= len(bare) <= 4 and all(w[:1].isupper() for w in bare) and not speaker.lower().startswith(("a ", "the "))


def read_corpus(root: Path) -> tuple[dict[str, str], dict[str, list[Found]]]:
    """Every article's text by path, and its quotes; a second copy of a text is left out."""
    texts: dict[str, str] = {}
    quotes: dict[str, list[Found]] = {}
    seen: set[str] = set()
    for section in SECTIONS:
        for path in sorted((root / section).glob("*.txt")):
            draft = read_article_file(path)
            digest = hashlib.sha256(draft.text.encode()).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            relative = f"{section}/{path.name}"
            texts[relative] = draft.text
            found_paragraphs = paragraphs(draft.text)
            by_number = {p.number: draft.text[p.start : p.end] for p in found_paragraphs}
            quotes[relative] = [
                Found(relative, q, by_number[q.paragraph], by_number.get(q.paragraph - 1, ""))
                for q in extract_quotes(draft.text, found_paragraphs)
            ]
    return texts, quotes


def trusted(found: Found) -> bool:
    """A quote whose speaker the label can rely on: a full name, written near the quote."""
    q = found.quote
    if not is_full_name(q.speaker) or re.search(r"[\"“”]", q.text):
        return False
    name = surname(q.speaker)
    return bool(name) and (name in found.paragraph_text or name in found.before_text)


def named_as_people(found: list[Found]) -> list[Found]:
    """The quotes whose speaker spaCy's model tags as a PERSON in the quote's paragraph or the one
    before it ("Final Wars", a film, is not), so a label never names a title or a company."""
    spans = entity_spans([f"{f.before_text}\n\n{f.paragraph_text}" for f in found]) or [[] for _ in found]
    kept = []
    for item, entities in zip(found, spans, strict=True):
        people = " ".join(text for text, label in entities if label == "PERSON")
        if surname(item.quote.speaker) in people:
            kept.append(item)
    return kept


def split_of(path: str) -> str:
    return "dev" if int(hashlib.sha256(path.encode()).hexdigest(), 16) % 2 == 0 else "test"


def spoken_name(speaker: str, rng: random.Random) -> str:
    """How an asker names a speaker: in full, by surname, or "Mr/Ms Surname" as the BBC does."""
    bare = strip_honorific(speaker)
    choice = rng.random()
    if choice < 0.5:
        return bare
    if choice < 0.85:
        return bare.split()[-1]
    return speaker if speaker != bare else bare


def present(text: str, speaker: str, rng: random.Random, allow_inline: bool = True) -> tuple[str, str | None]:
    """The item's text and speaker field as an asker might write them."""
    style = rng.choice(["bare", "straight", "curly", "lower", "nopunct", "inline_before", "inline_after", "field"])
    if not allow_inline and style.startswith("inline"):
        style = "field"
    name = spoken_name(speaker, rng) if speaker else ""
    if style == "bare":
        return text, name or None
    if style == "straight":
        return f'"{text}"', name or None
    if style == "curly":
        return f"“{text}”", name or None
    if style == "lower":
        return text.lower(), name or None
    if style == "nopunct":
        return re.sub(r"[,.;:!?]", "", text), name or None
    if style == "inline_before" and name:
        mark = rng.choice(['"{}"', "“{}”", "'{}'"])
        return f"{name}: {mark.format(text)}", None
    if style == "inline_after" and name:
        mark = rng.choice(['"{}"', "“{}”", "‘{}’"])
        dash = rng.choice([" - ", " — ", " – "])
        return f"{mark.format(text)}{dash}{name}", None
    return text, name or None


def alter(text: str, rng: random.Random) -> tuple[str, int, list[str]] | None:
    """``text`` with 1-3 words swapped, negated or dropped; None when it has too few candidates."""
    tokens = _WORD.findall(text)
    wanted = rng.choice([1, 1, 2, 2, 3])
    changes: list[str] = []
    used: set[int] = set()
    order = list(range(len(tokens)))
    rng.shuffle(order)
    for index in order:
        if len(changes) == wanted:
            break
        if index in used or index - 1 in used or index + 1 in used:
            continue
        token = tokens[index]
        core = re.sub(r"^\W+|\W+$", "", token)
        lead = token[: token.find(core)] if core else ""
        trail = token[token.find(core) + len(core) :] if core else ""
        lower = core.lower()
        if lower in SWAPS:
            new = SWAPS[lower]
            new = new.capitalize() if core[:1].isupper() else new
            tokens[index] = lead + new + trail
            changes.append(f"{core} -> {new}")
        elif re.fullmatch(r"[£$€]?\d+(?:\.\d+)?(?:m|bn|%)?", core):
            digits = re.search(r"\d+", core)
            assert digits
            changed = str(int(digits.group()) + rng.choice([1, 2, 5, 10]))
            new = core[: digits.start()] + changed + core[digits.end() :]
            tokens[index] = lead + new + trail
            changes.append(f"{core} -> {new}")
        elif lower in NEGATABLE and index + 1 < len(tokens) and norm_words(tokens[index + 1])[:1] != ["not"]:
            tokens[index] = token + " not"
            changes.append(f"+not after {core}")
        elif lower in DROPPABLE and not trail and 0 < index < len(tokens) - 1:
            tokens[index] = ""
            changes.append(f"-{core}")
        else:
            continue
        used.add(index)
    if len(changes) < wanted:
        return None
    altered = " ".join(t for t in tokens if t)
    altered = altered[:1].upper() + altered[1:]
    return altered, len(changes), changes


def piece(words: list[str], start: int, length: int) -> str:
    return " ".join(words[start : start + length])


def build(root: Path) -> dict[str, list[dict]]:
    rng = random.Random(SEED)
    texts, quotes = read_corpus(root)
    corpus_words = [norm_words(t) for t in texts.values()]
    six_grams = {tuple(ws[i : i + 6]) for ws in corpus_words for i in range(len(ws) - 5)}

    pool = named_as_people([f for path in sorted(quotes) for f in quotes[path] if trusted(f)])
    people_quotes: dict[str, list[Found]] = {}
    for f in pool:
        people_quotes.setdefault(f.path, []).append(f)
    rng.shuffle(pool)
    unattributed = [
        f
        for path in sorted(quotes)
        for f in quotes[path]
        if not f.quote.speaker and len(f.quote.text.split()) >= 8 and not re.search(r"[\"“”]", f.quote.text)
    ]
    rng.shuffle(unattributed)
    used: set[tuple[str, int]] = set()
    items: list[dict] = []
    counts = dict.fromkeys(QUOTAS, 0)

    def take(found: Found, kind: str, text: str, speaker: str | None, **extra: object) -> None:
        used.add((found.path, found.quote.start))
        counts[kind] += 1
        items.append(
            {
                "kind": kind,
                "expected": EXPECTED[kind],
                "text": text,
                "speaker": speaker,
                "article": found.path,
                "true_speaker": found.quote.speaker,
                "source_quote": found.quote.text,
                **extra,
            }
        )

    groups: dict[tuple[str, int], list[Found]] = {}
    for path in quotes:
        for f in quotes[path]:
            groups.setdefault((path, f.quote.group), []).append(f)

    for found in pool:
        key = (found.path, found.quote.start)
        if key in used:
            continue
        q = found.quote
        words = q.text.split()
        kinds = [k for k in ("verbatim", "partial", "ellipsis", "altered", "misattributed") if counts[k] < QUOTAS[k]]
        if not kinds:
            break
        kind = rng.choice(kinds)
        if kind == "verbatim" and len(words) >= 6:
            with_speaker = rng.random() < 0.7
            text, speaker = present(q.text, q.speaker if with_speaker else "", rng)
            take(found, kind, text, speaker)
        elif kind == "partial" and len(words) >= 10:
            length = rng.randint(5, min(12, len(words) - 3))
            start = rng.randint(0, len(words) - length)
            with_speaker = rng.random() < 0.6
            text, speaker = present(piece(words, start, length), q.speaker if with_speaker else "", rng)
            take(found, kind, text, speaker)
        elif kind == "ellipsis":
            group = groups[(found.path, q.group)]
            mark = rng.choice(["…", "...", " … ", " ... "])
            if len(group) > 1 and group[0].quote.start == q.start and len(group[1].quote.text.split()) >= 4:
                # A quote that runs on into the next paragraph: its end and the next one's start.
                first, second = q.text.split(), group[1].quote.text.split()
                a = piece(first, max(0, len(first) - rng.randint(4, 8)), 8)
                b = piece(second, 0, rng.randint(4, min(10, len(second))))
            elif len(words) >= 14:
                a_len = rng.randint(4, 7)
                b_len = rng.randint(4, 7)
                gap = rng.randint(2, len(words) - a_len - b_len)
                a_start = rng.randint(0, len(words) - a_len - b_len - gap)
                a = piece(words, a_start, a_len)
                b = piece(words, a_start + a_len + gap, b_len)
            else:
                continue
            with_speaker = rng.random() < 0.6
            text, speaker = present(f"{a.rstrip()}{mark}{b.lstrip()}".replace("  ", " "), "", rng)
            speaker = spoken_name(q.speaker, rng) if with_speaker else None
            take(found, kind, text, speaker)
        elif kind == "altered" and len(words) >= 8:
            changed = alter(q.text, rng)
            if changed is None:
                continue
            text, n, changes = changed
            with_speaker = rng.random() < 0.6
            text, speaker = present(text, q.speaker if with_speaker else "", rng)
            take(found, kind, text, speaker, changed_words=n, changes=changes)
        elif kind == "misattributed" and len(words) >= 6:
            own = surname(q.speaker)
            others = sorted(
                {
                    strip_honorific(f.quote.speaker)
                    for f in people_quotes.get(found.path, [])
                    if surname(f.quote.speaker) != own
                    and own not in f.quote.speaker
                    and surname(f.quote.speaker) not in found.paragraph_text
                }
            )
            if not others:
                continue
            wrong = rng.choice(others)
            shown_text = q.text
            if len(words) >= 12 and rng.random() < 0.4:
                length = rng.randint(6, min(12, len(words)))
                start = rng.randint(0, len(words) - length)
                shown_text = piece(words, start, length)
            text, speaker = present(shown_text, wrong, rng)
            take(found, kind, text, speaker, wrong_speaker=wrong)

    for found in unattributed[: QUOTAS["unattributed"]]:
        text, speaker = present(found.quote.text, "", rng)
        take(found, "unattributed", text, speaker)

    fabricated = read_fabricated(six_grams)
    files: dict[str, list[dict]] = {"dev": [], "test": []}
    for item in items:
        files[split_of(item["article"])].append(item)
    for index, item in enumerate(fabricated):
        files["dev" if index % 2 == 0 else "test"].append(item)
    for name, rows in files.items():
        random.Random(f"{SEED}-{name}").shuffle(rows)
        for number, row in enumerate(rows, 1):
            row["id"] = f"{name}-{number:03d}"
    return files


def read_fabricated(six_grams: set[tuple[str, ...]]) -> list[dict]:
    """The hand-written quotes; any that shares six words in a row with an article is an error."""
    rows = []
    bad = []
    for line in FABRICATED.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        speaker, about, text = line.split("\t")
        words = norm_words(text)
        shared = [" ".join(words[i : i + 6]) for i in range(len(words) - 5) if tuple(words[i : i + 6]) in six_grams]
        if shared:
            bad.append(f"{text!r} shares {shared[0]!r} with an article")
        rows.append(
            {
                "kind": "fabricated",
                "expected": "not_found",
                "text": text,
                "speaker": speaker or None,
                "article": about,
                "true_speaker": "",
                "source_quote": "",
            }
        )
    if bad:
        raise SystemExit("Fabricated quotes that are not fabricated:\n" + "\n".join(bad))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bbc", type=Path, help="the bbc-news folder (business, entertainment, politics, tech)")
    args = parser.parse_args(argv)
    if not args.bbc.is_dir():
        print(f"No BBC folder at {args.bbc}.", file=sys.stderr)
        return 2
    files = build(args.bbc)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    for name, rows in files.items():
        kinds: dict[str, int] = {}
        for row in rows:
            kinds[row["kind"]] = kinds.get(row["kind"], 0) + 1
        header = {
            "header": True,
            "built": when,
            "by": (
                "bench/quality/build_quote_check_set.py (seed 35) from bbc-news business, entertainment, politics, tech"
            ),
            "how": (
                "real quotes from Byline's extraction of the article files, only where the speaker is a full "
                "name written in the quote's paragraph or the one before; verbatim, partial, ellipsis and "
                "unattributed expect verbatim; altered (1-3 words swapped, negated or dropped) expects altered; "
                "misattributed (asked of another person quoted in the same article) expects misattributed; "
                "fabricated (hand-written, fabricated.tsv, no six words in a row from any article) expects "
                "not_found. Built and committed before the matcher was run on it."
            ),
            "split": f"{name}: articles whose path hashes to {'even' if name == 'dev' else 'odd'}",
            "kinds": kinds,
        }
        path = OUT / f"{name}.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            handle.write(json.dumps(header, ensure_ascii=False) + "\n")
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{path}: {len(rows)} items {kinds}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
