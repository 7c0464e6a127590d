"""Article text is data, never markup (issue 16, attacks 5 and 6).

A feed or page an attacker writes controls an article's text, headline, outlet, speaker names and
stored URL. Whatever they hold, Byline's Discord and Slack payloads contain no link, mention or
formatting that Byline did not make itself, the only links are citation links to an article's
own URL (made safe), every platform limit holds, and one reply is at most three messages.
Replies are built from the real ``retrieval.models`` dataclasses and rendered by the real renderers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.platforms.discord import render as discord_render
from bot.platforms.slack import render as slack_render
from bot.replies import AnswerReply, DigestReply, PassagesReply, Reply, SearchReply, SourcesReply
from retrieval.models import (
    FIELD_LIMIT,
    Answer,
    AnswerSpan,
    Article,
    ArticleDraft,
    Citation,
    Digest,
    DigestStory,
    Passage,
    SearchHit,
)
from retrieval.render import render_plain, safe_url

PHISH_URL = "https://news.example.org/a)[Verify your account](https://evil.example/phish"
QUESTION = "what happened at the derby?"

# -- building real replies -------------------------------------------------------------------


@dataclass(frozen=True)
class Piece:
    """What one hostile article controls."""

    title: str
    source: str
    url: str
    published: str
    text: str
    speaker: str


def replies_for(pieces: list[Piece]) -> list[Reply]:
    """Every reply kind that shows article data, built from ``pieces`` (one article each)."""
    articles = [
        Article(n, f"k{n}", p.title, p.source, p.url, p.published, "", "2024-01-02T09:00:00Z", p.text)
        for n, p in enumerate(pieces, 1)
    ]
    citations = [Citation(n, n, p.title, p.source, p.url, p.published, n + 1, n) for n, p in enumerate(pieces, 1)]
    spans = [
        AnswerSpan(p.text, "quote" if n % 2 else "sentence", p.speaker, n, n, n + 1, 0, len(p.text))
        for n, p in enumerate(pieces, 1)
    ]
    passages = [Passage(n, n, n + 1, n + 1, 0, len(p.text), p.text) for n, p in enumerate(pieces, 1)]
    hits = [SearchHit(passage, citation, 1.0) for passage, citation in zip(passages, citations, strict=True)]
    answered = Answer(QUESTION, True, spans, citations, article_count=len(pieces))
    answered.text = render_plain(answered)
    refused = Answer(QUESTION, False, [], [], message="I couldn't find that.", closest=hits[:3])
    refused.text = render_plain(refused)
    stories = [DigestStory(p.title, [a], [s], s.citation) for p, a, s in zip(pieces, articles, spans, strict=True)]
    digest = Digest("#news", "2024-01-01T09:00:00Z", "2024-01-02T09:00:00Z", len(pieces), stories, citations, "Daily")
    digest.text = "plain digest text"
    return [
        AnswerReply(answered, "a1"),
        AnswerReply(refused, "a2"),
        SearchReply("derby", hits),
        SourcesReply(articles, 1, 1, len(articles)),
        PassagesReply(list(zip(citations, passages, strict=True))),
        DigestReply(digest),
    ]


def allowed_targets(pieces: list[Piece]) -> dict[str, str]:
    """The link targets Byline may make: each article's own URL made safe, with its host."""
    targets = {}
    for piece in pieces:
        target = safe_url(piece.url)
        if target:
            targets[target] = urlsplit(piece.url.strip()).netloc
    return targets


# -- reading Discord payloads as Discord would ---------------------------------------------------

