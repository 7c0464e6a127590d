"""The settings object: read once from the environment (and ``.env``) by the CLI entry, then
passed to everything that needs a setting; see ``.env.example`` for every one of them.

A ``.env`` file never overrides a variable that is already set in the real environment. The
parsing and validation live in ``bot.settings.environment`` (pydantic-settings); this frozen dataclass is what
the rest of Byline receives, so tests and benches can build one directly.
"""

from __future__ import annotations

import errno
import io
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bot.limits import LimitSettings
from bot.package_data import seeds_dir
from bot.settings.environment import PROJECT_DIR, SettingsError, read_env_settings
from bot.tenancy import parse_tenant_admins

if TYPE_CHECKING:
    from retrieval.backend import Backend
    from retrieval.ingest.fetch import Fetcher

__all__ = ["PROJECT_DIR", "Settings", "SettingsError", "load_environment"]


def load_environment(env_file: Path | None = None) -> None:
    """Read ``.env`` from the working directory (or the given file) without overriding.

    ``SettingsError`` (one line naming the file and what to do) when it cannot be read, is not
    UTF-8 text, or holds a NUL byte, which no environment variable can carry."""
    path = env_file or Path.cwd() / ".env"
    try:
        if not path.is_file():
            return
        raw = path.read_bytes()
    except OSError as error:
        raise SettingsError(f"{path}: cannot read it ({error.strerror}); make it readable or remove it.") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise SettingsError(f"{path} line {line} is not UTF-8 text; save the file as UTF-8.") from None
    if "\0" in text:
        line = text[: text.index("\0")].count("\n") + 1
        raise SettingsError(f"{path} line {line} holds a NUL byte, which no setting can hold; delete it.")
    # start-up: only this path needs it.
    from dotenv import load_dotenv

    load_dotenv(stream=io.StringIO(text), override=False)


def environment_problem(error: Exception, data_dir: Path) -> str:
    """One line for an error of the machine rather than of Byline: what failed and what to do."""
    number = getattr(error, "errno", None)
    text = str(error).lower()
    if number == errno.ENOSPC or "disk is full" in text or "no space" in text:
        return (
            f"the disk holding {data_dir} is full. Free some space and run the command again; "
            "what was stored before is intact (every write is all or nothing)."
        )
    where = getattr(error, "filename", None) or data_dir
    reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
    return (
        f"cannot use {where} ({reason}). Set BYLINE_DATA_DIR to a folder Byline can create and write "
        "(see .env.example)."
    )


def _list(value: str) -> frozenset[str]:
    return frozenset(part.strip() for part in value.split(",") if part.strip())


def _password(url: str) -> str:
    # only for URL settings.
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).password or ""
    except ValueError:
        return ""


