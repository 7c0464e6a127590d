"""Logging set-up, with every secret value redacted from every record."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable


class RedactSecrets(logging.Filter):
    """Replaces token values in log messages (and their arguments and tracebacks) with ***."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if len(s) >= 6]

    def _clean(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            message = record.getMessage()
            if record.exc_info and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.msg, record.args = self._clean(message), ()
            if record.exc_text:
                record.exc_text = self._clean(record.exc_text)
        return True


def configure_logging(level: str, secrets: Iterable[str]) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactSecrets(secrets))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(getattr(logging, level, logging.INFO))
    for noisy in ("faiss.loader", "sentence_transformers", "httpx", "urllib3", "filelock"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
