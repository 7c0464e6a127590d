"""Slack tokens encrypted at rest with the key(s) in ``BYLINE_TOKEN_KEY``.

Fernet (from ``cryptography``): AES-128-CBC with an HMAC-SHA256 over each value, so a value
altered on disk, or read with another key, is refused rather than decrypted into garbage. The
variable holds one key, or several separated by commas to rotate: values are sealed with the
first and opened with any of them, so a new key can go first while the old one still opens what
was stored before.
"""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from retrieval.errors import BylineError

MAKE_A_KEY = 'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'


class TokenKeyError(BylineError):
    """A stored value that none of the configured keys opens; the message says what to do."""


def key_problem(value: str) -> str | None:
    """Why ``value`` is not one or more comma-separated Fernet keys; None when it is.

    Never includes the value itself: it is a secret."""
    keys = [part.strip() for part in value.split(",")]
    if not any(keys):
        return "no key given"
    for number, key in enumerate(keys, start=1):
        try:
            Fernet(key.encode())
        except (ValueError, TypeError):
            which = f"key {number}" if len(keys) > 1 else "the key"
            return f"{which} is not a Fernet key (44 characters of URL-safe base64)"
    return None


class TokenCipher:
    """Seals and opens short secrets with the keys of ``BYLINE_TOKEN_KEY``."""

    def __init__(self, keys: str) -> None:
        problem = key_problem(keys)
        if problem:
            raise TokenKeyError(f"BYLINE_TOKEN_KEY: {problem}. Make one with: {MAKE_A_KEY}")
        fernets = [Fernet(part.strip().encode()) for part in keys.split(",") if part.strip()]
        self._fernet = MultiFernet(fernets)
        self._primary = fernets[0]

    def seal(self, plain: str) -> str:
        return self._fernet.encrypt(plain.encode()).decode("ascii")

    def resealed(self, sealed: str) -> str | None:
        """``sealed`` sealed again with the first key when an older key sealed it; None when the
        first key already did. ``TokenKeyError`` when no key opens it. This is what completes a
        rotation: once every value is resealed, the old key can be dropped."""
        try:
            self._primary.decrypt(sealed.encode("ascii"))
            return None
        except (InvalidToken, UnicodeError):
            pass
        self.open(sealed)  # raises TokenKeyError, with its message, when no key opens it
        return self._fernet.rotate(sealed.encode("ascii")).decode("ascii")

    def open(self, sealed: str) -> str:
        """The plain text; ``TokenKeyError`` when no configured key opens it (or it was altered)."""
        try:
            return self._fernet.decrypt(sealed.encode("ascii")).decode()
        except (InvalidToken, UnicodeError):
            raise TokenKeyError(
                "BYLINE_TOKEN_KEY does not open the Slack tokens stored in the state file: it is not the key "
                "they were saved with (or the file was altered). Set BYLINE_TOKEN_KEY back to that key, or put "
                "the new key first and the old one after a comma to switch keys. Nothing was changed."
            ) from None


__all__ = ["MAKE_A_KEY", "TokenCipher", "TokenKeyError", "key_problem"]
