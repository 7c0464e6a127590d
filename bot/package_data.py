"""Files Byline ships inside its package: the seed articles and the Slack app manifest.

They are found next to the code (``importlib.resources``), so a wheel installed anywhere has
them; in a checkout ``bot/data/seeds`` and ``bot/data/slack-manifest.yml`` are symlinks to the
project's ``seeds/`` and ``slack/manifest.yml``, and the paths are resolved through them so that
articles ingested from the seeds keep the same keys whichever way they were found.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def _packaged(name: str) -> Path:
    # A wheel is installed as plain files, so the resource is a real path (never a zip member).
    return Path(str(files("bot") / "data" / name)).resolve()


def seeds_dir() -> Path:
    """The seed articles a fresh data directory starts with (``BYLINE_SEEDS_DIR`` overrides)."""
    return _packaged("seeds")


def slack_manifest() -> Path:
    """The Slack app manifest to paste when creating the app (README, "Slack")."""
    return _packaged("slack-manifest.yml")
