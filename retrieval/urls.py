"""An article's URL in the one form Byline stores and compares (ingest, scopes, removal)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# Query parameters that say where a reader came from, not which page it is.
_TRACKING = ("utm_", "fbclid", "gclid", "mc_cid", "mc_eid", "ocid", "cmpid")


def normalise_url(url: str) -> str:
    """Lowercase scheme and host, drop default ports, fragments and tracking parameters."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port
    if port and not ((scheme == "http" and port == 80) or (scheme == "https" and port == 443)):
        host = f"{host}:{port}"
    query = urlencode(
        [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not k.lower().startswith(_TRACKING)]
    )
    return urlunsplit((scheme, host, parts.path or "/", query, ""))
