"""Articles from files: plain text, Markdown and HTML, with optional front matter.

Front matter is a block of ``key: value`` lines between two ``---`` lines at the top of a
``.txt`` or ``.md`` file (title, source or outlet, url, published, author). Without it the
first line is the headline and the rest is the body, which is how the BBC files are laid out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from retrieval.errors import UnreadableArticle
from retrieval.models import ArticleDraft
from retrieval.reading.html import html_to_draft

SUPPORTED_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".html", ".htm"})
MAX_FILE_BYTES = 20 * 1024 * 1024

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(?P<body>.*?)\r?\n---[ \t]*\r?\n", re.DOTALL)
_FIELD_ALIASES = {
    "outlet": "source",
    "publisher": "source",
    "date": "published",
    "headline": "title",
    "section": "tags",
    "category": "tags",
    "categories": "tags",
}


def iter_article_files(paths: Iterable[Path]) -> Iterator[Path]:
    """Every supported file under the given files and folders, in a stable order.

    The suffix rule holds for a file named on its own too: ``byline ingest pyproject.toml``
    is not an article (``not_an_article_file`` says why)."""
    for path in paths:
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.is_file() and child.suffix.lower() in SUPPORTED_SUFFIXES and not child.name.startswith("."):
                    yield child
        elif path.is_file() and path.suffix.lower() in SUPPORTED_SUFFIXES:
            yield path


def not_an_article_file(path: Path) -> str:
    """Why a path named for ingest holds no article ("" when it is a folder or an article file)."""
    if path.is_dir():
        return ""
    if not path.exists():
        return f"{path}: no such file or folder"
    if not path.is_file():
        return f"{path}: not a file or folder"
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
        shown = f"a {path.suffix} file" if path.suffix else "a file without an extension"
        return f"{path}: Byline reads {kinds} files as articles, not {shown}"
    return ""


def decode_text(raw: bytes, origin: str) -> str:
    """Bytes to text, refusing binary data instead of storing garbage."""
    if not raw.strip():
        raise UnreadableArticle(f"{origin}: the file is empty")
    if b"\x00" in raw[:8192]:
        raise UnreadableArticle(f"{origin}: this looks like a binary file, not an article")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UnreadableArticle(f"{origin}: not UTF-8 text (save it as UTF-8 and try again)") from None
    controls = sum(1 for ch in text[:8192] if ord(ch) < 32 and ch not in "\n\r\t\f")
    if controls > 8:
        raise UnreadableArticle(f"{origin}: this looks like a binary file, not an article")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_text_article(text: str, key: str, markdown: bool = False) -> ArticleDraft:
    """An article from text with optional front matter; see the module docstring."""
    fields: dict[str, str] = {}
    match = _FRONT_MATTER.match(text)
    if match:
        for line in match.group("body").splitlines():
            name, sep, value = line.partition(":")
            if sep:
                name = name.strip().lower()
                fields[_FIELD_ALIASES.get(name, name)] = value.strip().strip("\"'")
        text = text[match.end() :]
    text = text.strip()
    if not fields.get("title"):
        first, _, rest = text.partition("\n")
        fields["title"] = first.strip().lstrip("#").strip() if markdown else first.strip()
        text = rest.strip()
    if not text:
        raise UnreadableArticle(f"{key}: the article has a headline but no text")
    return ArticleDraft(
        key=key,
        title=fields["title"],
        text=text,
        source=fields.get("source", ""),
        url=fields.get("url", ""),
        published=fields.get("published", ""),
        author=fields.get("author", ""),
        tags=split_tags(fields.get("tags", fields.get("tag", ""))),
    )


def split_tags(value: str) -> tuple[str, ...]:
    """``tags: sport, football`` or ``tags: [sport, football]`` (YAML's flow list) as tags."""
    value = value.strip().removeprefix("[").removesuffix("]")
    return tuple(part.strip().strip("\"'") for part in value.split(","))


def skip_message(name: str, reason: str) -> str:
    """``NAME: why`` for a file or page that was skipped, naming it exactly once: some reasons
    already start with the name (the loader's, the fetcher's), others (the library's length
    limit, "no paragraphs") do not, and a skip that does not say which file is no help."""
    return reason if reason.startswith(name) else f"{name}: {reason}"


def read_article_file(path: Path) -> ArticleDraft:
    """Read one article file; raises ``UnreadableArticle`` with a reason a user can act on."""
    origin = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise UnreadableArticle(f"{origin}: {size // 1_000_000} MB is too big for one article")
        raw = path.read_bytes()
    except OSError as error:
        raise UnreadableArticle(f"{origin}: cannot read it ({error.strerror})") from None
    text = decode_text(raw, origin)
    key = str(path.resolve())
    if path.suffix.lower() in {".html", ".htm"}:
        try:
            return html_to_draft(text, key)
        except UnreadableArticle as error:
            raise UnreadableArticle(f"{origin}: {error}") from None
    return parse_text_article(text, key, markdown=path.suffix.lower() in {".md", ".markdown"})
