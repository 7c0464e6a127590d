"""Every setting read from the environment, validated in one place before anything slow starts.

``EnvSettings`` (pydantic-settings) reads the variables documented in ``.env.example``; each field
says what it allows, and any bad value becomes ``SettingsError`` with one line that names the
variable, what is allowed and what was given (never the value of a secret). ``bot.settings.Settings``
is the frozen object built from it, read once by the CLI entry and passed to everything else.
"""

from __future__ import annotations

import contextvars
import ipaddress
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AliasChoices, Field, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

from bot.schedules import parse_gaps_schedule, parse_targets
from bot.tenancy import parse_tenant_admins

PROJECT_DIR = Path(__file__).resolve().parent.parent
SECRET_VARIABLES = frozenset(
    {
        "SLACK_BOT_TOKEN",
        "SLACK_APP_TOKEN",
        "SLACK_SIGNING_SECRET",
        "SLACK_CLIENT_SECRET",
        "BYLINE_TOKEN_KEY",
        "DISCORD_TOKEN",
        # They may hold a password.
        "BYLINE_DATABASE_URL",
        "BYLINE_REDIS_URL",
    }
)
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_HOSTNAME = re.compile(
    r"^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$"
)
_LOOKS_NUMERIC = re.compile(r"^[0-9./]+$")
_ENVIRON: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar("byline_environ", default=None)


class SettingsError(ValueError):
    """A setting with a value Byline cannot use; the message is one line naming it."""


def _setting(default: Any, variable: str, allowed: str) -> Any:
    # The variable's name is the field's alias; ``allowed`` is what the error line says.
    return Field(default, validation_alias=AliasChoices(variable), json_schema_extra={"allowed": allowed})


def _positive_seconds(value: str, what: str = "a number of seconds above 0") -> float:
    number = float(value)  # ValueError for "abc" is reported with the field's own wording
    if not number > 0 or math.isinf(number):
        raise ValueError(what)
    return number


def _whole(value: str, minimum: int) -> int:
    text = value.strip()
    if not text.isascii() or not text.isdigit() or len(text) > 9 or int(text) < minimum:
        raise ValueError("not a whole number in range")
    return int(text)


def _url(value: str, schemes: tuple[str, ...]) -> str:
    # only for URL settings.
    from urllib.parse import urlsplit

    parts = urlsplit(value)
    if parts.scheme.lower() not in schemes or not parts.hostname:
        raise ValueError("not a URL")
    return value


def _scheme(value: str, schemes: tuple[str, ...]) -> str:
    # A database or Redis URL may name a socket instead of a host (postgresql:///byline?host=/run).
    if value.split("://", 1)[0].lower() not in schemes or "://" not in value:
        raise ValueError("not a URL")
    return value


def check_allowlist_entry(entry: str) -> None:
    """A host name, an IP address or a CIDR range; ``300.1.1.1/99`` and ``a b`` are refused."""
    if "/" in entry or ":" in entry or _LOOKS_NUMERIC.match(entry):
        ipaddress.ip_network(entry, strict=False)  # ValueError when it is not a real address/range
    elif not _HOSTNAME.match(entry.rstrip(".")):
        raise ValueError(entry)


class _MappingEnvSource(EnvSettingsSource):
    """The environment source, reading a given mapping (tests, ``from_env(environ)``) when set."""

    def _load_env_vars(self) -> Mapping[str, str | None]:
        environ = _ENVIRON.get()
        if environ is None:
            return super()._load_env_vars()
        return {key: value for key, value in environ.items() if value != ""}