@dataclass(frozen=True)
class Settings:
    """Everything Byline reads from the environment, with defaults."""

    data_dir: Path
    seeds_dir: Path
    slack_bot_token: str = field(default="", repr=False)
    slack_app_token: str = field(default="", repr=False)
    slack_signing_secret: str = field(default="", repr=False)
    slack_mode: str = "socket"
    slack_api_url: str = "https://slack.com/api/"
    slack_admins: frozenset[str] = frozenset()
    # OAuth install in many workspaces (bot/platforms/slack/oauth.py); empty = the one-workspace token.
    slack_client_id: str = ""
    slack_client_secret: str = field(default="", repr=False)
    slack_redirect_uri: str = ""
    token_key: str = field(default="", repr=False)
    http_host: str = "127.0.0.1"
    http_port: int = 3000
    discord_token: str = field(default="", repr=False)
    discord_guild_id: str = ""
    discord_api_url: str = ""
    discord_gateway_url: str = ""
    discord_admins: frozenset[str] = frozenset()
    # {tenant: user ids} from BYLINE_TENANT_ADMINS (bot/tenancy.py).
    tenant_admins: Mapping[str, frozenset[str]] = field(default_factory=dict)
    log_level: str = "INFO"
    log_format: str = "text"
    timezone: str = "UTC"
    limits: LimitSettings = field(default_factory=LimitSettings)
    fetch_allowlist: str = ""
    fetch_timeout: float = 10.0
    fetch_deadline: float = 20.0
    feed_interval: float = 900.0
    watch_dir: Path | None = None
    retention_days: int = 90
    gaps_digest_channel: str = ""  # bot/jobs/gaps_digest.py: off unless set
    gaps_digest_schedule: str = "weekly mon 09:00"
    # The cluster backend (docs/cluster.md): embedded unless BYLINE_BACKEND=cluster.
    backend: str = "embedded"
    database_url: str = field(default="", repr=False)  # may hold a password
    redis_url: str = field(default="", repr=False)
    qdrant_url: str = ""
    discord_shard_ids: tuple[int, ...] = ()
    discord_shard_count: int | None = None
    leader_try_seconds: float = 5.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The validated settings; ``SettingsError`` (one line naming the variable) otherwise."""
        env = read_env_settings(environ)
        defaults = LimitSettings()
        return cls(
            data_dir=env.data_dir,
            seeds_dir=env.seeds_dir or seeds_dir(),
            slack_bot_token=env.slack_bot_token,
            slack_app_token=env.slack_app_token,
            slack_signing_secret=env.slack_signing_secret,
            slack_mode=env.slack_mode,
            slack_api_url=env.slack_api_url.strip() or "https://slack.com/api/",
            slack_admins=_list(env.slack_admins),
            slack_client_id=env.slack_client_id,
            slack_client_secret=env.slack_client_secret,
            slack_redirect_uri=env.slack_redirect_uri.strip(),
            token_key=env.token_key,
            http_host=env.http_host,
            http_port=env.http_port,
            discord_token=env.discord_token,
            discord_guild_id=env.discord_guild_id,
            discord_api_url=env.discord_api_url.strip(),
            discord_gateway_url=env.discord_gateway_url.strip(),
            discord_admins=_list(env.discord_admins),
            tenant_admins=parse_tenant_admins(env.tenant_admins),
            log_level=env.log_level,
            log_format=env.log_format,
            timezone=env.timezone,
            limits=LimitSettings(
                user_per_minute=env.user_rate,
                user_burst=env.user_burst,
                channel_per_minute=env.channel_rate,
                channel_burst=env.channel_burst,
                workers=env.workers or defaults.workers,
                queue_limit=env.queue_limit,
            ),
            fetch_allowlist=env.fetch_allowlist,
            fetch_timeout=env.fetch_timeout,
            fetch_deadline=env.fetch_deadline,
            feed_interval=env.feed_interval,
            watch_dir=env.watch_dir,
            retention_days=env.retention_days,
            gaps_digest_channel=env.gaps_digest_channel.strip(),
            gaps_digest_schedule=env.gaps_digest_schedule.strip(),
            backend=env.backend,
            database_url=env.database_url,
            redis_url=env.redis_url,
            qdrant_url=env.qdrant_url,
            discord_shard_ids=tuple(int(part) for part in env.discord_shard_ids.split(",") if part),
            discord_shard_count=env.discord_shard_count,
            leader_try_seconds=env.leader_try_seconds,
        )

    @property
    def slack_enabled(self) -> bool:
        return bool(self.slack_bot_token or self.slack_oauth)

    @property
    def slack_oauth(self) -> bool:
        """Installed from /slack/install in any number of workspaces, not run with one token."""
        return bool(self.slack_client_id)

    @property
    def discord_enabled(self) -> bool:
        return bool(self.discord_token)

    def fetcher(self) -> Fetcher:
        """The fetch policy these settings describe (allowlist, timeouts)."""
        # start-up: the settings are read before the core is needed.
        from retrieval.ingest.fetch import Fetcher
        from retrieval.ingest.netguard import Allowlist

        return Fetcher(
            allowlist=Allowlist.parse(self.fetch_allowlist), timeout=self.fetch_timeout, deadline=self.fetch_deadline
        )

    def storage(self) -> Backend:
        """Where the library and the bot's state live (``retrieval.backend``): the data directory,
        or the cluster's PostgreSQL and Qdrant."""
        # start-up: the settings are read before the core is needed.
        from retrieval.backend import Backend

        return Backend(
            kind=self.backend,
            database_url=self.database_url,
            qdrant_location=self.qdrant_url,
            qdrant_api_key=os.environ.get("BYLINE_QDRANT_API_KEY", ""),
        )

    def secrets(self) -> list[str]:
        """Values that must never appear in a log line or a message."""
        values = (self.slack_bot_token, self.slack_app_token, self.slack_signing_secret, self.slack_client_secret)
        keys = tuple(self.token_key.split(","))
        urls = (self.database_url, self.redis_url, self.slack_api_url, self.qdrant_url, self.discord_api_url)
        passwords = tuple(_password(url) for url in urls)
        return [s for s in (*values, *keys, self.discord_token, *passwords) if s]
