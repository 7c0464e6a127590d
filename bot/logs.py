"""Logging set-up, with every secret value redacted from every record.

``BYLINE_LOG_FORMAT=json`` writes one JSON object per line (for log shippers); the redaction
filter runs before either formatter, so a secret is masked in the message, its arguments and any
traceback alike.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime

# "scheme://" then user info ending in "@" before the host: the part a URL carries a password in.
_URL_CREDENTIALS = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://)[^\s/@]+@")


def without_credentials(text: str) -> str:
    """``text`` with the user and password of every URL in it replaced by ***."""
    return _URL_CREDENTIALS.sub(r"\1***@", text)


class RedactSecrets(logging.Filter):
    """Replaces token values in log messages (and their arguments and tracebacks) with ***."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if len(s) >= 6]

    def _clean(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        # Credentials inside any URL (https://user:pass@proxy/…), configured or not: slack_sdk's
        # retry lines and connection errors print the URL they called.
        return without_credentials(text)

    def filter(self, record: logging.LogRecord) -> bool:
        # Every record, even with no configured secret: the URL rule needs none.
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.msg, record.args = self._clean(message), ()
        if record.exc_text:
            record.exc_text = self._clean(record.exc_text)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time (UTC, ISO 8601), level, logger, message, and any traceback."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "thread": record.threadName,
        }
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        return json.dumps(entry, ensure_ascii=False)


class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """A handler that writes to whatever ``sys.stderr`` is when a record comes, not the one there
    was at set-up: a caller that replaces stderr (a test harness, a daemon wrapper) and later
    closes the old one must not turn every later log line into "I/O operation on closed file"."""

    @property  # type: ignore[override]
    def stream(self):  # type: ignore[no-untyped-def]
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:  # type: ignore[no-untyped-def]
        pass


def configure_logging(level: str, secrets: Iterable[str], log_format: str = "text") -> None:
    handler = _CurrentStderr()
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactSecrets(secrets))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(getattr(logging, level, logging.INFO))
    for noisy in ("faiss.loader", "sentence_transformers", "httpx", "urllib3", "filelock"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
