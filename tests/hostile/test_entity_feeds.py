"""Issue 32, probe 13: a feed that is well-formed when added and serves a "billion laughs" on a
later poll. Nested internal entities expand a few KB into gigabytes inside the parser (~550 MB
and ~7 s a poll before the fix), so any entity declaration is refused on the bytes, anywhere in
the body, before feedparser runs: the poll reports the refusal, stores nothing, returns fast."""

from __future__ import annotations

import time
from typing import Any

import feedparser
import pytest

from retrieval.ingest.feeds import FeedBook, poll_feeds, refuse_feed_body
from retrieval.ingest.fetch import Fetcher
from retrieval.library import Library
from tests.fakes.feed_server import FeedServer
from tests.hostile.test_hostile_feeds import LOCAL, story, text_feed


def billion_laughs(levels: int = 10) -> str:
    """The classic: each entity is ten of the one before, so &lol9; is 10^9 "lol"s."""
    entities = ['<!ENTITY lol "lol">'] + [
        f'<!ENTITY lol{n} "{("&lol" + (str(n - 1) if n > 1 else "") + ";") * 10}">' for n in range(1, levels)
    ]
    title, paragraphs = story(5)
    items = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        '<?xml version="1.0"?>\n<!DOCTYPE rss [\n  ' + "\n  ".join(entities) + "\n]>\n"
        f'<rss version="2.0"><channel><title>&lol{levels - 1};</title>'
        f"<item><title>{title}</title><guid>laughs-1</guid><description><![CDATA[{items}]]></description></item>"
        "</channel></rss>"
    )


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The bodies feedparser is asked to parse (feedparser itself still does the parsing)."""
    seen: list[bytes] = []
    real = feedparser.parse

    def parse(source: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(source.getvalue() if hasattr(source, "getvalue") else bytes(source))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(feedparser, "parse", parse)
    return seen


def test_a_feed_turning_into_a_billion_laughs_is_refused_before_parsing(
    server: FeedServer, library: Library, parses: list[bytes]
) -> None:
    title, paragraphs = story(0)
    good = text_feed("Good news", [(title, "".join(f"<p>{p}</p>" for p in paragraphs))])
    url = server.route("/feed.xml", good, content_type="application/rss+xml")
    fetcher = Fetcher(allowlist=LOCAL, timeout=2.0, retries=0)
    FeedBook(library.store).subscribe(url, fetcher)  # `byline feeds add`: fetched and read once
    [first] = poll_feeds(library, fetcher)
    assert first.error == "" and first.added == 1
    assert library.store.article_count() == 1
    assert parses and parses[-1] == good.encode()  # the spy sees what feedparser reads

    laughs = billion_laughs()
    assert len(laughs) < 8_000  # a few KB on the wire
    server.route("/feed.xml", laughs, content_type="application/rss+xml")
    parses.clear()
    started = time.monotonic()
    [second] = poll_feeds(library, fetcher)
    took = time.monotonic() - started
    assert second.error.startswith(url) and "declares XML entities" in second.error, second.error
    assert "byline feeds remove" in second.error
    assert second.added == 0 and library.store.article_count() == 1  # nothing stored
    assert parses == []  # the parser never saw it
    assert took < 2.0, took
    listed = FeedBook(library.store).get(url)
    assert listed is not None and "declares XML entities" in listed.last_error


def test_an_entity_declaration_is_refused_wherever_it_is_in_the_body() -> None:
    padding = "<!-- " + "x" * 70_000 + " -->"  # past the first 64 KB, which other checks read
    for declaration in ('<!ENTITY a "b">', '<!entity a "b">', "<!ENTITY % p 'q'>"):
        body = f'<?xml version="1.0"?>\n<!DOCTYPE rss [\n{padding}\n{declaration}\n]><rss version="2.0"/>'
        assert "declares XML entities" in refuse_feed_body(body.encode()), declaration
    # An ordinary feed, with entity references but no declaration, still reads.
    title, paragraphs = story(1)
    plain = text_feed("Plain &amp; simple", [(title, "".join(f"<p>{p} &lt;3</p>" for p in paragraphs))])
    assert refuse_feed_body((plain + padding).encode()) == ""
