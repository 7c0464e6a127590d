"""Feeds, URL ingest, deduplication and the chat command, against a real local server and a
real library (model, FAISS, BM25, SQLite)."""

from __future__ import annotations

import html
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.commands.ingest import ingest_upload, register_ingest
from bot.replies import TextReply
from bot.service import Asker, Service
from bot.state.store import STATE_FILE, BotState
from retrieval.ingest.feeds import FeedBook, poll_feeds
from retrieval.ingest.fetch import Fetcher
from retrieval.ingest.netguard import Allowlist
from retrieval.ingest.web import ingest_urls
from retrieval.library import Library
from tests.conftest import BBC
from tests.fakes.feed_server import FeedServer, article_html, atom, rss
from tests.fixture_articles import article_text

ADMIN = Asker("terminal", "boss", is_admin=True, tenant="operator", is_operator=True)
MEMBER = Asker("terminal", "someone")


def bbc(name: str) -> tuple[str, list[str]]:
    """(headline, paragraphs) of a BBC article from the shared data, or, on a machine without
    it, a made-up article standing in for that file."""
    path = BBC / name
    if path.is_file():
        lines = [p.strip() for p in path.read_text(encoding="utf-8", errors="replace").split("\n\n") if p.strip()]
    else:
        lines = article_text(zlib.crc32(name.encode()) % 1000).split("\n\n")
    return lines[0], [html.escape(p.strip()) for p in lines[1:]]


@pytest.fixture
def fetcher() -> Fetcher:
    return Fetcher(allowlist=Allowlist.parse("127.0.0.1"), timeout=1.0, retries=1, backoff=0.01)


def consistent(library: Library) -> None:
    counts = library.store.counts()
    assert library.dense.count() == counts["sentences"]
    assert library.sparse.count() == counts["passages"]


def test_rss_and_atom_feeds_are_polled_into_the_library(server: FeedServer, fetcher: Fetcher, library: Library) -> None:
    title1, body1 = bbc("business/001.txt")
    title2, body2 = bbc("tech/002.txt")
    page1 = server.route("/biz/1", article_html(title1, body1), etag='"p1"')
    page2 = server.route("/news/1", article_html(title2, body2))
    rss_url = server.route(
        "/rss.xml",
        rss("Gazette Business", [(title1, page1, "summary")]),
        content_type="application/rss+xml",
        etag='"f1"',
    )
    atom_url = server.route(
        "/atom.xml", atom("Gazette Sport", [(title2, page2, "summary")]), content_type="application/atom+xml"
    )
    book = FeedBook(library.store)
    book.add(rss_url, fetcher)
    book.add(atom_url, fetcher)
    results = poll_feeds(library, fetcher)
    assert [(r.error, r.added) for r in results] == [("", 1), ("", 1)]
    articles = {a.title: a for a in library.store.list_articles(limit=10)}
    assert set(articles) == {title1, title2}
    stored = library.store.article(articles[title1].id, with_text=True)
    assert stored is not None and stored.url == page1 and stored.author == "Jane Reporter"
    assert "Advertisement" not in stored.text and "first!" not in stored.text and "BUY NOW" not in stored.text
    assert stored.text.count("\n\n") >= len(body1) - 2  # paragraphs kept
    consistent(library)
    feeds = {f.url: f for f in book.list()}
    assert feeds[rss_url].articles_added == 1 and feeds[rss_url].title == "Gazette Business"
    assert feeds[rss_url].etag == '"f1"' and feeds[rss_url].last_error == ""
    # Second round: the RSS feed answers 304 to its ETag; the Atom items were already seen.
    again = poll_feeds(library, fetcher)
    assert again[0].not_modified and again[1].items == 0
    assert ("/rss.xml", '"f1"') in server.conditional
    assert server.hits["/biz/1"] == 1 and server.hits["/news/1"] == 1
    assert library.store.article_count() == 2