DISCORD_LINK = re.compile(r"\[([^\[\]\n]*)\]\((https?://[^\s()<>\[\]|]*)\)")
# Byline's own Markdown: span markers, citation numbers, section headings, speaker lines, the
# quote prefix, digest headlines, the italic notice line and the sources bullet.
DISCORD_OWN = [
    re.compile(r"\*\*\[\d+\]\*\*"),
    re.compile(r"`\[\d+\]`"),
    re.compile(r"(?m)^\*\*(Sources|Closest passages)\*\*$"),
    re.compile(r"(?m)^\*\*[^*\n]*\*\* said:$"),
    re.compile(r"(?m)^\*\*[^*\n]*\*\* \[\d+\]$"),
    re.compile(r"(?m)^\*[^*\n]*\*$"),
    re.compile(r"(?m)^> “"),
    re.compile(r"(?m)^• "),
]
DISCORD_LINE_MARKUP = re.compile(r"(?m)^\s*(#|>|-|\+|\d+[.)])")


def discord_read(text: str) -> tuple[str, list[tuple[str, str]]]:
    """``text`` with each escaped character as "¤" and each masked link as "LINK", and the links."""
    out: list[str] = []
    links: list[tuple[str, str]] = []
    at = 0
    while at < len(text):
        char = text[at]
        if char == "\\" and at + 1 < len(text) and not text[at + 1].isalnum() and not text[at + 1].isspace():
            out.append("¤")  # Discord shows the next character as it is (not a letter: see "://")
            at += 2
            continue
        if char == "[":
            link = DISCORD_LINK.match(text, at)
            if link:
                links.append((link[1], link[2]))
                out.append("LINK")
                at = link.end()
                continue
        out.append(char)
        at += 1
    return "".join(out), links


def assert_discord_safe(text: str, targets: dict[str, str]) -> None:
    read, links = discord_read(text)
    for label, target in links:
        assert target in targets, f"a link Byline did not make: {target!r}"
        assert urlsplit(target).netloc == targets[target]
        assert not re.search(r"[*_~|`\\<>\[\]]", label) and "://" not in label, label
        assert not re.search(r"@(everyone|here)", label), label
    for own in DISCORD_OWN:
        read = own.sub("", read)
    assert not re.search(r"[*_~|`<>\[\]]", read), f"live Markdown: {read!r}"
    # A link needs its scheme's letters before "://" (a "://" after a quote mark or at a line's
    # start links nothing; hypothesis found one such payload).
    assert not re.search(r"[A-Za-z0-9]://", read), f"a bare URL Discord would link: {read!r}"
    assert not re.search(r"@(everyone|here)", read), f"a mass mention: {read!r}"
    assert not DISCORD_LINE_MARKUP.search(read), f"a heading, quote or list: {read!r}"


def discord_payload_ok(reply: Reply, targets: dict[str, str]) -> None:
    messages = discord_render.render(reply)
    assert 1 <= len(messages) <= 3, len(messages)
    for message in messages:
        assert len(message.content) <= 2000 and len(message.embeds) <= 10
        assert discord_render.message_size(message) <= 6000
        assert_discord_safe(message.content, targets)
        for embed in message.embeds:
            assert len(embed.description or "") <= 4096 and len(embed.title or "") <= 256
            assert len(embed.fields) <= 25 and len(embed.footer.text or "") <= 2048
            assert_discord_safe(embed.description or "", targets)


# -- reading Slack payloads as Slack would -----------------------------------------------------

SLACK_LINK = re.compile(r"<(https?://[^<>|\s]*)\|([^<>]*)>")
SLACK_OWN = [
    re.compile(r"(?m)^\*[^*\n]*\*$"),  # a heading line: speaker, story headline, digest header
    re.compile(r"(?m)^\*Articles, newest first\*"),
    re.compile(r"_Read as:_"),
    re.compile(r"(?m)^_No answer\._$"),
    re.compile(r"(?m)^_This digest is late[^_\n]*_$"),
    re.compile(re.escape(slack_render.CUT_NOTE)),
    re.compile(r"`/sources \d+`"),
]


