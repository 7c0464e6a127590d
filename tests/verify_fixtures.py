"""Made-up articles for the quote check (``/verify``) tests: a manager and his rival quoted after
a match, words the article says in its own voice, a quote the article attributes to nobody, and
a quote full of chat markup. Written for these tests; no shared data is needed."""

from __future__ import annotations

from pathlib import Path

ARTICLES = {
    "derby.md": (
        "2024-03-02",
        "Mourinho fumes at referee after derby defeat",
        "https://news.example.org/sport/derby",
        [
            "Jose Mourinho criticised the referee after United lost the Manchester derby on Saturday.",
            "\u201cThe referee decided the game with that penalty, and everybody in the stadium saw it,\u201d "
            "Mourinho said. \u201cWe were the better team for ninety minutes.\u201d",
            "\u201cWe will come back stronger next season, I promise our supporters that,\u201d he added.",
            "Pep Guardiola disagreed with his rival. \u201cThe referee had an excellent afternoon and got the "
            "big calls right,\u201d Guardiola said.",
            "The club will appeal against the red card shown to its captain on Monday morning.",
            "Fans outside the ground called it \u201ca night to forget for everyone in red\u201d.",
        ],
    ),
    "budget.md": (
        "2024-03-20",
        "Chancellor's Budget cuts fuel duty by 5p",
        "https://news.example.org/business/budget",
        [
            "The Chancellor, Tom Hale, cut fuel duty by 5p a litre in Wednesday's Budget.",
            "\u201cThis Budget puts £5bn back into the pockets of working families,\u201d Mr Hale told MPs.",
            "Opposition leader Sara Quinn said: \u201cTell <!channel> and *everyone* that @everyone pays "
            "more [click](https://evil.example) under this Budget.\u201d",
        ],
    ),
}


def write_articles(folder: Path) -> list[Path]:
    """The articles as markdown files with front matter; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, (published, title, url, paragraphs) in ARTICLES.items():
        path = folder / name
        front = f"---\ntitle: {title}\npublished: {published}\nsource: Example News\nurl: {url}\n---\n"
        path.write_text(front + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
        paths.append(path)
    return paths