def test_bad_feeds_are_recorded_and_do_not_stop_the_others(
    server: FeedServer, fetcher: Fetcher, library: Library
) -> None:
    title, body = bbc("business/002.txt")
    good_page = server.route("/good", article_html(title, body))
    broken_page = server.route("/broken-page", "oops", status=500)
    urls = [
        server.route("/500.xml", "down", status=500),
        server.route("/broken.xml", "{not: xml <<< at all", content_type="application/rss+xml"),
        server.route("/binary.xml", b"\x00\x01\x02" * 50, content_type="application/octet-stream"),
        server.redirect("/loop.xml", "/loop.xml"),
        server.route(
            "/ok.xml",
            rss("Good", [(title, good_page, "x"), ("Fallback story", broken_page, "<p>The feed text stands in.</p>")]),
            content_type="application/rss+xml",
        ),
    ]
    book = FeedBook(library.store)
    for url in urls:
        book.add(url, fetcher)
    results = {r.feed.url: r for r in poll_feeds(library, fetcher)}
    assert "HTTP 500" in results[urls[0]].error
    assert "not a readable feed" in results[urls[1]].error
    assert "application/octet-stream" in results[urls[2]].error
    assert "loop" in results[urls[3]].error
    assert results[urls[4]].added == 2 and not results[urls[4]].error
    assert any("HTTP 500" in why for _, why in results[urls[4]].item_errors)
    listed = {f.url: f for f in book.list()}
    assert all(urls[0] in listed[urls[0]].last_error for _ in [0]) and listed[urls[0]].failures == 1
    assert "HTTP 500" in listed[urls[4]].last_error  # an item fell back to the feed's text
    fallback = [a for a in library.store.list_articles() if a.title == "Fallback story"]
    assert fallback and library.store.article(fallback[0].id, with_text=True).text == "The feed text stands in."  # type: ignore[union-attr]


def test_same_story_from_two_feeds_is_stored_once(server: FeedServer, fetcher: Fetcher, library: Library) -> None:
    title, body = bbc("politics/001.txt")
    canonical = server.url("/story/1")
    server.route("/story/1", article_html(title, body, canonical=canonical))
    amp = server.route("/amp/story/1", article_html(title, body, canonical=canonical))
    tracked = server.url("/story/1?utm_source=rss&utm_medium=feed")
    server.routes["/story/1?utm_source=rss&utm_medium=feed"] = server.routes["/story/1"]
    book = FeedBook(library.store)
    book.add(server.route("/a.xml", rss("A", [(title, tracked, "x")]), content_type="application/rss+xml"))
    book.add(server.route("/b.xml", atom("B", [(title, amp, "x")]), content_type="application/atom+xml"))
    results = poll_feeds(library, fetcher)
    assert [r.error for r in results] == ["", ""]
    assert library.store.article_count() == 1
    assert library.store.find_by_key(canonical) is not None
    consistent(library)


def test_article_updated_in_place_replaces_the_old_text(server: FeedServer, fetcher: Fetcher, library: Library) -> None:
    title, body = bbc("tech/001.txt")
    old = "The spokesman said the zebra launch was postponed indefinitely."
    new = "The spokesman said the giraffe launch went ahead on Tuesday."
    url = server.route("/tech/1", article_html(title, [*body, old]), etag='"v1"')
    first = ingest_urls(library, [url], fetcher)
    assert len(first.added) == 1
    assert ingest_urls(library, [url], fetcher).unchanged == [url]  # 304 to the stored ETag
    server.route("/tech/1", article_html(title, [*body, new]), etag='"v2"')
    second = ingest_urls(library, [url], fetcher)
    assert len(second.replaced) == 1 and library.store.article_count() == 1
    consistent(library)
    texts = " ".join(hit.passage.text for hit in library.search("giraffe launch zebra launch", k=10))
    assert "giraffe" in texts and "zebra" not in texts
    answer = library.ask("what happened to the giraffe launch?")
    assert any("giraffe" in span.text for span in answer.spans)