def assert_slack_safe(text: str, targets: dict[str, str]) -> None:
    for target, label in SLACK_LINK.findall(text):
        target = target.replace("&amp;", "&")
        assert target in targets, f"a link Byline did not make: {target!r}"
        assert urlsplit(target).netloc == targets[target]
        assert not re.search(r"[*_~`|]", label), label
    read = SLACK_LINK.sub("LINK", text)
    assert "<" not in read, f"a mention or link Byline did not make: {read!r}"
    for own in SLACK_OWN:
        read = own.sub("", read)
    assert not re.search(r"[*_~`]", read), f"live mrkdwn: {read!r}"
    assert not re.search(r"(?m)^\s*(&gt;|＞)", read), f"a block quote: {read!r}"
    assert not re.search(r"&(?!amp;|lt;|gt;)", read), f"an unescaped '&': {read!r}"


def mrkdwn_texts(blocks: list[dict]) -> list[str]:
    texts = []
    for block in blocks:
        objects = [block["text"]] if isinstance(block.get("text"), dict) else []
        objects += [e for e in block.get("elements", []) if e.get("type") == "mrkdwn"]
        for item in objects:
            if item["type"] == "mrkdwn":
                assert item.get("verbatim") is True  # Slack must not link bare URLs or names
                texts.append(item["text"])
    return texts


def slack_payload_ok(reply: Reply, targets: dict[str, str]) -> None:
    messages = slack_render.render(reply)
    assert 1 <= len(messages) <= 3, len(messages)
    for message in messages:
        assert len(message.blocks) <= 50 and len(message.text) <= 3000
        assert_slack_safe(message.text, targets)
        for block in message.blocks:
            if block["type"] == "section":
                assert len(block["text"]["text"]) <= 3000
            if block["type"] == "context":
                assert len(block["elements"]) <= 10 and all(len(e["text"]) <= 3000 for e in block["elements"])
            if block["type"] == "header":
                assert len(block["text"]["text"]) <= 150
        for text in mrkdwn_texts(message.blocks):
            assert_slack_safe(text, targets)


# -- the attacks from the issue ------------------------------------------------------------------


def one_piece(**changes: str) -> list[Piece]:
    base = {
        "title": "Derby day",
        "source": "The Courier",
        "url": "https://news.example.org/derby",
        "published": "2024-01-02",
        "text": "The derby ended level after a late goal.",
        "speaker": "Ann Lee",
    }
    return [Piece(**{**base, **changes})]


def test_a_url_with_a_masked_link_in_it_stays_one_safe_citation_link() -> None:
    pieces = one_piece(url=PHISH_URL)
    targets = allowed_targets(pieces)
    [target] = targets
    assert urlsplit(target).netloc == "news.example.org" and not re.search(r"[()\[\] <>|]", target)
    for reply in replies_for(pieces):
        discord_payload_ok(reply, targets)
        slack_payload_ok(reply, targets)
        for message in discord_render.render(reply):
            for embed in message.embeds:
                assert "](https://evil" not in (embed.description or "")
    sources = discord_render.render(replies_for(pieces)[3])[0].embeds[0].description or ""
    assert f"[Derby day]({target})" in sources


def test_urls_that_are_not_plain_http_links_are_shown_without_a_link() -> None:
    for url in (
        "javascript:alert(1)",
        "ftp://news.example.org/a",
        "https://bank.example@evil.example/login",
        "https://[::1]/x",
        "https://news.example.org/" + "a" * 3000,
        " data:text/html,<b>hi</b>",
        "news.example.org/a",
    ):
        assert safe_url(url) == "", url
        [message] = discord_render.render(replies_for(one_piece(url=url))[3])
        assert "](" not in (message.embeds[0].description or "")
        [slack] = slack_render.render(replies_for(one_piece(url=url))[3])
        assert "<http" not in str(slack.blocks)
    assert safe_url("https://news.example.org/a b|c<d>") == "https://news.example.org/a%20b%7Cc%3Cd%3E"
    assert safe_url("https://news.example.org/a?x=1&y=2#top") == "https://news.example.org/a?x=1&y=2#top"


