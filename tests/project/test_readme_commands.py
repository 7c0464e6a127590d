"""Every ``byline`` command line written in README.md and docs/*.md works as written.

The lines are read from the code blocks of the README and of every page under docs/ (and from
inline code that is a whole command line rather than a template such as ``byline ask "QUESTION"``),
README first, then the pages by name, and each is run through the real ``byline`` entry point in a
shell, from the project folder, on a fresh data directory that holds the seed article. Only lines
that need the network or a platform token are skipped; SKIPPED says which and why, and the test
fails if the README or a docs page gains a line it neither runs nor lists.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from retrieval.library import STORE_FILE
from retrieval.storage.store import Store, utc_now

PROJECT = Path(__file__).resolve().parent.parent.parent
README = PROJECT / "README.md"
DOCS = PROJECT / "docs"
BIN = Path(sys.executable).parent

# Lines that cannot run here, each with the reason.
SKIPPED = {
    "byline feeds add https://feeds.bbci.co.uk/sport/football/rss.xml": "fetches a feed from the internet",
    "byline ingest https://www.bbc.co.uk/sport/football/articles/abc123 seeds/": "fetches a page from the internet",
    "byline migrate --to cluster": (
        "needs a PostgreSQL and a Qdrant server (tests/retrieval/test_cluster_backend.py runs it)"
    ),
}
SKIPPED_ADD = "https://feeds.bbci.co.uk/sport/football/rss.xml"

_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
_INLINE = re.compile(r"`(byline [^`]+)`")
# A template, not a command line: placeholders (QUESTION, PATH-or-URL), options in brackets,
# alternatives, an ellipsis.
_COMMAND = re.compile(r"byline(?:\s+(?:--[a-z-]+|[a-z]+)(?:\s|$)|$)")
_TEMPLATE = re.compile(r"[\[\]|…]|\b[A-Z]{3,}\b")


def documents() -> list[Path]:
    """The README, then every docs page by name: the order their command lines run in."""
    return [README, *sorted(DOCS.glob("*.md"))]


def readme_commands() -> list[str]:
    """The command lines of the README and the docs pages, each once, in the order they appear."""
    found: list[str] = []
    for document in documents():
        found += _commands(document.read_text(encoding="utf-8"))
    return list(dict.fromkeys(found))


def _commands(text: str) -> list[str]:
    found: list[str] = []
    for block in _FENCE.findall(text):
        for line in block.splitlines():
            line = line.strip().removeprefix("$ ").strip()
            line = line.removeprefix(".venv/bin/")
            # A command, not output that starts with the word ("byline ask:   median 9 s").
            if _COMMAND.match(line):
                found.append(line.split("  #")[0].split(" # ")[0].strip())
    for span in _INLINE.findall(text):
        words = span.split()
        # A command or option named in prose ("`byline serve` runs ...", "in `byline ask --json`")
        # is not a line to run; one with a value that is not a placeholder is
        # ("`byline eval --data ../shared/data`").
        values = [w for w in words[2:] if not w.startswith("-")]
        if values and not _TEMPLATE.search(span):
            found.append(span.strip())
    return found


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("readme")
    (root / "eval-data").mkdir()  # small data: the harness skips what is missing, with a message
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SLACK_", "DISCORD_", "BYLINE_"))  # no platform tokens, no stray settings
    }
    env |= {
        "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        "BYLINE_DATA_DIR": str(root / "data"),
        "BYLINE_SEEDS_DIR": str(PROJECT / "seeds"),
        "HOME": str(root),
        "ROOT": str(root),
    }
    return env


def run_line(line: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    # The harness on the full shared data takes many minutes; the same options on small data.
    line = line.replace("--data ../shared/data", f"--data {shlex.quote(env['ROOT'])}/eval-data --cache $ROOT/cache")
    if line.endswith(("serve", "chat")):
        # As in the README's example session: on a terminal (without one, serve runs headless until stopped).
        line = f"script -qec {shlex.quote(line)} /dev/null"
    return subprocess.run(
        ["bash", "-c", line],  # a shell's defaults: a pipeline's status is its last command's
        cwd=PROJECT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_the_readme_has_command_lines_and_every_skip_is_still_there() -> None:
    commands = readme_commands()
    assert "byline eval --data ../shared/data" in commands
    assert "byline ingest seeds/" in commands
    assert set(SKIPPED) <= set(commands), "a skipped line is no longer in the README or docs/: drop it from SKIPPED"
    in_readme = _commands(README.read_text(encoding="utf-8"))
    assert "byline serve" in in_readme and "byline ingest seeds/" in in_readme, "the README's own examples"


def test_every_readme_command_line_works_as_written(workspace: dict[str, str]) -> None:
    failures: list[str] = []
    ran: list[str] = []
    for line in readme_commands():
        if line in SKIPPED:
            continue
        if line == f"byline feeds remove {SKIPPED_ADD}":
            # The subscription the skipped `feeds add` would have made, so this runs as written
            # (added here, after `feeds poll`, which would otherwise go to the internet).
            store = Store(Path(workspace["BYLINE_DATA_DIR"]) / STORE_FILE)
            with store.transaction(reindex=False) as connection:
                connection.execute("INSERT INTO feeds (url, added_at) VALUES (?, ?)", (SKIPPED_ADD, utc_now()))
            store.close()
        chat = line.endswith(("serve", "chat"))
        if chat and not shutil.which("script"):
            continue  # `script` (util-linux) gives the chat its terminal; rare to lack it
        stdin = "what did Mourinho say about the referee?\n/sources\n/quit\n" if chat else ""
        failures += check(line, run_line(line, workspace, stdin))
        ran.append(line)
    assert len(ran) >= 12, ran
    assert not failures, "\n\n".join(failures)


def check(line: str, result: subprocess.CompletedProcess[str]) -> list[str]:
    problems = []
    if result.returncode != 0:
        problems.append(f"exit {result.returncode}")
    if "Traceback" in result.stderr + result.stdout:
        problems.append("a traceback")
    if "--json" in line and "| head" not in line:
        import json

        try:
            json.loads(result.stdout)
        except ValueError:
            problems.append("--json did not print one JSON document")
    if line.endswith(("serve", "chat")) and "Jose Mourinho said:" not in result.stdout:
        problems.append("the terminal chat did not answer")
    if not problems:
        return []
    return [f"{line}: {', '.join(problems)}\n--- stdout\n{result.stdout[-1500:]}\n--- stderr\n{result.stderr[-1500:]}"]
