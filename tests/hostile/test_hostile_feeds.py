"""Attacks from a feed or page server Byline follows (issue 16, #1 and #2), against a real local
server, the real fetcher, feedparser and a real library.

#1: a "feed" whose body names a local file (one in the data dir, /etc/passwd, /dev/zero), a
file:// URL, or declares an XML external entity: nothing local is read, each feed gets its
own clear error. #2: servers that trickle (chunked or not, headers too), never answer, or
send headers and stop: every fetch ends within its deadline with a clear error, and the other
feeds of the round are ingested meanwhile.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.cli.feeds import run_feeds
from bot.settings import Settings
from retrieval.ingest.feeds import FeedBook, poll_feeds
from retrieval.ingest.fetch import Fetcher, FetchTimeout, TooSlow
from retrieval.ingest.netguard import Allowlist
from retrieval.library import Library
from tests.fakes.feed_server import FeedServer, article_html, rss
from tests.fixture_articles import article

CANARY = "CANARY-7f3a9 the secret local file"
LOCAL = Allowlist.parse("127.0.0.1")


def text_feed(title: str, items: list[tuple[str, str]]) -> str:
    """RSS 2.0 whose (headline, HTML) items have no link: their text is the article."""
    entries = "".join(
        f"<item><title>{headline}</title><guid>item-{number}</guid><description><![CDATA[{html}]]></description></item>"
        for number, (headline, html) in enumerate(items)
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>{title}</title>{entries}</channel></rss>'


def canary_feed() -> str:
    """A valid RSS feed: if Byline ever opened a file holding it, an article would appear."""
    return text_feed("Local secrets", [("Secret item", f"<p>{CANARY} was read from disk, said a man.</p>")])


def story(number: int) -> tuple[str, list[str]]:
    """A made-up article, distinct enough from the others not to count as a near-duplicate."""
    return article(number * 11 + 1)


@pytest.fixture
def secret(library: Library) -> Path:
    """A file in the data dir whose contents must never reach the library."""
    path = library.data_dir / "secret-feed.xml"
    path.write_text(canary_feed(), encoding="utf-8")
    return path


def nothing_local_was_read(library: Library) -> None:
    assert library.store.article_count() == 0
    for feed in FeedBook(library.store).list():
        assert "CANARY" not in feed.last_error and "root:" not in feed.last_error


def feeds_list(capsys: pytest.CaptureFixture[str], library: Library) -> str:
    """What `byline feeds list` prints for this data dir."""
    capsys.readouterr()
    assert (
        run_feeds(
            argparse.Namespace(feeds_action="list"), Settings.from_env({"BYLINE_DATA_DIR": str(library.data_dir)})
        )
        == 0
    )
    return capsys.readouterr().out


BODIES: dict[str, Callable[[Path], str]] = {
    "data-dir file": lambda secret: str(secret),
    "/etc/passwd": lambda _: "/etc/passwd",
    "/dev/zero": lambda _: "/dev/zero",
    "file:// URL": lambda secret: f"file://{secret}",
    "file:// /etc/passwd": lambda _: "file:///etc/passwd",
    "relative path": lambda secret: f"../{secret.parent.name}/{secret.name}",
}


@pytest.mark.parametrize("name", list(BODIES))
def test_a_feed_body_naming_a_local_file_is_never_opened(
    name: str,
    secret: Path,
    server: FeedServer,
    library: Library,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    body = BODIES[name](secret)
    url = server.route("/feed.xml", body, content_type="application/rss+xml")
    book = FeedBook(library.store)
    book.add(url)
    monkeypatch.chdir(secret.parent)  # so that a relative path would resolve to the secret, too
    fetcher = Fetcher(allowlist=LOCAL, timeout=2.0, retries=0)
    started = time.monotonic()
    [result] = poll_feeds(library, fetcher)
    assert time.monotonic() - started < 5  # /dev/zero is not read without end
    assert result.added == 0 and result.error.startswith(url)
    assert "not a feed" in result.error and repr(body)[:60] in result.error
    assert "never opens a file or URL" in result.error
    nothing_local_was_read(library)
    listed = feeds_list(capsys, library)
    assert url in listed and "error:" in listed and "not a feed" in listed and "CANARY" not in listed


def xxe_feed(entity: str) -> str:
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE rss [\n  {entity}\n]>\n<rss version="2.0"><channel><title>T</title>'
        "<item><title>Leak</title><guid>leak-1</guid><description>&xxe; and more words in this sentence."
        "</description></item></channel></rss>"
    )


def test_xml_external_entities_are_refused_and_never_resolved(
    secret: Path, server: FeedServer, library: Library
) -> None:
    evil_dtd = server.route("/evil.dtd", f'<!ENTITY xxe SYSTEM "file://{secret}">', content_type="text/xml")
    bodies = {
        "/file.xml": xxe_feed(f'<!ENTITY xxe SYSTEM "file://{secret}">'),
        "/passwd.xml": xxe_feed('<!ENTITY xxe SYSTEM "file:///etc/passwd">'),
        "/public.xml": xxe_feed(f'<!ENTITY xxe PUBLIC "-//X//Y" "file://{secret}">'),
        "/parameter.xml": xxe_feed(f'<!ENTITY % remote SYSTEM "{evil_dtd}">\n  %remote;'),
        "/http.xml": xxe_feed(f'<!ENTITY xxe SYSTEM "{evil_dtd}">'),
    }
    book = FeedBook(library.store)
    urls = [server.route(path, body, content_type="application/rss+xml") for path, body in bodies.items()]
    for url in urls:
        book.add(url)
    results = poll_feeds(library, Fetcher(allowlist=LOCAL, timeout=2.0, retries=0))
    for url, result in zip(urls, results, strict=True):
        assert result.error.startswith(url) and "external XML entity" in result.error, result.error
    nothing_local_was_read(library)
    assert server.hits["/evil.dtd"] == 0  # nor fetched past the SSRF guard
    # Only external entities are refused: the common RSS 0.91 DOCTYPE still reads as a feed.
    doctype = (
        '<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" '
        '"http://my.netscape.com/publish/formats/rss-0.91.dtd">'
    )
    title, paragraphs = story(0)
    body = text_feed("Old", [(title, "".join(f"<p>{p}</p>" for p in paragraphs))])
    old = server.route("/old.xml", body.replace("<rss", doctype + "<rss", 1), content_type="application/rss+xml")
    book.add(old)
    [result] = poll_feeds(library, Fetcher(allowlist=LOCAL, timeout=2.0, retries=0), [old])
    assert result.error == "" and result.added == 1


# -- #2: slow, stalled and silent servers ------------------------------------------------------


def timed(fetcher: Fetcher, url: str) -> tuple[Exception, float]:
    started = time.monotonic()
    with pytest.raises(Exception) as raised:
        fetcher.fetch(url, "feed")
    return raised.value, time.monotonic() - started


SLOW: dict[str, dict[str, object]] = {
    "trickle": {"trickle": 0.05, "piece": 1},
    "trickle chunked": {"trickle": 0.05, "piece": 1, "chunked": True},
    "trickled headers": {"trickle": 0.05, "trickle_headers": True},
    "headers then silence": {"stall": "after-headers"},
    "never answers": {"stall": "before-headers"},
}


@pytest.mark.parametrize("name", list(SLOW))
def test_every_fetch_ends_within_its_deadline(name: str, server: FeedServer) -> None:
    url = server.route("/slow.xml", "<rss>" + "x" * 5000 + "</rss>", content_type="text/xml", **SLOW[name])
    # A per-read timeout far above the deadline: only the deadline can end these in time.
    fetcher = Fetcher(allowlist=LOCAL, timeout=30.0, deadline=1.0, retries=2, backoff=0.01, rate_grace=60)
    error, took = timed(fetcher, url)
    assert isinstance(error, FetchTimeout) and took < 2.0
    assert str(error).startswith(url) and "within 1 s (BYLINE_FETCH_DEADLINE)" in str(error)


@pytest.mark.parametrize("chunked", [False, True])
def test_a_body_below_the_minimum_rate_is_dropped(chunked: bool, server: FeedServer) -> None:
    # About 400 bytes a second: well under the 1 KB/s minimum once the grace period is over.
    url = server.route("/drip.xml", "<rss>" + "x" * 50_000 + "</rss>", trickle=0.05, piece=20, chunked=chunked)
    fetcher = Fetcher(allowlist=LOCAL, timeout=30.0, deadline=30.0, retries=2, rate_grace=0.5)
    error, took = timed(fetcher, url)
    assert isinstance(error, TooSlow) and took < 2.0
    assert "slower than the minimum of 1,024 bytes a second" in str(error)
    assert server.hits["/drip.xml"] == 1  # a deliberately slow server is not asked again


def test_a_fast_trickle_within_the_deadline_is_read_whole(server: FeedServer) -> None:
    body = "<rss>" + "y" * 3000 + "</rss>"
    url = server.route("/ok.xml", body, trickle=0.01, piece=500, chunked=True, content_type="text/xml")
    result = Fetcher(allowlist=LOCAL, timeout=5.0, deadline=5.0).fetch(url, "feed")
    assert result.body == body.encode()


def test_the_deadline_is_read_from_the_environment() -> None:
    assert Fetcher.from_env({}).deadline == 20.0
    assert Fetcher.from_env({"BYLINE_FETCH_DEADLINE": "7.5"}).deadline == 7.5
    for bad in ["soon", "0", "-3", "nan", "inf"]:
        with pytest.raises(Exception, match="BYLINE_FETCH_DEADLINE must be a number of seconds above 0"):
            Fetcher.from_env({"BYLINE_FETCH_DEADLINE": bad})


def test_stuck_feeds_do_not_delay_the_others(server: FeedServer, library: Library) -> None:
    stuck = [
        server.route("/trickle.xml", "<rss>" + "x" * 5000 + "</rss>", content_type="text/xml", trickle=0.05),
        server.route("/chunked.xml", "<rss>" + "x" * 5000 + "</rss>", trickle=0.05, chunked=True),
        server.route("/headers.xml", "<rss></rss>", content_type="text/xml", stall="after-headers"),
        server.route("/silent.xml", "<rss></rss>", stall="before-headers"),
    ]
    good = []
    for number in range(3):
        title, paragraphs = story(number)
        page = server.route(f"/story/{number}", article_html(title, paragraphs))
        good.append(server.route(f"/good{number}.xml", rss("Good", [(title, page, "x")]), content_type="text/xml"))
    book = FeedBook(library.store)
    for url in [stuck[0], good[0], stuck[1], stuck[2], good[1], stuck[3], good[2]]:
        book.add(url)
    fetcher = Fetcher(allowlist=LOCAL, timeout=30.0, deadline=2.0, retries=1, backoff=0.01, rate_grace=60)
    started = time.monotonic()
    results = {r.feed.url: r for r in poll_feeds(library, fetcher)}
    # One after another, the last good feed would wait for four stuck ones (4 x 2 s); with four
    # workers, it waits for one at most. (Storing is serial and slow on a busy machine, so the
    # clock is read where the good feeds' pages were requested, not at the end of the round.)
    fetched = [server.hit_times[f"/story/{number}"][0] - started for number in range(3)]
    assert max(fetched) < 3.0, fetched
    for url in stuck:
        assert "BYLINE_FETCH_DEADLINE" in results[url].error and results[url].added == 0
    for url in good:
        assert results[url].error == "" and results[url].added == 1
    assert library.store.article_count() == 3
    listed = {feed.url: feed for feed in book.list()}
    assert all(listed[url].failures == 1 and "within 2 s" in listed[url].last_error for url in stuck)


def test_a_feed_of_slow_pages_leaves_items_for_the_next_round(server: FeedServer, library: Library) -> None:
    items = []
    for number in range(4):
        page = server.route(f"/slow/{number}", "<html></html>", stall="after-headers")
        title, paragraphs = story(number)
        items.append((title, page, "".join(f"<p>{p}</p>" for p in paragraphs)))
    url = server.route("/slowpages.xml", rss("Slow pages", items), content_type="text/xml", etag='"v1"')
    FeedBook(library.store).add(url)
    fetcher = Fetcher(allowlist=LOCAL, timeout=30.0, deadline=0.4, retries=0)
    [first] = poll_feeds(library, fetcher)  # a budget of 3 x 0.4 s: three pages, the 4th waits
    assert first.items == 3 and first.added == 3
    assert any("1 new item(s) left for the next poll" in why for _, why in first.item_errors)
    assert FeedBook(library.store).list()[0].etag == ""  # so the next round is not a 304
    [second] = poll_feeds(library, fetcher)
    assert second.items == 1 and second.added == 1 and library.store.article_count() == 4