def test_markdown_in_article_text_titles_and_speakers_is_shown_as_text_on_discord() -> None:
    nasty = (
        "[Verify your account](https://evil.example/phish) # Heading\n# Heading\n-# small\n> quoted\n"
        "```code``` ||spoiler|| **bold** __under__ ~~strike~~ <@123456789012345678> @everyone @here "
        "<t:0:R> https://evil.example/bare\n- item\n1. item"
    )
    pieces = one_piece(text=nasty, title=nasty, source=nasty, speaker=nasty, published=nasty)
    for reply in replies_for(pieces):
        discord_payload_ok(reply, allowed_targets(pieces))
    answer = discord_render.render(replies_for(pieces)[0])[0].embeds[0].description or ""
    # Shown as written: Discord hides each escaping backslash.
    assert "\\[Verify your account\\](https\\://evil.example/phish)" in answer
    assert "@\u200beveryone" in answer and "\\|\\|spoiler\\|\\|" in answer


def test_mrkdwn_in_article_text_is_shown_as_text_on_slack() -> None:
    nasty = "*bold* _italic_ ~strike~ `code` ```block```\n> quoted\n＞ wide <!channel> <@U123> a & b"
    pieces = one_piece(text=nasty, title=nasty, source=nasty, speaker=nasty)
    for reply in replies_for(pieces):
        slack_payload_ok(reply, allowed_targets(pieces))
    passages = "\n".join(mrkdwn_texts(slack_render.render(replies_for(pieces)[4])[0].blocks))
    assert "∗bold∗" in passages and "\u00ad&gt; quoted" in passages and "&lt;!channel&gt;" in passages


def test_a_200000_character_headline_is_capped_and_a_reply_is_at_most_three_messages() -> None:
    headline = "Breaking " + "news " * 40_000
    pieces = one_piece(title=headline, source=headline, speaker=headline) * 5
    for reply in replies_for(pieces):
        discord_payload_ok(reply, allowed_targets(pieces))
        slack_payload_ok(reply, allowed_targets(pieces))
    [message] = discord_render.render(replies_for(pieces)[0])
    description = "\n".join(embed.description or "" for embed in message.embeds)
    # Each headline, outlet and speaker is cut at a word to 300 characters.
    assert "news news…" in description and "news " * 61 not in description
    [slack] = slack_render.render(replies_for(pieces)[0])
    assert "news news…" in str(slack.blocks) and "news " * 61 not in str(slack.blocks)


def test_a_huge_article_gives_at_most_three_messages_with_every_citation() -> None:
    pieces = [p for n in range(12) for p in one_piece(text=f"Story {n} " + "many words " * 6_000)]
    for reply in replies_for(pieces):
        discord_payload_ok(reply, allowed_targets(pieces))
        slack_payload_ok(reply, allowed_targets(pieces))
    messages = discord_render.render(replies_for(pieces)[0])
    everything = "\n".join(e.description or "" for m in messages for e in m.embeds)
    assert all(f"`[{n}]`" in everything and f"**[{n}]**" in everything for n in range(1, 13))


def test_titles_outlets_and_authors_are_capped_when_an_article_is_read() -> None:
    draft = ArticleDraft(key="k", title="word " * 50_000, text="Body.", source="x" * 1000, author="An Author")
    assert len(draft.title) <= FIELD_LIMIT and draft.title.endswith("word…")
    assert len(draft.source) == FIELD_LIMIT and draft.author == "An Author"
    draft.title = "later " * 1000  # a feed fills in the title after the page is read
    assert len(draft.title) <= FIELD_LIMIT and draft.title.endswith("…")


def test_terminal_text_never_carries_control_sequences() -> None:
    osc_link = "\x1b]8;;https://evil.example\x07click here\x1b]8;;\x07 \x1b[2J\x00"
    [answered, refused, *_] = replies_for(one_piece(text=osc_link, title=osc_link, speaker=osc_link))
    for reply in (answered, refused):
        assert isinstance(reply, AnswerReply)
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", reply.answer.text)
        assert "click here" in reply.answer.text


