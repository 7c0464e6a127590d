"""Issue 32, probe 14: `byline chat` running while another process (`byline ingest`, here a
second ``Library`` on the same data dir) adds an article. The chat answered from its start-up
indexes until restarted; now the next line it reads sees the new article, as `serve` does."""

from __future__ import annotations

import io
import os
import threading
import time
from pathlib import Path

from bot.platforms.terminal.chat import chat
from bot.service import Service
from retrieval.index.embedder import Embedder
from retrieval.library import Library
from tests.fixture_articles import article

# Made-up article 3: Luis Ferreira, head coach, on the Dunmore lantern festival.
NUMBER = 3
QUESTION = "what did Luis Ferreira say about the festival in Dunmore?"
QUOTE = "this was the fairest outcome"


def write_article(folder: Path) -> Path:
    title, paragraphs = article(NUMBER)
    path = folder / "dunmore-festival.txt"
    path.write_text(f"---\ntitle: {title}\npublished: 2024-05-01\n---\n" + "\n\n".join(paragraphs) + "\n")
    return path


class Transcript(io.StringIO):
    """The chat's stdout, read by the test while the chat writes it from its own thread. The
    chat ends each reply with ``print()`` after ``print(text)``: two writes of "\\n" in a row."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.replies: list[str] = []
        self._last = ""
        self._start = 0

    def write(self, text: str) -> int:
        with self.lock:
            written = super().write(text)
            if text == "\n" and self._last == "\n":
                self.replies.append(self.getvalue()[self._start :])
                self._start = len(self.getvalue())
            self._last = text
            return written

    def wait_for_reply(self, number: int, timeout: float = 60.0) -> str:
        """Reply ``number`` (1 is the first) once it is out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.replies) >= number:
                    return self.replies[number - 1]
            time.sleep(0.05)
        raise AssertionError(f"no reply {number} within {timeout} s: {self.getvalue()!r}")


def test_chat_answers_from_an_article_another_writer_added_after_it_started(
    seed_service: Service, embedder: Embedder, tmp_path: Path
) -> None:
    data_dir = seed_service.library.data_dir
    read_end, write_end = os.pipe()
    stdin = os.fdopen(read_end, "r", encoding="utf-8")
    feed = os.fdopen(write_end, "w", encoding="utf-8")
    out = Transcript()
    chatting = threading.Thread(target=chat, args=(seed_service, stdin, out, False), daemon=True)
    chatting.start()
    try:
        feed.write(QUESTION + "\n")
        feed.flush()
        before = out.wait_for_reply(1)
        assert QUOTE not in before, before  # only the seed article (a Manchester derby) so far

        writer = Library.open(data_dir, embedder)  # `byline ingest` on the same data dir
        try:
            report = writer.ingest([write_article(tmp_path)])
            assert len(report.article_ids) == 1
        finally:
            writer.close()

        feed.write(QUESTION + "\n")
        feed.flush()
        after = out.wait_for_reply(2)
        assert QUOTE in after and "Dunmore" in after, after
        feed.write("/sources\n")
        feed.flush()
        listed = out.wait_for_reply(3)
        assert "Dunmore festival" in listed, listed
    finally:
        feed.close()  # end of input: the chat returns
        chatting.join(30)
        stdin.close()
    assert not chatting.is_alive()
