"""Byline installed in many Slack workspaces: bolt's OAuth v2 flow, wired to Byline's state file.

With ``SLACK_CLIENT_ID`` and ``SLACK_CLIENT_SECRET`` set (and ``BYLINE_SLACK_MODE=http``), the
Slack HTTP server also answers two browser pages:

* ``GET /slack/install`` sends the browser to Slack's authorize page with a fresh ``state``
  (kept in the state file, and in a cookie: bolt checks both when the browser comes back);
* ``GET /slack/oauth_redirect`` exchanges the code (``oauth.v2.access``), stores the
  installation (``SlackInstallations``: tokens sealed with ``BYLINE_TOKEN_KEY``) and says so.

Every event is then answered with the token of the workspace it came from: bolt's ``authorize``
finds it per request, and ``serving`` makes it the token of every Web API call that request's
work makes (``WorkspaceClient``), even from the thread pool Byline answers on. Digests, posted
outside any request, use the workspace the channel was last seen in. ``app_uninstalled`` and
``tokens_revoked`` delete what they name (bolt's revocation listeners), and a request from a
workspace with no installation left is acknowledged and not answered (``InstalledOnly``).

The OAuth ``state`` is kept in Byline's state file rather than in bolt's default file store
(``~/.bolt-app-oauth-state``): the data directory is the one place a deployment backs up and
mounts writable (a container's home often is neither), and a state is consumed there by a
single ``DELETE``, so it works once even when two requests race.
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from slack_bolt import App, BoltContext, BoltRequest, BoltResponse
from slack_bolt.authorization.authorize import InstallationStoreAuthorize
from slack_bolt.middleware import Middleware
from slack_bolt.oauth import OAuthFlow
from slack_bolt.oauth.callback_options import CallbackOptions, FailureArgs, SuccessArgs
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.web import SlackResponse

from bot.package_data import slack_manifest
from bot.settings import Settings
from bot.state.slack_installations import STATE_SECONDS, OAuthStates, SlackInstallations
from bot.state.store import BotState
from bot.token_crypto import TokenCipher

log = logging.getLogger("byline.slack")

INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"
# The error code a call gets when no installed workspace has its channel (see _CHANNEL_HINTS).
NOT_INSTALLED = "not_installed"
# Events that must reach bolt's listeners even though (or because) the workspace's tokens are gone.
_REVOCATIONS = ("app_uninstalled", "tokens_revoked")

# slack_sdk logs every request's parameters and every response body at DEBUG. For the OAuth
# calls those are the client secret and the new tokens, so their client logs from INFO up, even
# when BYLINE_LOG_LEVEL=DEBUG.
_QUIET_API_LOG = logging.getLogger("byline.slack.oauth_api")
_QUIET_API_LOG.setLevel(logging.INFO)


def manifest_scopes(path: Path | None = None) -> list[str]:
    """The bot scopes of ``slack/manifest.yml``: what an install asks for is what the app uses."""
    manifest = yaml.safe_load((path or slack_manifest()).read_text(encoding="utf-8"))
    return [str(scope) for scope in manifest["oauth_config"]["scopes"]["bot"]]


# -- the workspace of the request being answered ---------------------------------------------


@dataclass(frozen=True)
class Workspace:
    """Who a request came from, and the bot's token and user id there."""

    enterprise_id: str | None
    team_id: str | None
    token: str = ""
    bot_user_id: str = ""


_CURRENT: ContextVar[Workspace | None] = ContextVar("byline_slack_workspace", default=None)


def current_workspace() -> Workspace | None:
    return _CURRENT.get()


@contextmanager
def serving(workspace: Workspace | None) -> Iterator[None]:
    """Makes ``workspace`` the one Web API calls go to while its request's work runs.

    A context variable, reset afterwards: the pool thread serves another workspace next."""
    token = _CURRENT.set(workspace)
    try:
        yield
    finally:
        _CURRENT.reset(token)


class WorkspaceClient(WebClient):
    """A Web API client that calls with the token of the workspace in question.

    That is the workspace of the request being answered (``serving``), or, outside a request (a
    scheduled digest), the workspace its ``channel`` was last seen in. A call that names its own
    ``token`` keeps it."""

    def __init__(self, base: WebClient, installations: SlackInstallations) -> None:
        super().__init__(
            token=None, base_url=base.base_url, timeout=base.timeout, retry_handlers=list(base.retry_handlers)
        )
        self.installations = installations

    def api_call(self, api_method: str, **kwargs: Any) -> Any:  # type: ignore[override]
        arguments = [part for part in (kwargs.get("json"), kwargs.get("params"), kwargs.get("data")) if part]
        if any(isinstance(part, dict) and "token" in part for part in arguments):
            return super().api_call(api_method, **kwargs)
        workspace = current_workspace()
        token = workspace.token if workspace is not None else ""
        if not token:
            channel = next((str(p["channel"]) for p in arguments if isinstance(p, dict) and p.get("channel")), "")
            bot = self.installations.bot_for_channel(channel) if channel else None
            if bot is None:
                raise self._not_installed(api_method, channel)
            token = bot.bot_token
        client = WebClient(
            token=token,
            base_url=self.base_url,
            timeout=self.timeout,
            retry_handlers=self.retry_handlers,
            logger=self.logger,
        )
        return client.api_call(api_method, **kwargs)

    def _not_installed(self, api_method: str, channel: str) -> SlackApiError:
        response = SlackResponse(
            client=self,
            http_verb="POST",
            api_url=self.base_url + api_method,
            req_args={},
            data={"ok": False, "error": NOT_INSTALLED},
            headers={},
            status_code=200,
        )
        return SlackApiError(f"no installed workspace has channel {channel or '(none)'}", response)


