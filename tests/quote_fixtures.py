"""Made-up articles for the speaker timeline, reactions and quote alerts tests: one manager quoted
over three dated articles on two topics, and two reports of a Budget with a minister, an opponent
and a business group reacting. Written for these tests; no shared data is needed."""

from __future__ import annotations

from pathlib import Path

ARTICLES = {
    "derby.md": (
        "2024-03-02",
        "Mourinho fumes at referee after derby defeat",
        [
            "Jose Mourinho criticised the referee after United lost the Manchester derby on Saturday.",
            "\u201cThe referee decided the game with that penalty,\u201d Mourinho said. \u201cI have never seen "
            "a decision like that in thirty years of football.\u201d",
            "Pep Guardiola disagreed with his rival. \u201cThe referee had an excellent afternoon and got the big "
            "calls right,\u201d Guardiola said.",
        ],
    ),
    "charge.md": (
        "2024-04-10",
        "Mourinho charged over comments about match officials",
        [
            "Jose Mourinho has been charged by the Football Association over his comments about the officials "
            "at the Manchester derby.",
            "\u201cI only said what everybody saw: the officials were a disgrace that afternoon,\u201d Mourinho "
            "told reporters on Wednesday.",
            "\u201cReferees must be able to explain their decisions to the public like everyone else,\u201d he said.",
            "A spokesman for the Football Association said: \u201cComments questioning the integrity of match "
            "officials are unacceptable.\u201d",
        ],
    ),
    "striker.md": (
        "2024-05-01",
        "Mourinho targets a new striker before the summer",
        [
            "Jose Mourinho wants United to sign a striker before the summer tour of America.",
            "\u201cWe are talking to three clubs about a striker and the board knows exactly what I need,\u201d "
            "Mourinho said at the training ground.",
            "\u201cA team that wants to win the league needs twenty goals from its number nine,\u201d he added.",
            "\u201cWe need two new players in January or we will not finish in the top four,\u201d he said.",
        ],
    ),
    "budget.md": (
        "2024-03-20",
        "Budget: chancellor promises growth as opposition attacks tax rises",
        [
            "Chancellor Rachel Pike delivered her first Budget on Wednesday, raising fuel duty and cutting "
            "business rates.",
            "\u201cThis Budget puts growth first and rewards the people who build things,\u201d Pike told MPs.",
            "Opposition treasury spokesman Tom Hale said the Budget would hurt families. \u201cThis Budget is "
            "a tax on working families dressed up as a plan for growth,\u201d Hale said.",
            "\u201cThe fuel duty rise in this Budget will cost every driver two hundred pounds a year,\u201d "
            "Hale added.",
            "A spokesman for the Federation of Small Businesses said: \u201cSmall firms will pay the price for "
            "the fuel duty rise in this Budget.\u201d",
        ],
    ),
    "budget_day_two.md": (
        "2024-03-21",
        "Budget numbers questioned a day after the chancellor's statement",
        [
            "Economists questioned the Budget's forecasts a day after Chancellor Rachel Pike's statement.",
            "Tom Hale, the opposition treasury spokesman, went further. \u201cThe Budget numbers do not add up "
            "and the chancellor knows it,\u201d Hale told the BBC.",
            "\u201c+3% growth a year is what this Budget needs, and nobody thinks it will happen,\u201d Hale said.",
        ],
    ),
}

# An article that arrives later: what a quote alert posts.
LATE_ARTICLE = (
    "late.md",
    "2024-06-02",
    "Mourinho renews attack on referees after cup exit",
    [
        "Jose Mourinho renewed his criticism of referees after United were knocked out of the cup.",
        "\u201cEvery week the referees decide our matches and nobody asks them a single question,\u201d Mourinho said.",
    ],
)
# Another later article, on another topic.
LATE_STRIKER = (
    "late_striker.md",
    "2024-06-03",
    "United close in on a striker from Benfica",
    [
        "United are close to signing the Portuguese striker Rui Costa from Benfica for forty million pounds.",
        "\u201cOur new striker will be here before the summer tour of America,\u201d Jose Mourinho said.",
    ],
)


def write_article(directory: Path, name: str, published: str, title: str, paragraphs: list[str]) -> Path:
    path = directory / name
    body = "\n\n".join(paragraphs)
    path.write_text(f"---\ntitle: {title}\npublished: {published}\n---\n{body}\n", encoding="utf-8")
    return path


def write_articles(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    return [write_article(directory, name, *article) for name, article in ARTICLES.items()]