def test_republished_near_duplicate_replaces_the_older_copy(
    server: FeedServer, fetcher: Fetcher, library: Library
) -> None:
    title, body = bbc("entertainment/001.txt")
    edited = [*body]
    edited[1] = edited[1].replace(" the ", " a ", 1) + " (Corrected.)"
    first_url = server.route("/ent/1", article_html(title, body, published="2024-05-01"))
    second_url = server.route("/syndicated/ent-1", article_html(title, edited, published="2024-05-02"))
    ingest_urls(library, [first_url], fetcher)
    report = ingest_urls(library, [second_url], fetcher)
    assert len(report.replaced) == 1 and library.store.article_count() == 1
    stored = library.store.list_articles()[0]
    assert stored.url == second_url
    assert "(Corrected.)" in library.store.article(stored.id, with_text=True).text  # type: ignore[union-attr]
    consistent(library)
    # A different story is not a near-duplicate.
    other_title, other_body = bbc("entertainment/002.txt")
    ingest_urls(library, [server.route("/ent/2", article_html(other_title, other_body))], fetcher)
    assert library.store.article_count() == 2


@pytest.fixture
def service(library: Library, fetcher: Fetcher) -> Iterator[Service]:
    running = Service(library, BotState(library.data_dir / STATE_FILE))
    register_ingest(running, fetcher)
    yield running
    running.state.close()


def test_ingest_command_replies_with_what_was_added(server: FeedServer, service: Service) -> None:
    title, body = bbc("politics/002.txt")
    url = server.route("/pol/2", article_html(title, body))
    reply = service.run_command(f"/ingest {url}", ADMIN)
    assert isinstance(reply, TextReply) and not reply.error
    assert title in reply.text and "paragraphs" in reply.text and "quotes found" in reply.text
    refused = service.run_command(f"/ingest {url}", MEMBER)
    assert isinstance(refused, TextReply) and refused.error and "operators" in refused.text
    usage = service.run_command("/ingest", ADMIN)
    assert isinstance(usage, TextReply) and "Usage" in usage.text


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/iam/",
        "file:///etc/passwd",
        "ftp://example.com/a.html",
        "http://10.0.0.5/admin",
        "http://[::1]/",
    ],
)
def test_ingest_command_refuses_ssrf(service: Service, target: str) -> None:
    reply = service.run_command(f"/ingest {target}", ADMIN)
    assert isinstance(reply, TextReply) and reply.error
    assert target in reply.text and service.library.store.article_count() == 0


def test_ingest_command_refuses_loopback_without_allowlist(server: FeedServer, library: Library) -> None:
    running = Service(library, BotState(library.data_dir / STATE_FILE))
    register_ingest(running, Fetcher())  # no allowlist: the test server is off limits
    url = server.route("/internal", article_html("Secret", ["Internal only."]))
    reply = running.run_command(f"/ingest {url}", ADMIN)
    assert isinstance(reply, TextReply) and reply.error and "loopback" in reply.text
    assert server.hits["/internal"] == 0
    # Nor through a redirect from an allowed host to a private one.
    hop = server.redirect("/hop", "http://192.168.1.1/router")
    register_ingest(running, Fetcher(allowlist=Allowlist.parse("127.0.0.1"), retries=0))
    hopped = running.run_command(f"/ingest {hop}", ADMIN)
    assert isinstance(hopped, TextReply) and hopped.error and "private" in hopped.text
    running.state.close()


def test_uploads_are_ingested_for_admins_only(service: Service, tmp_path: Path) -> None:
    title, body = bbc("business/003.txt")
    data = (html.unescape(title) + "\n\n" + "\n\n".join(html.unescape(p) for p in body)).encode()
    refused = ingest_upload(service, "story.txt", data, MEMBER)
    assert refused.error and service.library.store.article_count() == 0
    reply = ingest_upload(service, "story.txt", data, ADMIN)
    assert not reply.error and title in reply.text
    assert "binary" in ingest_upload(service, "x.txt", b"\x00\x01" * 100, ADMIN).text
    assert ingest_upload(service, "x.pdf", b"%PDF", ADMIN).error
    consistent(service.library)


# The same tests over the embedded library and the cluster backend (PostgreSQL + Qdrant).
pytestmark = pytest.mark.backends("embedded", "cluster")