# -- requests from workspaces with no installation --------------------------------------------


class InstalledOnly(Middleware):
    """Runs before bolt's ``authorize``: a request from a workspace with no installation (it was
    uninstalled, or its bot token revoked) is acknowledged with 200 and goes no further, so it is
    neither answered nor logged by bolt as an error; Slack would otherwise retry it. Requests that
    pass are noted with their channel, so that a digest knows which workspace to post with."""

    def __init__(self, installations: SlackInstallations, install_hint: str) -> None:
        self.installations = installations
        self.install_hint = install_hint

    def process(self, *, req: BoltRequest, resp: BoltResponse, next: Any) -> BoltResponse:  # noqa: A002 - bolt's name
        body, context = req.body or {}, req.context
        event: dict[str, Any] = body["event"] if isinstance(body.get("event"), dict) else {}
        if body.get("type") in {"url_verification"} or body.get("ssl_check") or event.get("type") in _REVOCATIONS:
            return next()  # type: ignore[no-any-return]
        if context.team_id is None and context.enterprise_id is None:
            return next()  # type: ignore[no-any-return]
        bot = self.installations.find_bot(
            enterprise_id=context.enterprise_id,
            team_id=context.team_id,
            is_enterprise_install=context.is_enterprise_install,
        )
        if bot is not None:
            self.installations.note_channel(context.channel_id or "", context.enterprise_id, context.team_id)
            return next()  # type: ignore[no-any-return]
        log.info(
            "Slack: not answering workspace %s: Byline is not installed there (uninstalled, or its token revoked).",
            context.team_id or context.enterprise_id,
        )
        if body.get("command") or body.get("response_url"):
            # A slash command's response body is shown to whoever typed it.
            return BoltResponse(status=200, body=f"Byline is not installed in this workspace. {self.install_hint}")
        return BoltResponse(status=200, body="")


# -- the browser pages -------------------------------------------------------------------------

_FAILURES = {
    "access_denied": "The install was cancelled in Slack, so nothing was installed.",
    "invalid_browser": (
        "This install was started in another browser, or more than 10 minutes ago, so it cannot be checked."
    ),
    "invalid_state": (
        "This install link has expired or was already used: each one works once, for 10 minutes. Nothing was installed."
    ),
    "missing_code": "Slack sent no install code to this page, so nothing was installed.",
    "invalid_code": (
        "Slack did not accept the install code (it works once, for a few minutes), so nothing was installed."
    ),
    "storage_error": (
        "Slack approved the install, but Byline could not save it, so nothing is stored. Try again; "
        "if it fails again, the server's log says why."
    ),
}


def _page(title: str, text: str, link: str = "") -> str:
    more = f'<p><a href="{html.escape(INSTALL_PATH)}">{html.escape(link)}</a></p>' if link else ""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Byline</title></head>'
        f'<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">'
        f"<h1>{html.escape(title)}</h1><p>{html.escape(text)}</p>{more}</body></html>"
    )


# Slack's error codes ("access_denied", "invalid_code"): lower-case words joined by "_", short.
_REASON = re.compile(r"[a-z][a-z0-9_]{0,63}")


class Pages(CallbackOptions):
    """The page after the install: Byline's own words, not bolt's "Oops, Something Went Wrong!"."""

    def __init__(self, delete_cookie: str) -> None:
        super().__init__(success=self.installed, failure=self.refused)
        self.delete_cookie = delete_cookie

    def _response(self, status: int, body: str) -> BoltResponse:
        headers = {"Content-Type": "text/html; charset=utf-8", "Set-Cookie": [self.delete_cookie]}
        return BoltResponse(status=status, body=body, headers=headers)

    def installed(self, args: SuccessArgs) -> BoltResponse:
        installation = args.installation
        where = installation.team_name or installation.enterprise_name or "your workspace"
        text = (
            "Invite it to a channel (/invite @Byline) and mention it with a question, or send it a direct "
            "message. /byline help lists its commands."
        )
        return self._response(200, _page(f"Byline is installed in {where}", text))

    def refused(self, args: FailureArgs) -> BoltResponse:
        # bolt reads ``?error=`` before it checks the OAuth state, so the reason may be anyone's
        # text (a newline forging a log line, an ESC, 30 KB): only Slack's own shape is kept.
        reason = args.reason if _REASON.fullmatch(args.reason or "") else "unrecognised"
        log.warning("Slack: an install was refused (%s).", reason)
        text = _FAILURES.get(reason, f"Slack reported a problem ({reason}), so nothing was installed.")
        return self._response(args.suggested_status_code, _page("Byline was not installed", text, "Start again"))