class EnvSettings(BaseSettings):
    """The raw settings, one field per documented variable (``.env.example``)."""

    model_config = SettingsConfigDict(case_sensitive=True, env_ignore_empty=True, extra="ignore", frozen=True)

    # ./data in the working directory, as the README says (not next to the code: in an installed
    # wheel that would be inside site-packages).
    data_dir: Path = _setting(Path("data"), "BYLINE_DATA_DIR", "a folder Byline can create and write")
    seeds_dir: Path | None = _setting(None, "BYLINE_SEEDS_DIR", "an existing folder of article files")
    log_level: str = _setting("INFO", "BYLINE_LOG_LEVEL", "one of " + ", ".join(LOG_LEVELS))
    log_format: str = _setting("text", "BYLINE_LOG_FORMAT", "text or json")
    slack_bot_token: str = _setting("", "SLACK_BOT_TOKEN", "a bot token (xoxb-…)")
    slack_app_token: str = _setting("", "SLACK_APP_TOKEN", "an app-level token (xapp-…)")
    slack_signing_secret: str = _setting("", "SLACK_SIGNING_SECRET", "the app's signing secret")
    slack_mode: str = _setting("socket", "BYLINE_SLACK_MODE", "socket or http")
    slack_api_url: str = _setting("https://slack.com/api/", "SLACK_API_URL", "an http(s):// URL")
    slack_admins: str = _setting("", "BYLINE_SLACK_ADMINS", "comma-separated Slack user ids such as U123ABC")
    # Installing in many workspaces (bot/platforms/slack/oauth.py): the app's OAuth credentials, and the
    # key that seals each workspace's tokens in the state file.
    slack_client_id: str = _setting("", "SLACK_CLIENT_ID", "the app's Client ID (Basic Information → App Credentials)")
    slack_client_secret: str = _setting("", "SLACK_CLIENT_SECRET", "the app's Client Secret")
    slack_redirect_uri: str = _setting("", "SLACK_REDIRECT_URI", "an http(s):// URL ending in /slack/oauth_redirect")
    token_key: str = _setting("", "BYLINE_TOKEN_KEY", "one or more comma-separated Fernet keys (44 characters each)")
    http_host: str = _setting("127.0.0.1", "BYLINE_HTTP_HOST", "a host name or IP address to listen on")
    http_port: int = _setting(3000, "BYLINE_HTTP_PORT", "a port number from 1 to 65535")
    discord_token: str = _setting("", "DISCORD_TOKEN", "a Discord bot token")
    discord_guild_id: str = _setting("", "DISCORD_GUILD_ID", "a numeric server (guild) id")
    discord_api_url: str = _setting("", "DISCORD_API_URL", "an http(s):// URL")
    discord_gateway_url: str = _setting("", "DISCORD_GATEWAY_URL", "a ws(s):// or http(s):// URL")
    discord_admins: str = _setting("", "BYLINE_DISCORD_ADMINS", "comma-separated numeric Discord user ids")
    # Admins of one workspace or server only (bot/tenancy.py): they change that tenant's channels.
    tenant_admins: str = _setting(
        "", "BYLINE_TENANT_ADMINS", "entries TENANT=USER… separated by ';', e.g. slack:T0123ABC=U0456DEF;discord:12=34"
    )
    fetch_allowlist: str = _setting("", "BYLINE_FETCH_ALLOWLIST", "comma-separated host names, IPs or CIDR ranges")
    fetch_timeout: float = _setting(10.0, "BYLINE_FETCH_TIMEOUT", "a number of seconds above 0")
    fetch_deadline: float = _setting(20.0, "BYLINE_FETCH_DEADLINE", "a number of seconds above 0")
    feed_interval: float = _setting(900.0, "BYLINE_FEED_INTERVAL", "a number of seconds above 0")
    watch_dir: Path | None = _setting(None, "BYLINE_WATCH_DIR", "an existing folder")
    timezone: str = _setting("UTC", "BYLINE_TIMEZONE", "an IANA timezone name such as Europe/London or UTC")
    user_rate: float = _setting(12.0, "BYLINE_USER_RATE", "questions per minute, a number above 0")
    user_burst: int = _setting(5, "BYLINE_USER_BURST", "a whole number of at least 1")
    channel_rate: float = _setting(60.0, "BYLINE_CHANNEL_RATE", "questions per minute, a number above 0")
    channel_burst: int = _setting(20, "BYLINE_CHANNEL_BURST", "a whole number of at least 1")
    workers: int | None = _setting(None, "BYLINE_WORKERS", "a whole number of at least 1")
    queue_limit: int = _setting(64, "BYLINE_QUEUE_LIMIT", "a whole number of at least 1")
    retention_days: int = _setting(90, "BYLINE_RETENTION_DAYS", "a whole number of days (0 keeps everything)")
    # The weekly admin report of unanswered questions (bot/jobs/gaps_digest.py); off unless a channel is set.
    gaps_digest_channel: str = _setting(
        "", "BYLINE_GAPS_DIGEST_CHANNEL", "comma-separated admin channels such as slack:C0123ABC,discord:1234567890"
    )
    gaps_digest_schedule: str = _setting(
        "weekly mon 09:00", "BYLINE_GAPS_DIGEST_SCHEDULE", "a schedule such as weekly mon 09:00 (in BYLINE_TIMEZONE)"
    )

    # The cluster backend (issue 14): shared engines instead of the data directory's files.
    backend: str = _setting("embedded", "BYLINE_BACKEND", "embedded or cluster")
    database_url: str = _setting("", "BYLINE_DATABASE_URL", "a postgresql:// URL")
    redis_url: str = _setting("", "BYLINE_REDIS_URL", "a redis:// URL")
    qdrant_url: str = _setting("", "BYLINE_QDRANT_URL", "an http(s):// URL of a Qdrant server")
    # Discord split across processes: this process runs these shards of that many.
    discord_shard_ids: str = _setting("", "BYLINE_DISCORD_SHARD_IDS", "comma-separated shard numbers such as 0,1")
    discord_shard_count: int | None = _setting(None, "BYLINE_DISCORD_SHARD_COUNT", "a whole number of at least 1")
    # How often a worker that is not the leader tries to become it (bot/state/leader.py).
    leader_try_seconds: float = _setting(5.0, "BYLINE_LEADER_TRY_SECONDS", "a number of seconds above 0")
    # Whether answers are read by the trained reader (retrieval/answering/reader.py, docs/reader.md).
    reader: str = _setting("off", "BYLINE_READER", "on or off")

    _SECONDS: ClassVar = (
        "fetch_timeout",
        "fetch_deadline",
        "feed_interval",
        "user_rate",
        "channel_rate",
        "leader_try_seconds",
    )
    _COUNTS: ClassVar = ("user_burst", "channel_burst", "workers", "queue_limit", "discord_shard_count")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # ``.env`` is loaded by ``load_environment`` (never overriding the real environment).
        return init_settings, _MappingEnvSource(settings_cls, case_sensitive=True, env_ignore_empty=True)

    @field_validator(*_SECONDS, mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> Any:
        return _positive_seconds(value) if isinstance(value, str) else value

    @field_validator(*_COUNTS, mode="before")
    @classmethod
    def _counts(cls, value: Any) -> Any:
        return _whole(value, 1) if isinstance(value, str) else value

    @field_validator("retention_days", mode="before")
    @classmethod
    def _days(cls, value: Any) -> Any:
        return _whole(value, 0) if isinstance(value, str) else value

    @field_validator("http_port", mode="before")
    @classmethod
    def _port(cls, value: Any) -> Any:
        port = _whole(value, 1) if isinstance(value, str) else value
        if not 1 <= port <= 65535:
            raise ValueError("port out of range")
        return port

    @field_validator("log_level", "log_format", "slack_mode", "backend", "reader", mode="before")
    @classmethod
    def _choice(cls, value: Any, info: Any) -> Any:
        choices = {
            "log_level": LOG_LEVELS,
            "log_format": ("TEXT", "JSON"),
            "slack_mode": ("SOCKET", "HTTP"),
            "backend": ("EMBEDDED", "CLUSTER"),
            "reader": ("ON", "OFF"),
        }
        word = str(value).strip().upper()
        if word not in choices[info.field_name]:
            raise ValueError(word)
        return word if info.field_name == "log_level" else word.lower()

    @field_validator("timezone", mode="before")
    @classmethod
    def _timezone(cls, value: Any) -> Any:
        name = str(value).strip()
        try:
            if len(name) > 64:
                raise ValueError(name)
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            raise ValueError(name) from None
        return name

    @field_validator("slack_api_url", "discord_api_url", mode="after")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return _url(value.strip(), ("http", "https")) if value.strip() else value

    @field_validator("discord_gateway_url", mode="after")
    @classmethod
    def _gateway_url(cls, value: str) -> str:
        return _url(value.strip(), ("ws", "wss", "http", "https")) if value.strip() else value

    @field_validator("database_url", mode="after")
    @classmethod
    def _database_url(cls, value: str) -> str:
        return _scheme(value.strip(), ("postgresql", "postgres")) if value.strip() else ""

    @field_validator("redis_url", mode="after")
    @classmethod
    def _redis_url(cls, value: str) -> str:
        return _scheme(value.strip(), ("redis", "rediss", "unix")) if value.strip() else ""

    @field_validator("qdrant_url", mode="after")
    @classmethod
    def _qdrant_url(cls, value: str) -> str:
        # ":memory:" (nothing kept, one process) is for trying the cluster code out, and for tests.
        if value.strip().startswith(":memory:"):
            return value.strip()
        return _url(value.strip(), ("http", "https")) if value.strip() else ""

    @field_validator("discord_shard_ids", mode="after")
    @classmethod
    def _shard_ids(cls, value: str) -> str:
        for entry in (part.strip() for part in value.split(",")):
            if entry and not (entry.isascii() and entry.isdigit()):
                raise ValueError(entry)
        return ",".join(part.strip() for part in value.split(",") if part.strip())

    @field_validator("discord_guild_id", mode="after")
    @classmethod
    def _guild(cls, value: str) -> str:
        if value.strip() and not (value.strip().isascii() and value.strip().isdigit()):
            raise ValueError(value)
        return value.strip()

    @field_validator("slack_admins", "discord_admins", mode="after")
    @classmethod
    def _ids(cls, value: str) -> str:
        for entry in (part.strip() for part in value.split(",")):
            if entry and not (entry.isascii() and entry.isalnum()):
                raise ValueError(entry)
        return value

    @field_validator("tenant_admins", mode="after")
    @classmethod
    def _tenant_admins(cls, value: str) -> str:
        parse_tenant_admins(value)  # raises ValueError naming the bad entry
        return value

    @field_validator("http_host", mode="after")
    @classmethod
    def _host(cls, value: str) -> str:
        host = value.strip()
        try:
            ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            if not _HOSTNAME.match(host.lower()):
                raise ValueError(host) from None
        return host

    @field_validator("fetch_allowlist", mode="after")
    @classmethod
    def _allowlist(cls, value: str) -> str:
        for entry in (part.strip().lower() for part in value.split(",")):
            if entry:
                check_allowlist_entry(entry)
        return value

    @field_validator("slack_client_id", mode="after")
    @classmethod
    def _client_id(cls, value: str) -> str:
        # Slack's client ids are digits and a dot ("1234567890.1234567890").
        if value.strip() and not re.fullmatch(r"[0-9]+\.[0-9]+", value.strip()):
            raise ValueError(value)
        return value.strip()

    @field_validator("slack_redirect_uri", mode="after")
    @classmethod
    def _redirect_uri(cls, value: str) -> str:
        if value.strip() and not value.strip().endswith("/slack/oauth_redirect"):
            raise ValueError(value)
        return _url(value.strip(), ("http", "https")) if value.strip() else value

    @field_validator("token_key", mode="after")
    @classmethod
    def _token_key(cls, value: str) -> str:
        # start-up: cryptography loads only when a token key is set.
        from bot.token_crypto import key_problem

        keys = ",".join(part.strip() for part in value.split(","))
        if keys and key_problem(keys):
            raise ValueError("not a key")
        return keys

    @field_validator(
        "slack_bot_token",
        "slack_app_token",
        "slack_signing_secret",
        "slack_client_secret",
        "discord_token",
        mode="after",
    )
    @classmethod
    def _secret(cls, value: str) -> str:
        # A token pasted with a space or a line break inside is never valid, and would only fail
        # later, at the platform, with a less helpful error.
        if any(ch.isspace() for ch in value.strip()):
            raise ValueError("whitespace")
        return value.strip()

    @field_validator("data_dir", mode="after")
    @classmethod
    def _data_dir(cls, value: Path) -> Path:
        path = value.expanduser()
        if path.exists():
            if not path.is_dir() or not os.access(path, os.W_OK | os.X_OK):
                raise ValueError(str(path))
            return path
        parent = next((p for p in path.parents if p.exists()), None)
        if parent is None or not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            raise ValueError(str(path))
        return path

    @field_validator("watch_dir", "seeds_dir", mode="after")
    @classmethod
    def _existing_dir(cls, value: Path | None) -> Path | None:
        if value is not None and not value.expanduser().is_dir():
            raise ValueError(str(value))
        return value.expanduser() if value is not None else None

    @model_validator(mode="after")
    def _slack_transport(self) -> EnvSettings:
        if self.slack_bot_token and self.slack_mode == "socket" and not self.slack_app_token:
            raise SettingsError(
                "SLACK_APP_TOKEN is not set: Slack's Socket Mode (BYLINE_SLACK_MODE=socket, the default) needs an "
                "app-level token (xapp-…) with connections:write, or set BYLINE_SLACK_MODE=http (see .env.example)"
            )
        if self.slack_bot_token and self.slack_mode == "http" and not self.slack_signing_secret:
            raise SettingsError(
                "SLACK_SIGNING_SECRET is not set: BYLINE_SLACK_MODE=http needs the app's signing secret "
                "(Basic Information → Signing Secret; see .env.example)"
            )
        return self

    @model_validator(mode="after")
    def _gaps_digest(self) -> EnvSettings:
        # Checked only when the report is on.
        if self.gaps_digest_channel.strip():
            try:
                parse_targets(self.gaps_digest_channel)
            except ValueError as error:
                raise SettingsError(f"BYLINE_GAPS_DIGEST_CHANNEL: {error} (see .env.example)") from None
            try:
                parse_gaps_schedule(self.gaps_digest_schedule, self.timezone)
            except ValueError as error:
                raise SettingsError(f"BYLINE_GAPS_DIGEST_SCHEDULE: {error} (see .env.example)") from None
        return self

    @model_validator(mode="after")
    def _slack_oauth(self) -> EnvSettings:
        """Installing in many workspaces needs both credentials, the HTTP transport (Slack sends the
        installer's browser back to this server) and a key for the tokens it stores."""
        if not (self.slack_client_id or self.slack_client_secret):
            return self
        # start-up: cryptography loads only when a token key is set.
        from bot.token_crypto import MAKE_A_KEY

        missing = "SLACK_CLIENT_SECRET" if self.slack_client_id else "SLACK_CLIENT_ID"
        problem = ""
        if not (self.slack_client_id and self.slack_client_secret):
            problem = f"{missing} is not set: installing Byline in several workspaces needs both SLACK_CLIENT_ID and "
            problem += "SLACK_CLIENT_SECRET (Basic Information → App Credentials)"
        elif self.slack_bot_token:
            problem = "SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set: set SLACK_BOT_TOKEN for one workspace, or "
            problem += "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET to be installed from /slack/install, not both"
        elif self.slack_mode != "http":
            problem = "SLACK_CLIENT_ID needs BYLINE_SLACK_MODE=http: Slack sends whoever installs Byline back to "
            problem += "/slack/oauth_redirect on this server"
        elif not self.slack_signing_secret:
            problem = "SLACK_SIGNING_SECRET is not set: BYLINE_SLACK_MODE=http needs the app's signing secret "
            problem += "(Basic Information → Signing Secret)"
        elif not self.token_key:
            problem = "BYLINE_TOKEN_KEY is not set: with SLACK_CLIENT_ID each workspace's tokens are stored "
            problem += f"encrypted with it. Make one with: {MAKE_A_KEY}"
        if problem:
            raise SettingsError(problem + " (see .env.example)")
        return self


def _variable(field: FieldInfo, name: str) -> str:
    alias = field.validation_alias
    return str(alias.choices[0]) if isinstance(alias, AliasChoices) else name


def _one_line(error: ValidationError, given: Mapping[str, str]) -> str:
    first = error.errors()[0]
    location = str(first["loc"][0]) if first["loc"] else ""
    by_variable = {_variable(f, n): (n, f) for n, f in EnvSettings.model_fields.items()}
    name, field = by_variable.get(location) or (location, EnvSettings.model_fields.get(location))
    if field is None:  # a model-level check: its message already names the variables
        message = str(first.get("ctx", {}).get("error", first["msg"]))
        return message.removeprefix("Value error, ")
    variable = _variable(field, name)
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    allowed = extra.get("allowed", "a valid value")
    if variable in SECRET_VARIABLES:
        return f"{variable} must be {allowed} without spaces or line breaks (see .env.example)"
    raw = given.get(variable, "")
    shown = raw if len(raw) <= 60 else raw[:59] + "…"
    return f"{variable} must be {allowed}, not {shown!r} (see .env.example)"


def read_env_settings(environ: Mapping[str, str] | None = None) -> EnvSettings:
    """The settings from ``environ`` (default: the process environment); ``SettingsError`` when
    one is unusable, with one line naming the first bad variable."""
    token = _ENVIRON.set(environ)
    try:
        return EnvSettings()
    except ValidationError as error:
        raise SettingsError(_one_line(error, os.environ if environ is None else environ)) from None
    finally:
        _ENVIRON.reset(token)
