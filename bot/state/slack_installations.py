"""Where Byline keeps its Slack installations, one per workspace, in the bot's state file.

``SlackInstallations`` is slack_sdk's ``InstallationStore`` (what bolt's OAuth flow saves into
and its ``authorize`` reads from on every request). Each installation is stored whole, as JSON
sealed with ``BYLINE_TOKEN_KEY`` (``token_crypto``); only the ids needed to find it (app client
id, enterprise, team, installer) are in the clear, so no token or webhook URL is ever on disk.

One row per (workspace, installer): installing again replaces the row, and the newest row of a
workspace is the one answered with. ``tokens_revoked`` and ``app_uninstalled`` (bolt's
``TokenRevocationListeners``) call ``delete_bot`` / ``delete_installation`` / ``delete_all``:
a revoked token is removed from its row, and a row left without any token goes.

``OAuthStates`` is bolt's ``OAuthStateStore`` in the same file: a ``state`` is issued for each
visit to ``/slack/install`` and consumed by a single ``DELETE``, so a state works once, only
before it expires, and two requests racing with the same one cannot both win.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from typing import Any

from slack_bolt.error import BoltError
from slack_sdk.oauth.installation_store import Bot, Installation, InstallationStore
from slack_sdk.oauth.state_store import OAuthStateStore

from bot.state.store import BotState
from bot.token_crypto import TokenCipher, TokenKeyError
from retrieval.storage.database import DATABASE_ERRORS, Connection
from retrieval.storage.store import utc_now

# What saving an installation can raise: the database's errors, or the disk's.
_SAVE_ERRORS: tuple[type[Exception], ...] = (*DATABASE_ERRORS, OSError)
log = logging.getLogger("byline.slack")

# bolt's own default (OAuthStateUtils): the state cookie lives as long.
STATE_SECONDS = 600
_USER_FIELDS = ("user_token", "user_scopes", "user_refresh_token", "user_token_expires_at")
_BOT_FIELDS = ("bot_token", "bot_id", "bot_user_id", "bot_scopes", "bot_refresh_token", "bot_token_expires_at")


def _key(enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None) -> tuple[str, str]:
    # An org-wide install answers for every workspace of the org: it is found by the org alone.
    return enterprise_id or "", "" if is_enterprise_install else team_id or ""


class SlackInstallations(InstallationStore):
    """slack_sdk's installation store over the ``slack_installations`` table, tokens sealed."""

    def __init__(self, state: BotState, cipher: TokenCipher, client_id: str) -> None:
        self.state = state
        self.cipher = cipher
        self.client_id = client_id
        self._seen_channels: dict[str, tuple[str, str]] = {}
        self._seen_lock = threading.Lock()

    @property
    def logger(self) -> logging.Logger:
        return log

    # -- reading -------------------------------------------------------------------------

    def check_key(self) -> int:
        """Opens every stored installation once (at start-up); returns how many there are.

        ``TokenKeyError`` when the key does not open them: better one clear line at start than
        every workspace going silent later, and nothing is changed. When they open, those sealed
        with an older key of ``BYLINE_TOKEN_KEY`` are sealed again with the first one, in one
        write, so that after one start with ``new,old`` the old key can be dropped."""
        rows = (
            self.state._connect()
            .execute(
                "SELECT enterprise_id, team_id, user_id, sealed FROM slack_installations WHERE client_id=?",
                (self.client_id,),
            )
            .fetchall()
        )
        resealed = [
            (again, self.client_id, row[0], row[1], row[2])
            for row in rows
            if (again := self.cipher.resealed(row[3])) is not None
        ]
        if resealed:
            with self.state._write() as connection:
                connection.executemany(
                    "UPDATE slack_installations SET sealed=? "
                    "WHERE client_id=? AND enterprise_id=? AND team_id=? AND user_id=?",
                    resealed,
                )
            log.info("Slack: %d stored installation(s) sealed again with the first BYLINE_TOKEN_KEY.", len(resealed))
        return len(rows)

    def _open(self, sealed: str) -> Installation:
        return Installation(**json.loads(self.cipher.open(sealed)))

    def _rows(self, enterprise_id: str, team_id: str, user_id: str | None = None) -> list[tuple[str, str]]:
        query = "SELECT user_id, sealed FROM slack_installations WHERE client_id=? AND enterprise_id=? AND team_id=?"
        args: tuple[str, ...] = (self.client_id, enterprise_id, team_id)
        if user_id is not None:
            query, args = query + " AND user_id=?", (*args, user_id)
        return self.state._connect().execute(query + " ORDER BY installed_at DESC, rowid DESC", args).fetchall()

    def find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        rows = self._rows(*_key(enterprise_id, team_id, is_enterprise_install), user_id)
        return self._open(rows[0][1]) if rows else None

    def find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        for _, sealed in self._rows(*_key(enterprise_id, team_id, is_enterprise_install)):
            installation = self._open(sealed)
            if installation.bot_token:
                return installation.to_bot()
        return None

    def is_installer(self, team_id: str, user_id: str) -> bool:
        """True when ``user_id`` installed Byline in workspace ``team_id``: that workspace's admin."""
        row = (
            self.state._connect()
            .execute(
                "SELECT 1 FROM slack_installations WHERE client_id=? AND team_id=? AND user_id=?",
                (self.client_id, team_id, user_id),
            )
            .fetchone()
        )
        return row is not None

    def teams(self) -> list[tuple[str, str]]:
        """(enterprise id, team id) of every workspace with a bot installed."""
        rows = self.state._connect().execute(
            "SELECT DISTINCT enterprise_id, team_id FROM slack_installations WHERE client_id=? AND has_bot=1",
            (self.client_id,),
        )
        return [(row[0], row[1]) for row in rows]

    # -- writing -------------------------------------------------------------------------

    def save(self, installation: Installation) -> None:
        """Stores (or replaces) the installation of its workspace and installer, sealed.

        Errors become ``BoltError``, which bolt's OAuth flow turns into its failure page."""
        installed_in = (installation.enterprise_id, installation.team_id, installation.is_enterprise_install)
        enterprise_id, team_id = _key(*installed_in)
        try:
            with self.state._write() as connection:
                self._put(connection, enterprise_id, team_id, installation)
        except _SAVE_ERRORS as error:
            raise BoltError(f"could not save the installation in the state file ({type(error).__name__})") from None
        log.info(
            "Slack: installed in workspace %s (%s) by %s.",
            installation.team_name or installation.enterprise_name or "?",
            installation.team_id or installation.enterprise_id,
            installation.user_id,
        )

    def _put(self, connection: Connection, enterprise_id: str, team_id: str, installation: Installation) -> None:
        """Writes the installation, sealed (the whole of it: every token, the webhook URL)."""
        sealed = self.cipher.seal(json.dumps(installation.__dict__))
        connection.execute(
            "INSERT INTO slack_installations VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(client_id, enterprise_id, team_id, user_id) DO UPDATE SET "
            "has_bot=excluded.has_bot, installed_at=excluded.installed_at, sealed=excluded.sealed",
            (
                self.client_id,
                enterprise_id,
                team_id,
                installation.user_id or "",
                1 if installation.bot_token else 0,
                installation.installed_at,
                sealed,
            ),
        )

    def save_bot(self, bot: Bot) -> None:
        """A bot token refreshed by token rotation: written into the newest installation."""
        enterprise_id, team_id = _key(bot.enterprise_id, bot.team_id, bot.is_enterprise_install)
        with self.state._write() as connection:
            rows = self._rows(enterprise_id, team_id)
            if not rows:
                return
            installation = self._open(rows[0][1])
            for name in _BOT_FIELDS:
                setattr(installation, name, getattr(bot, name))
            self._put(connection, enterprise_id, team_id, installation)

    def _strip(self, enterprise_id: str, team_id: str, fields: tuple[str, ...], user_id: str | None = None) -> None:
        """Removes ``fields`` (a revoked token) from the rows found; a row left with no token goes."""
        with self.state._write() as connection:
            for row_user, sealed in self._rows(enterprise_id, team_id, user_id):
                try:
                    installation = self._open(sealed)
                except TokenKeyError:
                    continue  # unreadable with this key: left as it is, never lost
                for name in fields:
                    setattr(installation, name, [] if name.endswith("scopes") else None)
                if installation.bot_token or installation.user_token:
                    self._put(connection, enterprise_id, team_id, installation)
                else:
                    connection.execute(
                        "DELETE FROM slack_installations WHERE client_id=? AND enterprise_id=? AND team_id=? "
                        "AND user_id=?",
                        (self.client_id, enterprise_id, team_id, row_user),
                    )

    def delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self._strip(enterprise_id or "", team_id or "", _BOT_FIELDS)
        log.info("Slack: the bot token of workspace %s was revoked; it is forgotten.", team_id or enterprise_id)

    def delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        if user_id is not None:
            # tokens_revoked names the users whose tokens went: only their user token is removed.
            self._strip(enterprise_id or "", team_id or "", _USER_FIELDS, user_id)
            return
        with self.state._write() as connection:
            connection.execute(
                "DELETE FROM slack_installations WHERE client_id=? AND enterprise_id=? AND team_id=?",
                (self.client_id, enterprise_id or "", team_id or ""),
            )

    def delete_all(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        """``app_uninstalled``: every installation of the workspace goes, and its channels."""
        self.delete_installation(enterprise_id=enterprise_id, team_id=team_id)
        owner = (enterprise_id or "", team_id or "")
        with self.state._write() as connection:
            connection.execute("DELETE FROM slack_channel_teams WHERE enterprise_id=? AND team_id=?", owner)
        with self._seen_lock:
            self._seen_channels = {c: seen for c, seen in self._seen_channels.items() if seen != owner}
        log.info("Slack: uninstalled from workspace %s; its tokens are deleted.", team_id or enterprise_id)

    # -- which workspace a channel is in (for digests, posted outside any request) ------

    def note_channel(self, channel_id: str, enterprise_id: str | None, team_id: str | None) -> None:
        """Remembers the workspace of a channel a request came from (written only when it changes)."""
        if not channel_id or not (team_id or enterprise_id):
            return
        owner = (enterprise_id or "", team_id or "")
        with self._seen_lock:
            if self._seen_channels.get(channel_id) == owner:
                return
            self._seen_channels[channel_id] = owner
        with self.state._write() as connection:
            connection.execute(
                "INSERT INTO slack_channel_teams VALUES (?, ?, ?, ?) ON CONFLICT(channel_id) DO UPDATE SET "
                "enterprise_id=excluded.enterprise_id, team_id=excluded.team_id, seen_at=excluded.seen_at",
                (channel_id, *owner, utc_now()),
            )

    def bot_for_channel(self, channel_id: str) -> Bot | None:
        """The bot of the workspace ``channel_id`` was last seen in, if it is still installed."""
        row = (
            self.state._connect()
            .execute("SELECT enterprise_id, team_id FROM slack_channel_teams WHERE channel_id=?", (channel_id,))
            .fetchone()
        )
        if row is None:
            return None
        enterprise_id, team_id = row[0] or None, row[1] or None
        return self.find_bot(enterprise_id=enterprise_id, team_id=team_id, is_enterprise_install=team_id is None)


# Install pages opened and not finished, kept at most (each row is one OAuth ``state``).
MAX_PENDING_STATES = 1_000


class OAuthStates(OAuthStateStore):
    """bolt's OAuth ``state`` store over the ``slack_oauth_states`` table: each state works once."""

    def __init__(self, state: BotState, expiration_seconds: int = STATE_SECONDS) -> None:
        self.state = state
        self.expiration_seconds = expiration_seconds

    @property
    def logger(self) -> logging.Logger:
        return log

    def issue(self, *args: Any, **kwargs: Any) -> str:
        value = secrets.token_urlsafe(24)
        now = time.time()
        with self.state._write() as connection:
            connection.execute("DELETE FROM slack_oauth_states WHERE expires_at < ?", (now,))
            connection.execute("INSERT INTO slack_oauth_states VALUES (?, ?)", (value, now + self.expiration_seconds))
            # Anyone can open the install page, so pending states are bounded: past the cap the
            # oldest go (that person starts the install again), and the table never grows.
            (pending,) = connection.execute("SELECT COUNT(*) FROM slack_oauth_states").fetchone()
            if pending > MAX_PENDING_STATES:
                connection.execute(
                    "DELETE FROM slack_oauth_states WHERE state IN "
                    "(SELECT state FROM slack_oauth_states ORDER BY expires_at LIMIT ?)",
                    (pending - MAX_PENDING_STATES,),
                )
        return value

    def consume(self, state: str) -> bool:
        """True once for a state issued here and not yet expired; it is gone afterwards."""
        if not state:
            return False
        with self.state._write() as connection:
            cursor = connection.execute(
                "DELETE FROM slack_oauth_states WHERE state=? AND expires_at >= ?", (state, time.time())
            )
        return cursor.rowcount == 1


__all__ = ["MAX_PENDING_STATES", "STATE_SECONDS", "OAuthStates", "SlackInstallations"]
