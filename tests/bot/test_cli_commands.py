"""The ``byline`` command keeps its word: --version, --json and its error shape, every story in
``digest --json``, CLI syntax in CLI messages, quiet pipes, progress without a terminal, and
``feeds add`` that checks what it follows."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bot.cli.ingest
from bot.cli.main import main
from tests.conftest import BBC, PROJECT
from tests.fakes.feed_server import FeedServer, article_html, rss


@pytest.fixture
def seeded(seed_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(seed_data_dir, copy)
    monkeypatch.setenv("BYLINE_DATA_DIR", str(copy))
    monkeypatch.chdir(tmp_path)  # no .env here
    return copy


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("byline ")


def test_eval_takes_the_harness_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--data", str(tmp_path / "absent"), "--cache", str(tmp_path / "cache")]) == 0
    assert "nothing to evaluate" in capsys.readouterr().out


def test_json_output_and_one_error_shape(seeded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--json", "Kompany injury"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and hits[0]["citation"]["title"].startswith("Mourinho")
    assert main(["sources", "--json"]) == 0
    page = json.loads(capsys.readouterr().out)
    assert page["total"] == 1 and page["articles"][0]["id"] and page["articles"][0]["key"]
    assert main(["sources", "5", "--json"]) == 1
    error = json.loads(capsys.readouterr().out)
    assert list(error) == ["error"] and "byline sources" in error["error"] and "/sources" not in error["error"]
    assert main(["sources", "5"]) == 1
    assert "`byline sources` takes a page number from 1 to 1" in capsys.readouterr().err
    assert main(["feeds", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["digest", "--since", "yesterday-ish", "--json"]) == 2
    assert list(json.loads(capsys.readouterr().out)) == ["error"]


def test_sources_and_head_end_quietly(seeded: Path) -> None:
    env = dict(os.environ, BYLINE_DATA_DIR=str(seeded))
    byline = Path(sys.executable).parent / "byline"
    result = subprocess.run(
        f"{byline} sources --json | head -1", shell=True, cwd=seeded.parent, env=env, capture_output=True, text=True
    )
    assert result.stdout == "{\n" and result.stderr == ""


def test_ingest_refuses_a_file_that_is_not_an_article(seeded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", str(PROJECT / "pyproject.toml")]) == 1
    captured = capsys.readouterr()
    assert "pyproject.toml: Byline reads" in captured.err and "not a .toml file" in captured.err
    assert main(["sources", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 1


def test_ingest_says_1_quote_and_the_same_lines_for_files_and_pages(
    seeded: Path,
    tmp_path: Path,
    server: FeedServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    one = tmp_path / "one.txt"
    one.write_text('A headline\n\nThe minister said: "We will build the bridge next year, whatever it costs."\n')
    assert main(["ingest", str(one)]) == 0
    out = capsys.readouterr().out
    assert "added: A headline" in out and "1 added; 1 paragraph, 1 quote." in out
    monkeypatch.setenv("BYLINE_FETCH_ALLOWLIST", "127.0.0.1")
    url = server.route(
        "/page", article_html("A page headline", ["First paragraph of the page, long enough to keep."] * 1)
    )
    assert main(["ingest", url]) == 0
    out = capsys.readouterr().out
    assert "added: A page headline" in out and re.search(r"^1 added; \d+ paragraphs, 0 quotes\.$", out, re.M)


def test_ingest_prints_progress_lines_without_a_terminal(
    seeded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for n in range(4):
        (folder / f"{n}.txt").write_text(f"Story {n}\n\nParagraph {n} about the number {n * 7919} and nothing else.\n")
    monkeypatch.setattr(bot.cli.ingest, "BAR_FROM_FILES", 2)
    monkeypatch.setattr(bot.cli.ingest, "LOG_EVERY_S", 0.0)
    assert main(["ingest", str(folder)]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("ingest:")]
    assert lines[0].startswith("ingest: reading 4 files")
    assert lines[-1].startswith("ingest: 4/4 files (100%)")


@pytest.mark.skipif(not (BBC / "tech").is_dir(), reason="BBC corpus not present")
def test_digest_json_lists_every_story_and_sources_suggests_the_cli(
    seeded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    for topic in ("business", "entertainment", "politics", "tech"):
        for name in ("010.txt", "120.txt", "230.txt", "340.txt"):
            shutil.copy(BBC / topic / name, folder / f"{topic}-{name}")
    assert main(["ingest", str(folder)]) == 0
    capsys.readouterr()
    assert main(["digest", "--since", "1h"]) == 0
    text = capsys.readouterr().out
    assert "more stor" in text  # the text is cut to 12 stories
    assert main(["digest", "--since", "1h", "--json"]) == 0
    digest = json.loads(capsys.readouterr().out)
    assert len(digest["stories"]) > 12
    assert sum(len(story["articles"]) for story in digest["stories"]) == digest["article_count"] >= 16
    assert main(["sources"]) == 0
    assert "More: byline sources 2" in capsys.readouterr().out


def test_feeds_add_checks_what_it_follows(
    seeded: Path, server: FeedServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BYLINE_FETCH_ALLOWLIST", "127.0.0.1")
    missing = server.route("/gone.xml", "not here", status=404)
    assert main(["feeds", "add", missing]) == 1
    err = capsys.readouterr().err
    assert "HTTP 404" in err and err.count(missing) == 1 and len(err.strip().splitlines()) == 1
    page = server.route("/page", article_html("Just a page", ["Some text of a page that is not a feed."]))
    assert main(["feeds", "add", page]) == 1
    assert "not a feed" in capsys.readouterr().err
    feed = server.route(
        "/rss.xml", rss("The Gazette", [("Item", server.base + "/x", "text")]), content_type="application/rss+xml"
    )
    linked = server.route(
        "/home",
        '<html><head><link rel="alternate" type="application/rss+xml" href="/rss.xml"></head><body>Hi</body></html>',
    )
    assert main(["feeds", "add", linked]) == 0
    out = capsys.readouterr().out
    assert feed in out and "The Gazette" in out
    assert main(["feeds", "add", feed]) == 1
    assert "already followed" in capsys.readouterr().err
    assert main(["feeds", "list", "--json"]) == 0
    assert [f["url"] for f in json.loads(capsys.readouterr().out)] == [feed]
    assert server.hits["/rss.xml"] == 1 and server.hits["/home"] == 1  # one fetch per add; none for a duplicate
