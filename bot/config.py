"""Settings from the environment and ``.env``; see ``.env.example`` for every one of them.

A ``.env`` file never overrides a variable that is already set in the real environment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from dotenv import load_dotenv

from .limits import LimitSettings

PROJECT_DIR = Path(__file__).resolve().parent.parent


def load_environment(env_file: Path | None = None) -> None:
    """Read ``.env`` from the working directory (or the given file) without overriding."""
    path = env_file or Path.cwd() / ".env"
    if path.is_file():
        load_dotenv(path, override=False)


def _list(value: str) -> frozenset[str]:
    return frozenset(part.strip() for part in value.split(",") if part.strip())


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
    http_host: str = "127.0.0.1"
    http_port: int = 3000
    discord_token: str = field(default="", repr=False)
    discord_guild_id: str = ""
    discord_api_url: str = ""
    discord_gateway_url: str = ""
    discord_admins: frozenset[str] = frozenset()
    log_level: str = "INFO"
    timezone: str = "UTC"
    limits: LimitSettings = field(default_factory=LimitSettings)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if environ is None else environ)
        port = env.get("BYLINE_HTTP_PORT", "3000").strip() or "3000"
        if not port.isdigit():
            raise ValueError(f"BYLINE_HTTP_PORT must be a port number, not {port!r}")
        return cls(
            data_dir=Path(env.get("BYLINE_DATA_DIR") or PROJECT_DIR / "data").expanduser(),
            seeds_dir=Path(env.get("BYLINE_SEEDS_DIR") or PROJECT_DIR / "seeds").expanduser(),
            slack_bot_token=env.get("SLACK_BOT_TOKEN", "").strip(),
            slack_app_token=env.get("SLACK_APP_TOKEN", "").strip(),
            slack_signing_secret=env.get("SLACK_SIGNING_SECRET", "").strip(),
            slack_mode=(env.get("BYLINE_SLACK_MODE", "socket").strip().lower() or "socket"),
            slack_api_url=env.get("SLACK_API_URL", "").strip() or "https://slack.com/api/",
            slack_admins=_list(env.get("BYLINE_SLACK_ADMINS", "")),
            http_host=env.get("BYLINE_HTTP_HOST", "127.0.0.1").strip() or "127.0.0.1",
            http_port=int(port),
            discord_token=env.get("DISCORD_TOKEN", "").strip(),
            discord_guild_id=env.get("DISCORD_GUILD_ID", "").strip(),
            discord_api_url=env.get("DISCORD_API_URL", "").strip(),
            discord_gateway_url=env.get("DISCORD_GATEWAY_URL", "").strip(),
            discord_admins=_list(env.get("BYLINE_DISCORD_ADMINS", "")),
            log_level=env.get("BYLINE_LOG_LEVEL", "INFO").strip().upper() or "INFO",
            timezone=env.get("BYLINE_TIMEZONE", "UTC").strip() or "UTC",
            limits=LimitSettings.from_env(env),
        )

    @property
    def slack_enabled(self) -> bool:
        return bool(self.slack_bot_token)

    @property
    def discord_enabled(self) -> bool:
        return bool(self.discord_token)

    def secrets(self) -> list[str]:
        """Values that must never appear in a log line or a message."""
        return [
            s for s in (self.slack_bot_token, self.slack_app_token, self.slack_signing_secret, self.discord_token) if s
        ]
