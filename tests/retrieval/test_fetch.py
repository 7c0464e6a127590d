"""Safe fetching against a real local server: limits, errors, redirects and the SSRF guard."""

from __future__ import annotations

import pytest

from retrieval.ingest.fetch import (
    BlockedURL,
    Fetcher,
    FetchTimeout,
    HTTPStatusError,
    RedirectLoop,
    TooLarge,
    UnsupportedContent,
)
from retrieval.ingest.netguard import Allowlist, check_url
from retrieval.ingest.web import canonical_url, normalise_url
from tests.fakes.feed_server import FeedServer


@pytest.fixture
def fetcher() -> Fetcher:
    return Fetcher(allowlist=Allowlist.parse("127.0.0.1"), timeout=0.5, retries=1, backoff=0.01)


def test_fetches_a_page_and_its_validators(server: FeedServer, fetcher: Fetcher) -> None:
    url = server.route("/a", "<html><body><p>hello</p></body></html>", etag='"v1"')
    result = fetcher.fetch(url)
    assert result.status == 200 and b"hello" in result.body
    assert result.etag == '"v1"' and result.charset == "utf-8"
    again = fetcher.fetch(url, etag='"v1"')
    assert again.not_modified and again.body == b""
    assert server.conditional == [("/a", '"v1"')]


def test_slow_response_times_out(server: FeedServer, fetcher: Fetcher) -> None:
    url = server.route("/slow", "<p>late</p>", delay=1.5)
    with pytest.raises(FetchTimeout, match="/slow"):
        fetcher.fetch(url)
    assert server.hits["/slow"] == 2  # retried once


def test_server_errors_are_retried_then_reported(server: FeedServer, fetcher: Fetcher) -> None:
    url = server.route("/boom", "oops", status=500)
    with pytest.raises(HTTPStatusError, match="HTTP 500") as raised:
        fetcher.fetch(url)
    assert raised.value.status == 500 and url in str(raised.value)
    assert server.hits["/boom"] == 2


def test_client_errors_are_not_retried(server: FeedServer, fetcher: Fetcher) -> None:
    with pytest.raises(HTTPStatusError, match="404"):
        fetcher.fetch(server.url("/missing"))
    assert server.hits["/missing"] == 1


def test_oversize_bodies_are_refused(server: FeedServer, fetcher: Fetcher) -> None:
    big = b"<p>" + b"x" * (6 * 1024 * 1024) + b"</p>"
    declared = server.route("/big", big)
    streamed = server.route("/big-stream", big, send_length=False)
    with pytest.raises(TooLarge, match="/big"):
        fetcher.fetch(declared)
    with pytest.raises(TooLarge, match="/big-stream"):
        fetcher.fetch(streamed)


def test_binary_and_non_html_bodies_are_refused(server: FeedServer, fetcher: Fetcher) -> None:
    png = server.route("/image", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", content_type="image/png")
    disguised = server.route("/disguised", b"\x00\x01\x02binary" * 100, content_type="text/html")
    with pytest.raises(UnsupportedContent, match="image/png"):
        fetcher.fetch(png)
    with pytest.raises(UnsupportedContent, match="binary"):
        fetcher.fetch(disguised)
    feed_only = server.route("/feed.xml", "<rss/>", content_type="application/rss+xml")
    with pytest.raises(UnsupportedContent):
        fetcher.fetch(feed_only, "html")
    assert fetcher.fetch(feed_only, "feed").status == 200


def test_redirects_are_followed_and_loops_detected(server: FeedServer, fetcher: Fetcher) -> None:
    server.route("/final", "<p>arrived</p>")
    start = server.redirect("/start", "/final", 301)
    assert fetcher.fetch(start).url == server.url("/final")
    server.redirect("/loop-a", "/loop-b")
    server.redirect("/loop-b", server.url("/loop-a"))
    with pytest.raises(RedirectLoop, match="loop"):
        fetcher.fetch(server.url("/loop-a"))


def test_ssrf_loopback_refused_without_allowlist(server: FeedServer) -> None:
    url = server.route("/secret", "<p>internal</p>")
    with pytest.raises(BlockedURL, match="loopback") as raised:
        Fetcher().fetch(url)
    assert url in str(raised.value) and "BYLINE_FETCH_ALLOWLIST" in str(raised.value)
    assert server.hits["/secret"] == 0


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("http://10.1.2.3/", "private"),
        ("http://192.168.0.1/", "private"),
        ("http://[::1]:8080/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://0.0.0.0/", "public"),
        ("file:///etc/passwd", "only http"),
        ("ftp://example.com/file", "only http"),
        ("gopher://example.com/", "only http"),
        ("javascript:alert(1)", "only http"),
    ],
)
def test_ssrf_targets_refused(url: str, why: str) -> None:
    with pytest.raises(BlockedURL, match=why):
        check_url(url, Allowlist.parse("news.example.org,203.0.113.0/24"))


def test_allowlist_by_host_and_cidr() -> None:
    assert check_url("http://localhost:1/", Allowlist.parse("localhost")).address in {"127.0.0.1", "::1"}
    assert check_url("http://10.1.2.3/", Allowlist.parse("10.0.0.0/8")).address == "10.1.2.3"
    with pytest.raises(BlockedURL):
        check_url("http://10.1.2.3/", Allowlist.parse("192.168.0.0/16"))


def test_redirect_to_private_address_refused(server: FeedServer, fetcher: Fetcher) -> None:
    hop = server.redirect("/hop", "http://169.254.169.254/latest/meta-data/")
    internal = server.redirect("/hop2", "http://10.0.0.7/admin")
    with pytest.raises(BlockedURL, match="169.254.169.254"):
        fetcher.fetch(hop)
    with pytest.raises(BlockedURL, match="private"):
        fetcher.fetch(internal)


def test_canonical_url_and_normalisation() -> None:
    assert normalise_url("HTTPS://News.Example.COM:443/a/b?utm_source=x&id=3&fbclid=9#top") == (
        "https://news.example.com/a/b?id=3"
    )
    html = '<html><head><link rel="Canonical" href="/story/1?utm_medium=rss"></head><body></body></html>'
    assert canonical_url(html, "http://Example.com/amp/story/1") == "http://example.com/story/1"
    og = '<html><head><meta property="og:url" content="https://example.com/s"></head></html>'
    assert canonical_url(og, "https://example.com/s?utm_campaign=1") == "https://example.com/s"
    assert canonical_url("<html></html>", "https://example.com/x#frag") == "https://example.com/x"