def note_revocations(app: App) -> None:
    """With one ``SLACK_BOT_TOKEN`` there is no installation to delete: ``app_uninstalled`` and a
    revoked bot token are said plainly in the log (every later call would fail with invalid_auth)."""

    def uninstalled() -> None:
        log.warning("Slack: the app was uninstalled from the workspace; SLACK_BOT_TOKEN no longer works.")

    def revoked(event: dict[str, Any]) -> None:
        if (event.get("tokens") or {}).get("bot"):
            log.warning("Slack: the bot token was revoked; set SLACK_BOT_TOKEN to a new one (OAuth & Permissions).")

    app.event("app_uninstalled")(uninstalled)
    app.event("tokens_revoked")(revoked)


# -- all of it, for the adapter ----------------------------------------------------------------


class SlackOAuth:
    """What ``SlackAdapter`` needs to serve many workspaces: the bolt ``App`` options, the client
    that picks each workspace's token, and the browser paths the HTTP guard lets through."""

    paths = (INSTALL_PATH, REDIRECT_PATH)

    def __init__(self, settings: Settings, state: BotState, base: WebClient) -> None:
        cipher = TokenCipher(settings.token_key)
        self.installations = SlackInstallations(state, cipher, settings.slack_client_id)
        # Every stored token is opened once now: a wrong key is one line at start-up, not every
        # workspace going quiet later. Nothing is changed when it fails.
        count = self.installations.check_key()
        self.client = WorkspaceClient(base, self.installations)
        quiet = WebClient(
            base_url=base.base_url,
            timeout=base.timeout,
            retry_handlers=list(base.retry_handlers),
            logger=_QUIET_API_LOG,
        )
        states = OAuthStates(state, STATE_SECONDS)
        oauth_settings = OAuthSettings(
            client_id=settings.slack_client_id,
            client_secret=settings.slack_client_secret,
            scopes=manifest_scopes(),
            user_scopes=[],
            redirect_uri=settings.slack_redirect_uri or None,
            install_path=INSTALL_PATH,
            redirect_uri_path=REDIRECT_PATH,
            # Straight to Slack's authorize page: bolt's intermediate "Add to Slack" page is a click for nothing.
            install_page_rendering_enabled=False,
            installation_store=self.installations,
            state_store=states,
            state_expiration_seconds=STATE_SECONDS,
            logger=log,
        )
        oauth_settings.callback_options = Pages(oauth_settings.state_utils.build_set_cookie_for_deletion())
        self.flow = OAuthFlow(client=quiet, logger=log, settings=oauth_settings)
        # bolt's default authorize would refresh rotated tokens through a client at slack.com,
        # whatever SLACK_API_URL says; this one uses the quiet client at the configured API.
        self.authorize = InstallationStoreAuthorize(
            logger=log,
            installation_store=self.installations,
            client_id=settings.slack_client_id,
            client_secret=settings.slack_client_secret,
            client=quiet,
        )
        public = settings.slack_redirect_uri.removesuffix(REDIRECT_PATH)
        hint = f"Add it again at {public}{INSTALL_PATH}." if public else f"Add it again from its {INSTALL_PATH} page."
        self.gate = InstalledOnly(self.installations, hint)
        log.info("Slack: installed in %d workspace(s); more can add Byline at %s.", count, INSTALL_PATH)

    def app_options(self) -> dict[str, Any]:
        """Keyword arguments for bolt's ``App``."""
        return {
            "oauth_flow": self.flow,
            "authorize": self.authorize,
            "installation_store": self.installations,
            "before_authorize": self.gate,
        }

    def attach(self, app: App) -> None:
        """``app_uninstalled`` deletes the workspace's installation; ``tokens_revoked`` the tokens named."""
        app.enable_token_revocation_listeners()

    @staticmethod
    def workspace(context: BoltContext) -> Workspace:
        return Workspace(context.enterprise_id, context.team_id, context.bot_token or "", context.bot_user_id or "")


__all__ = [
    "INSTALL_PATH",
    "NOT_INSTALLED",
    "REDIRECT_PATH",
    "SlackOAuth",
    "Workspace",
    "WorkspaceClient",
    "current_workspace",
    "manifest_scopes",
    "note_revocations",
    "serving",
]