def test_every_terminal_reply_drops_control_sequences() -> None:
    from bot.platforms.terminal import chat as terminal

    osc_link = "\x1b]8;;https://evil.example\x07click here\x1b]8;;\x07 \x1b[2J\x00"
    for reply in replies_for(one_piece(text=osc_link, title=osc_link, speaker=osc_link)):
        text = terminal.render(reply)
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text), type(reply).__name__
        assert "click here" in text or isinstance(reply, DigestReply)


# -- fuzzing -------------------------------------------------------------------------------------

PAYLOADS = st.sampled_from(
    [
        "[Verify your account](https://evil.example/phish)",
        "[x](<https://evil.example>)",
        "![img](https://evil.example/i.png)",
        "<https://evil.example>",
        "https://evil.example/x",
        "steam://run/1",
        "# Heading",
        "## H",
        "-# subtext",
        "> quote",
        ">>> all",
        "```py\ncode\n```",
        "`code`",
        "||spoiler||",
        "**bold**",
        "*it*",
        "__under__",
        "~~strike~~",
        "_it_",
        "~s~",
        "- item",
        "* item",
        "+ item",
        "1. item",
        "2) item",
        "@everyone",
        "@here",
        "<@123456789012345678>",
        "<@&123>",
        "<#123>",
        "<t:0:R>",
        "<!channel>",
        "<!here>",
        "<!everyone>",
        "<@U123>",
        "<!date^0^{date}|x>",
        "\\",
        "\\*",
        "&lt;",
        "&amp;",
        "\n",
        "\n> ",
        "＞ wide",
        "＊x＊",
        "[",
        "]",
        "(",
        ")",
        "|",
        "<",
        ">",
        "&",
        " ",
        "\u200b",
        "\x1b[31m",
    ]
)
HOSTILE = st.lists(st.one_of(PAYLOADS, st.text(max_size=8)), max_size=10).map("".join)
SIZED = st.tuples(HOSTILE, st.sampled_from([0, 0, 0, 60, 900, 7_000])).map(lambda t: t[0] + " word" * t[1])
URLS = st.one_of(
    st.sampled_from(
        [
            PHISH_URL,
            "https://news.example.org/derby",
            "http://news.example.org/a_(b)*c*",
            "javascript:alert(1)",
            "https://bank.example@evil.example/",
            "https://news.example.org/a b|c<d>`e`",
            "",
        ]
    ),
    HOSTILE.map(lambda tail: "https://news.example.org/" + tail),
    st.text(max_size=40),
)
PIECES = st.lists(
    st.builds(Piece, title=SIZED, source=HOSTILE, url=URLS, published=HOSTILE, text=SIZED, speaker=HOSTILE),
    min_size=1,
    max_size=6,
)
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(pieces=PIECES)
def test_fuzzed_discord_payloads_carry_only_byline_markup_within_limits(pieces: list[Piece]) -> None:
    targets = allowed_targets(pieces)
    for reply in replies_for(pieces):
        discord_payload_ok(reply, targets)


@FUZZ
@given(pieces=PIECES)
def test_fuzzed_slack_payloads_carry_only_byline_markup_within_limits(pieces: list[Piece]) -> None:
    targets = allowed_targets(pieces)
    for reply in replies_for(pieces):
        slack_payload_ok(reply, targets)


@FUZZ
@given(pieces=PIECES)
def test_fuzzed_terminal_text_has_no_control_characters_and_capped_fields(pieces: list[Piece]) -> None:
    for reply in replies_for(pieces)[:2]:
        assert isinstance(reply, AnswerReply)
        text = reply.answer.text
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)
        # Citation lines ("[1] title — outlet, date, ¶3") carry the capped fields; a sentence of
        # article text may itself start with "[" and is not one.
        sources = text.split("\nSources:\n", 1)[1] if "\nSources:\n" in text else ""
        for line in sources.splitlines():
            if re.match(r"\[\d+\] ", line):
                assert len(line) <= 2 * FIELD_LIMIT + 120, line[:200]
